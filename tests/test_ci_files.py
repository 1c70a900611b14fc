"""The GitHub Action (``action.yml``), the example workflows and the pre-commit hook: their
structure checked against the published schemas (vendored by check-jsonschema, no network),
the rules of composite actions checked here, and their commands run on a fixture."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_helpers import PLANGRAPH
from conftest import FIXTURES, ROOT
from repo_helpers import git

ACTION = ROOT / "action.yml"
HOOKS = ROOT / ".pre-commit-hooks.yaml"
WORKFLOWS = sorted((ROOT / "docs" / "examples").glob("*.yml"))
BIN = Path(sys.executable).parent
_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def check_schema(schema: str, *paths: Path) -> None:
    result = subprocess.run(
        [str(BIN / "check-jsonschema"), "--builtin-schema", schema, *map(str, paths)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_action_matches_the_action_metadata_schema() -> None:
    check_schema("vendor.github-actions", ACTION)


def test_example_workflows_match_the_workflow_schema() -> None:
    assert {p.name for p in WORKFLOWS} >= {"plangraph-gate.yml", "plangraph-impact.yml"}
    check_schema("vendor.github-workflows", *WORKFLOWS)


def test_action_is_composite_and_every_run_step_names_its_shell() -> None:
    action = load(ACTION)
    assert {"name", "description", "inputs", "runs"} <= set(action)
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    for step in steps:
        assert ("run" in step) != ("uses" in step), step
        if "run" in step:
            assert step.get("shell") == "bash", step["name"]
        else:
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@v\d+", step["uses"]), step["uses"]


def test_every_input_referenced_exists_and_inputs_reach_scripts_through_env() -> None:
    action = load(ACTION)
    inputs = action["inputs"]
    assert {"plan", "store", "pytest-args", "python-version"} <= set(inputs)
    assert all(spec.get("description") for spec in inputs.values())
    text = ACTION.read_text(encoding="utf-8")
    referenced = {
        m.group(1) for e in _EXPRESSION.findall(text) for m in re.finditer(r"inputs\.([\w-]+)", e)
    }
    assert referenced and referenced <= set(inputs), referenced - set(inputs)
    for step in action["runs"]["steps"]:  # an expression inside a script is script injection
        assert not _EXPRESSION.search(step.get("run", "")), step["name"]


def test_action_steps_run_the_gate_cache_the_store_and_publish_always() -> None:
    steps = {step["name"]: step for step in load(ACTION)["runs"]["steps"]}
    gate = next(s for s in steps.values() if "--plangraph-gate" in s.get("run", ""))
    assert "pytest" in gate["run"] and "--plangraph-store" in gate["run"]
    cache = next(s for s in steps.values() if s.get("uses", "").startswith("actions/cache@"))
    assert "inputs.store" in cache["with"]["path"]
    report = next(s for s in steps.values() if "--format html" in s.get("run", ""))
    assert report["if"] == "always()" and "GITHUB_STEP_SUMMARY" in report["run"]
    assert "plangraph report" in report["run"]
    upload = next(s for s in steps.values() if "upload-artifact" in s.get("uses", ""))
    assert upload["if"] == "always()"


def run_step(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A run step as GitHub runs it: ``bash -e -o pipefail``, tools of this environment."""
    full = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", **env}
    full.pop("PLANGRAPH_STORE", None)
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture
def jwt_login(tmp_path: Path) -> Path:
    root = tmp_path / "jwt-login"
    shutil.copytree(FIXTURES / "jwt-login", root)
    (root / ".gitignore").write_text(".plangraph/\n__pycache__/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def test_the_action_scripts_run_the_gate_and_write_the_summary(
    jwt_login: Path, tmp_path: Path
) -> None:
    steps = {step["name"]: step for step in load(ACTION)["runs"]["steps"]}
    inputs = {name: spec["default"] for name, spec in load(ACTION)["inputs"].items()}
    env = {
        "PLANGRAPH_PLAN": inputs["plan"],
        "PLANGRAPH_STORE_PATH": inputs["store"],
        "PLANGRAPH_PYTEST_ARGS": "-p no:cacheprovider -q",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
    }
    gate = run_step(steps["Run pytest --plangraph --plangraph-gate"]["run"], jwt_login, env)
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert (jwt_login / inputs["store"]).is_file()  # what the cache step saves
    report = run_step(steps["Write the HTML report and the step summary"]["run"], jwt_login, env)
    assert report.returncode == 0, report.stdout + report.stderr
    assert "html=.plangraph/report/plangraph-report.html" in (tmp_path / "output.txt").read_text()


def test_the_gate_script_fails_when_a_test_fails(jwt_login: Path, tmp_path: Path) -> None:
    login = jwt_login / "src/auth/login.py"
    login.write_text(login.read_text().replace("return 200", "return 500", 1))
    script = next(
        s["run"] for s in load(ACTION)["runs"]["steps"] if "--plangraph-gate" in s.get("run", "")
    )
    env = {
        "PLANGRAPH_PLAN": "plangraph.yaml",
        "PLANGRAPH_STORE_PATH": ".plangraph/store.db",
        "PLANGRAPH_PYTEST_ARGS": "-p no:cacheprovider -q",
    }
    assert run_step(script, jwt_login, env).returncode != 0


def test_pre_commit_hook_fields() -> None:
    (hook,) = load(HOOKS)
    assert hook["id"] == "plangraph-lint"
    assert {"name", "entry", "language", "files"} <= set(hook)
    assert hook["language"] == "python" and hook["pass_filenames"] is False
    files = re.compile(hook["files"])
    assert files.search("plangraph.yaml") and files.search("sub/plangraph.yml")
    assert not files.search("other.yaml")
    assert shlex.split(hook["entry"])[0] == "plangraph"  # the console script pip installs


def test_pre_commit_hook_entry_lints_a_fixture(jwt_login: Path) -> None:
    (hook,) = load(HOOKS)
    argv = [str(PLANGRAPH), *shlex.split(hook["entry"])[1:], *hook.get("args", [])]
    clean = subprocess.run(argv, cwd=jwt_login, capture_output=True, text=True, check=False)
    assert clean.returncode == 0 and "0 error(s)" in clean.stdout, clean.stdout + clean.stderr
    plan = jwt_login / "plangraph.yaml"
    plan.write_text(
        plan.read_text() + "  - {from: step-token-endpoint, to: nowhere, type: requires}\n"
    )
    broken = subprocess.run(argv, cwd=jwt_login, capture_output=True, text=True, check=False)
    assert broken.returncode == 1 and "MISSING_DEP" in broken.stdout, broken.stdout


def test_the_workflows_in_the_docs_are_the_checked_examples() -> None:
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", text, re.S)]
    for workflow in WORKFLOWS:
        assert load(workflow) in blocks, workflow.name
