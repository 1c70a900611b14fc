"""A patch's text edit given the plan: the nodes (and edges) it does not change are kept as
written, only the rest goes through the round trip, and the result reads as the plan the
patch must give — the same text as the whole round trip's wherever that keeps a node as it
was, and the whole round trip taken when the text is not laid out for the cut."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_helpers import plangraph_main
from hypothesis import given, settings
from hypothesis import strategies as st
from repo_helpers import git

from pytest_plangraph.plan.file import parse_plan
from pytest_plangraph.plan.patch import PlanPatch, edit_plan_text, patched_plan, read_patch
from pytest_plangraph.plan.splice import put_back, touched_text

PLAN = """\
plangraph: 1   # the format
plan: p
nodes:
  # the steps
  - id: a
    outputs: [a.txt]   # what a writes
  - id: b
    acceptance:
      - {id: c1, verifier: {type: approval}}

  # the second half
  - id: c
    title: "quoted"
  - id: d
    acceptance:
      - id: c2
        verifier:
          type: approval
edges:
  - {from: a, to: b, type: requires}   # b needs a
  - from: b
    to: c
    type: requires
# the end
"""

PATCHES = [
    {"nodes": {"add": [{"id": "x"}]}},
    {"nodes": {"remove": ["c"]}},
    {"nodes": {"replace": [{"id": "b", "title": "B"}]}},
    {"criteria": {"add": [{"node": "d", "criterion": {"id": "c3", "verifier": {
        "type": "approval"}}}]}},
    {"criteria": {"remove": [{"node": "b", "id": "c1"}]}},
    {"edges": {"add": [{"from": "c", "to": "d", "type": "requires"}]}},
    {"edges": {"remove": [{"from": "b", "to": "c", "type": "requires"}]}},
    {"nodes": {"remove": ["a"], "add": [{"id": "a", "title": "again"}]},
     "criteria": {"replace": [{"node": "d", "criterion": {"id": "c2", "verifier": {
         "type": "approval"}}}]}},
]  # fmt: skip


def patch_of(data: dict) -> PlanPatch:
    return read_patch(json.dumps({"plangraph_patch": 1, **data}).encode(), "p.json")


def both(text: str, change: PlanPatch) -> tuple[str, str]:
    """The edit given the plan (cut) and without it (the whole round trip)."""
    plan = parse_plan(text.encode(), "plan.yaml").plan
    cut = edit_plan_text(text, change, "plan.yaml", json_file=False, plan=plan)
    return cut, edit_plan_text(text, change, "plan.yaml", json_file=False)


@pytest.mark.parametrize("data", PATCHES)
def test_the_cut_edit_is_the_whole_round_trip_and_the_plan_it_must_be(data: dict) -> None:
    change = patch_of(data)
    cut, whole = both(PLAN, change)
    assert cut == whole
    expected = patched_plan(parse_plan(PLAN.encode(), "x").plan, change, "x")
    assert parse_plan(cut.encode(), "plan.yaml").plan.digest == expected.digest


def test_what_the_patch_does_not_change_skips_the_round_trip() -> None:
    """A layout the round trip rewrites (spaces inside a flow mapping, after a key, a mapping
    indented by four) stays byte for byte in the nodes the patch leaves alone."""
    cut, whole = both(ODD, patch_of({"nodes": {"replace": [{"id": "a", "title": "A"}]}}))
    for kept in KEPT:
        assert kept in cut and kept not in whole  # the whole round trip rewrites them
    assert "  - {id: a, title: A}\n" in cut and "  - {id: a, title: A}\n" in whole


ODD = (
    PLAN.replace(
        "{id: c1, verifier: {type: approval}}", "{ id: c1,  verifier: { type: approval } }"
    )
    .replace("    title: ", "    title:    ")
    .replace("        verifier:\n          type:", "        verifier:\n            type:")
)
KEPT = ("{ id: c1,  verifier: { type: approval } }", "title:    ", "\n            type: approval")


@pytest.mark.parametrize(
    "text",
    [
        PLAN.replace("nodes:\n  # the steps\n", "nodes: [\n").split("edges:")[0],  # flow
        "plangraph: 1\nplan: p\nnodes: []\n",
    ],
)
def test_a_text_not_laid_out_for_the_cut_is_none(text: str) -> None:
    assert touched_text(text, ["a"], {"a"}, None) is None


def test_a_token_the_round_trip_did_not_write_back_alone_is_none() -> None:
    cut = touched_text(PLAN, ["a", "b", "c", "d"], {"b"}, 2)
    assert cut is not None and len(cut.kept) == 3  # a, then c and d, then the edges
    token = next(iter(cut.kept))
    assert put_back(cut.text, cut) is not None
    assert put_back(cut.text.replace(f"- {token}", f"- [{token}]"), cut) is None
    assert put_back(cut.text.replace(f"- {token}\n", ""), cut) is None


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from(["  # note\n", "\n", "    # inner\n"]), min_size=4, max_size=4),
    st.sampled_from(PATCHES),
)
def test_comments_between_items_give_what_the_round_trip_gives(
    between: list[str], data: dict
) -> None:
    """Comment and blank lines between any two items: the cut edit and the whole round trip
    give the same text (a comment belongs to the item above it in both)."""
    text = PLAN
    for index, marker in enumerate(["  - id: b\n", "  - id: c\n", "  - id: d\n", "edges:\n"]):
        text = text.replace(marker, between[index] + marker, 1)
    cut, whole = both(text, patch_of(data))
    assert cut == whole


def test_plangraph_patch_keeps_untouched_nodes_as_written(jwt: Path) -> None:
    """Through the real command: the node the patch leaves alone keeps a layout the round
    trip would rewrite, and the plan reads as patched."""
    plan = jwt / "plangraph.yaml"
    odd = "{ type: schema,  schema: src/auth/user_schema.json, artifact: fixtures/user.json }"
    plan.write_text(
        plan.read_text(encoding="utf-8").replace(
            "{type: schema, schema: src/auth/user_schema.json, artifact: fixtures/user.json}", odd
        ),
        encoding="utf-8",
    )
    patch = jwt.parent / "p.yaml"
    patch.write_text(
        "plangraph_patch: 1\ncriteria:\n  remove: [{node: step-token-endpoint, id: ac-http-200}]\n",
        encoding="utf-8",
    )
    done = plangraph_main(jwt, "patch", str(patch), "--by", "alice", "--expected-plan-version", "1")
    assert done.code == 0, done.err
    written = plan.read_text(encoding="utf-8")
    assert odd in written and "ac-http-200" not in written
    assert "plangraph-kept" not in written
    status = plangraph_main(jwt, "status", "--format", "json")
    assert status.code == 0, status.err
    assert "ac-http-200" not in status.out and "ac-invalid-401" in status.out


@pytest.mark.parametrize("touched", ["step-a", "step-b"])
def test_an_alias_and_its_anchor_on_either_side_of_the_cut(jwt: Path, touched: str) -> None:
    """An anchor in one node and its alias in another, the patch touching either: the plan
    reads as patched (the cut text would lose the anchor or hold a lone alias, so the whole
    text goes through the round trip)."""
    plan = jwt / "plangraph.yaml"
    plan.write_text(
        "plangraph: 1\nplan: anchors\nnodes:\n"
        "  - id: step-a\n    acceptance:\n      - {id: ac, verifier: &v {type: approval}}\n"
        "  - id: step-b\n    acceptance:\n      - {id: ac, verifier: *v}\n",
        encoding="utf-8",
    )
    patch = jwt.parent / "p.yaml"
    patch.write_text(
        "plangraph_patch: 1\ncriteria:\n  add: [{node: " + touched + ", criterion: "
        "{id: more, verifier: {type: approval}}}]\n",
        encoding="utf-8",
    )
    done = plangraph_main(jwt, "patch", str(patch), "--by", "alice", "--expected-plan-version", "2")
    assert done.code == 0, done.err
    status = plangraph_main(jwt, "status", "--format", "json")
    assert status.code == 0, status.err
    nodes = {node["id"]: node for node in status.json()["nodes"]}
    assert len(nodes["step-a"]["criteria"]) + len(nodes["step-b"]["criteria"]) == 3


def test_a_criterion_invalidated_through_two_upstreams_shows_its_code_once(
    tmp_path: Path,
) -> None:
    """The text answer names each reason code once (the JSON keeps one per upstream)."""
    (tmp_path / "out").mkdir()
    nodes = []
    for name in "abc":
        (tmp_path / "out" / f"{name}.txt").write_text(name, encoding="utf-8")
        nodes.append(
            f"  - id: {name}\n    outputs: [out/{name}.txt]\n    acceptance: [{{id: ok, "
            f"verifier: {{type: artifact, path: out/{name}.txt}}}}]\n"
        )
    edges = "".join(f"  - {{from: {up}, to: c, type: consumes}}\n" for up in "ab")
    (tmp_path / "plangraph.yaml").write_text(
        "plangraph: 1\nplan: two-up\nnodes:\n" + "".join(nodes) + "edges:\n" + edges,
        encoding="utf-8",
    )
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "plan")
    assert plangraph_main(tmp_path, "verify").code == 0
    replaced = ", ".join(
        f"{{id: {up}, outputs: [out/{up}.txt, out/c.txt], acceptance: [{{id: ok, verifier: "
        f"{{type: artifact, path: out/{up}.txt}}}}]}}"
        for up in "ab"
    )
    patch = tmp_path.parent / "p.yaml"
    patch.write_text(f"plangraph_patch: 1\nnodes:\n  replace: [{replaced}]\n", encoding="utf-8")
    args = ["patch", str(patch), "--by", "x", "--expected-plan-version", "1"]
    shown = plangraph_main(tmp_path, *args)
    assert shown.code == 0, shown.err
    assert "  invalidated c/ok (UPSTREAM_CHANGED)\n" in shown.out


BASE = (
    "plangraph: 1\nplan: p\nnodes:\n- id: a\n  title: A\n# between\n- id: b\n- id: c\n"
    "edges:\n- {from: a, to: b, type: requires}   # why\n"
)
LAYOUTS = {
    "indent 0": BASE,
    "CRLF": BASE.replace("\n", "\r\n"),
    "byte order mark and markers": "\ufeff%YAML 1.2\n---\n" + BASE + "...\n# after\n",
    "flow mapping item": BASE.replace("- id: a\n  title: A\n", "- {id: a, title: A}\n"),
    "block scalar of dashes": BASE.replace("  title: A\n", "  title: |\n    - id: b\n    - x\n"),
    "quoted scalar continued low": BASE.replace("  title: A\n", '  title: "A\n  - id: q\n  "\n'),
    "edges first": BASE.replace("edges:\n- {from: a, to: b, type: requires}   # why\n", "").replace(
        "nodes:\n", "edges:\n  - {from: a, to: b, type: requires}\nnodes:\n"
    ),
    "dash alone": BASE.replace("- id: b\n", "-\n  id: b\n"),
}
APPROVAL = {"type": "approval"}
CHANGES = [
    {"nodes": {"add": [{"id": "x"}]}},
    {"nodes": {"remove": ["c"]}},
    {"nodes": {"remove": ["b"], "add": [{"id": "b", "title": "again"}]}},
    {"criteria": {"add": [{"node": "a", "criterion": {"id": "k", "verifier": APPROVAL}}]}},
    {"edges": {"add": [{"from": "a", "to": "c", "type": "requires"}]}},
]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("data", CHANGES)
def test_odd_layouts_read_as_the_whole_round_trip_reads(layout: str, data: dict) -> None:
    """The cut edit of each layout reads as the plan the patch must give, with its nodes in
    the order the whole round trip gives, no token left and every comment that keeps."""
    text = LAYOUTS[layout]
    change = patch_of(data)
    cut, whole = both(text, change)
    expected = patched_plan(parse_plan(text.encode(), "x").plan, change, "x")
    read = parse_plan(cut.encode(), "plan.yaml").plan
    assert read.digest == expected.digest
    assert [n.id for n in read.nodes] == [n.id for n in parse_plan(whole.encode(), "w").plan.nodes]
    assert "plangraph-kept" not in cut
    assert set(re.findall(r"#[^\r\n]*", whole)) <= set(re.findall(r"#[^\r\n]*", cut))
