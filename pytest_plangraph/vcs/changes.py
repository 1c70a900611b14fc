"""One changed path, as the diff of two revisions reports it: a plain value with no git in it.

It is what :mod:`.diff` returns and what the pure impact report reads, so the report never
imports the modules that run git.
"""

from __future__ import annotations

from ..values import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    ChangeKind = Literal["modified", "added", "deleted", "renamed", "untracked"]


@dataclass(frozen=True)
class Change:
    """One changed path (root-relative POSIX); *old_path* is set for renames only. *note* is
    set when the change could not be looked into: a submodule whose own changes could not be
    listed is reported as its own path, and the note says why and how to fix it. *subtree*
    says the change stands for every path under *path* (and *old_path*) as well."""

    path: str
    change: ChangeKind
    old_path: str | None = None
    note: str | None = None
    subtree: bool = False


_new = object.__new__
_put = object.__setattr__


def made_change(path: str, change: ChangeKind, old_path: str | None = None) -> Change:
    """``Change(path, change, old_path)`` made without the value classes' generic
    ``__init__`` (a diff makes one per changed path): the same value."""
    made: Change = _new(Change)
    _put(made, "path", path)
    _put(made, "change", change)
    _put(made, "old_path", old_path)
    _put(made, "note", None)
    _put(made, "subtree", False)
    return made
