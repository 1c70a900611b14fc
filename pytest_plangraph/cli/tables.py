"""A plain text table, for the commands' text output (without :mod:`argparse`: ``impact``
prints one before any parser is built)."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise

__all__ = ["patched", "printable", "table"]


def printable(text: str) -> str:
    """*text* with each character a terminal would act on or hide (a newline, an escape, a
    carriage return, a bidirectional control such as U+202E) written as its escape
    (``\\x1b``, ``\\u202e``): a stored value shown in a table row, where it would otherwise
    break the row, drive the terminal or show other text than the one stored."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def table(rows: list[list[str]], header: list[str]) -> str:
    """A plain left-aligned text table."""
    every = [header, *rows]
    widths = [max(len(str(r[i])) for r in every) for i in range(len(header))]
    line = "  ".join(f"{{!s:<{w}}}" for w in widths)  # one format per row: a row per node
    return "\n".join(line.format(*row).rstrip() for row in every)


def patched(
    text: str, header: list[str], changed: Mapping[int, tuple[list[str], list[str]]]
) -> str | None:
    """*text*, a :func:`table` of *header* and its rows, with the row at each index of
    *changed* (its old row, its new row) printed as its new row: what :func:`table` prints
    for the new rows, without formatting the others again. None when that cannot be told
    from *text* alone: a line is not the old row as :func:`table` prints it, a new cell is
    wider than its column, or an old cell as wide as its column (which it may alone have
    made that wide) has a narrower new one."""
    lines = text.split("\n")
    starts = [0]
    for previous, name in pairwise(header):
        at = lines[0].find(f"  {name}", starts[-1] + len(previous))
        if at < 0:
            return None
        starts.append(at + 2)
    widths = [b - a - 2 for a, b in pairwise(starts)] + [0]
    line = "  ".join(f"{{!s:<{w}}}" for w in widths)
    if line.format(*header).rstrip() != lines[0]:
        return None
    for index, (old, new) in changed.items():
        if not 0 <= index < len(lines) - 1 or line.format(*old).rstrip() != lines[index + 1]:
            return None
        for w, was, now in zip(widths[:-1], old, new, strict=False):
            if len(str(now)) > w or (len(str(was)) == w and len(str(now)) != w):
                return None
        lines[index + 1] = line.format(*new).rstrip()
    return "\n".join(lines)
