"""A cache file of entries kept one per line (``key<TAB>…<TAB>check``), as the plan's block
cache (:mod:`.blockcache`) and item cache (:mod:`.itemcache`) keep theirs: read at once, new
entries appended when saved, and written anew with the wanted entries alone when it is damaged
(an interrupted write, a line that does not parse) or holds too many. Each line ends with the
CRC-32 of the rest of it, so a line whose bytes changed, or whose value was moved to another
line's key, is damage. A damaged line is skipped, never trusted; nothing here raises on a bad
file."""

from __future__ import annotations

import contextlib
import errno
import os
import zlib
from pathlib import Path
from typing import Generic, TypeVar

from .cache import make_cache_dir, read_regular, write_partial

__all__ = ["LineStore", "TextLines"]

E = TypeVar("E")


class LineStore(Generic[E]):
    """The entries of the file at *path*, by key; a subclass says how a line reads
    (:meth:`parse`) and is written (:meth:`line`). The file is written anew when it holds more
    than twice the wanted entries plus *spare* lines."""

    def __init__(self, path: Path, spare: int) -> None:
        self.path = path
        self.spare = spare
        self.entries: dict[str, E] = {}
        self.lines = 0
        self.damaged = False
        self.new: dict[str, str] = {}
        try:
            body = read_regular(path)
        except FileNotFoundError:
            return
        except OSError:  # a FIFO, a folder, too large: replaced, never appended to
            self.damaged = True
            return
        try:
            self._load(body.decode("utf-8"))
        except UnicodeDecodeError:
            self.damaged = True  # not text: written anew, not appended to

    def parse(self, row: str) -> tuple[str, E] | None:
        """The key and entry of one line (without its newline), or None when it is damaged."""
        raise NotImplementedError

    def line(self, key: str, entry: E) -> str:
        """The line (with its newline) that keeps *entry* under *key*."""
        raise NotImplementedError

    def _load(self, body: str) -> None:
        rows = body.split("\n")
        if rows[-1]:
            self.damaged = True  # an interrupted write: the last line is not whole
        for line in rows[:-1]:
            row, tab, check = line.rpartition("\t")
            parsed = self.parse(row) if tab and check == _check(row) else None
            if parsed is None:
                self.damaged = True
                continue
            self.entries[parsed[0]] = parsed[1]
        self.lines = len(rows) - 1

    def add(self, key: str, entry: E) -> None:
        """Keep *entry* under *key*, appended to the file by the next :meth:`save`."""
        self.entries[key] = entry
        self.new[key] = _checked(self.line(key, entry))

    def save(self, wanted: set[str]) -> None:
        """Append the new entries; write the file anew, with the *wanted* entries only, when it
        is damaged or holds too many."""
        if not self.new and not self.damaged:
            return
        with contextlib.suppress(OSError, UnicodeError):
            make_cache_dir(self.path.parent)
            whole = self.damaged or self.lines + len(self.new) > 2 * len(wanted) + self.spare
            if whole or not _appended(self.path, "".join(self.new.values())):
                kept = "".join(_checked(self.line(key, self.entries[key])) for key in wanted)
                partial = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
                write_partial(partial, kept.encode("utf-8"))
                os.replace(partial, self.path)


def _appended(path: Path, text: str) -> bool:
    """Append *text* to the file at *path* (made when missing); False when a link stands at
    *path*: a link planted there (to the store, say) is never written through, and the file
    is written anew in its place (OSError on other failures)."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(path, flags, 0o666)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return False
        raise
    with open(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    return True


def _check(row: str) -> str:
    """The check a line ends with: the CRC-32 of the rest of it (*row*), in hex."""
    return f"{zlib.crc32(row.encode('utf-8', 'surrogatepass')):08x}"


def _checked(line: str) -> str:
    """*line* (with its newline) with its check (:func:`_check`) before the newline."""
    row = line.removesuffix("\n")
    return f"{row}\t{_check(row)}\n"


class TextLines(LineStore[str]):
    """Entries that are one line of text each under a sha256 key (``key<TAB>text``): the
    item cache's validated items (:mod:`.itemcache`), the kept facts (:mod:`.factcache`), the
    nodes kept as passing lint (:mod:`pytest_plangraph.lint.nodecache`). *accept*, when given,
    says which texts a line may hold (any other is damage)."""

    def __init__(self, path: Path, spare: int, accept: str | None = None) -> None:
        self.accept = accept
        super().__init__(path, spare)

    def parse(self, row: str) -> tuple[str, str] | None:
        key, tab, text = row.partition("\t")
        if not tab or len(key) != 64 or (self.accept is not None and text != self.accept):
            return None
        return key, text

    def line(self, key: str, entry: str) -> str:
        return f"{key}\t{entry}\n"
