"""The line files of the plan cache (``plan/linestore.py``): a file that is not UTF-8 is damage,
written anew with the wanted entries (not appended to, which would leave it unreadable); a line
whose check does not hold (a byte changed, a value moved to another key) is damage too."""

from __future__ import annotations

import os
import zlib
from pathlib import Path

from pytest_plangraph.plan.cache import make_cache_dir
from pytest_plangraph.plan.linestore import TextLines


def test_a_file_that_is_not_text_is_written_anew(tmp_path: Path) -> None:
    path = tmp_path / "entries.txt"
    path.write_bytes(b"\xff\xfe not text\n")
    store = TextLines(path, 8)
    assert store.damaged and not store.entries
    store.add("a" * 64, "kept")
    store.save({"a" * 64})
    row = f"{'a' * 64}\tkept"
    assert path.read_text(encoding="utf-8") == f"{row}\t{zlib.crc32(row.encode()):08x}\n"
    assert TextLines(path, 8).entries == {"a" * 64: "kept"}


def test_a_line_whose_check_fails_is_not_trusted(tmp_path: Path) -> None:
    path = tmp_path / "entries.txt"
    store = TextLines(path, 8)
    store.add("a" * 64, "one")
    store.add("b" * 64, "two")
    store.save({"a" * 64, "b" * 64})
    rows = path.read_text(encoding="utf-8").splitlines()
    assert TextLines(path, 8).entries == {"a" * 64: "one", "b" * 64: "two"}
    checks = [row.rsplit("\t", 1)[1] for row in rows]
    swapped = [f"{'a' * 64}\ttwo\t{checks[1]}", f"{'b' * 64}\tone\t{checks[0]}"]
    path.write_text("".join(f"{row}\n" for row in swapped), encoding="utf-8")
    assert TextLines(path, 8).entries == {} and TextLines(path, 8).damaged
    path.write_text(rows[0].replace("one", "onE") + "\n" + rows[1] + "\n", encoding="utf-8")
    assert TextLines(path, 8).entries == {"b" * 64: "two"}


def test_a_fifo_in_place_of_the_file_is_replaced_not_waited_on(tmp_path: Path) -> None:
    path = tmp_path / "entries.txt"
    os.mkfifo(path)
    store = TextLines(path, 8)
    assert store.damaged and not store.entries
    store.add("a" * 64, "kept")
    store.save({"a" * 64})  # appending would wait for a reader of the FIFO
    assert path.is_file() and TextLines(path, 8).entries == {"a" * 64: "kept"}


def test_a_link_in_place_of_the_file_is_replaced_not_appended_through(tmp_path: Path) -> None:
    """A link planted at a line file's name, to a file it would pass for (empty: no damage),
    is not appended through: the file it points at keeps its bytes, and the line file is
    written anew in the link's place."""
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"")
    path = tmp_path / "entries.txt"
    path.symlink_to(victim)
    store = TextLines(path, 8)
    assert not store.damaged
    store.add("a" * 64, "kept")
    store.save({"a" * 64})
    assert victim.read_bytes() == b""
    assert not path.is_symlink() and TextLines(path, 8).entries == {"a" * 64: "kept"}


def test_a_dangling_link_at_the_cache_folders_marker_is_not_written_through(
    tmp_path: Path,
) -> None:
    """The cache folder's ``.gitignore`` is made only where nothing stands: a link at its
    name pointing nowhere would otherwise create the file it names, wherever that is."""
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / ".gitignore").symlink_to(tmp_path / "elsewhere.txt")
    make_cache_dir(folder)
    assert not (tmp_path / "elsewhere.txt").exists()
    fresh = tmp_path / "fresh"
    make_cache_dir(fresh)
    assert (fresh / ".gitignore").read_text(encoding="utf-8").endswith("\n*\n")
