"""Plan layouts and patches that once broke ``plangraph patch``'s cut edit (the nodes a patch
does not change kept as written, the rest through the round trip): each through the real
command, the plan read back as patched."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import plangraph_main


def patched(jwt: Path, plan_text: str, patch_text: str) -> str:
    """Write *plan_text* as the plan, apply *patch_text* with ``plangraph patch``; the text
    written, after checking the command succeeded and left no cut token behind."""
    plan = jwt / "plangraph.yaml"
    plan.write_bytes(plan_text.encode())
    patch = jwt.parent / "p.yaml"
    patch.write_text("plangraph_patch: 1\n" + patch_text, encoding="utf-8")
    done = plangraph_main(jwt, "patch", str(patch), "--by", "alice", "--expected-plan-version", "2")
    assert done.code == 0, done.err
    assert "Traceback" not in done.err
    written = plan.read_bytes().decode()
    assert "plangraph-kept" not in written
    return written


def node_ids(jwt: Path) -> list[str]:
    status = plangraph_main(jwt, "status", "--format", "json")
    assert status.code == 0, status.err
    return [node["id"] for node in status.json()["nodes"]]


@pytest.mark.parametrize("touched", ["step-a", "step-b"])
def test_an_item_whose_dash_is_alone_on_its_line(jwt: Path, touched: str) -> None:
    """``-`` alone on a line with the item's mapping below it (the round trip's indent guess
    once failed on it, a traceback): the plan reads as patched."""
    written = patched(
        jwt,
        "plangraph: 1\nplan: dashes\nnodes:\n-\n  id: step-a\n-\n  id: step-b\n",
        f"nodes:\n  replace: [{{id: {touched}, title: New}}]\n",
    )
    assert "title: New" in written
    assert sorted(node_ids(jwt)) == ["step-a", "step-b"]


def test_removing_the_last_edge_under_a_commented_key(jwt: Path) -> None:
    """``edges:`` with a comment on its line, the patch removing its only edge: the plan
    written reads (the round trip once wrote ``[]`` below the key, not YAML)."""
    written = patched(
        jwt,
        "plangraph: 1\nplan: e\nnodes:\n  - id: step-a\n  - id: step-b\n"
        "edges:   # the order\n  - {from: step-a, to: step-b, type: requires}\n",
        "edges:\n  remove: [{from: step-a, to: step-b, type: requires}]\n",
    )
    assert "step-a, to: step-b" not in written and "# the order" in written
    assert sorted(node_ids(jwt)) == ["step-a", "step-b"]


def test_removing_the_last_criterion_under_a_commented_key(jwt: Path) -> None:
    """``acceptance:`` with a comment on its line, the patch removing its only criterion:
    the plan written reads."""
    written = patched(
        jwt,
        "plangraph: 1\nplan: c\nnodes:\n  - id: step-a\n    acceptance:   # who signs\n"
        "      - {id: ok, verifier: {type: approval}}\n  - id: step-b\n",
        "criteria:\n  remove: [{node: step-a, id: ok}]\n",
    )
    assert "id: ok" not in written and "# who signs" in written
    assert sorted(node_ids(jwt)) == ["step-a", "step-b"]


@pytest.mark.parametrize("indent", ["", "  "])
def test_emptying_a_commented_list_before_another(jwt: Path, indent: str) -> None:
    """``edges:`` with a comment on its line and one below it, before ``nodes:``, the patch
    removing its only edge: the plan written reads, both comments kept (``[]`` written on
    the key's line once put the next key's first item on that key's line)."""
    written = patched(
        jwt,
        f"plangraph: 1\nplan: e\nedges: # the order\n  # by hand\n{indent}- from: step-a\n"
        f"{indent}  to: step-b\n{indent}  type: requires\nnodes:\n{indent}- id: step-a\n"
        f"{indent}- id: step-b\n",
        "edges:\n  remove: [{from: step-a, to: step-b, type: requires}]\n",
    )
    assert "# the order" in written and "# by hand" in written
    assert sorted(node_ids(jwt)) == ["step-a", "step-b"]
