"""A plain text table, for the commands' text output (without :mod:`argparse`: ``impact``
prints one before any parser is built)."""

from __future__ import annotations

__all__ = ["table"]


def table(rows: list[list[str]], header: list[str]) -> str:
    """A plain left-aligned text table."""
    every = [header, *rows]
    widths = [max(len(str(r[i])) for r in every) for i in range(len(header))]
    line = "  ".join(f"{{!s:<{w}}}" for w in widths)  # one format per row: a row per node
    return "\n".join(line.format(*row).rstrip() for row in every)
