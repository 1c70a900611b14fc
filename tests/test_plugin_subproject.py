"""A project in a folder of its repository: ``plangraph init`` writes the plan at the
repository root, where the commands read it, and ``pytest --plangraph`` run in the project's
folder (its own rootdir) finds it there when the rootdir holds none.

Trying boltons in a folder of a larger repository, ``plangraph init --package pkg/boltons``
wrote ``plangraph.yaml`` at the root and said ``next: … pytest --plangraph``, which then
stopped with "plangraph.yaml: plan file not found" while ``plangraph status`` read the plan.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import plangraph
from plugin_helpers import latest
from repo_helpers import commit_files

PLAN = """
plangraph: 1
plan: sub
nodes:
  - id: step-a
    acceptance:
      - id: ac-a
        verifier: {type: test, tests: ["pkg/tests/test_a.py"]}
"""


def _repository(root: Path, files: dict[str, str]) -> Path:
    commit_files(root, files)
    return root / "pkg"


FILES = {
    ".gitignore": ".plangraph/\n__pycache__/\n",
    "pkg/pytest.ini": "[pytest]\ntestpaths = tests\n",
    "pkg/tests/test_a.py": "def test_a():\n    pass\n",
}


def test_the_plan_at_the_repository_root_is_found_from_a_project_folder(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _repository(pytester.path, {**FILES, "plangraph.yaml": PLAN})
    monkeypatch.chdir(project)
    result = pytester.runpytest("--plangraph")
    assert result.ret == 0, result.stdout.str()
    record = latest(pytester.path)["step-a/ac-a"]
    assert (record.outcome, list(record.details["tests"])) == (
        "passed",
        ["pkg/tests/test_a.py::test_a"],
    )
    assert "step-a  step  completed" in plangraph(project, "status").out


def test_a_plan_at_the_rootdir_comes_first_and_a_named_one_is_never_looked_for_elsewhere(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = PLAN.replace("plan: sub", "plan: own")
    project = _repository(
        pytester.path, {**FILES, "plangraph.yaml": PLAN, "pkg/plangraph.yaml": own}
    )
    monkeypatch.chdir(project)
    result = pytester.runpytest("--plangraph")
    assert "plan own v1" in result.stdout.str()
    (project / "plangraph.yaml").unlink()
    (project / "pytest.ini").write_text(
        "[pytest]\ntestpaths = tests\nplangraph_plan = plans/missing.yaml\n", encoding="utf-8"
    )
    result = pytester.runpytest("--plangraph")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*plans/missing.yaml*plan file not found*"])
