"""Test files a ``tests:`` glob reaches that pytest collects but the walk once missed.

The evidence of a glob binds every file the glob could find tests in
(:mod:`pytest_plangraph.vcs.testglob`); the gate lists the glob again, so a failing test file
added where the glob matches stales the node. These are the places pytest collects from that
the walk did not list: a folder that is a link (pytest follows it), a doctest text file
(``test*.txt``, collected by default), a file whose test id matches only past the part of the
glob before its ``::`` (a class name, a parametrized test's id), a folder whose name holds
``::``. A name that is not UTF-8 cannot be bound, so the gate refuses it.

The cases run real pytest sessions (``pytester``) in real git repositories and the real
``plangraph`` command.
"""

from __future__ import annotations

import os
import shutil
from itertools import product
from pathlib import Path

import pytest
from cli_helpers import plangraph
from glob_helpers import FAILING, PASSING, glob_plan, status_of, write
from plugin_helpers import latest, make_project

from pytest_plangraph.errors import UsageError
from pytest_plangraph.plan.evidence import ABSENT
from pytest_plangraph.plan.patterns import PatternIndex, _could_start, prefix_matcher
from pytest_plangraph.vcs.testglob import glob_files


def recorded(pytester: pytest.Pytester, glob: str, login: str = PASSING) -> Path:
    """A project whose criterion's tests are *glob*, recorded passing (two tests)."""
    root = make_project(
        pytester,
        plan=glob_plan(glob),
        tests=PASSING,
        files={"tests/test_auth_login.py": login},
    )
    pytester.runpytest("--plangraph", "-p", "no:cacheprovider").assert_outcomes(passed=2)
    assert status_of(root)[0] == "completed"
    return root


def assert_stale_by(root: Path, path: str) -> None:
    """``status`` says the node is stale because *path* appeared, and ``claim`` refuses it."""
    status, reasons = status_of(root)
    assert status == "stale", reasons
    assert [(r["code"], r["path"], r["old"]) for r in reasons] == [
        ("ARTIFACT_CHANGED", path, ABSENT)
    ]
    claim = plangraph(root, "claim", "auth", "--by", "agent")
    assert claim.code == 1, claim.out
    assert path in claim.out


# --- the walk ----------------------------------------------------------------------------


def test_the_walk_follows_a_link_to_a_folder_as_pytest_does(tmp_path: Path) -> None:
    write(tmp_path, "elsewhere/test_auth_far.py", "")
    write(tmp_path, "tests/test_auth_a.py", "")
    (tmp_path / "tests" / "linked").symlink_to("../elsewhere", target_is_directory=True)
    (tmp_path / "tests" / "loop").symlink_to("..", target_is_directory=True)  # a cycle
    files, listed, _ = glob_files(str(tmp_path), "tests/*test_auth_*.py::*")
    # named by the link's path, as pytest names the test; the cycle is walked once round
    assert "tests/linked/test_auth_far.py" in files
    assert "tests/loop/elsewhere/test_auth_far.py" in files
    assert "tests/loop/tests/test_auth_a.py" not in files  # back to a folder above: not again
    assert "tests/linked" in listed


def test_the_walk_lists_what_a_glob_matches_past_the_file(tmp_path: Path) -> None:
    for rel in (
        "tests/test_auth.py",
        "tests/test_other.py",
        "tests/test_auth_notes.txt",
        "tests/notes_auth.txt",
        "tests/test_auth_a.py::x/test_b.py",
    ):
        write(tmp_path, rel, "")
    # a class name: tests/test_auth.py::TestLogin::test_a
    files, _, _ = glob_files(str(tmp_path), "tests/test_auth*Login::*")
    assert "tests/test_auth.py" in files
    assert "tests/test_other.py" not in files
    # a parametrized test's id may hold the rest of the glob: test_x[a_auth.py::b]
    files, _, _ = glob_files(str(tmp_path), "tests/*_auth.py::*")
    assert "tests/test_other.py" in files
    # a doctest text file's one test is path::name; a folder whose name holds `::`
    files, _, _ = glob_files(str(tmp_path), "tests/test_auth*")
    assert "tests/test_auth_notes.txt" in files
    assert "tests/notes_auth.txt" not in files  # not a name pytest collects doctests from
    files, listed, _ = glob_files(str(tmp_path), "tests/test_auth_*.py::*")
    assert files == ("tests/test_auth_a.py::x/test_b.py",)
    assert "tests/test_auth_a.py::x" in listed
    # a glob whose file part is a plain path names that file alone (there or not)
    assert glob_files(str(tmp_path), "tests/test_auth_a.py::*") == (
        (),
        (),
        ("tests/test_auth_a.py",),
    )


def test_a_name_that_is_not_utf8_where_the_glob_matches_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "tests/test_auth_a.py", "")
    odd = os.fsencode(tmp_path) + b"/tests/test_auth_\xff.py"
    Path(os.fsdecode(odd)).write_text(PASSING, encoding="utf-8")
    with pytest.raises(UsageError, match="not UTF-8"):
        glob_files(str(tmp_path), "tests/test_auth_*.py::*")
    # a glob that cannot match a test of it does not look at it
    assert glob_files(str(tmp_path), "tests/test_auth_a.py::*").files == ("tests/test_auth_a.py",)


# --- the gate ----------------------------------------------------------------------------


def test_a_failing_test_in_a_linked_folder_stales_the_node(pytester: pytest.Pytester) -> None:
    root = recorded(pytester, "tests/*test_auth_*.py::*")
    write(root, "vendor/checks/test_auth_more.py", FAILING)
    (root / "tests" / "more").symlink_to("../vendor/checks", target_is_directory=True)
    assert_stale_by(root, "tests/more/test_auth_more.py")
    # pytest follows the link: the next run runs the test and the criterion fails
    pytester.runpytest("--plangraph", "-p", "no:cacheprovider").assert_outcomes(passed=2, failed=1)
    assert status_of(root)[0] == "failed"


def test_a_folder_replaced_by_a_link_stales_the_node(pytester: pytest.Pytester) -> None:
    root = recorded(pytester, "tests/*test_auth_*.py::*")
    write(root, "tests/sub/test_auth_sub.py", PASSING)
    pytester.runpytest("--plangraph", "-p", "no:cacheprovider").assert_outcomes(passed=3)
    assert "tests/sub/test_auth_sub.py" in latest(root)["auth/ac-auth"].subjects
    write(root, "copy/test_auth_sub.py", PASSING)  # the same bytes, and a failing test more
    write(root, "copy/test_auth_worse.py", FAILING)
    shutil.rmtree(root / "tests" / "sub")  # its module, and its bytecode where it is written
    (root / "tests" / "sub").symlink_to("../copy", target_is_directory=True)
    assert_stale_by(root, "tests/sub/test_auth_worse.py")


def test_a_failing_doctest_text_file_stales_the_node(pytester: pytest.Pytester) -> None:
    root = recorded(pytester, "tests/test_auth*")
    write(root, "tests/test_auth_doc.txt", ">>> 1 + 1\n3\n")
    assert_stale_by(root, "tests/test_auth_doc.txt")
    pytester.runpytest("--plangraph", "-p", "no:cacheprovider").assert_outcomes(passed=2, failed=1)


def test_a_failing_test_whose_class_the_glob_names_stales_the_node(
    pytester: pytest.Pytester,
) -> None:
    login = "class TestLogin:\n    def test_ok(self):\n        assert True\n"
    root = recorded(pytester, "tests/test_auth*Login::*", login)
    write(root, "tests/test_auth_token.py", login.replace("assert True", "assert False"))
    assert_stale_by(root, "tests/test_auth_token.py")


def test_a_failing_test_whose_parameter_id_the_glob_matches_stales_the_node(
    pytester: pytest.Pytester,
) -> None:
    root = recorded(pytester, "tests/*test_auth_*.py::*")
    evil = (
        "import pytest\n\n"
        "@pytest.mark.parametrize('x', [1], ids=['test_auth_z.py::q'])\n"
        "def test_evil(x):\n    assert False\n"
    )
    write(root, "tests/test_other.py", evil)
    assert_stale_by(root, "tests/test_other.py")
    result = pytester.runpytest("--plangraph", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    assert status_of(root)[0] == "failed"  # the id matches: the test was the criterion's


def test_a_failing_test_in_a_folder_named_with_colons_stales_the_node(
    pytester: pytest.Pytester,
) -> None:
    root = recorded(pytester, "tests/test_auth_*.py::*")
    write(root, "tests/test_auth_login.py::x/test_b.py", FAILING)
    assert_stale_by(root, "tests/test_auth_login.py::x/test_b.py")


def test_a_test_file_named_in_no_utf8_makes_the_gate_refuse(pytester: pytest.Pytester) -> None:
    root = recorded(pytester, "tests/test_auth_*.py::*")
    odd = os.fsencode(root) + b"/tests/test_auth_\xff.py"
    Path(os.fsdecode(odd)).write_text(FAILING, encoding="utf-8")
    status = plangraph(root, "status")
    assert status.code == 2
    assert "not UTF-8" in status.err
    assert plangraph(root, "claim", "auth", "--by", "agent").code == 2


def test_a_marked_test_file_named_in_no_utf8_is_refused_not_a_traceback(
    pytester: pytest.Pytester,
) -> None:
    """No glob reaches it (the criterion's tests come by marker): the run ends with one
    message naming the file, exit 4, and records nothing."""
    marked = "import pytest\n\n@pytest.mark.criterion('auth/ac-auth')\ndef test_x():\n    pass\n"
    root = make_project(pytester, plan=glob_plan("tests/test_none.py"), tests=PASSING)
    odd = os.fsencode(root) + b"/tests/test_\xff.py"
    Path(os.fsdecode(odd)).write_text(marked, encoding="utf-8")
    result = pytester.runpytest("--plangraph", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["*evidence was not recorded: auth/ac-auth binds a file whose*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert latest(root) == {}


def test_the_compiled_prefix_test_agrees_with_the_token_walk() -> None:
    # every glob of up to four of these characters (brackets, negation, stars), on every
    # string of up to three: the compiled test the walk uses says what the token walk says
    patterns = ["".join(p) for n in range(5) for p in product("a*?[]!", repeat=n)]
    strings = ["".join(s) for n in range(4) for s in product("a:]", repeat=n)]
    disagree = [
        (p, s)
        for p in patterns
        for s in strings
        if _could_start(p, s) != (prefix_matcher(p)(s) is not None)
    ]
    assert disagree == []


# --- a literal pattern ----------------------------------------------------------------------


def test_a_literal_pattern_matches_from_the_test_file_on() -> None:
    index = PatternIndex({"n/c": ["tests/test_a.py", "tests/d[1]/test_b.py::test_x"]})
    # without the file's id, the prefix may end inside a folder named with `::` or `[`
    assert index.match("tests/test_a.py::x/test_b.py::test_y") == [("n/c", "tests/test_a.py")]
    assert index.match("tests/test_a.py::x/test_b.py::test_y", "tests/test_a.py::x/test_b.py") == []
    assert index.match("tests/test_a.py[x]/test_b.py::test_y", "tests/test_a.py[x]/test_b.py") == []
    assert index.match("tests/test_a.py::test_y[1]", "tests/test_a.py") == [
        ("n/c", "tests/test_a.py")
    ]
    # a folder whose name holds `[` no longer cuts the file's id short
    found = index.match("tests/d[1]/test_b.py::test_x[2]", "tests/d[1]/test_b.py")
    assert found == [("n/c", "tests/d[1]/test_b.py::test_x")]


def test_a_test_in_a_folder_named_after_a_test_file_is_not_its_criterions(
    pytester: pytest.Pytester,
) -> None:
    root = recorded(pytester, "tests/test_auth_login.py")
    write(root, "tests/test_auth_login.py::x/test_b.py", FAILING)
    write(root, "tests/test_auth_login.py[x]/test_c.py", FAILING)
    # the gate binds the file the pattern names; the new folders hold none of its tests:
    # stale only for what tests/ holds now, which the next run sees
    assert not_named(root, "::x/test_b.py", "[x]/test_c.py")
    pytester.runpytest("--plangraph", "-p", "no:cacheprovider").assert_outcomes(passed=2, failed=2)
    assert status_of(root)[0] == "completed"
    assert latest(root)["auth/ac-auth"].outcome == "passed"


def test_a_glob_after_a_plain_file_part_matches_that_file_alone() -> None:
    index = PatternIndex({"n/c": ["tests/test_a.py::test_*"]})
    inside = "tests/test_a.py::test_q/test_b.py::test_z"  # a folder named `test_a.py::test_q`
    assert index.match(inside) == [("n/c", "tests/test_a.py::test_*")]  # the id alone fits
    assert index.match(inside, "tests/test_a.py::test_q/test_b.py") == []
    assert index.match("tests/test_a.py::test_y", "tests/test_a.py") == [
        ("n/c", "tests/test_a.py::test_*")
    ]


def test_a_folder_named_after_the_file_of_a_name_glob_holds_none_of_its_tests(
    pytester: pytest.Pytester,
) -> None:
    root = recorded(pytester, "tests/test_auth_login.py::test_*")
    write(root, "tests/test_auth_login.py::test_q/test_b.py", FAILING)
    # the gate names the one file the glob's file part is; the run agrees
    assert not_named(root, "::test_q/test_b.py")
    pytester.runpytest("--plangraph", "-p", "no:cacheprovider").assert_outcomes(passed=2, failed=1)
    assert latest(root)["auth/ac-auth"].outcome == "passed"
    assert status_of(root)[0] == "completed"


def test_a_failing_test_in_a_folder_a_custom_norecursedirs_lets_pytest_enter_stales_the_node(
    pytester: pytest.Pytester,
) -> None:
    root = make_project(
        pytester,
        plan=glob_plan("tests/*"),
        tests=PASSING,
        files={
            "tests/test_auth_login.py": PASSING,
            "pytest.ini": "[pytest]\ntestpaths = tests\nnorecursedirs = .git\n",
        },
    )
    pytester.runpytest("--plangraph", "-p", "no:cacheprovider").assert_outcomes(passed=2)
    assert status_of(root)[0] == "completed"
    write(root, "tests/build/test_evil.py", FAILING)  # pytest enters build/ under this ini
    assert_stale_by(root, "tests/build/test_evil.py")
    pytester.runpytest("--plangraph", "-p", "no:cacheprovider").assert_outcomes(passed=2, failed=1)


def not_named(root: Path, *parts: str) -> bool:
    """Whether the node is stale only because of what ``tests/`` holds now (a new test file,
    which may hold tests of any criterion of the run), with no reason naming a file that
    ends with one of *parts* as the glob's."""
    status, reasons = status_of(root)
    return (
        status == "stale"
        and [(r["code"], r.get("folder")) for r in reasons] == [("ARTIFACT_CHANGED", "tests")]
        and not any(str(r["path"]).endswith(parts) for r in reasons)
    )
