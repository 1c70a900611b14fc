"""The evaluation harness (``bench/evaluate.py``) on a tiny generated history, so it cannot rot:
its measures are checked against what the history was built to hold."""

from __future__ import annotations

import sys
from pathlib import Path

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))

import evaluate
from evaluate_history import generate_history


def test_the_harness_measures_an_escape_and_an_incorrect_completion(tmp_path: Path) -> None:
    commits, plan, tests = generate_history(tmp_path / "history", steps=2)
    rows = evaluate.replay_history(tmp_path / "history", commits, plan, tests)
    assert [len(row.reached) for row in rows] == [1, 5]
    first, second = rows
    # m5 changes alone: only its node is reached, made stale and run again
    assert first.reached == first.stale == {"m5"}
    assert (first.escaped, first.over, first.incorrect) == (set(), set(), set())
    assert (first.ran, first.full) == (1, 6)
    # m0 changes and its tests are not updated: m3 imports m0 without an edge, so the default
    # mode leaves m3 valid (an escape) and completed although its test now fails
    assert second.stale == {"m0", "m1", "m2", "m4"}
    assert second.escaped == {"m3"}
    assert second.incorrect == {"m3"}
    assert second.ran == 4
    table = evaluate.table(rows)
    assert "1 (rate 0.167)" in table
    assert table.count("\n") == 4  # header, rule, two commits and the total
