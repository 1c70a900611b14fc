"""The saga view (issue 20 §5) through the real ``plangraph saga`` command: the compensate
actions of the steps with side effects that ran, downstream first, irreversible steps flagged,
idempotency noted; nothing executed."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from cli_helpers import plangraph_main
from repo_helpers import git

PLAN = """
plangraph: 1
plan: refund
nodes:
  - id: step-draft
    title: Create the refund draft
    effect: write
    compensate: delete-draft
    idempotent: true
    acceptance:
      - {id: ac-draft, verifier: {type: artifact, path: out/draft.txt}}
  - id: step-lock
    effect: write
    compensate: unlock-stock
    max_retry: 0
    acceptance:
      - {id: ac-lock, verifier: {type: artifact, path: out/lock.txt}}
  - id: step-notify
    effect: irreversible
    max_retry: 0
    acceptance:
      - {id: ac-sent, verifier: {type: artifact, path: out/sent.txt}}
  - id: step-read
    acceptance:
      - {id: ac-read, verifier: {type: artifact, path: out/read.txt}}
  - id: step-later
    effect: write
    compensate: undo-later
    idempotent: true
    acceptance:
      - {id: ac-later, verifier: {type: artifact, path: out/later.txt}}
edges:
  - {from: step-draft, to: step-lock, type: requires}
  - {from: step-lock, to: step-notify, type: requires}
"""


@pytest.fixture
def refund(tmp_path: Path) -> Path:
    root = tmp_path / "refund"
    (root / "out").mkdir(parents=True)
    (root / "plangraph.yaml").write_text(textwrap.dedent(PLAN).lstrip(), encoding="utf-8")
    for name in ("draft", "lock", "sent", "read"):
        (root / "out" / f"{name}.txt").write_text(name, encoding="utf-8")
    (root / ".gitignore").write_text(".plangraph/\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    assert plangraph_main(root, "verify", "step-draft", "step-lock", "step-notify").code == 0
    return root


def test_the_saga_lists_undo_actions_downstream_first(refund: Path) -> None:
    result = plangraph_main(refund, "saga", "--format", "json")
    assert result.code == 0, result.err
    data = result.json()
    assert (data["format"], data["executes"], data["node"]) == (1, False, None)
    steps = [
        (s["node"], s["compensate"], s["irreversible"], s["idempotent"]) for s in data["steps"]
    ]
    assert steps == [
        ("step-notify", None, True, False),
        ("step-lock", "unlock-stock", False, False),
        ("step-draft", "delete-draft", False, True),
    ]  # step-read changes nothing; step-later has not begun
    notes = [s["note"] for s in data["steps"]]
    assert notes[0].startswith("IRREVERSIBLE") and "check whether it already ran" in notes[1]
    assert "safe to run again" in notes[2]


def test_a_node_limits_the_saga_to_it_and_what_depends_on_it(refund: Path) -> None:
    data = plangraph_main(refund, "saga", "step-lock", "--format", "json").json()
    assert [s["node"] for s in data["steps"]] == ["step-notify", "step-lock"]
    assert data["node"] == "step-lock"


def test_text_and_markdown_flag_the_irreversible_step(refund: Path) -> None:
    text = plangraph_main(refund, "saga").out.splitlines()
    assert text[0].startswith("saga of refund (nothing is executed")
    assert text[2].split()[:5] == ["1", "step-notify", "completed", "irreversible", "-"]
    markdown = plangraph_main(refund, "saga", "--format", "markdown").out
    assert "| 1 | `step-notify` ⚠ | completed | irreversible | - | no |" in markdown
    assert "| 3 | `step-draft` | completed | write | delete-draft | yes |" in markdown


def test_the_saga_executes_nothing_and_records_nothing(refund: Path) -> None:
    events = plangraph_main(refund, "export").out
    plangraph_main(refund, "saga")
    assert plangraph_main(refund, "export").out == events


def test_nothing_ran_nothing_to_undo_and_an_unknown_node_is_a_usage_error(
    refund: Path,
) -> None:
    empty = plangraph_main(refund, "saga", "step-later")
    assert (empty.code, empty.out.strip()) == (
        0,
        "saga of refund for step-later: no step with a side effect has run; nothing to undo",
    )
    unknown = plangraph_main(refund, "saga", "ghost")
    assert unknown.code == 2 and "unknown node 'ghost'" in unknown.err
    assert "Traceback" not in unknown.err
