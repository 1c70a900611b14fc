"""Lint rules (DESIGN §3.4): one broken fixture plan per code, a clean plan, and the structure
rules (types, side effects and the finding API are in test_lint_rules.py)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from lint_helpers import (
    LINT_FIXTURES,
    _codes,
    _edge,
    _fixture,
    _lint,
    _lint_fixture,
    _step,
)

from pytest_plangraph.lint.findings import (
    LINT_CODES,
    RUN_DATA_CODES,
)
from pytest_plangraph.lint.runner import lint_plan
from pytest_plangraph.plan.file import load_plan

PLAN_CODES = set(LINT_CODES) - RUN_DATA_CODES  # the others need a run's data (test_plugin_coverage)


# (node, line) of every finding each fixture must give, in report order
EXPECTED: dict[str, list[tuple[str, int]]] = {
    "DUPLICATE_ID": [("step-a", 8), ("step-b", 14)],
    "MISSING_DEP": [("step-a", 6), ("step-b", 10), ("step-b", 14)],
    "SELF_EDGE": [("step-a", 9)],
    "CYCLE": [("a", 11)],
    "HIERARCHY_CYCLE": [("step-a", 6)],
    "UNREACHABLE": [("step-stray", 11)],
    "ORPHAN_MILESTONE": [("milestone-beta", 8)],
    "CONTAINS_EDGE": [("step-part", 14)],
    "UNDECLARED_EDGE": [("step-login", 11)],
    "TYPE_MISMATCH": [("step-login", 11), ("step-login", 12)],
    "UNKNOWN_ARTIFACT": [("step-deploy", 18)],
    "UNKNOWN_VERIFIER": [("step-a", 8)],
    "VERIFIER_CONFIG": [("step-a", 8), ("step-a", 12)],
    "PATH_OUTSIDE_ROOT": [("step-a", 7), ("step-a", 8)],
    "NO_ACCEPTANCE": [("step-a", 10)],
    "NO_COMPENSATION": [("step-migrate", 6)],
    "RETRY_WITHOUT_IDEMPOTENCY": [("step-email", 6), ("step-charge", 12)],
    "IRREVERSIBLE_NOT_LAST": [("step-notify", 19)],
    "CONFLICT_REQUIRED": [("step-c", 11)],
    "MIN_PASSED_BELOW_ONE": [("step-a", 8)],
    "EXCLUDES_EVERY_TEST": [("step-a", 11)],
    # line 10: test_logn.py is no file, and tests/test_l*.py is a glob of files (no test id)
    "TESTS_NOT_FOUND": [("step-a", 10), ("step-a", 10), ("step-a", 12)],
    "ARTIFACT_NOT_FOUND": [("step-a", 9), ("step-a", 13)],
}


def test_every_code_has_a_fixture_and_an_expectation() -> None:
    names = {path.stem for path in LINT_FIXTURES.glob("*.yaml")}
    assert names == {"clean"} | {_fixture(code) for code in PLAN_CODES}
    assert set(EXPECTED) == PLAN_CODES


@pytest.mark.parametrize("code", sorted(PLAN_CODES))
def test_broken_fixture_gives_its_code(code: str) -> None:
    name = _fixture(code)
    findings = _lint_fixture(name)
    assert {f.code for f in findings} == {code}
    where = [(f.node, f.location.split(":")[1]) for f in findings]
    assert where == [(node, str(line)) for node, line in EXPECTED[code]]
    assert all(f.location.startswith(f"{name}.yaml:") for f in findings)
    assert all(f.severity == LINT_CODES[code][0] for f in findings)
    assert all(f.node and f.node in f.hint for f in findings)


def test_clean_fixture_has_no_findings() -> None:
    assert _lint_fixture("clean") == []


def test_design_example_plan_is_clean(tmp_path: Path) -> None:
    plan = tmp_path / "plangraph.yaml"
    plan.write_text(
        textwrap.dedent(
            """\
            plangraph: 1
            plan: auth-login
            nodes:
              - {id: objective-auth, kind: objective, title: JWT login}
              - id: step-user-schema
                parent: objective-auth
                outputs: [src/auth/user_schema.json]
                acceptance:
                  - id: ac-schema-valid
                    verifier: {type: schema, schema: src/auth/user_schema.json,
                               artifact: fixtures/user.json}
              - id: step-token-endpoint
                parent: objective-auth
                outputs: [src/auth/login.py]
                acceptance:
                  - {id: ac-http-200, verifier: {type: test, tests: ["tests/test_login.py::t"]}}
                  - {id: ac-invalid-401, verifier: {type: test}}
                  - {id: ac-security-review, verifier: {type: approval, role: security}}
            edges:
              - {from: step-user-schema, to: step-token-endpoint, type: consumes}
            """
        ),
        encoding="utf-8",
    )
    assert lint_plan(load_plan(plan)) == []


# --- structure --------------------------------------------------------------------------------


def test_cycle_hint_prints_the_whole_cycle_from_the_first_node(tmp_path: Path) -> None:
    nodes = [_step("a"), _step("b"), _step("c")]
    edges = [_edge("b", "c"), _edge("c", "a", "consumes"), _edge("a", "b", "validates")]
    [finding] = _lint(tmp_path, nodes, edges)
    assert (finding.code, finding.node) == ("CYCLE", "a")
    assert "a -> b -> c -> a" in finding.hint
    text = (tmp_path / "plan.json").read_text(encoding="utf-8").splitlines()
    closing = next(n for n, line in enumerate(text, 1) if '"from": "c"' in line)
    assert finding.location.startswith(f"plan.json:{closing - 1}:")  # the edge c -> a


@pytest.mark.parametrize(
    "back",
    [
        {"strength": "weak"},
        {"status": "inactive"},
        {"status": "proposed"},
        {"type": "related"},
    ],
)
def test_weak_inactive_and_non_dependency_edges_make_no_cycle(
    tmp_path: Path, back: dict[str, Any]
) -> None:
    edges = [_edge("a", "b"), {**_edge("b", "a"), **back}]
    assert _lint(tmp_path, [_step("a"), _step("b")], edges) == []


def test_a_chain_listed_downstream_first_is_no_cycle(tmp_path: Path) -> None:
    # the plan's topological order, not the order of the file, proves there is no cycle
    nodes = [_step("c"), _step("b"), _step("a")]
    edges = [_edge("b", "c"), _edge("a", "b", "consumes")]
    assert _lint(tmp_path, nodes, edges) == []
    cycle = [*edges, _edge("c", "a", "validates")]
    assert _codes(_lint(tmp_path, nodes, cycle)) == ["CYCLE"]


def test_lint_with_the_callers_graph_finds_the_same(tmp_path: Path) -> None:
    from pytest_plangraph.plan.graph import Graph

    nodes = [_step(n) for n in "abcd"]
    edges = [_edge("a", "b"), _edge("b", "a"), _edge("c", "ghost")]
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"plangraph": 1, "plan": "p", "nodes": nodes, "edges": edges}))
    loaded = load_plan(path)
    found = lint_plan(loaded, graph=Graph.of(loaded.plan))
    assert found == lint_plan(loaded)
    assert _codes(found) == ["CYCLE", "MISSING_DEP"]


class _Asked(dict[tuple[object, ...], tuple[int, int]]):
    """Positions that count how often a location was looked up."""

    asked = 0

    def get(self, key: Any, default: Any = None) -> Any:
        self.asked += 1
        return super().get(key, default)


def test_only_the_severities_asked_for_are_made_and_located(tmp_path: Path) -> None:
    from pytest_plangraph.plan.file import LoadedPlan

    nodes = [_step("a", effect="write"), _step("b")]
    path = tmp_path / "plan.yaml"  # JSON text read as YAML: positions are found as it is read
    path.write_text(json.dumps({"plangraph": 1, "plan": "p", "nodes": nodes, "edges": []}))
    positions = _Asked(load_plan(path).positions)
    loaded = LoadedPlan(load_plan(path).plan, "plan.json", positions)
    assert lint_plan(loaded, severities=("error",)) == []
    assert positions.asked == 0  # a plan read from its cache would be read again to locate
    warnings = lint_plan(loaded, severities=("warning",))
    assert _codes(warnings) == ["NO_COMPENSATION", "RETRY_WITHOUT_IDEMPOTENCY"]
    assert positions.asked > 0 and warnings[0].location.startswith("plan.json:")
    cycle = [_edge("a", "b"), _edge("b", "a")]
    path.write_text(json.dumps({"plangraph": 1, "plan": "p", "nodes": nodes, "edges": cycle}))
    assert _codes(lint_plan(load_plan(path), severities=("error",))) == ["CYCLE"]


def test_every_disjoint_cycle_is_reported(tmp_path: Path) -> None:
    nodes = [_step(n) for n in "abcd"]
    edges = [_edge("a", "b"), _edge("b", "a"), _edge("d", "c"), _edge("c", "d")]
    findings = _lint(tmp_path, nodes, edges)
    assert _codes(findings) == ["CYCLE", "CYCLE"]
    assert ["a -> b -> a" in findings[0].hint, "c -> d -> c" in findings[1].hint] == [True, True]


def test_self_parent_is_a_hierarchy_cycle_and_nodes_below_are_not(tmp_path: Path) -> None:
    nodes = [_step("a", parent="a"), _step("b", parent="a")]
    [finding] = _lint(tmp_path, nodes)
    assert (finding.code, finding.node) == ("HIERARCHY_CYCLE", "a")
    assert "a -> a" in finding.hint


def test_unreachable_names_the_root_of_a_stray_subtree(tmp_path: Path) -> None:
    nodes = [
        {"id": "goal", "kind": "objective"},
        {"id": "m", "kind": "milestone"},
        _step("s1", parent="m"),
        _step("s2", parent="s1"),
    ]
    findings = _lint(tmp_path, nodes)
    # nothing is under the objective either: nothing could show it done
    assert [(f.code, f.node) for f in findings if f.code == "NO_ACCEPTANCE"] == [
        ("NO_ACCEPTANCE", "goal")
    ]
    [finding] = [f for f in findings if f.code != "NO_ACCEPTANCE"]
    assert (finding.code, finding.node) == ("UNREACHABLE", "m")
    assert "(and the 2 nodes under it)" in finding.hint
    assert "goal" in finding.hint


def test_a_missing_parent_is_not_also_unreachable(tmp_path: Path) -> None:
    nodes = [{"id": "goal", "kind": "objective"}, _step("s", parent="gaol")]
    [finding] = [f for f in _lint(tmp_path, nodes) if f.code != "NO_ACCEPTANCE"]
    assert finding.code == "MISSING_DEP"
    assert "did you mean 'goal'?" in finding.hint


def test_an_objective_that_gathers_nothing_has_no_acceptance(tmp_path: Path) -> None:
    """An objective completes through its children or strong prerequisites; with neither and
    no criterion of its own, nothing could show it done (a milestone so is ORPHAN_MILESTONE)."""
    alone = [{"id": "goal", "kind": "objective"}, _step("s")]
    finding, stray = _lint(tmp_path, alone)
    assert (finding.code, finding.severity, finding.node) == ("NO_ACCEPTANCE", "warning", "goal")
    assert (stray.code, stray.node) == ("UNREACHABLE", "s")
    assert "objective goal has no children, strong prerequisites or acceptance" in finding.hint
    parented = [{"id": "goal", "kind": "objective"}, _step("s", parent="goal")]
    assert _lint(tmp_path, parented) == []


def test_plans_without_objectives_have_no_unreachable_nodes(tmp_path: Path) -> None:
    assert _lint(tmp_path, [_step("a"), _step("b")]) == []


@pytest.mark.parametrize(
    ("kind", "orphan"), [("requires", False), ("validates", False), ("related", True)]
)
def test_milestone_gathers_work_through_dependency_edges(
    tmp_path: Path, kind: str, orphan: bool
) -> None:
    nodes = [_step("a"), {"id": "m", "kind": "milestone"}]
    findings = _lint(tmp_path, nodes, [_edge("a", "m", kind)])
    assert _codes(findings) == (["ORPHAN_MILESTONE"] if orphan else [])
