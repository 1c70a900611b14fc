"""A misbehaving third-party plugin never breaks a command: hooks that raise, verifiers that
answer junk or exit (clashing names and report formats are in test_plugin_clashes.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import plangraph_main
from plugin_helpers import PLAN, latest, make_project, section
from robustness_helpers import (
    IGNORED,
    Probe,
    Provides,
    make_repo,
    node,
    warnings_of,
)

from pytest_plangraph.hooks import manager as plugins
from pytest_plangraph.hooks.specs import hookimpl
from pytest_plangraph.plan.model import Node
from pytest_plangraph.vcs.workspace import Workspace
from pytest_plangraph.verifiers import Registry


def one_criterion(verifier: dict[str, Any]) -> Node:
    return Node.from_data({"id": "n", "acceptance": [{"id": "ac", "verifier": verifier}]})


class Noisy:
    """Notification hooks that fail the way third-party code does."""

    @hookimpl
    def plangraph_evidence_recorded(self, evidence: Any, store_path: str) -> None:
        raise SystemExit(3)

    @hookimpl
    def plangraph_gate_decision(self, decision: Any) -> None:
        raise RuntimeError("webhook down")


class Recorder:
    """Well-behaved listeners: they must still hear everything."""

    def __init__(self) -> None:
        self.evidence: list[str] = []
        self.decisions: list[tuple[str, str]] = []

    @hookimpl
    def plangraph_evidence_recorded(self, evidence: Any, store_path: str) -> None:
        self.evidence.append(evidence.ref)

    @hookimpl
    def plangraph_gate_decision(self, decision: Any) -> None:
        self.decisions.append((decision.node, decision.verdict))


# --- notification hooks ---------------------------------------------------------------------


def test_raising_notification_hooks_change_no_result_of_verify_and_claim(
    tmp_path: Path, manager: Any
) -> None:
    recorder = Recorder()
    manager.register(recorder, name="recorder")
    manager.register(Noisy(), name="noisy")  # registered last: pluggy calls it first
    root = make_repo(tmp_path)

    verified = plangraph_main(root, "verify")
    assert verified.code == 0, verified.err
    assert "Traceback" not in verified.err
    assert warnings_of(verified.err) == [
        "plangraph: warning: the plugin 'noisy' failed in plangraph_evidence_recorded"
        f" (2 of 2 calls): SystemExit: 3{IGNORED}"
    ]
    assert sorted(recorder.evidence) == ["step-b/ac-b", "step-b/ac-c"]
    assert {ref: e.outcome for ref, e in latest(root).items()} == {
        "step-b/ac-b": "passed",
        "step-b/ac-c": "passed",
    }

    claimed = plangraph_main(root, "claim", "step-b", "--by", "agent", "--format", "json")
    assert claimed.code == 0, claimed.err
    assert claimed.json()["verdict"] == "PASSED"
    assert warnings_of(claimed.err) == [
        "plangraph: warning: the plugin 'noisy' failed in plangraph_gate_decision:"
        f" RuntimeError: webhook down{IGNORED}"
    ]
    assert recorder.decisions == [("step-b", "PASSED")]


def test_raising_notification_hooks_under_pytest_keep_the_summary_and_exit_code(
    pytester: pytest.Pytester, manager: Any
) -> None:
    root = make_project(pytester)
    manager.register(Noisy(), name="noisy")
    result = pytester.runpytest("--plangraph", "--plangraph-gate", "--plangraph-require=step-b")
    assert result.ret == 0
    result.assert_outcomes(passed=4)
    assert "plangraph gate: every claimed or required node is completed" in section(
        result.stdout.str()
    )
    assert [w.split(":")[2] for w in warnings_of(result.stderr.str())] == [
        " the plugin 'noisy' failed in plangraph_evidence_recorded (3 of 3 calls)",
        " the plugin 'noisy' failed in plangraph_gate_decision",
    ]
    assert latest(root)["step-b/ac-exists"].outcome == "passed"

    plain = pytester.runpytest("--plangraph")
    assert plain.ret == 0
    assert section(plain.stdout.str())[0].startswith("plan demo v1:")


def test_a_hook_wrapper_is_run_on_its_own(manager: Any) -> None:
    seen: list[str] = []

    class Wrapping:
        @hookimpl(wrapper=True)
        def plangraph_gate_decision(self, decision: Any) -> Any:
            seen.append(f"before {decision}")
            answer = yield
            seen.append(f"after {answer}")
            return answer

    manager.register(Wrapping(), name="wrapping")
    plugins.notify("plangraph_gate_decision", [{"decision": "d"}], warn=seen.append)
    assert seen == ["before d", "after []"]


# --- verifiers that misbehave ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "problems"),
    [
        ("threshold: missing", ["threshold: missing"]),
        (["a", "b"], ["a", "b"]),
        (None, []),
        (
            42,
            [
                "verifier 'probe' returned int from config_problems, not a list of messages"
                " (a bug in its plugin)"
            ],
        ),
    ],
)
def test_config_problems_answers_are_never_split_into_characters(
    tmp_path: Path, answer: Any, problems: list[str]
) -> None:
    registry = Registry([("probe-plugin", [Probe()])])
    one = one_criterion({"type": "probe", "answer": answer})
    assert registry.config_problems(one.acceptance[0], Workspace.at(tmp_path)) == problems


def test_lint_shows_a_string_answer_as_one_finding(tmp_path: Path, manager: Any) -> None:
    manager.register(Provides(Probe()), name="probe-plugin")
    root = make_repo(
        tmp_path,
        node(
            "step-p",
            '{type: probe, answer: "threshold: missing"}',
            "{type: probe, mode: problems-exit}",
        ),
    )
    result = plangraph_main(root, "lint")
    assert result.code == 1
    found = [
        line.split("]: ", 1)[1] for line in result.out.splitlines() if "VERIFIER_CONFIG" in line
    ]
    assert found == [
        "step-p/ac-0: threshold: missing",
        "step-p/ac-1: verifier 'probe' crashed checking its settings: SystemExit: bye",
    ]


def test_verify_records_a_broken_verifier_as_crashed(tmp_path: Path, manager: Any) -> None:
    manager.register(Provides(Probe()), name="probe-plugin")
    modes = ("subjects-raise", "subjects-int", "exit", "fine")
    root = make_repo(tmp_path, node("step-p", *(f"{{type: probe, mode: {m}}}" for m in modes)))
    result = plangraph_main(root, "verify")
    assert result.code == 1, result.err
    assert "Traceback" not in result.err
    records = latest(root)
    crashed = {f"step-p/ac-{i}": records[f"step-p/ac-{i}"] for i in range(3)}
    assert {(e.outcome, e.reason) for e in crashed.values()} == {("error", "VERIFIER_CRASHED")}
    assert [e.details["message"] for e in crashed.values()] == [
        "verifier 'probe' crashed declaring its subjects: ZeroDivisionError: no subjects today",
        "verifier 'probe' returned int from subjects(), not a list of paths (a bug in its plugin)",
        "verifier 'probe' crashed: SystemExit: 3",
    ]
    assert records["step-p/ac-3"].outcome == "passed"
    assert records["step-b/ac-b"].outcome == "passed"


JUNK_MESSAGES = {
    "reason-int": "returned a reason of type int, not text or None",
    "int-keys": "returned details with a mapping key that is not text",
    "message-object": "returned a message of type object, not text",
    "subjects-text": "returned subjects of type str, not a tuple of paths",
    "subject-outside": "names the subject '../secret.txt', which is outside the repository",
    "subject-dir": "names the subject 'out', which is a directory",
    "declare-outside": "names the subject '../s.txt', which is outside the repository",
    "declare-dir": "names the subject 'out', which is a directory",
    "generator-exit": "crashed: GeneratorExit",
}


def test_a_junk_result_is_its_criterion_error_and_the_others_are_recorded(
    tmp_path: Path, manager: Any
) -> None:
    manager.register(Provides(Probe()), name="probe-plugin")
    modes = [*JUNK_MESSAGES, "fine"]
    root = make_repo(tmp_path, node("step-p", *(f"{{type: probe, mode: {m}}}" for m in modes)))
    result = plangraph_main(root, "verify")
    assert result.code == 1, result.err
    assert "Traceback" not in result.err
    records = latest(root)
    for index, (mode, message) in enumerate(JUNK_MESSAGES.items()):
        record = records[f"step-p/ac-{index}"]
        assert (record.outcome, record.reason) == ("error", "VERIFIER_CRASHED"), mode
        assert message in record.details["message"], mode
    assert records[f"step-p/ac-{len(JUNK_MESSAGES)}"].outcome == "passed"
    assert records["step-b/ac-b"].outcome == "passed"


def test_the_subjects_a_verifier_declares_are_bound_into_its_evidence(
    tmp_path: Path, manager: Any
) -> None:
    manager.register(Provides(Probe()), name="probe-plugin")
    root = make_repo(tmp_path, node("step-p", "{type: probe, mode: no-subjects}"))
    assert plangraph_main(root, "verify").code == 0
    record = latest(root)["step-p/ac-0"]
    assert list(record.subjects) == ["out/b.txt"]  # declared by subjects(), not returned
    (root / "out" / "b.txt").write_text("changed\n")
    status = json.loads(plangraph_main(root, "status", "--format", "json").out)
    states = {n["id"]: n["status"] for n in status["nodes"]}
    assert states["step-p"] == "stale"


class Unsure(Probe):
    @property  # type: ignore[override]
    def runs_in_pytest(self) -> bool:
        raise RuntimeError("cannot tell")


def test_a_verifier_type_whose_attribute_raises_is_a_load_error(
    tmp_path: Path, manager: Any
) -> None:
    manager.register(Provides(Unsure("unsure")), name="unsure-plugin")
    result = plangraph_main(make_repo(tmp_path), "status")
    assert result.code == 2
    assert result.err.strip() == (
        "plangraph: error: plugin 'unsure-plugin' returned a verifier type (Unsure) that failed "
        "when its attributes were read: RuntimeError: cannot tell"
    )


def test_a_keyboard_interrupt_in_a_verifier_is_not_swallowed(tmp_path: Path) -> None:
    registry = Registry([("probe-plugin", [Probe()])])
    one = one_criterion({"type": "probe", "mode": "interrupt"})
    with pytest.raises(KeyboardInterrupt):
        registry.run_safely(one, one.acceptance[0], Workspace.at(tmp_path))


def test_under_pytest_a_failing_subjects_is_verifier_crashed(
    pytester: pytest.Pytester, manager: Any
) -> None:
    manager.register(Provides(Probe()), name="probe-plugin")
    plan = PLAN.replace(
        "{type: artifact, path: out/b.txt}",
        "{type: probe, mode: subjects-raise}\n      - id: ac-junk\n"
        "        verifier: {type: probe, mode: subjects-int}",
    )
    root = make_project(pytester, plan=plan)
    result = pytester.runpytest("--plangraph")
    result.assert_outcomes(passed=3, failed=2)
    records = latest(root)
    for ref in ("step-b/ac-exists", "step-b/ac-junk"):
        assert (records[ref].outcome, records[ref].reason) == ("error", "VERIFIER_CRASHED")
    assert "crashed declaring its subjects" in records["step-b/ac-exists"].details["message"]
