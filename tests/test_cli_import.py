"""``plangraph import``: starter plans from a spec-kit tasks.md and a task-master tasks.json,
through the real command, then linted by the real ``plangraph lint``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from cli_helpers import plangraph, plangraph_main
from repo_helpers import git

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "import"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q", "-b", "main")
    return tmp_path


def _imported(repo: Path, source: str, sample: str, *extra: str) -> dict:
    result = plangraph(repo, "import", source, str(SAMPLES / sample), "-o", "plan.yaml", *extra)
    assert result.code == 0, result.err
    linted = plangraph_main(repo, "lint", "plan.yaml", "--format", "json")
    assert linted.code == 0, linted.out
    # a starter plan names the test files its tasks will write: until they exist, lint says so
    # (TESTS_NOT_FOUND) and nothing else
    findings = linted.json()["findings"]
    assert {(f["code"], f["severity"]) for f in findings} <= {("TESTS_NOT_FOUND", "warning")}
    plan = yaml.safe_load((repo / "plan.yaml").read_text())
    named = {
        t.split("::")[0]
        for n in plan["nodes"]
        for c in n.get("acceptance", [])
        for t in c["verifier"].get("tests", [])
    }
    assert len(findings) == len([t for t in named if not (repo / t).exists()])
    return plan


def _requires(plan: dict) -> set[tuple[str, str]]:
    return {(e["from"], e["to"]) for e in plan.get("edges", []) if e["type"] == "requires"}


def test_spec_kit_tasks_become_phases_steps_and_requires_edges(repo):
    plan = _imported(repo, "spec-kit", "tasks.md")
    nodes = {n["id"]: n for n in plan["nodes"]}
    assert plan["plan"] == "password-login"
    assert [n for n in nodes if n.startswith("phase-")] == [f"phase-{i}" for i in range(1, 5)]
    assert len([n for n in nodes if n.startswith("T")]) == 13
    assert nodes["T009"]["parent"] == "phase-3" and nodes["T009"]["outputs"] == [
        "src/services/login.py"
    ]
    contract = nodes["T007"]["acceptance"][0]["verifier"]
    assert contract == {"type": "test", "tests": ["tests/contract/test_login.py::*"]}
    assert nodes["T011"]["acceptance"][0]["verifier"] == {"type": "approval"}
    story = nodes["phase-3"]["acceptance"][0]
    assert story["id"] == "ac-independent-test" and "gets 401" in story["assertion"]
    edges = _requires(plan)
    assert {("phase-1", "phase-2"), ("phase-2", "phase-3"), ("phase-3", "phase-4")} <= edges
    assert {("T005", "T009"), ("T006", "T009"), ("T004", "T006")} <= edges  # inline
    assert {("T009", "T010"), ("T007", "T010"), ("T010", "T011")} <= edges  # the section
    assert ("T008", "T009") in edges  # "T007-T008 ... before T009": a range


def test_what_spec_kit_could_not_map_is_listed(repo):
    result = plangraph_main(
        repo, "import", "spec-kit", str(SAMPLES / "tasks.md"), "--format", "json"
    )
    assert result.code == 0
    data = result.json()
    assert any("T001 is checked done" in line for line in data["unmapped"])
    assert any("phases" in line for line in data["unmapped"])
    assert data["nodes"] == 17 and yaml.safe_load(data["plan"])["plangraph"] == 1
    assert "plangraph: unmapped: line 25: T001 is checked done" in result.err


@pytest.mark.parametrize("sample", ["tasks.json", "tasks-legacy.json"])
def test_task_master_tasks_subtasks_and_dependencies(repo, sample):
    plan = _imported(repo, "task-master", sample)
    nodes = {n["id"]: n for n in plan["nodes"]}
    assert nodes["task-2"]["kind"] == "milestone"
    assert nodes["task-2.1"]["parent"] == "task-2" and nodes["task-2.2"]["parent"] == "task-2"
    strategy = nodes["task-2"]["acceptance"][0]
    assert strategy["verifier"] == {"type": "test", "tests": ["tests/test_user_store.py::*"]}
    assert nodes["task-3"]["acceptance"][0]["verifier"] == {"type": "approval"}
    assert "Security review" in nodes["task-3"]["acceptance"][0]["assertion"]
    edges = _requires(plan)
    assert {("task-1", "task-2"), ("task-2.1", "task-2.2"), ("task-2.2", "task-3")} <= edges
    if sample == "tasks.json":
        assert nodes["task-4"]["cancelled"] is True
        assert plan["plan"] == "task-master-master"
    else:
        assert plan["plan"] == "password-login"  # meta.projectName


def test_task_master_unmapped_fields_are_listed_on_stderr(repo):
    result = plangraph(repo, "import", "task-master", str(SAMPLES / "tasks.json"))
    assert result.code == 0
    assert "plan: task-master-master" in result.out
    assert "task 1 has status 'done'" in result.err and "`details` is not carried" in result.err


def test_an_existing_output_is_never_overwritten(repo):
    (repo / "plan.yaml").write_text("mine\n")
    result = plangraph_main(
        repo, "import", "spec-kit", str(SAMPLES / "tasks.md"), "-o", "plan.yaml"
    )
    assert result.code == 2 and "refusing to overwrite plan.yaml" in result.err
    assert (repo / "plan.yaml").read_text() == "mine\n"


TM = '{"master": {"tasks": [%s]}}'
T1 = '{"id": 1, "title": "a", "dependencies": %s}'


@pytest.mark.parametrize(
    ("source", "content", "expected"),
    [
        ("task-master", '{"master": {"tasks": [', "tasks.in:1:23: not valid JSON"),
        ("task-master", TM % (T1 % "[7]"), "task 1 depends on 7, which is not a task"),
        ("task-master", TM % (T1 % "[1]"), "cycle: 1 -> 1"),
        (
            "task-master",
            TM % (T1 % "[2]" + ', {"id": 2, "title": "b", "dependencies": [1]}'),
            "cycle: 1 -> 2 -> 1",
        ),
        ("task-master", TM % (T1 % "[]" + "," + T1 % "[]"), "task 1 is defined twice"),
        ("task-master", '{"feature": {"tasks": []}, "x": {"tasks": []}}', "no tag 'master'"),
        ("task-master", "[1, 2]", "expected an object"),
        ("task-master", TM % '{"id": true}', "expected a task id"),
        ("task-master", TM % '{"id": 1, "title": 5}', "expected text"),
        ("spec-kit", "# Tasks: x\n\nnothing here\n", "no task found"),
        ("spec-kit", "- [ ] T001 a (depends on T009)\n", "depends on T009, which is not a task"),
        ("spec-kit", "- [ ] T001 a (depends on T002)\n- [ ] T002 b (depends on T001)\n", "cycle"),
        ("spec-kit", "- [ ] T001 a\n## Dependencies\n- T005 depends on T001\n", "names T005"),
        ("spec-kit", "- [ ] T001 a\n- [ ] T001 b\n", "T001 is defined twice"),
        ("spec-kit", "- [ ] T1 a (after T1-T99999999999)\n", "tasks.in: line 1: the range"),
        ("spec-kit", "- [ ] T1 a\n## Dependencies\n- T1-T99999999 before T1\n", "spans more"),
        (
            "task-master",
            '{"tasks": [{"id": "a b", "title": "x"}, {"id": "a-b", "title": "y"}]}',
            "both become node id 'task-a-b'",
        ),
        ("task-master", "[" * 100_000, "nested too deeply"),
        ("task-master", TM % (T1 % '"2"'), "tasks[0].dependencies: expected a list, not str"),
    ],
)
def test_bad_input_is_one_message_exit_2_and_nothing_written(repo, source, content, expected):
    (repo / "tasks.in").write_text(content)
    result = plangraph_main(repo, "import", source, "tasks.in", "-o", "plan.yaml")
    assert result.code == 2, result.out + result.err
    assert expected in result.err and "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert not (repo / "plan.yaml").exists()


def test_unreadable_input_is_one_message(repo):
    (repo / "bin.md").write_bytes(b"\xff\xfe- [ ] T001 x\n")
    result = plangraph_main(repo, "import", "spec-kit", "bin.md")
    assert result.code == 2 and "not UTF-8 text" in result.err
    missing = plangraph_main(repo, "import", "spec-kit", "nowhere.md")
    assert missing.code == 2 and "cannot read nowhere.md" in missing.err
    folder = plangraph_main(repo, "import", "spec-kit", ".")
    assert folder.code == 2 and "Traceback" not in folder.err
    tag = plangraph_main(repo, "import", "spec-kit", str(SAMPLES / "tasks.md"), "--tag", "x")
    assert tag.code == 2 and "--tag is a task-master option" in tag.err
    bad_id = plangraph_main(repo, "import", "spec-kit", str(SAMPLES / "tasks.md"), "--plan-id", "é")
    assert bad_id.code == 2 and "Traceback" not in bad_id.err


def test_the_imported_plan_is_one_the_gate_judges(repo):
    _imported(repo, "task-master", "tasks.json")
    (repo / "plan.yaml").rename(repo / "plangraph.yaml")
    status = plangraph_main(repo, "status", "--format", "json")
    assert status.code == 0, status.err
    states = {n["id"]: n["status"] for n in status.json()["nodes"]}
    assert states["task-4"] == "cancelled" and states["task-1"] != "completed"
    assert (
        json.loads(
            plangraph_main(repo, "claim", "task-1", "--by", "agent", "--format", "json").out
        )["verdict"]
        == "FAILED"
    )
