"""Files that were not there when the evidence was recorded, and that change the verdict once
they are: a ``conftest.py`` on the way from the repository root down to a test's folder, a
pytest configuration file pytest would have preferred over the one it read. The evidence binds
them absent (``"absent"``); a file that appears there stales it (``ARTIFACT_CHANGED``), the real
``plangraph status`` and ``plangraph claim`` say so, and removing the file freshens it again.

Each case runs real pytest sessions (``pytester``) in a real git repository.
"""

from __future__ import annotations

import hashlib
import os
import textwrap
from pathlib import Path

import pytest
from cli_helpers import plangraph, plangraph_main
from conftest import git
from plugin_helpers import latest, make_project

from pytest_plangraph.plan.evidence import ABSENT
from pytest_plangraph.vcs.testglob import collect_folder, is_collect_key

FAILING_FIXTURE = """
import pytest

@pytest.fixture(autouse=True)
def _broken():
    raise RuntimeError("every test of this folder fails now")
"""


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def criterion_reasons(root: Path, ref: str) -> list[dict[str, object]]:
    """The reasons the real ``plangraph status`` gives for the criterion *ref*."""
    node_id, _, criterion_id = ref.partition("/")
    status = plangraph_main(root, "status", "--format", "json").json()
    [node] = [n for n in status["nodes"] if n["id"] == node_id]
    [criterion] = [c for c in node["criteria"] if c["id"] == criterion_id]
    return list(criterion["reasons"])


def node_status(root: Path, node_id: str) -> str:
    status = plangraph_main(root, "status", "--format", "json").json()
    [node] = [n for n in status["nodes"] if n["id"] == node_id]
    return str(node["status"])


def recorded(pytester: pytest.Pytester, passed: int = 4) -> Path:
    """The small project of ``plugin_helpers`` with its evidence recorded (every test and the
    artifact verifier item pass)."""
    root = make_project(pytester)
    pytester.runpytest("--plangraph").assert_outcomes(passed=passed)
    assert node_status(root, "step-a") == "completed"
    return root


def test_absent_conftest_and_configuration_paths_are_bound_absent(
    pytester: pytest.Pytester,
) -> None:
    root = recorded(pytester)
    subjects = latest(root)["step-a/ac-marked"].subjects
    assert subjects["conftest.py"] == ABSENT
    assert subjects["tests/conftest.py"] == ABSENT
    assert subjects["tests/__init__.py"] == ABSENT
    # pytest read pytest.ini at the root: the names it prefers there are bound absent
    assert subjects["pytest.toml"] == ABSENT
    assert subjects[".pytest.toml"] == ABSENT
    assert subjects["pytest.ini"] == sha256(root / "pytest.ini")
    assert "tox.ini" not in subjects  # pytest prefers pytest.ini over it: no change of its
    assert subjects["tests/test_a.py"] == sha256(root / "tests/test_a.py")


@pytest.mark.parametrize("where", ["tests/conftest.py", "conftest.py"])
def test_a_conftest_added_later_stales_the_node_and_claim_refuses_it(
    pytester: pytest.Pytester, where: str
) -> None:
    root = recorded(pytester)
    conftest = root / where
    conftest.write_text(FAILING_FIXTURE)

    [reason] = criterion_reasons(root, "step-a/ac-marked")
    assert reason["code"] == "ARTIFACT_CHANGED"
    assert reason["path"] == where
    assert reason["old"] == ABSENT
    assert reason["new"] == sha256(conftest)
    assert "appeared" in str(reason["message"]) and "absent" in str(reason["message"])
    assert node_status(root, "step-a") == "stale"

    refused = plangraph(root, "claim", "step-a", "--by", "agent-7", "--format", "json")
    assert refused.code == 1, refused.err
    assert "ARTIFACT_CHANGED" in refused.out and where in refused.out

    # removing it again: the evidence holds as it did
    conftest.unlink()
    assert criterion_reasons(root, "step-a/ac-marked") == []
    assert node_status(root, "step-a") == "completed"

    # and with it, the tests fail: the node is failed, not completed
    conftest.write_text(FAILING_FIXTURE)
    pytester.runpytest("--plangraph").assert_outcomes(passed=1, errors=3)
    assert latest(root)["step-a/ac-marked"].outcome != "passed"
    assert node_status(root, "step-a") == "failed"


def test_a_conftest_added_to_any_folder_the_run_collects_stales_every_criterion(
    pytester: pytest.Pytester,
) -> None:
    """pytest loads the ``conftest.py`` of every folder it collects, and its session-wide
    hooks (``pytest_collection_modifyitems``, ``pytest_runtest_makereport``) see every test:
    the path binds absent to every criterion of the run, not only to the tests below it."""
    api_test = """
        import pytest

        @pytest.mark.criterion("step-a/ac-marked")
        def test_api():
            assert True
        """
    root = make_project(
        pytester,
        files={"tests/api/test_endpoint_calls.py": api_test, "tests/data/sample.txt": "x\n"},
    )
    (root / "tests/.hidden").mkdir()
    pytester.runpytest("--plangraph").assert_outcomes(passed=5)
    records = latest(root)
    for ref in ("step-a/ac-marked", "step-a/ac-pattern"):
        subjects = records[ref].subjects
        assert subjects["tests/api/conftest.py"] == ABSENT
        assert subjects["tests/data/conftest.py"] == ABSENT  # a folder with no test in it
        assert "tests/.hidden/conftest.py" not in subjects  # pytest does not enter it
        assert "src/conftest.py" not in subjects  # not under testpaths
    forcing = """
        import pytest

        @pytest.hookimpl(wrapper=True)
        def pytest_runtest_makereport(item, call):
            report = yield
            report.outcome = "failed"
            return report
        """
    for where in ("tests/api/conftest.py", "tests/data/conftest.py"):
        (root / where).write_text(textwrap.dedent(forcing))
        for ref in ("step-a/ac-marked", "step-a/ac-pattern"):
            [reason] = criterion_reasons(root, ref)
            assert (reason["code"], reason["path"], reason["old"]) == (
                "ARTIFACT_CHANGED",
                where,
                ABSENT,
            )
        assert node_status(root, "step-a") == "stale"
        (root / where).unlink()
    assert node_status(root, "step-a") == "completed"
    # a folder in the way of a test: a conftest there binds both, as before
    (root / "tests/conftest.py").write_text(FAILING_FIXTURE)
    for ref in ("step-a/ac-marked", "step-a/ac-pattern"):
        [reason] = criterion_reasons(root, ref)
        assert (reason["code"], reason["path"]) == ("ARTIFACT_CHANGED", "tests/conftest.py")


def test_an_init_module_added_to_the_test_folder_stales_the_evidence(
    pytester: pytest.Pytester,
) -> None:
    root = recorded(pytester)
    assert latest(root)["step-a/ac-marked"].subjects["tests/__init__.py"] == ABSENT
    init = root / "tests/__init__.py"
    init.write_text("raise RuntimeError('importing this package fails')\n")
    [reason] = criterion_reasons(root, "step-a/ac-marked")
    assert (reason["code"], reason["path"], reason["new"]) == (
        "ARTIFACT_CHANGED",
        "tests/__init__.py",
        sha256(init),
    )
    # the collection fails: the run records nothing, and the node stays stale, not completed
    pytester.runpytest("--plangraph").assert_outcomes(errors=1)
    assert node_status(root, "step-a") == "stale"
    # a package's __init__.py that is there binds by its bytes
    init.write_text("")
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)
    assert latest(root)["step-a/ac-marked"].subjects["tests/__init__.py"] == sha256(init)
    init.write_text("import sys\n")
    [reason] = criterion_reasons(root, "step-a/ac-marked")
    assert (reason["code"], reason["path"]) == ("ARTIFACT_CHANGED", "tests/__init__.py")


def test_a_configuration_file_closer_than_the_one_read_stales_the_evidence(
    pytester: pytest.Pytester,
) -> None:
    root = recorded(pytester)
    # pytest prefers pytest.toml over pytest.ini in the same folder (a pytest that does not
    # know the name ignores it: binding it is conservative)
    better = root / "pytest.toml"
    better.write_text('[pytest]\ntestpaths = ["tests"]\npython_functions = ["nothing_*"]\n')
    [reason] = criterion_reasons(root, "step-a/ac-pattern")
    assert (reason["code"], reason["path"], reason["old"]) == (
        "ARTIFACT_CHANGED",
        "pytest.toml",
        ABSENT,
    )
    better.unlink()
    assert criterion_reasons(root, "step-a/ac-pattern") == []


def test_without_a_configuration_file_every_name_binds_absent(
    pytester: pytest.Pytester,
) -> None:
    root = make_project(pytester)
    git(root, "rm", "-q", "pytest.ini")
    git(root, "commit", "-qm", "no configuration file")
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)
    subjects = latest(root)["step-a/ac-marked"].subjects
    names = ["pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml"]
    assert {name: subjects.get(name) for name in [*names, "tox.ini", "setup.cfg"]} == dict.fromkeys(
        [*names, "tox.ini", "setup.cfg"], ABSENT
    )
    # a tox.ini with a [pytest] section now says what is collected: the evidence is stale
    (root / "tox.ini").write_text("[pytest]\npython_functions = nothing_*\n")
    [reason] = criterion_reasons(root, "step-a/ac-marked")
    assert (reason["code"], reason["path"]) == ("ARTIFACT_CHANGED", "tox.ini")
    # a test folder's pytest.ini changes nothing of a run started at the root (a run started
    # in tests/ narrows the collection, and records no pass)
    (root / "tox.ini").unlink()
    (root / "tests/pytest.ini").write_text("[pytest]\npython_functions = nothing_*\n")
    assert criterion_reasons(root, "step-a/ac-marked") == []


def test_a_pyproject_without_a_pytest_table_leaves_every_other_name_absent(
    pytester: pytest.Pytester,
) -> None:
    # pytest reads such a pyproject.toml only when it found no other file: any of them wins
    root = make_project(pytester, files={"pyproject.toml": '[project]\nname = "demo"\n'})
    git(root, "rm", "-q", "pytest.ini")
    git(root, "commit", "-qm", "no pytest configuration file")
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)
    subjects = latest(root)["step-a/ac-marked"].subjects
    assert subjects["pyproject.toml"] == sha256(root / "pyproject.toml")
    names = ["pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg"]
    assert [subjects.get(name) for name in names] == [ABSENT] * len(names)


def test_a_conftest_that_is_a_link_or_a_folder(pytester: pytest.Pytester) -> None:
    root = recorded(pytester)
    elsewhere = root / "src/helpers.py"
    elsewhere.write_text(FAILING_FIXTURE)
    git(root, "add", "-A")
    link = root / "tests/conftest.py"
    os.symlink("../src/helpers.py", link)
    [reason] = criterion_reasons(root, "step-a/ac-marked")
    assert (reason["code"], reason["path"], reason["new"]) == (
        "ARTIFACT_CHANGED",
        "tests/conftest.py",
        sha256(elsewhere),
    )
    link.unlink()
    # a folder named conftest.py is no conftest pytest loads: nothing changes
    (root / "tests/conftest.py").mkdir()
    (root / "tests/conftest.py/x.py").write_text("X = 1\n")
    assert criterion_reasons(root, "step-a/ac-marked") == []
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)


def test_a_conftest_appearing_during_the_run_voids_the_evidence(
    pytester: pytest.Pytester,
) -> None:
    root = make_project(
        pytester,
        files={
            "tests/test_z.py": """
                from pathlib import Path

                def test_writes_a_conftest():
                    Path(__file__).with_name("conftest.py").write_text("X = 1\\n")
                """
        },
    )
    pytester.runpytest("--plangraph", "-p", "no:randomly").assert_outcomes(passed=5)
    record = latest(root)["step-a/ac-marked"]
    assert (record.outcome, record.reason) == ("error", "ARTIFACT_CHANGED_DURING_RUN")
    # the conftest, and what pytest could collect under tests/, which it is part of
    moved = record.details["changed_during_run"]
    assert [p for p in moved if not is_collect_key(p)] == ["tests/conftest.py"]
    assert [collect_folder(p) for p in moved if is_collect_key(p)] == ["tests"]


def test_under_xdist_the_absent_paths_bind_the_same(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    pytester.runpytest("--plangraph", "-n", "2", "-p", "no:randomly").assert_outcomes(passed=4)
    records = latest(root)
    assert records["step-a/ac-marked"].subjects["tests/conftest.py"] == ABSENT
    assert records["step-a/ac-marked"].run.id == records["step-a/ac-pattern"].run.id
    (root / "tests/conftest.py").write_text(FAILING_FIXTURE)
    assert node_status(root, "step-a") == "stale"
    pytester.runpytest("--plangraph", "-n", "2", "-p", "no:randomly").assert_outcomes(
        passed=1, errors=3
    )
    assert node_status(root, "step-a") == "failed"


def test_a_conftest_above_a_linked_test_folder_stales_the_evidence(
    pytester: pytest.Pytester,
) -> None:
    # pytest collects tests/link/test_x.py (tests/link links to shared/) and loads the
    # conftest.py files of tests/link's folders, which are not those above shared/
    test = """
        import pytest

        @pytest.mark.criterion("step-a/ac-marked")
        def test_marked():
            assert True
        """
    plan = """
        plangraph: 1
        plan: demo
        nodes:
          - id: step-a
            outputs: [src/a.py]
            acceptance:
              - id: ac-marked
                verifier: {type: test}
        """
    root = make_project(pytester, plan=plan, tests="", files={"shared/test_x.py": test})
    (root / "tests/test_a.py").unlink()
    (root / "tests/link").symlink_to("../shared", target_is_directory=True)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "linked tests")
    pytester.runpytest("--plangraph").assert_outcomes(passed=1)
    subjects = latest(root)["step-a/ac-marked"].subjects
    assert subjects["tests/conftest.py"] == ABSENT
    assert subjects["shared/conftest.py"] == ABSENT
    assert node_status(root, "step-a") == "completed"

    conftest = root / "tests/conftest.py"
    conftest.write_text(FAILING_FIXTURE)
    reasons = criterion_reasons(root, "step-a/ac-marked")
    assert [(r["code"], r["path"], r["old"]) for r in reasons] == [
        ("ARTIFACT_CHANGED", "tests/conftest.py", ABSENT)
    ]
    refused = plangraph(root, "claim", "step-a", "--by", "agent-7", "--format", "json")
    assert refused.code == 1, refused.err
    # the file does change the verdict: the tests of the linked folder fail with it
    pytester.runpytest("--plangraph").assert_outcomes(errors=1)
