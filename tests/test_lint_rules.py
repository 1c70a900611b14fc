"""Lint rules (DESIGN §3.4), focused cases: input references, types, paths, side effects and
integrity, and the finding API.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from lint_helpers import (
    LINT_FIXTURES,
    ROOT,
    _codes,
    _edge,
    _Files,
    _fixture,
    _lint,
    _lint_fixture,
    _step,
)

from pytest_plangraph.lint.findings import (
    LINT_CODES,
    Finding,
    has_errors,
)
from pytest_plangraph.lint.runner import lint_plan
from pytest_plangraph.plan.file import load_plan
from pytest_plangraph.vcs.workspace import Workspace

# --- types ------------------------------------------------------------------------------------


def test_input_references_may_name_dotted_node_ids(tmp_path: Path) -> None:
    nodes = [
        _step("api.v2", outputs_schema={"token": "str"}),
        _step("client", inputs={"token": "api.v2.outputs.token"}),
    ]
    assert _lint(tmp_path, nodes, [_edge("api.v2", "client", "consumes")]) == []


@pytest.mark.parametrize(
    ("edge", "declared"),
    [
        (_edge("src", "dst", "consumes", strength="weak"), True),
        (_edge("src", "dst", "validates"), True),
        (_edge("src", "dst", "consumes", status="inactive"), False),
        (_edge("src", "dst", "related"), False),
        (_edge("dst", "src", "consumes"), False),
    ],
)
def test_an_input_needs_an_active_dependency_edge_into_its_node(
    tmp_path: Path, edge: dict[str, Any], declared: bool
) -> None:
    nodes = [
        _step("src", outputs_schema={"x": "int"}),
        _step("dst", inputs={"x": "src.outputs.x"}),
    ]
    findings = _lint(tmp_path, nodes, [edge])
    assert _codes(findings) == ([] if declared else ["UNDECLARED_EDGE"])
    assert all("{from: src, to: dst, type: consumes}" in f.hint for f in findings)


def test_a_node_reading_its_own_outputs_is_told_to_repoint_the_input(tmp_path: Path) -> None:
    nodes = [_step("a", outputs_schema={"x": "int"}, inputs={"x": "a.outputs.x"})]
    [finding] = _lint(tmp_path, nodes)
    assert finding.code == "UNDECLARED_EDGE"
    assert "cannot take its own outputs" in finding.hint


@pytest.mark.parametrize("reference", ["src.outputs.", ".outputs.x", "src.x", "src.outputs"])
def test_a_malformed_reference_is_a_type_mismatch(tmp_path: Path, reference: str) -> None:
    nodes = [_step("src", outputs_schema={"x": "int"}), _step("dst", inputs={"x": reference})]
    [finding] = _lint(tmp_path, nodes, [_edge("src", "dst", "consumes")])
    assert finding.code == "TYPE_MISMATCH"
    assert "node-id.outputs.field" in finding.hint


@pytest.mark.parametrize(
    ("outputs", "artifact", "known"),
    [
        (["build/app.whl"], "build/app.whl", True),
        (["build/app.whl"], "./build/app.whl", True),
        (["dist/*.whl"], "dist/pkg-1.0.whl", True),
        (["dist/"], "dist/sub/pkg.whl", True),
        (["dist"], "dist/pkg.whl", True),
        (["dist/*.whl"], "dist/*.whl", True),
        (["dist/*.whl"], "dist/pkg.tar.gz", False),
        (["dist"], "distribution/pkg.whl", False),
        ([], "anything.txt", False),
    ],
)
def test_consumed_artifacts_must_be_outputs_of_from(
    tmp_path: Path, outputs: list[str], artifact: str, known: bool
) -> None:
    nodes = [_step("build", outputs=outputs), _step("ship")]
    edges = [_edge("build", "ship", "consumes", artifacts=[artifact])]
    findings = _lint(tmp_path, nodes, edges)
    assert _codes(findings) == ([] if known else ["UNKNOWN_ARTIFACT"])


def test_a_plugin_verifier_is_known_once_its_type_is_registered(tmp_path: Path) -> None:
    criterion = {"id": "ac-1", "verifier": {"type": "model-review", "model": "m"}}
    nodes = [{"id": "a", "acceptance": [criterion]}]
    [finding] = _lint(tmp_path, nodes)
    assert finding.code == "UNKNOWN_VERIFIER"
    types = ("test", "schema", "artifact", "approval", "model-review")
    assert _lint(tmp_path, nodes, verifier_types=types) == []


def test_an_invalid_schema_file_is_a_verifier_config_error(tmp_path: Path) -> None:
    (tmp_path / "bad.schema.json").write_text('{"type": 12}', encoding="utf-8")
    (tmp_path / "data.json").write_text("{}", encoding="utf-8")
    verifier = {"type": "schema", "schema": "bad.schema.json", "artifact": "data.json"}
    nodes = [{"id": "a", "acceptance": [{"id": "ac-1", "verifier": verifier}]}]
    [finding] = _lint(tmp_path, nodes, files=_Files(tmp_path))
    assert finding.code == "VERIFIER_CONFIG"
    assert finding.hint.startswith("a/ac-1: bad.schema.json is not a valid JSON Schema")
    assert _lint(tmp_path, nodes) == []  # without file checks nothing is read


def test_a_verifier_path_outside_the_root_is_reported_once(tmp_path: Path) -> None:
    verifier = {"type": "schema", "schema": "../s.json", "artifact": "a.json"}
    nodes = [{"id": "a", "acceptance": [{"id": "ac-1", "verifier": verifier}]}]
    (tmp_path / "a.json").write_text("{}", encoding="utf-8")
    [finding] = _lint(tmp_path, nodes, files=_Files(tmp_path))
    assert finding.code == "PATH_OUTSIDE_ROOT"
    assert "'../s.json'" in finding.hint


def test_a_symlink_out_of_the_root_is_outside_the_root(tmp_path: Path) -> None:
    root, outside = tmp_path / "repo", tmp_path / "elsewhere"
    root.mkdir()
    outside.mkdir()
    (root / "link").symlink_to(outside, target_is_directory=True)
    edges = [_edge("a", "b", "consumes", artifacts=["link/secret.txt"])]
    nodes = [_step("a", outputs=["link/secret.txt", "inside.txt"]), _step("b")]
    findings = _lint(root, nodes, edges, files=_Files(root))
    assert _codes(findings) == ["PATH_OUTSIDE_ROOT", "PATH_OUTSIDE_ROOT"]
    assert [f.node for f in findings] == ["a", "b"]
    assert "symlink" in findings[0].hint
    assert _lint(root, nodes, edges) == []


def test_a_nul_character_in_a_path_is_reported_not_a_crash(tmp_path: Path) -> None:
    nodes = [_step("a", outputs=["o\0ut/a.txt"])]
    [finding] = _lint(tmp_path, nodes, files=_Files(tmp_path))
    assert finding.code == "PATH_OUTSIDE_ROOT"
    assert "NUL character" in finding.hint


def test_test_pattern_paths_are_checked_by_their_file_part(tmp_path: Path) -> None:
    verifier = {"type": "test", "tests": ["../tests/test_x.py::test_y", "tests/t.py::test_z"]}
    nodes = [{"id": "a", "acceptance": [{"id": "ac-1", "verifier": verifier}]}]
    [finding] = _lint(tmp_path, nodes)
    assert finding.code == "PATH_OUTSIDE_ROOT"
    assert "'../tests/test_x.py'" in finding.hint


# --- side effects and integrity ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "codes"),
    [
        ({"effect": "write", "compensate": "undo", "idempotent": True}, []),
        ({"effect": "write", "compensate": "undo", "max_retry": 0}, []),
        ({"effect": "write", "idempotent": True}, ["NO_COMPENSATION"]),
        ({"effect": "write"}, ["NO_COMPENSATION", "RETRY_WITHOUT_IDEMPOTENCY"]),
        ({"effect": "irreversible", "max_retry": 0}, []),
        ({"effect": "read", "max_retry": 5}, []),
    ],
)
def test_side_effect_contract(tmp_path: Path, fields: dict[str, Any], codes: list[str]) -> None:
    assert _codes(_lint(tmp_path, [_step("a", **fields)])) == codes


def test_irreversible_rules_follow_only_strong_active_dependencies(tmp_path: Path) -> None:
    nodes = [_step("drop", effect="irreversible", max_retry=0), _step("after")]
    for edge in (_edge("drop", "after", strength="weak"), _edge("drop", "after", "related")):
        assert _lint(tmp_path, nodes, [edge]) == []
    [finding] = _lint(tmp_path, nodes, [_edge("drop", "after", "validates")])
    assert (finding.code, finding.node) == ("IRREVERSIBLE_NOT_LAST", "after")


def test_conflicts_between_independent_nodes_are_fine(tmp_path: Path) -> None:
    nodes = [_step("a"), _step("b"), _step("c")]
    edges = [
        _edge("a", "b"),
        _edge("c", "b", "conflicts"),
        _edge("b", "a", "conflicts", status="inactive"),
    ]
    assert _lint(tmp_path, nodes, edges) == []


def test_conflict_with_a_direct_prerequisite(tmp_path: Path) -> None:
    nodes = [_step("a"), _step("b")]
    [finding] = _lint(tmp_path, nodes, [_edge("a", "b"), _edge("a", "b", "conflicts")])
    assert (finding.code, finding.node) == ("CONFLICT_REQUIRED", "b")
    assert "(a -> b)" in finding.hint


# --- the finding API --------------------------------------------------------------------------


def test_findings_are_sorted_by_line_then_code_and_extra_ones_merge_in() -> None:
    extra = Finding("IMPLICIT_DEPENDENCY", "warning", "step-c", "add an edge", "x.yaml:11:1")
    loaded = load_plan(LINT_FIXTURES / "cycle.yaml", display="cycle.yaml")
    findings = lint_plan(loaded, extra=[extra, extra])
    assert _codes(findings) == ["CYCLE", "IMPLICIT_DEPENDENCY"]
    lines = [int(f.location.split(":")[1]) for f in _lint_fixture("retry-without-idempotency")]
    assert lines == sorted(lines)


def test_lint_is_deterministic() -> None:
    runs = [[f.to_json() for f in _lint_fixture(_fixture(code))] for code in ("MISSING_DEP",) * 2]
    assert runs[0] == runs[1]


def test_to_json_has_exactly_the_contract_fields() -> None:
    [finding] = _lint_fixture("self-edge")
    assert finding.to_json() == {
        "code": "SELF_EDGE",
        "severity": "error",
        "node": "step-a",
        "hint": finding.hint,
        "location": "self-edge.yaml:9:5",
    }
    assert str(finding).startswith("self-edge.yaml:9:5: error SELF_EDGE [step-a]: requires edge")


def test_has_errors_ignores_warnings() -> None:
    warning = Finding("NO_ACCEPTANCE", "warning", "a", "add one", "p.yaml:1:1")
    error = Finding("CYCLE", "error", "a", "a -> a", "p.yaml:1:1")
    assert not has_errors([warning])
    assert has_errors([warning, error])
    assert not has_errors([])


def test_docs_list_every_code_with_its_severity() -> None:
    text = (ROOT / "docs" / "lint-codes.md").read_text(encoding="utf-8")
    for code, (severity, _) in LINT_CODES.items():
        assert re.search(rf"^\| `{code}` \| {severity} \|", text, re.M), code
        assert f"## `{code}`" in text, code


@pytest.mark.parametrize("name", sorted(p.stem for p in LINT_FIXTURES.glob("*.yaml")))
def test_the_flat_path_walk_names_every_located_path(name: str) -> None:
    from pytest_plangraph.lint.findings import LintContext
    from pytest_plangraph.lint.rules import _path_values, _plan_paths
    from pytest_plangraph.plan.graph import Graph

    loaded = load_plan(LINT_FIXTURES / f"{name}.yaml", display=f"{name}.yaml")
    context = LintContext(loaded, Graph.of(loaded.plan), ["test", "schema", "artifact"], None)
    assert _path_values(context) == [value for _, _, value in _plan_paths(context)]


def test_criteria_that_are_all_optional_are_no_acceptance(tmp_path: Path) -> None:
    optional = [{"id": "ac", "required": False, "verifier": {"type": "approval"}}]
    nodes = [
        {"id": "goal", "kind": "objective", "acceptance": optional},
        {"id": "s", "acceptance": optional},
        {"id": "t", "acceptance": [*optional, {"id": "ac2", "verifier": {"type": "approval"}}]},
    ]
    found = {f.node: f.hint for f in _lint(tmp_path, nodes) if f.code == "NO_ACCEPTANCE"}
    assert sorted(found) == ["goal", "s"]
    assert found["s"].startswith("step s has no required acceptance criteria")
    assert "make one required (leave out `required: false`)" in found["s"]
    assert "strong prerequisites or required acceptance criteria" in found["goal"]


def test_the_longest_node_id_that_exists_wins_in_an_input_reference(tmp_path: Path) -> None:
    nodes = [
        _step("keys", outputs_schema={"public_key": "str"}),
        _step("keys.outputs", outputs_schema={"token": "str"}),
        _step("login", inputs={"tok": "keys.outputs.outputs.token"}),
    ]
    edges = [{"from": "keys.outputs", "to": "login", "type": "consumes"}]
    found = [f.code for f in _lint(tmp_path, nodes, edges) if f.severity == "error"]
    assert found == []


def test_a_milestone_reached_only_by_weak_edges_gathers_nothing(tmp_path: Path) -> None:
    nodes = [
        _step("s"),
        {"id": "m", "kind": "milestone"},
        {"id": "c", "kind": "milestone", "cancelled": True},
    ]
    edges = [{"from": "s", "to": "m", "type": "requires", "strength": "weak"}]
    found = [
        (f.code, f.node) for f in _lint(tmp_path, nodes, edges) if f.code == "ORPHAN_MILESTONE"
    ]
    assert found == [("ORPHAN_MILESTONE", "m")]  # a cancelled one needs nothing


def test_a_test_pattern_without_its_file_is_told_once(tmp_path: Path) -> None:
    nodes = [
        {
            "id": "a",
            "acceptance": [{"id": "c", "verifier": {"type": "test", "tests": ["::test_login"]}}],
        }
    ]
    [finding] = _lint(tmp_path, nodes)
    assert finding.code == "VERIFIER_CONFIG"
    assert "test pattern '::test_login' has an empty part" in finding.hint


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("/etc/passwd", "absolute paths are not allowed"),
        ("C:/x.txt", "'C:' is a drive on Windows"),
        ("a:b", "'a:' is a drive on Windows"),
        ("../x", "climbs out of the repository"),
        ("a\\b", "use '/' as the separator"),
    ],
)
def test_each_way_of_leaving_the_repository_says_which(
    tmp_path: Path, path: str, says: str
) -> None:
    [finding] = _lint(tmp_path, [_step("s", outputs=[path])])
    assert finding.code == "PATH_OUTSIDE_ROOT"
    assert says in finding.hint


def test_a_default_min_passed_below_one_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text(
        "plangraph: 1\nplan: p\ndefaults:\n  test: {min_passed: 0}\nnodes: []\n",
        encoding="utf-8",
    )
    [finding] = lint_plan(load_plan(path, display="plan.yaml"))
    assert (finding.code, finding.severity, finding.node) == ("MIN_PASSED_BELOW_ONE", "error", None)
    assert finding.location.startswith("plan.yaml:4:")
    assert "defaults.test.min_passed is 0" in finding.hint


@pytest.mark.parametrize(
    ("exclude", "pattern", "covered"),
    [
        ("tests/a.py", "tests/a.py", True),
        ("tests/a.py", "tests/a.py::test_x", True),
        ("tests/a.py::test_x", "tests/a.py::test_x[1]", True),
        ("tests/a.py::*", "tests/a.py", True),
        ("tests/*", "tests/a.py::test_x", True),
        ("tests/a.py::test_x", "tests/a.py", False),
        ("tests/a.py::*slow", "tests/a.py", False),
        ("tests/a.py", "tests/*.py", False),
        ("tests/b.py", "tests/a.py", False),
    ],
)
def test_exclude_covers_a_pattern_only_when_it_takes_out_all_it_matches(
    exclude: str, pattern: str, covered: bool
) -> None:
    from pytest_plangraph.plan.patterns import covers

    assert covers(exclude, pattern) is covered


def test_a_test_file_named_with_glob_characters_is_found(tmp_path: Path) -> None:
    from pytest_plangraph.lint.files import WorkspaceFileCheck
    from pytest_plangraph.verifiers import Registry

    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_[v2].py").write_text("def test_x():\n    pass\n")
    (tmp_path / "tests" / "test_b.py").write_text("def test_y():\n    pass\n")
    tests = ["tests/test_[v2].py::test_x", "tests/test_?.py", "tests/test_[xz].py", "tests/"]
    nodes = [{"id": "a", "acceptance": [{"id": "t", "verifier": {"type": "test", "tests": tests}}]}]
    files = WorkspaceFileCheck(Workspace.at(tmp_path), Registry.builtin())
    findings = _lint(tmp_path, nodes, files=files)
    assert [(f.code, f.hint.split("tests pattern ")[1]) for f in findings] == [
        # a glob of files matches no test id: it names files, and ids go on past them
        (
            "TESTS_NOT_FOUND",
            "'tests/test_?.py' is a glob of files, and a glob matches whole test ids "
            "(file.py::test): it matches no test; write 'tests/test_?.py::*'",
        ),
        (
            "TESTS_NOT_FOUND",
            "'tests/test_[xz].py' is a glob of files, and a glob matches whole test ids "
            "(file.py::test): it matches no test; write 'tests/test_[xz].py::*'",
        ),
    ]
    # a file named with glob characters, named by itself, is its tests' file
    nodes[0]["acceptance"][0]["verifier"]["tests"] = ["tests/test_[v2].py"]
    assert _lint(tmp_path, nodes, files=files) == []
