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
