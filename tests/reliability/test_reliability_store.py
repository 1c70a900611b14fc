"""The store keeps every acknowledged event and stays sound when writers are killed with
SIGKILL and when many processes write at once (small counts; ``bench/reliability.py`` runs
the full ones and docs/reliability.md keeps its figures)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from harness_store import (
    concurrent_writers,
    kill_cli_writers,
    run_in_own_process,
)

posix_only = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork and SIGKILL")


@pytest.fixture(autouse=True)
def _no_signing_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PLANGRAPH_SIGNING_KEY", "PLANGRAPH_STORE"):
        monkeypatch.delenv(name, raising=False)


@posix_only
def test_sigkill_during_appends_loses_no_acknowledged_event(tmp_path: Path) -> None:
    figures = run_in_own_process("kill-loop", str(tmp_path / "store.db"), "16", "20261201")
    assert figures.kills == 16
    assert figures.acknowledged > 0, "no kill came after an acknowledged append"
    assert figures.lost == []
    assert figures.integrity == "ok"
    assert figures.chain_problems == []
    assert not figures.gaps and figures.half_batches == 0
    assert figures.stored >= figures.acknowledged


@posix_only
def test_sigkill_during_plangraph_writes_loses_no_acknowledged_event(tmp_path: Path) -> None:
    figures = kill_cli_writers(tmp_path / "repo", 1, 20261201)
    assert figures.acknowledged >= 1
    assert figures.lost == [] and figures.integrity == "ok" and figures.chain_problems == []
    assert not figures.gaps


def test_concurrent_writer_processes_lose_nothing(tmp_path: Path) -> None:
    writers, each = 4, 15
    figures = concurrent_writers(tmp_path / ".plangraph" / "store.db", writers, each)
    assert figures.refused == []
    assert figures.acknowledged == figures.stored == writers * each
    assert figures.lost == [] and figures.integrity == "ok" and figures.chain_problems == []
    assert not figures.gaps
