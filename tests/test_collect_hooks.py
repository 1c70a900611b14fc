"""A ``conftest.py`` that widens what pytest collects with ``pytest_ignore_collect``: by
answering False for a folder ``norecursedirs`` leaves out (``build``), it lets pytest in, so a
test file put there later is collected by the next run. The walk of what the run could collect
must enter such folders too, or a failing test planted there leaves the run's records valid.

Real pytest sessions (``pytester``) in a real git repository, and the real ``plangraph``
command.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from cache_helpers import as_tester
from cli_helpers import plangraph, plangraph_main
from glob_helpers import walks_of, write
from plugin_helpers import MARKED_FAILING, latest, make_project

WIDENING = """
def pytest_ignore_collect(collection_path, config):
    if collection_path.name == "build":
        return False  # collected, whatever norecursedirs says
    return None
"""


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


def step_a(root: Path) -> dict[str, object]:
    answer = plangraph_main(root, "status", "--format", "json").json()
    [node] = [n for n in answer["nodes"] if n["id"] == "step-a"]
    return dict(node)


def test_a_folder_a_conftest_lets_pytest_into_is_walked(pytester: pytest.Pytester) -> None:
    root = make_project(pytester, files={"tests/conftest.py": WIDENING})
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)
    assert step_a(root)["status"] == "completed"
    [walk] = walks_of(latest(root)["step-a/ac-marked"].subjects)
    assert '"any_folder":true' in walk
    write(root, "tests/build/test_planted.py", textwrap.dedent(MARKED_FAILING))
    node = step_a(root)
    assert node["status"] == "stale"
    [criterion] = [c for c in node["criteria"] if c["id"] == "ac-marked"]  # type: ignore[attr-defined]
    assert [r["code"] for r in criterion["reasons"]] == ["ARTIFACT_CHANGED"]
    assert plangraph(root, "claim", "step-a", "--by", "agent-7").code == 1
    # pytest does collect the planted test, and it fails
    pytester.runpytest("--plangraph").assert_outcomes(passed=4, failed=1)
    assert step_a(root)["status"] == "failed"


def test_a_run_without_such_a_conftest_keeps_its_key(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)
    [walk] = walks_of(latest(root)["step-a/ac-marked"].subjects)
    assert "any_folder" not in walk  # installed plug-ins' pytest_ignore_collect do not count
    write(root, "tests/build/test_planted.py", textwrap.dedent(MARKED_FAILING))
    assert step_a(root)["status"] == "completed"  # pytest leaves build/ out: nothing changes
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)


DIRECTORY_COLLECTOR = """
import pytest

class Checks(pytest.Dir):
    def collect(self):
        for path in sorted(self.path.iterdir()):
            if path.is_dir() and path.name != "__pycache__":
                yield Checks.from_parent(self, path=path)
            elif path.name.startswith(("check_", "test_")) and path.suffix == ".py":
                yield pytest.Module.from_parent(self, path=path)

def pytest_collect_directory(path, parent):
    return Checks.from_parent(parent, path=path)
"""


def test_a_conftests_own_directory_collector_widens_the_walk(
    pytester: pytest.Pytester,
) -> None:
    """A ``pytest_collect_directory`` of the repository returns a collector of its own, which
    may collect any file of any folder (here ``check_*.py``, which ``python_files`` does not
    name): a failing test planted in such a file must stale the run."""
    root = make_project(pytester, files={"tests/conftest.py": DIRECTORY_COLLECTOR})
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)
    assert step_a(root)["status"] == "completed"
    write(root, "tests/sub/check_planted.py", textwrap.dedent(MARKED_FAILING))
    node = step_a(root)
    assert node["status"] == "stale"
    assert plangraph(root, "claim", "step-a", "--by", "agent-7").code == 1
    # pytest does collect the planted test, and it fails
    pytester.runpytest("--plangraph").assert_outcomes(passed=4, failed=1)
    assert step_a(root)["status"] == "failed"


def test_a_widened_walk_from_the_root_leaves_the_tools_dot_folders_out(
    pytester: pytest.Pytester,
) -> None:
    """Run from the repository root, a widened walk does not enter the dot folders the tools
    write (``.plangraph``, ``.git``, ``.pytest_cache``): the record stays valid after the
    commands that write there, and a file put in ``build/`` (which ``norecursedirs`` leaves
    out) is listed all the same: it stales the record."""
    files = {"conftest.py": DIRECTORY_COLLECTOR, "pytest.ini": "[pytest]\n"}
    root = make_project(pytester, files=files)
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)
    assert step_a(root)["status"] == "completed"
    assert step_a(root)["status"] == "completed"
    write(root, "build/check_planted.py", textwrap.dedent(MARKED_FAILING))
    assert step_a(root)["status"] == "stale"
