"""What fuzzing the eighteenth round's changes (subtests' and doctests' reasons, the plan
looked for at the repository root, the bound on git) found, each kept as a test on a real git
repository and real ``pytest --plangraph`` runs.

* A subtest whose ``msg`` holds a line break (``subtests.test(msg="a\\nb")``,
  ``self.subTest("a\\nb")``) gave a reason cut at it (``subtest [a``): the failure was lost.
  One whose ``msg`` is an object whose ``__str__`` raises put a frame of this plug-in in the
  traceback a failing test shows (serially and on each xdist worker, where every subtest's
  label is made). The label is now one line, and made whatever the object raises.
* ``pytest --plangraph --rootdir=/`` walked the whole file system to delete cached bytecode
  before the run (the purge covers the rootdir's repository, the rootdir outside one): it
  ran for minutes and deleted every ``.pyc`` it could write outside virtual environments. Such
  a rootdir is now refused at once.
* A git process killed by a signal before it answered (``git merge-base --is-ancestor``,
  ``git cat-file --batch-check``) was read as git's "no", and its output, whole or cut, as
  nothing: a commit was taken for one a rebase dropped. It is now an error, as a git stopped
  past its bound is.
* A doctest whose expected (or printed) output holds a line shaped like pytest's last line of
  a failure (``calc.py:3: DocTestFailure``) gave a reason cut at that line: the output the
  example printed was lost.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest
from plugin_helpers import latest
from repo_helpers import commit_files, git

pytest_plugins = ["pytester"]

PLAN = """
plangraph: 1
plan: whole
nodes:
  - id: step-a
    acceptance:
      - id: ac-a
        verifier: {type: test}
"""

SUBTESTS = """
import unittest

import pytest


class Unprintable:
    def __str__(self):
        raise RuntimeError("no str")

    __repr__ = __str__


@pytest.mark.criterion("step-a/ac-a")
def test_pytest_subtest(subtests):
    with subtests.test(msg="first\\nsecond", i=1):
        assert False, "the real failure"


@pytest.mark.criterion("step-a/ac-a")
def test_unprintable_msg(subtests):
    with subtests.test(msg=Unprintable()):
        pass


@pytest.mark.criterion("step-a/ac-a")
class T(unittest.TestCase):
    def test_unittest_subtest(self):
        with self.subTest("one\\ntwo", x=2):
            self.fail("the unittest failure")
"""


def _repository(root: Path, files: dict[str, str]) -> None:
    commit_files(root, files)


@pytest.mark.parametrize("xdist", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_a_subtest_label_with_a_line_break_or_an_unprintable_msg_keeps_the_failure(
    pytester: pytest.Pytester, xdist: tuple[str, ...]
) -> None:
    _repository(
        pytester.path,
        {
            ".gitignore": ".plangraph/\n__pycache__/\n",
            "plangraph.yaml": PLAN,
            "tests/test_sub.py": SUBTESTS,
        },
    )
    result = pytester.runpytest("--plangraph", *xdist)
    out = result.stdout.str()
    assert "INTERNALERROR" not in out, out
    assert "pytest_plangraph" not in out, out  # no frame of the plug-in in any traceback
    reasons = {
        e["test"]: e.get("reason", "")
        for e in latest(pytester.path)["step-a/ac-a"].details["not_passed"]
    }
    assert reasons["tests/test_sub.py::test_pytest_subtest"] == (
        "subtest [first second] (i=1): AssertionError: the real failure"
    ), reasons
    assert reasons["tests/test_sub.py::T::test_unittest_subtest"] == (
        "subtest [one two] (x=2): AssertionError: the unittest failure"
    ), reasons
    assert "no str" in reasons["tests/test_sub.py::test_unprintable_msg"], reasons


def test_the_file_systems_root_as_rootdir_is_refused_at_once(pytester: pytest.Pytester) -> None:
    _repository(
        pytester.path,
        {
            ".gitignore": ".plangraph/\n__pycache__/\n",
            "plangraph.yaml": PLAN,
            "tests/test_a.py": "def test_a():\n    pass\n",
        },
    )
    result = pytester.runpytest_subprocess(
        f"--plangraph={pytester.path / 'plangraph.yaml'}",
        "--rootdir=/",
        "tests/test_a.py",
        timeout=60,
    )
    err = result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + err
    assert "is the file system's root" in err, err
    assert "Traceback" not in err, err


def _kill_child_git(word: str, killed: list[int]) -> None:
    """SIGKILL the git process this process started whose command line holds *word* (it waits
    on its trace FIFO), as the OOM killer or a person would."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not killed:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                command = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            if parent == os.getpid() and word.encode() in command:
                os.kill(int(entry.name), signal.SIGKILL)
                killed.append(int(entry.name))
                return
        time.sleep(0.01)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_git_killed_by_a_signal_is_no_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``git merge-base --is-ancestor`` killed before it answered (a signal from outside) was
    read as git's "no" (exit code not 0): the commit was taken for one a rebase dropped. A git
    stopped by a signal is now an error, as one stopped past its bound is."""
    from pytest_plangraph.errors import GitError
    from pytest_plangraph.vcs.history import is_ancestor

    _repository(tmp_path, {"a.txt": "a\n"})
    head = git(tmp_path, "rev-parse", "HEAD").strip()
    fifo = tmp_path.parent / "trace.fifo"
    os.mkfifo(fifo)
    monkeypatch.setenv("GIT_TRACE", str(fifo))  # git waits opening it: killed while it waits
    killed: list[int] = []
    killer = threading.Thread(target=_kill_child_git, args=("merge-base", killed))
    killer.start()
    try:
        with pytest.raises(GitError, match="stopped by signal 9"):
            is_ancestor(tmp_path, head)
    finally:
        killer.join()
    assert killed


DOCTEST_PLAN = """
plangraph: 1
plan: whole
nodes:
  - id: step-a
    acceptance:
      - id: ac-a
        verifier: {type: test, tests: ["calc.py::*"]}
"""

DOCTESTED = '''
def shout():
    """
    >>> print("DocTestFailure")
    calc.py:3: DocTestFailure
    """
'''


def test_a_doctest_whose_expected_output_looks_like_the_failure_line_keeps_its_reason(
    pytester: pytest.Pytester,
) -> None:
    """A doctest expecting a line shaped like pytest's own last line of a failure
    (``calc.py:3: DocTestFailure``) gave the reason of that line (``doctest line 3: …
    Expected:``, the output it got lost); the failure's own line is the one not indented."""
    _repository(
        pytester.path,
        {
            ".gitignore": ".plangraph/\n__pycache__/\n",
            "plangraph.yaml": DOCTEST_PLAN,
            "calc.py": DOCTESTED,
        },
    )
    result = pytester.runpytest("--plangraph", "--doctest-modules")
    assert "INTERNALERROR" not in result.stdout.str()
    (entry,) = latest(pytester.path)["step-a/ac-a"].details["not_passed"]
    assert entry["reason"] == (
        'doctest line 3: >>> print("DocTestFailure") Expected: calc.py:3: DocTestFailure '
        "Got: DocTestFailure"
    ), entry
