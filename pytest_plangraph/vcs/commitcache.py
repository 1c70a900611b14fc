"""The paths each commit changed, kept by commit id, so that naming the commit behind each
change (``impact --since``) walks only the commits it has not seen before.

A commit id names its content: the paths a commit changed against its first parent never
change, so an entry is never stale. The file lives in the plan cache folder (``.plangraph/
cache/commits.json``), starts with a tag — a keyed BLAKE2b digest of the rest with this user's
key, handed in by the caller — and is read only when the tag matches: a file written or edited
by anything else is a miss, and the commits are read from git again. Deleting it changes no
answer. Writes are atomic (a temporary file renamed over it); a file that cannot be read or
written is a miss, never an error.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..plan.cache import read_tagged_json, write_tagged_file
from ..values import dataclass

__all__ = ["CommitCache"]

_PERSON = b"plangraph-commit"
_VERSION = 1
LIMIT = 100_000
"""The most commits kept; the ones kept longest are dropped first."""


@dataclass(frozen=True)
class CommitCache:
    """The cache file at *path*, authenticated with *key*."""

    path: Path
    key: bytes

    def load(self) -> dict[str, tuple[str, ...]]:
        """The changed paths of every commit kept, by commit id (empty on any doubt)."""
        found = read_tagged_json(self.path, self._tag)
        if found is None:
            return {}
        data = found[1]
        try:
            if data["version"] != _VERSION:
                return {}
            kept = data["commits"]
            return {str(sha): tuple(str(p) for p in paths) for sha, paths in kept.items()}
        except (ValueError, KeyError, TypeError, AttributeError):
            return {}

    def save(self, kept: Mapping[str, Sequence[str]], new: Mapping[str, Sequence[str]]) -> None:
        """Keep the commits *kept* (as loaded) and *new*, the oldest dropped past
        :data:`LIMIT`; nothing happens when the file cannot be written."""
        merged = {**kept, **new}
        if len(merged) > LIMIT:
            merged = dict(list(merged.items())[-LIMIT:])
        body = json.dumps(
            {"version": _VERSION, "commits": {s: list(p) for s, p in merged.items()}},
            ensure_ascii=False,
            separators=(",", ":"),
        ).encode("utf-8", "surrogateescape")
        write_tagged_file(self.path, body, self._tag)

    def _tag(self, body: bytes) -> str:
        return hashlib.blake2b(body, key=self.key, person=_PERSON, digest_size=16).hexdigest()
