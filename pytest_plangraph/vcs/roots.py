"""Finding the repository a command works in from its files, without a git process and
without :mod:`.workspace` (which a command answered from a kept answer does not need)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["find_root"]


def find_root(start: Path) -> Path:
    """The nearest directory at or above *start* holding ``.git`` (a dir, or a file in a
    worktree or submodule); *start* itself when there is none."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start
