"""The line files of the plan cache (``plan/linestore.py``): a file that is not UTF-8 is damage,
written anew with the wanted entries (not appended to, which would leave it unreadable)."""

from __future__ import annotations

from pathlib import Path

from pytest_plangraph.plan.linestore import TextLines


def test_a_file_that_is_not_text_is_written_anew(tmp_path: Path) -> None:
    path = tmp_path / "entries.txt"
    path.write_bytes(b"\xff\xfe not text\n")
    store = TextLines(path, 8)
    assert store.damaged and not store.entries
    store.add("a" * 64, "kept")
    store.save({"a" * 64})
    assert path.read_text(encoding="utf-8") == f"{'a' * 64}\tkept\n"
    assert TextLines(path, 8).entries == {"a" * 64: "kept"}
