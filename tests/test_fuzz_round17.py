"""What fuzzing the seventeenth round's changes (one reader of regular files; the options
that narrow a run read from ``@file`` arguments, ``-o`` values and ``PYTEST_ADDOPTS``; the
configuration above the one a run read; collectors skipped by the code under test) found,
each kept as a test on a real git repository and real ``pytest --plangraph`` processes.

* An ``@file`` argument that is a pipe (``@<(printf ...)`` in a shell, a named FIFO) is read
  by pytest's parser, which takes its bytes: reading it again to find an option that narrows
  the run either waited for a writer that never came (a named FIFO: the run hung after its
  tests) or read nothing (a shell's pipe: ``-o xfail_strict=false`` in it passed unseen and
  the run recorded a pass). Such a file is not read again: the run records no pass.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest
from calc_helpers import INI, XFAIL_PLAN, XFAIL_TESTS, cache_env, calc_project, pytest_in
from cli_helpers import plangraph
from conftest import git

pytest_plugins = ["pytester"]


LOOSENING = b"-o\nxfail_strict=false\n"


def _xfail_project(pytester: pytest.Pytester) -> Path:
    root = calc_project(pytester, XFAIL_PLAN, **{"pytest.ini": f"{INI}xfail_strict = true\n"})
    (root / "tests/test_calc.py").write_text(XFAIL_TESTS.lstrip(), encoding="utf-8")
    git(root, "commit", "-qam", "a known bug kept as xfail")
    return root


def _recorded_no_pass(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert "1 xpassed" in done.stdout, done.stdout + done.stderr  # pytest read the @file
    assert "evidence recorded: 1 passed" not in done.stdout, done.stdout
    assert "@file" in done.stdout, done.stdout  # the summary says why


def test_an_argfile_that_is_a_shells_pipe_records_no_pass(pytester: pytest.Pytester) -> None:
    """``pytest --plangraph @<(printf -- '-o\\nxfail_strict=false\\n')``: pytest's parser read
    the pipe's bytes; the override in them is not missed, the run records no pass."""
    root = _xfail_project(pytester)
    read, write = os.pipe()
    try:
        os.write(write, LOOSENING)
        os.close(write)
        done = pytest_in(root, ".", f"@/dev/fd/{read}", pass_fds=(read,))
    finally:
        os.close(read)
    _recorded_no_pass(done)


def _writer(fifo: Path, times: int | None, count: list[int]) -> threading.Event:
    """A thread writing :data:`LOOSENING` into *fifo* for each reader that opens it (a pause
    after each, so that a reader sees its end before the next), *times* times (None: until
    the event returned is set and a reader opens it once more), counting them in *count*."""
    stop = threading.Event()

    def write() -> None:
        while (times is None or count[0] < times) and not stop.is_set():
            try:
                with open(fifo, "wb", buffering=0) as handle:  # waits for a reader to open it
                    handle.write(LOOSENING)
            except BrokenPipeError:  # the reader closed it first: not read
                continue
            count[0] += 1
            time.sleep(0.3)

    threading.Thread(target=write, daemon=True).start()
    return stop


def _stop(fifo: Path, stop: threading.Event) -> None:
    """Let the endless writer of *fifo* end (its waiting open let through once)."""
    stop.set()
    descriptor = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    time.sleep(0.5)
    os.close(descriptor)


def test_an_argfile_that_is_a_named_fifo_neither_hangs_nor_records_a_pass(
    pytester: pytest.Pytester,
) -> None:
    """``@args`` a named FIFO written once for each time pytest's own parser reads it (pytest
    without the plug-in counts them: with a single writer, pytest itself waits on its second
    reading): the run ends, the FIFO not opened again to wait for a writer, and records no
    pass; so does it with a writer that writes for every reader."""
    root = _xfail_project(pytester)
    fifo = root.parent / "args.fifo"
    os.mkfifo(fifo)
    count = [0]
    stop = _writer(fifo, None, count)
    plain = pytest_in(root, ".", f"@{fifo}", plugin=("-p", "no:plangraph"))
    assert "1 xpassed" in plain.stdout, plain.stdout + plain.stderr
    reads = count[0]
    assert reads >= 1
    _stop(fifo, stop)
    _writer(fifo, reads, [0])
    try:
        done = pytest_in(root, ".", f"@{fifo}")
    except subprocess.TimeoutExpired:  # pragma: no cover - the failure this test keeps out
        pytest.fail("pytest --plangraph hung on an @file that is a FIFO")
    _recorded_no_pass(done)
    stop = _writer(fifo, None, [0])
    _recorded_no_pass(pytest_in(root, ".", f"@{fifo}"))
    _stop(fifo, stop)


@pytest.mark.parametrize(
    "args",
    [
        ("-o=xfail_strict=false",),
        ("-q", "-o=strict_xfail=0"),
    ],
)
def test_an_override_joined_to_o_by_an_equals_sign_records_no_pass(
    pytester: pytest.Pytester, args: tuple[str, ...]
) -> None:
    """``-o=xfail_strict=false``: pytest's parser takes the text after ``-o=`` for the
    override (as it takes ``--override-ini=...``); the run records no pass."""
    root = _xfail_project(pytester)
    done = pytest_in(root, ".", *args)
    assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert "evidence recorded: 1 passed" not in done.stdout, done.stdout
    assert "override" in done.stdout, done.stdout


def test_an_empty_line_of_an_argfile_is_an_argument(pytester: pytest.Pytester) -> None:
    """pytest's parser takes each line of an ``@file`` for an argument, an empty one too:
    ``-k`` then an empty line takes the empty text for its value, and the override on the
    next line is an option of its own (not ``-k``'s value): the run records no pass."""
    root = _xfail_project(pytester)
    argfile = root.parent / "args.txt"
    argfile.write_bytes(b"-k\n\n-oxfail_strict=false\n")
    done = pytest_in(root, ".", f"@{argfile}")
    assert "1 xpassed" in done.stdout, done.stdout + done.stderr
    assert "evidence recorded: 1 passed" not in done.stdout, done.stdout
    assert "override" in done.stdout, done.stdout


def test_configuration_files_that_are_no_regular_files_are_not_waited_on(
    pytester: pytest.Pytester,
) -> None:
    """Beside the project's ``pytest.ini`` (which pytest reads), a ``setup.cfg`` that is a
    FIFO and a ``tox.ini`` linked to ``/dev/zero``: the
    files looked at for their ``pythonpath`` are not waited on nor read without end, and the
    run records its pass."""
    root = calc_project(pytester)
    os.mkfifo(root / "setup.cfg")
    (root / "tox.ini").symlink_to("/dev/zero")
    done = pytest_in(root)
    assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert "evidence recorded: 1 passed" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "sparse"])
def test_a_user_cache_salt_that_is_no_small_regular_file_is_replaced(
    pytester: pytest.Pytester, kind: str
) -> None:
    """The user's cache folder's ``salt`` is a FIFO, a link to ``/dev/zero`` or a sparse
    file of 3 GB: the run neither waits on it nor reads it without end, records its pass
    and keeps a new salt in its place; ``plangraph status`` answers as well."""
    root = calc_project(pytester)
    salt = root.parent / "user-cache" / "plangraph" / "salt"
    shutil.rmtree(salt.parent.parent, ignore_errors=True)  # shared by this process's tests
    salt.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(salt)
    elif kind == "sparse":
        with open(salt, "wb") as handle:
            handle.truncate(3 * 1024**3)
    else:
        salt.symlink_to(kind)
    done = pytest_in(root)
    assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert "evidence recorded: 1 passed" in done.stdout, done.stdout + done.stderr
    assert len(salt.read_text(encoding="ascii")) == 32  # a new salt, a regular file
    status = plangraph(root, "status", env=cache_env(root, "user-cache"))
    assert status.code == 0, status.out + status.err
    assert "completed" in status.out, status.out


def test_a_huge_configuration_file_above_the_runs_is_not_read_whole(
    pytester: pytest.Pytester,
) -> None:
    """A run started in the tests' folder, which holds its own ``pytest.ini``, under a
    repository whose ``setup.cfg`` is a sparse file of 3 GB: the file is not read whole to
    look for a pytest section (taken as holding one), and the run records no pass."""
    root = calc_project(pytester)
    (root / "pytest.ini").unlink()
    with open(root / "setup.cfg", "wb") as handle:
        handle.truncate(3 * 1024**3)
    (root / "tests/pytest.ini").write_text("[pytest]\npythonpath = ..\n", encoding="utf-8")
    done = pytest_in(root, "tests", "--plangraph=../plangraph.yaml", plugin=())
    assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert "1 passed" in done.stdout, done.stdout + done.stderr  # the test ran and passed
    assert "evidence recorded: 1 passed" not in done.stdout, done.stdout
    assert "below the repository's setup.cfg" in done.stdout, done.stdout
