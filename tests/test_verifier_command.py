"""The built-in ``command`` verifier: real programs, through the registry, ``plangraph verify``
and ``pytest --plangraph``."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import plangraph_main
from plugin_helpers import latest, make_project

from pytest_plangraph.plan.model import Node
from pytest_plangraph.vcs.workspace import Workspace
from pytest_plangraph.verifiers import Registry, VerifierResult
from pytest_plangraph.verifiers.command import TAIL_BYTES

pytest_plugins = ["pytester"]

REGISTRY = Registry.builtin()
PY = sys.executable


def run(root: Path, **settings: Any) -> VerifierResult:
    node = Node.from_data(
        {"id": "step", "acceptance": [{"id": "ac", "verifier": {"type": "command", **settings}}]}
    )
    return REGISTRY.run_safely(node, node.acceptance[0], Workspace.at(root))


def problems(root: Path, **settings: Any) -> list[str]:
    node = Node.from_data(
        {"id": "step", "acceptance": [{"id": "ac", "verifier": {"type": "command", **settings}}]}
    )
    return REGISTRY.config_problems(node.acceptance[0], Workspace.at(root))


def test_exit_zero_passes_and_binds_argv_output_and_subjects(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("a\n")
    (tmp_path / "docs" / "b.md").write_text("b\n")
    argv = [PY, "-c", "print('checked ok')"]
    result = run(tmp_path, run=argv, subjects=["docs/*.md"])
    assert result.outcome == "passed", result.message
    assert result.details["argv"] == argv
    assert result.details["exit_code"] == 0
    assert "checked ok" in result.details["output_tail"]
    assert sorted(result.subjects) == ["docs/a.md", "docs/b.md"]


def test_non_zero_exit_fails_with_the_output_tail(tmp_path: Path) -> None:
    result = run(tmp_path, run=[PY, "-c", "import sys; print('bad thing'); sys.exit(3)"])
    assert (result.outcome, result.reason) == ("failed", "COMMAND_FAILED")
    assert result.details["exit_code"] == 3
    assert "bad thing" in result.details["output_tail"]
    assert "exited with 3" in result.message


def test_output_tail_is_bounded(tmp_path: Path) -> None:
    script = "import sys; sys.stdout.write('x' * 200000 + 'THE END')"
    result = run(tmp_path, run=[PY, "-c", script])
    tail = result.details["output_tail"]
    assert result.outcome == "passed"
    assert tail.endswith("THE END")
    assert len(tail.encode()) <= TAIL_BYTES + len("…".encode())


def test_timeout_kills_the_program_and_fails_with_a_reason(tmp_path: Path) -> None:
    started = time.monotonic()
    result = run(tmp_path, run=[PY, "-c", "import time; time.sleep(30)"], timeout_s=0.5)
    assert time.monotonic() - started < 10
    assert (result.outcome, result.reason) == ("failed", "COMMAND_TIMEOUT")
    assert "timeout_s=0.5" in result.message


def test_missing_program_is_a_clear_error(tmp_path: Path) -> None:
    result = run(tmp_path, run=["no-such-program-plangraph", "--check"])
    assert (result.outcome, result.reason) == ("error", "COMMAND_NOT_FOUND")
    assert "'no-such-program-plangraph' was not found" in result.message


def test_a_program_that_is_not_executable_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "script.sh").write_text("#!/bin/sh\nexit 0\n")
    result = run(tmp_path, run=["./script.sh"])
    assert (result.outcome, result.reason) == ("error", "COMMAND_NOT_RUNNABLE")


def test_runs_in_cwd(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "here.txt").write_text("x")
    check = "import os, sys; sys.exit(0 if os.path.exists('here.txt') else 1)"
    assert run(tmp_path, run=[PY, "-c", check], cwd="sub").outcome == "passed"
    assert run(tmp_path, run=[PY, "-c", check]).outcome == "failed"
    missing = run(tmp_path, run=[PY, "-c", check], cwd="gone")
    assert (missing.outcome, missing.reason) == ("error", "COMMAND_NOT_RUNNABLE")
    assert "cwd 'gone' is not a directory inside the repository" in missing.message


def test_a_command_that_changes_its_subjects_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("before")
    script = "open('a.txt', 'w').write('after')"
    result = run(tmp_path, run=[PY, "-c", script], subjects=["a.txt"])
    assert (result.outcome, result.reason) == ("error", "ARTIFACT_CHANGED_DURING_RUN")
    assert result.details["changed_during_run"] == ["a.txt"]


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"run": ["x"], "cwd": "/etc"}, "cwd: '/etc': absolute paths"),
        ({"run": ["x"], "subjects": ["../up.txt"]}, "subjects[0]: '../up.txt': climbs out"),
        ({"run": ["x\0y"]}, "run[0]: contains a NUL character"),
    ],
)
def test_config_problems(tmp_path: Path, settings: dict[str, Any], expected: str) -> None:
    assert any(expected in p for p in problems(tmp_path, **settings)), problems(
        tmp_path, **settings
    )


@pytest.mark.parametrize(
    ("verifier", "expected"),
    [
        ("{type: command}", "run"),
        ("{type: command, run: []}", "run"),
        ("{type: command, run: [x], timeout_s: 0}", "timeout_s"),
        ("{type: command, run: [x], timeout_s: '5'}", "timeout_s"),
        ("{type: command, run: [x], shell: true}", "shell"),
    ],
)
def test_bad_settings_are_plan_errors(tmp_path: Path, verifier: str, expected: str) -> None:
    (tmp_path / "plangraph.yaml").write_text(
        "plangraph: 1\nplan: p\nnodes:\n  - id: s\n    acceptance:\n"
        f"      - id: ac\n        verifier: {verifier}\n"
    )
    result = plangraph_main(tmp_path, "lint", "--root", str(tmp_path))
    assert result.code == 2, result.out + result.err
    assert "plangraph.yaml:7" in result.err and expected in result.err
    assert "Traceback" not in result.err


TITLE_CHECK = "import sys; sys.exit(0 if open('docs/guide.md').read().startswith('#') else 1)"
COMMAND_PLAN = f"""
plangraph: 1
plan: demo
nodes:
  - id: step-docs
    outputs: [docs/guide.md]
    acceptance:
      - id: ac-has-title
        verifier:
          type: command
          run: ["{PY}", "-c", "{TITLE_CHECK}"]
          timeout_s: 60
          subjects: ["docs/*.md"]
"""


def test_verify_records_evidence_and_a_changed_subject_makes_it_stale(tmp_path: Path) -> None:
    from repo_helpers import git

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# Guide\n")
    (tmp_path / "plangraph.yaml").write_text(COMMAND_PLAN)
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "initial")
    assert plangraph_main(tmp_path, "lint").code == 0
    verified = plangraph_main(tmp_path, "verify", "--format", "json")
    assert verified.code == 0, verified.err
    (record,) = verified.json()["evidence"]
    assert record["verifier"] == "command" and record["outcome"] == "passed"
    assert record["details"]["argv"][0] == PY
    assert set(record["subjects"]) >= {"docs/guide.md"}
    status = plangraph_main(tmp_path, "status", "--format", "json").json()
    assert _node_status(status, "step-docs") == "completed"
    (tmp_path / "docs" / "guide.md").write_text("no title\n")
    status = plangraph_main(tmp_path, "status", "--format", "json").json()
    assert _node_status(status, "step-docs") != "completed"
    failed = plangraph_main(tmp_path, "verify")
    assert failed.code == 1 and "COMMAND_FAILED" in failed.out


def _node_status(status: dict[str, Any], node: str) -> str:
    (found,) = [n for n in status["nodes"] if n["id"] == node]
    return str(found["status"])


def test_command_criteria_run_as_pytest_items(pytester: pytest.Pytester) -> None:
    plan = COMMAND_PLAN + (
        "      - id: ac-missing-tool\n"
        "        verifier: {type: command, run: [no-such-program-plangraph]}\n"
    )
    files = {"docs/guide.md": "# Guide\n"}
    root = make_project(pytester, plan=plan, tests="def test_x():\n    pass\n", files=files)
    result = pytester.runpytest("--plangraph", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*step-docs/ac-missing-tool*COMMAND_NOT_FOUND*"])
    assert "Traceback" not in result.stdout.str()
    records = latest(root)
    assert records["step-docs/ac-has-title"].outcome == "passed"
    assert records["step-docs/ac-has-title"].details["argv"][0] == PY
    assert records["step-docs/ac-missing-tool"].outcome == "error"


def test_lint_reports_a_subject_outside_the_repository(tmp_path: Path) -> None:
    (tmp_path / "plangraph.yaml").write_text(
        "plangraph: 1\nplan: p\nnodes:\n  - id: s\n    acceptance:\n      - id: ac\n"
        "        verifier: {type: command, run: [x], subjects: [../secret.txt]}\n"
    )
    result = plangraph_main(tmp_path, "lint", "--root", str(tmp_path))
    assert result.code == 1
    assert "plangraph.yaml:7:56: error PATH_OUTSIDE_ROOT" in result.out  # at the subject


def test_impact_since_reaches_a_command_criterion_through_its_subjects(tmp_path: Path) -> None:
    from repo_helpers import git

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# Guide\n")
    (tmp_path / "plangraph.yaml").write_text(COMMAND_PLAN.replace("outputs: [docs/guide.md]", ""))
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "initial")
    (tmp_path / "docs" / "guide.md").write_text("# Guide, edited\n")
    result = plangraph_main(tmp_path, "impact", "--since", "HEAD", "--format", "json")
    assert result.code == 0, result.err
    (changed,) = result.json()["changed"]
    assert changed["path"] == "docs/guide.md" and changed["nodes"] == ["step-docs"]


SCRIPT_PLAN = f"""
plangraph: 1
plan: demo
nodes:
  - id: step-docs
    acceptance:
      - id: ac-has-title
        verifier:
          type: command
          run: ["{PY}", "scripts/check_title.py", "--rules=ci/rules.txt"]
          subjects: ["docs/*.md"]
"""
CHECK_SCRIPT = "import sys\nsys.exit(0 if open('docs/guide.md').read().startswith('#') else 1)\n"


def test_a_script_the_argv_names_is_bound_so_a_passing_edit_then_reverted_stales(
    tmp_path: Path,
) -> None:
    """An agent that makes the repository's check script exit 0, verifies and puts the script
    back has evidence of a program that no longer exists: it is stale, not completed."""
    from repo_helpers import git

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("no title\n")  # the check fails on this
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "check_title.py").write_text(CHECK_SCRIPT)
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "rules.txt").write_text("title\n")
    (tmp_path / "plangraph.yaml").write_text(SCRIPT_PLAN)
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "initial")
    assert plangraph_main(tmp_path, "verify").code == 1  # honest: the check fails

    (tmp_path / "scripts" / "check_title.py").write_text("raise SystemExit(0)\n")
    verified = plangraph_main(tmp_path, "verify", "--format", "json")
    assert verified.code == 0, verified.err
    (record,) = verified.json()["evidence"]
    assert {"scripts/check_title.py", "ci/rules.txt"} <= set(record["subjects"])
    (tmp_path / "scripts" / "check_title.py").write_text(CHECK_SCRIPT)  # the cheat undone

    status = plangraph_main(tmp_path, "status", "--format", "json").json()
    assert _node_status(status, "step-docs") != "completed"
    claim = plangraph_main(tmp_path, "claim", "step-docs", "--by", "agent")
    assert claim.code == 1
    (tmp_path / "ci" / "rules.txt").write_text("edited\n")
    assert plangraph_main(tmp_path, "verify").code == 1  # the real script still fails
