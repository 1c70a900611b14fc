"""Files the run imported that rewrite or remove themselves once imported: a test module that
writes a failing version of itself over the passing one pytest ran, a ``conftest.py`` that
turns every outcome into a pass and then deletes itself. The hash taken when the test is
bound would be of bytes the run never executed (or of no file: bound absent); the record is
voided instead (``ARTIFACT_CHANGED_DURING_RUN``), and the real ``plangraph status`` and
``plangraph claim`` refuse the node. So is one whose run wrote, while the tests ran, what a
subject that names no file stands for: a test file in a folder the run collects, a pytest
table in a configuration file pytest passed over.

Each case runs real pytest sessions (``pytester``) in a real git repository.
"""

from __future__ import annotations

import pytest
from cli_helpers import plangraph, plangraph_main
from conftest import git
from plugin_helpers import latest, make_project

from pytest_plangraph.plan.evidence import ABSENT
from pytest_plangraph.vcs.testglob import is_collect_key

PLAN = """
plangraph: 1
plan: demo
nodes:
  - id: step-a
    outputs: [src/a.py]
    acceptance:
      - id: ac-marked
        verifier: {type: test}
"""

FAILING = """
import pytest

@pytest.mark.criterion("step-a/ac-marked")
def test_marked():
    assert False
"""

REWRITES_ITSELF = f"""
import pytest

with open(__file__, "w") as handle:  # the failing version, once this one is imported
    handle.write({FAILING!r})

@pytest.mark.criterion("step-a/ac-marked")
def test_marked():
    assert True
"""

CHEATING_CONFTEST = """
import os

import pytest

@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    os.remove(__file__)  # loaded already: gone before the tests are bound

@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    report.outcome = "passed"
    report.longrepr = None
    return report
"""


def node_status(root: object, node_id: str) -> str:
    status = plangraph_main(root, "status", "--format", "json").json()  # type: ignore[arg-type]
    [node] = [n for n in status["nodes"] if n["id"] == node_id]
    return str(node["status"])


def refused(root: object) -> None:
    """The real ``plangraph status --check`` and ``plangraph claim`` refuse step-a."""
    assert node_status(root, "step-a") != "completed"
    claim = plangraph(root, "claim", "step-a", "--by", "agent-7")  # type: ignore[arg-type]
    assert claim.code == 1, claim.err


def test_a_test_module_that_rewrites_itself_when_imported_voids_its_record(
    pytester: pytest.Pytester,
) -> None:
    root = make_project(pytester, plan=PLAN, tests=REWRITES_ITSELF)
    pytester.runpytest("--plangraph").assert_outcomes(passed=1)
    assert (root / "tests/test_a.py").read_text().strip() == FAILING.strip()
    record = latest(root)["step-a/ac-marked"]
    assert record.outcome == "error"
    assert record.reason == "ARTIFACT_CHANGED_DURING_RUN"
    assert "tests/test_a.py" in record.details["changed_during_run"]
    refused(root)
    # the file as it is now fails, which a run records
    pytester.runpytest("--plangraph").assert_outcomes(failed=1)
    assert latest(root)["step-a/ac-marked"].outcome == "failed"


def test_a_conftest_that_removes_itself_once_loaded_is_not_bound_absent(
    pytester: pytest.Pytester,
) -> None:
    root = make_project(
        pytester, plan=PLAN, tests=FAILING, files={"tests/conftest.py": CHEATING_CONFTEST}
    )
    pytester.runpytest("--plangraph").assert_outcomes(passed=1)  # the conftest said so
    assert not (root / "tests/conftest.py").exists()
    record = latest(root)["step-a/ac-marked"]
    assert record.subjects.get("tests/conftest.py") != ABSENT
    assert record.outcome == "error"
    assert record.reason == "ARTIFACT_CHANGED_DURING_RUN"
    assert "tests/conftest.py" in record.details["changed_during_run"]
    refused(root)


def test_code_under_test_that_rewrites_itself_when_a_conftest_imports_it_voids_the_record(
    pytester: pytest.Pytester,
) -> None:
    # the root conftest imports src/a.py before the session starts: the hash taken then is
    # already of the version it wrote over itself, which the test never ran
    module = 'A = 1\nwith open(__file__, "w") as handle:\n    handle.write("A = 2\\n")\n'
    conftest = "import os, sys\nsys.path.insert(0, os.path.dirname(__file__))\nimport src.a\n"
    test = """
        import pytest
        from src.a import A

        @pytest.mark.criterion("step-a/ac-marked")
        def test_marked():
            assert A == 1
        """
    root = make_project(
        pytester, plan=PLAN, tests=test, files={"src/a.py": module, "conftest.py": conftest}
    )
    pytester.runpytest("--plangraph").assert_outcomes(passed=1)
    assert (root / "src/a.py").read_text() == "A = 2\n"
    record = latest(root)["step-a/ac-marked"]
    assert record.outcome == "error"
    assert record.reason == "ARTIFACT_CHANGED_DURING_RUN"
    assert record.details["changed_during_run"] == ["src/a.py"]
    refused(root)
    pytester.runpytest("--plangraph").assert_outcomes(failed=1)


WRITES_A_TEST_FILE = """
from pathlib import Path
import pytest

@pytest.mark.criterion("step-a/ac-marked")
def test_marked():
    Path("tests/test_late.py").write_text("def test_late():\\n    assert False\\n")
"""

WRITES_A_PYTEST_TABLE = """
from pathlib import Path
import pytest

@pytest.mark.criterion("step-a/ac-marked")
def test_marked():
    table = '[tool.pytest.ini_options]\\npython_functions = "nothing_*"\\n'
    Path("pyproject.toml").write_text(table)
"""


def test_a_test_file_written_into_a_collected_folder_during_the_run_voids_the_record(
    pytester: pytest.Pytester,
) -> None:
    """The folder's collect subject was taken before the test wrote ``tests/test_late.py``:
    the record that bound the folder without it is voided, not stored as a pass."""
    root = make_project(pytester, plan=PLAN, tests=WRITES_A_TEST_FILE)
    pytester.runpytest("--plangraph").assert_outcomes(passed=1)
    record = latest(root)["step-a/ac-marked"]
    assert record.outcome == "error"
    assert record.reason == "ARTIFACT_CHANGED_DURING_RUN"
    [walk] = record.details["changed_during_run"]
    assert is_collect_key(walk) and walk.startswith("tests/")
    refused(root)
    # the file written holds a failing test, which the next run collects
    pytester.runpytest("--plangraph").assert_outcomes(passed=1, failed=1)


def test_a_pytest_table_written_during_the_run_voids_the_record(
    pytester: pytest.Pytester,
) -> None:
    """``pyproject.toml`` had no pytest table when the run started (its section is bound
    absent, ``tox.ini`` was read); a test gave it one."""
    root = make_project(
        pytester,
        plan=PLAN,
        tests=WRITES_A_PYTEST_TABLE,
        files={"tox.ini": "[pytest]\ntestpaths = tests\n", "pyproject.toml": "[project]\n"},
    )
    git(root, "rm", "-q", "pytest.ini")
    git(root, "commit", "-qm", "the configuration in tox.ini")
    pytester.runpytest("--plangraph").assert_outcomes(passed=1)
    record = latest(root)["step-a/ac-marked"]
    assert record.subjects["pyproject.toml#pytest"] == ABSENT
    assert record.outcome == "error"
    assert record.reason == "ARTIFACT_CHANGED_DURING_RUN"
    assert record.details["changed_during_run"] == ["pyproject.toml#pytest"]
    refused(root)


def test_a_run_that_writes_nothing_bound_still_records_its_pass(
    pytester: pytest.Pytester,
) -> None:
    """The end-of-run walk finds what the start found: the pass stands."""
    root = make_project(pytester, plan=PLAN, tests=FAILING.replace("False", "True"))
    pytester.runpytest("--plangraph").assert_outcomes(passed=1)
    record = latest(root)["step-a/ac-marked"]
    assert (record.outcome, record.reason) == ("passed", None)
    assert node_status(root, "step-a") == "completed"
