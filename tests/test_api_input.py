"""What the Python API accepts: wrong values are UsageErrors, records are checked before they
are stored, a plan edited while the object is open is read again, and a plan lint rejects is
never judged."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_plangraph import PlanGraph
from pytest_plangraph.errors import ConflictError, PlanError, UsageError
from pytest_plangraph.plan.evidence import Evidence
from pytest_plangraph.vcs.environment import now, run_info

SCHEMA, TOKEN = "step-user-schema", "step-token-endpoint"
REVIEW = "ac-security-review"


def _record(graph: PlanGraph, node: str = TOKEN, criterion: str = "ac-http-200") -> Evidence:
    run = run_info(now(), now(), None)
    return graph.make_evidence(
        node,
        criterion,
        outcome="passed",
        reason=None,
        details={},
        subjects={},
        run=run,
        recorded_by="runner",
    )


CALLS: list[tuple[str, Callable[[PlanGraph], Any], str]] = [
    ("claim by None", lambda g: g.claim(TOKEN, by=None), "by must be text, not None"),
    ("approve by 7", lambda g: g.approve(TOKEN, REVIEW, by=7), "by must be text, not int"),
    ("claim blank by", lambda g: g.claim(TOKEN, by="  "), "by: expected a name"),
    ("approve blank by", lambda g: g.approve(TOKEN, REVIEW, by=""), "by: expected a name"),
    ("claim by line break", lambda g: g.claim(TOKEN, by="a\nb"), "control characters"),
    ("claim blank key", lambda g: g.claim(TOKEN, by="a", idempotency_key=" "), "idempotency_key"),
    ("claim node 5", lambda g: g.claim(5, by="a"), "a node id must be text, not int"),
    ("approve note 1", lambda g: g.approve(TOKEN, REVIEW, by="a", note=1), "note must be text"),
    ("cancel note None", lambda g: g.cancel(TOKEN, by="a", note=None), "note must be text"),
    ("verify one text", lambda g: g.verify(SCHEMA), "not one text: write"),
    ("verify 3", lambda g: g.verify(3), "must be a list of ids, not int"),
    ("impact 5", lambda g: g.impact(5), "since must be text, not int"),
    ("status text", lambda g: g.status("x"), r"status\(\) takes the events"),
    ("record one", lambda g: g.record(_record(g)), "takes a list of Evidence records"),
    ("record dicts", lambda g: g.record([_record(g).to_json()]), "item 0 is dict"),
    ("record None", lambda g: g.record(None), "takes a list of Evidence records"),
    ("version text", lambda g: g.claim(TOKEN, by="a", expected_plan_version="1"), "plan version"),
    ("version 0", lambda g: g.claim(TOKEN, by="a", expected_plan_version=0), "plan version"),
    ("append evidence", lambda g: g.append("evidence", TOKEN, by="a"), r"with record\(\)"),
    ("append kind", lambda g: g.append("done", TOKEN, by="a"), "unknown event kind 'done'"),
    ("patch NaN", lambda g: g.patch({"plangraph_patch": 1, "nodes": {"add": [{"id": "x",
     "parent": "objective-auth", "title": float("nan")}]}}, by="a"),
     r"patch: nodes\.add\[0\]\.title holds nan, which JSON has no value"),
    ("patch -inf", lambda g: g.patch(({"op": "add", "path": "/nodes/0/weight",
     "value": [1, float("-inf")]},), by="a"), r"patch: \[0\]\.value\[1\] holds -inf"),
]  # fmt: skip


@pytest.mark.parametrize("call, message", [c[1:] for c in CALLS], ids=[c[0] for c in CALLS])
def test_wrong_values_are_usage_errors_and_write_nothing(project, call, message) -> None:
    with PlanGraph.open(project("jwt-login")) as graph:
        before = graph.store.count()
        plan = graph.plan_path.read_bytes() if graph.plan_path is not None else b""
        with pytest.raises(UsageError, match=message):
            call(graph)
        assert graph.store.count() == before
        assert graph.plan_path is not None and graph.plan_path.read_bytes() == plan


@pytest.mark.parametrize(
    "change, message",
    [
        ({"outcome": "maybe"}, r"not a valid evidence record: outcome: Input should be"),
        ({"subjects": {"a": 5}}, r"not a valid evidence record: subjects\.a"),
        ({"id": "0" * 64}, "its id is not its content address"),
        ({"outcome": "failed"}, "its id is not its content address"),  # changed after it was made
        ({"verifier": "schema"}, "made by a 'schema' verifier, but the plan checks"),
        ({"node": "no-such-node"}, "unknown node 'no-such-node'"),
        ({"criterion": "no-such"}, "has no criterion 'no-such'"),
    ],
)
def test_a_record_changed_after_it_was_made_is_refused_with_its_batch(
    project, change, message
) -> None:
    with PlanGraph.open(project("jwt-login")) as graph:
        good = _record(graph, criterion="ac-invalid-401")
        bad = _record(graph).replace(**change)
        with pytest.raises(UsageError, match=message):
            graph.record([good, bad])
        assert graph.store.count() == 0  # not even the good record of the batch
        assert [e.node for e in graph.record([good])] == [TOKEN]


def test_a_plan_edited_while_open_is_read_again(project) -> None:
    root = project("jwt-login")
    with PlanGraph.open(root) as graph, PlanGraph.open(root) as other:
        graph.verify()
        assert graph.status().nodes[SCHEMA].status == "completed"
        assert graph.plan_ref().version == 1
        plan = root / "plangraph.yaml"
        text = plan.read_text(encoding="utf-8")
        extra = "      - {id: ac-reviewed, assertion: reviewed, verifier: {type: approval}}\n"
        anchor = "artifact: fixtures/user.json}\n"
        plan.write_text(text.replace(anchor, anchor + extra, 1), encoding="utf-8")

        assert graph.status().nodes[SCHEMA].status == "stale"  # a new required criterion
        assert other.plan_ref().version == 1  # not read again: nothing judged yet
        with pytest.raises(ConflictError, match="expected plan version 1, but the plan"):
            other.claim(SCHEMA, by="agent", expected_plan_version=1)
        assert graph.plan_ref().version == 2
        assert other.plan_ref().version == 2
        assert graph.claims() == set()  # the refused write wrote nothing
        decision = graph.claim(SCHEMA, by="agent", expected_plan_version=2)
        assert decision.verdict == "FAILED"


def test_a_touched_plan_keeps_its_state(project) -> None:
    root = project("jwt-login")
    with PlanGraph.open(root) as plangraph:
        plan, graph_before = plangraph.plan, plangraph.graph
        path = root / "plangraph.yaml"
        path.write_bytes(path.read_bytes())  # new times, same content
        assert plangraph.refresh() is False
        assert plangraph.plan is plan and plangraph.graph is graph_before


def test_record_and_claim_check_the_same_plan_version(project) -> None:
    root = project("jwt-login")
    plan = root / "plangraph.yaml"
    first = plan.read_text(encoding="utf-8")
    with PlanGraph.open(root) as graph:
        graph.verify()
        plan.write_text(first.replace("title: User record schema", "title: v2"), encoding="utf-8")
        graph.verify()  # the store numbers the edited plan 2
        plan.write_text(first, encoding="utf-8")  # back to version 1; the store's latest is 2
        for version, accepted in ((1, True), (2, False)):
            writes: list[Callable[[int], object]] = [
                lambda v: graph.record([_record(graph)], expected_plan_version=v),
                lambda v: graph.claim(TOKEN, by="agent", expected_plan_version=v),
            ]
            for write in writes:
                if accepted:
                    write(version)
                else:
                    with pytest.raises(ConflictError, match="PLAN_VERSION_CONFLICT: the writer"):
                        write(version)


def test_nothing_is_judged_against_a_plan_lint_rejects(project) -> None:
    root = project("jwt-login")
    plan = root / "plangraph.yaml"
    text = plan.read_text(encoding="utf-8")
    # a mistyped edge would silently drop the prerequisite
    plan.write_text(text.replace("{from: step-user-schema,", "{from: step-user-shema,"))
    with PlanGraph.open(root) as graph:
        for call in (
            lambda: graph.status(),
            lambda: graph.claim(TOKEN, by="agent"),
            lambda: graph.approve(TOKEN, REVIEW, by="lead"),
            lambda: graph.verify(),
            lambda: graph.record([_record(graph)]),
        ):
            with pytest.raises(PlanError, match="MISSING_DEP"):
                call()
        assert not graph.has_store() or graph.store.count() == 0
        assert [f.code for f in graph.lint(severities=("error",))] == ["MISSING_DEP"]


def test_the_plan_is_checked_once_while_it_is_unchanged(project) -> None:
    root: Path = project("jwt-login")
    with PlanGraph.open(root) as graph:
        graph.status()
        checked = graph._problems
        graph.status()
        graph.claim(TOKEN, by="agent")
        assert graph._problems is checked


def test_reading_calls_make_no_store(project) -> None:
    root = project("jwt-login")
    with PlanGraph.open(root) as graph:
        graph.status()
        assert graph.claims() == set()
        assert graph.events() == []
        graph.gate(TOKEN)
        assert not graph.has_store()


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_a_payload_holding_nan_or_an_infinity_is_refused(project, value: float) -> None:
    root = project("jwt-login")
    with PlanGraph.open(root) as graph:
        with pytest.raises(UsageError, match="NaN or an infinity"):
            graph.append("cancel", SCHEMA, by="lead", payload={"why": [1, {"x": value}]})
        kept = graph.append("cancel", SCHEMA, by="lead", payload={"why": "NaN Infinity"})
        assert [e.id for e in graph.events()] == [kept.id]  # text that says so is text
        assert not graph.audit().findings["chain"]  # stored, it would read back changed
