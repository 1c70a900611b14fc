"""A test file added where a criterion's ``tests:`` glob matches stales its evidence.

The evidence of a criterion verified by a glob (``tests/test_auth_*.py::*``) ran the tests of
the files the glob found in that run. A file added later was not run: the record binds every
file the glob could find tests in (:mod:`pytest_plangraph.vcs.testglob`), and the gate lists the
glob again, so a file found now that the record did not bind is ``ARTIFACT_CHANGED`` (old
``absent``) — in ``status``, in ``claim``, with the kept answer standing or deleted.

The cases run real pytest sessions (``pytester``) in real git repositories and the real
``plangraph`` command.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_helpers import plangraph
from glob_helpers import FAILING, PASSING, glob_plan, status_of, write
from plugin_helpers import latest, make_project

from pytest_plangraph.plan.evidence import ABSENT
from pytest_plangraph.plan.patterns import glob_files_of
from pytest_plangraph.vcs.testglob import glob_files

PLAN = glob_plan("tests/test_auth_*.py::*", exclude="tests/test_auth_slow.py")


def recorded(pytester: pytest.Pytester, plan: str = PLAN) -> Path:
    root = make_project(
        pytester,
        plan=plan,
        tests=PASSING,
        files={"tests/test_auth_login.py": PASSING, "tests/test_auth_util.py": "HELP = 1\n"},
    )
    pytester.runpytest("--plangraph").assert_outcomes(passed=2)
    assert status_of(root)[0] == "completed"
    return root


# --- the walk ----------------------------------------------------------------------------


def test_the_walk_lists_the_python_files_a_glob_could_find_tests_in(tmp_path: Path) -> None:
    for rel in (
        "tests/test_auth_a.py",
        "tests/sub/test_auth_b.py",
        "tests/test_other.py",
        "tests/test_auth_data.json",
        "tests/__pycache__/test_auth_c.py",
        "tests/.hidden/test_auth_d.py",
        "tests/venv/test_auth_e.py",
        "tests/venv/pyvenv.cfg",
        "tests/build/test_auth_g.py",
        "src/test_auth_f.py",
    ):
        write(tmp_path, rel, "")
    files, listed, _ = glob_files(str(tmp_path), "tests/test_auth_*.py::*")
    assert files == ("tests/test_auth_a.py",)
    assert listed == ("tests",)  # no id under tests/sub/ starts with tests/test_auth_
    files, listed, _ = glob_files(str(tmp_path), "tests/*test_auth_*.py::*")
    # fnmatch's `*` crosses `/`: any folder under tests/ may hold ids the glob matches, and
    # any Python file may (a parametrized test's id: tests/test_other.py::t[test_auth_x.py::y])
    # a hidden folder and build/ too: a project's norecursedirs may let pytest enter them
    assert files == (
        "tests/.hidden/test_auth_d.py",
        "tests/build/test_auth_g.py",
        "tests/sub/test_auth_b.py",
        "tests/test_auth_a.py",
        "tests/test_other.py",
    )
    # not __pycache__, nor a virtual environment (pytest never collects in one by default)
    assert listed == ("tests", "tests/.hidden", "tests/build", "tests/sub")
    assert glob_files(str(tmp_path), "tests/test_auth_?.py::test_x").files == (
        "tests/test_auth_a.py",
    )
    assert glob_files(str(tmp_path), "../elsewhere/*.py::*") == ((), (), ())
    missing = glob_files(str(tmp_path), "nowhere/test_*.py::*")
    assert missing.files == () and missing.listed == ("nowhere",)


def test_a_glob_in_the_test_name_names_its_one_file_without_listing(tmp_path: Path) -> None:
    write(tmp_path, "tests/test_a.py", "")
    found = glob_files(str(tmp_path), "tests/test_a.py::test_pattern*")
    assert found == (("tests/test_a.py",), (), ("tests/test_a.py",))
    # not there yet: nothing found, but the path is named, so the snapshot hashes it
    assert glob_files(str(tmp_path), "tests/test_b.py::test_*") == ((), (), ("tests/test_b.py",))


def test_a_glob_from_the_root_lists_every_folder_it_may_enter(tmp_path: Path) -> None:
    write(tmp_path, "a/test_x.py", "")
    write(tmp_path, ".git/test_y.py", "")
    files, listed, _ = glob_files(str(tmp_path), "*::test_login")
    assert files == ("a/test_x.py",)
    assert listed == ("", "a")


def test_excluded_files_are_not_required() -> None:
    found = {"tests/test_auth_*.py::*": ("tests/test_auth_a.py", "tests/test_auth_slow.py")}
    tests = ["tests/test_auth_*.py::*", "tests/test_plain.py"]
    assert glob_files_of(tests, [], found) == ["tests/test_auth_a.py", "tests/test_auth_slow.py"]
    assert glob_files_of(tests, ["tests/test_auth_slow.py"], found) == ["tests/test_auth_a.py"]
    assert glob_files_of(["tests/test_plain.py"], [], found) == []


# --- the evidence and the gate -------------------------------------------------------------


def test_the_record_binds_every_file_the_glob_finds_and_stays_valid(
    pytester: pytest.Pytester,
) -> None:
    root = recorded(pytester)
    subjects = latest(root)["auth/ac-auth"].subjects
    # a file with no test of its own is bound too, so the gate finds it bound next time
    assert "tests/test_auth_util.py" in subjects
    assert "tests/test_auth_login.py" in subjects
    assert plangraph(root, "claim", "auth", "--by", "agent").code == 0


def test_a_failing_test_file_added_where_the_glob_matches_stales_the_node(
    pytester: pytest.Pytester,
) -> None:
    root = recorded(pytester)
    assert status_of(root)[0] == "completed"  # the kept answer is kept now
    write(root, "tests/test_auth_token.py", FAILING)
    status, reasons = status_of(root)
    assert status == "stale"
    [reason] = reasons
    assert reason["code"] == "ARTIFACT_CHANGED"
    assert reason["path"] == "tests/test_auth_token.py"
    assert reason["old"] == ABSENT
    claim = plangraph(root, "claim", "auth", "--by", "agent")
    assert claim.code == 1, claim.out
    assert "tests/test_auth_token.py" in claim.out
    # impact names the added file and the node it stales
    impact = plangraph(root, "impact", "--format", "json", "--no-commits")
    assert impact.code in (0, 1), impact.err
    report = impact.json()
    assert "tests/test_auth_token.py" in [c["path"] for c in report["changed"]]
    assert "auth" in [n["node"] for n in report["invalidated"]]
    # the same answer with every cache deleted
    shutil.rmtree(root / ".plangraph" / "cache")
    assert status_of(root)[0] == "stale"
    # the next run runs the new file: the criterion fails
    pytester.runpytest("--plangraph").assert_outcomes(passed=2, failed=1)
    assert status_of(root)[0] == "failed"


def test_a_file_added_in_a_new_sub_folder_is_found(pytester: pytest.Pytester) -> None:
    # fnmatch's `*` crosses `/`: this glob matches files in every folder under tests/
    root = recorded(pytester, PLAN.replace("tests/test_auth_*.py", "tests/*test_auth_*.py"))
    assert status_of(root)[0] == "completed"
    write(root, "tests/deeper/test_auth_more.py", FAILING)
    status, reasons = status_of(root)
    assert status == "stale"
    assert [r["path"] for r in reasons] == ["tests/deeper/test_auth_more.py"]


def test_an_excluded_file_or_one_the_glob_cannot_match_changes_nothing(
    pytester: pytest.Pytester,
) -> None:
    root = recorded(pytester)
    write(root, "tests/test_auth_slow.py", FAILING)  # taken out by exclude:
    write(root, "tests/test_billing.py", FAILING)  # not under the glob
    write(root, "tests/test_auth_notes.txt", "no tests\n")  # not a Python file
    # no reason names them as files of the glob; the one reason is what tests/ holds now (a
    # new test file may hold a criterion marker of any criterion, or hooks: every criterion
    # of the run is stale until a run has seen it)
    status, reasons = status_of(root)
    assert status == "stale"
    assert [(r["code"], r.get("folder")) for r in reasons] == [("ARTIFACT_CHANGED", "tests")]
    (root / "tests/test_billing.py").unlink()
    (root / "tests/test_auth_slow.py").unlink()
    (root / "tests/test_auth_notes.txt").unlink()  # a doctest file pytest collects (test*.txt)
    assert status_of(root)[0] == "completed"


def test_a_file_a_test_writes_during_the_run_voids_the_record(
    pytester: pytest.Pytester,
) -> None:
    writer = (
        "from pathlib import Path\n\n"
        "def test_writes():\n"
        "    Path(__file__).with_name('test_auth_late.py').write_text("
        "'def test_late():\\n    assert False\\n')\n"
    )
    root = make_project(
        pytester, plan=PLAN, tests=PASSING, files={"tests/test_auth_login.py": writer}
    )
    pytester.runpytest("--plangraph", "-p", "no:cacheprovider").assert_outcomes(passed=2)
    subjects = latest(root)["auth/ac-auth"].subjects
    assert "tests/test_auth_late.py" not in subjects  # not there when the session started
    # what the run could collect under tests/ changed while it ran: no pass is recorded
    record = latest(root)["auth/ac-auth"]
    assert (record.outcome, record.reason) == ("error", "ARTIFACT_CHANGED_DURING_RUN")
    status, _ = status_of(root)
    assert status != "completed"
    # the next run collects the file written, whose test fails
    pytester.runpytest("--plangraph", "-p", "no:cacheprovider").assert_outcomes(passed=2, failed=1)
    assert status_of(root)[0] == "failed"
