"""A file whose name is not UTF-8 inside an output directory or glob: every command that
looks at the outputs stops with one message naming the node and the file (exit 2), no
traceback, and nothing recorded."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_helpers import plangraph_main
from conftest import git

PLAN = """\
plangraph: 1
plan: names
nodes:
  - id: step-a
    outputs: ["pkg*"]
    acceptance:
      - id: ac-data
        verifier: {type: artifact, path: pkg1/data.txt}
"""


@pytest.mark.parametrize(
    "command",
    [
        ("status",),
        ("status", "--check"),
        ("impact",),
        ("impact", "--since", "HEAD"),
        ("claim", "step-a", "--by", "me"),
        ("verify",),
    ],
)
def test_a_file_name_that_is_not_utf8_under_an_output_stops_with_one_message(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    root = tmp_path / "names"
    (root / "pkg1").mkdir(parents=True)
    (root / "pkg1/data.txt").write_text("data\n")
    (root / "plangraph.yaml").write_text(PLAN)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    assert plangraph_main(root, "verify").code == 0
    assert plangraph_main(root, "status").code == 0  # kept answers made before the file came
    events = plangraph_main(root, "history", "step-a", "--format", "json").out
    odd = os.path.join(os.fsencode(root), b"pkg1", b"\xff\xfe.txt")
    with open(odd, "wb") as handle:
        handle.write(b"x\n")
    result = plangraph_main(root, *command)
    assert result.code == 2, result
    assert "Traceback" not in result.err
    assert "node step-a" in result.err and "not UTF-8" in result.err
    os.unlink(odd)
    assert plangraph_main(root, "history", "step-a", "--format", "json").out == events
