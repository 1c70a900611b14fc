"""The commits revisions named, kept by the object their ref pointed to, so that ``impact
--since REV`` names both ends of its range without a git process when the refs have not moved.

``HEAD~1000`` walks a thousand commits in git every time it is named; what it names is a
function of the object ``HEAD`` points to, since commits never change (unless git shows other
content under their ids: :func:`~.run.rewritable`, then nothing here is used). So an entry is
keyed by the revision's text and the object id its name points to, read from the ref files
(:mod:`.refs`), and holds the commit git named for it. An entry is written only when git named
the same commit for the revision and for the object id with the same steps (``ID~1000``), in
one process: a ref read otherwise than git reads it, or moved meanwhile, writes nothing.

The file lives in the plan cache folder (``.plangraph/cache/revisions.json``), starts with a
tag (a keyed BLAKE2b digest of the rest with this user's key), keeps at most :data:`LIMIT`
entries (the oldest dropped first), and is believed only when the tag matches and every entry
is well formed; a damaged file, or one that cannot be read or written, is a miss, never an
error. Deleting it changes no answer.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from ..hashes import blake2b
from ..plan.cache import read_tagged_json, write_tagged_file
from .refs import RefFiles, git_dirs, is_object_id, split_revision
from .run import Repo, commits_of

__all__ = ["LIMIT", "RevisionCache"]

_PERSON = b"plangraph-revs"
_VERSION = 1
LIMIT = 64
"""The most revisions kept."""


class RevisionCache:
    """The cache file at *path*, authenticated with *key*."""

    __slots__ = ("key", "path")

    def __init__(self, path: Path, key: bytes) -> None:
        self.path = path
        self.key = key

    def commits_of(self, repo: Repo, revs: Sequence[str]) -> list[str | None]:
        """:func:`~.run.commits_of`: the commit each of *revs* names in *repo* (None for one
        that names none), from the kept entries where their ref still points where it did,
        the others from git (one process), kept for the next time. Not for a repository
        where git may show a commit id otherwise (:func:`~.run.rewritable`): the caller
        checks (:func:`~.history.diff_since`)."""
        dirs = git_dirs(Path(repo.working_tree_dir))
        refs = None if dirs is None else RefFiles(*dirs)
        keys: dict[str, tuple[str, str]] = {}  # revision -> (its entry's key, the object id)
        for rev in revs:
            split = None if refs is None else split_revision(rev)
            tip = None if split is None or refs is None else refs.tip(split[0])
            if split is not None and tip is not None:
                keys[rev] = (f"{rev}\0{tip}", tip + split[1])
        kept = self.load() if keys else {}
        answers = {rev: kept.get(keys[rev][0]) if rev in keys else None for rev in revs}
        asked = [rev for rev in revs if answers[rev] is None]
        if not asked:
            return [answers[rev] for rev in revs]
        checks = [keys[rev][1] for rev in asked if rev in keys]
        named = commits_of(repo, [*asked, *checks])
        found = dict(zip(asked, named, strict=False))
        by_id = dict(zip(checks, named[len(asked) :], strict=False))
        new = {
            keys[rev][0]: sha
            for rev, sha in found.items()
            if sha is not None and rev in keys and by_id.get(keys[rev][1]) == sha
        }
        if new:
            self.save(kept, new)
        answers.update(found)
        return [answers[rev] for rev in revs]

    def load(self) -> dict[str, str]:
        """The kept entries (empty on any doubt)."""
        found = read_tagged_json(self.path, self._tag)
        if found is None:
            return {}
        data = found[1]
        try:
            if data["version"] != _VERSION:
                return {}
            kept = data["revisions"]
            if not isinstance(kept, dict) or len(kept) > LIMIT:
                return {}
            for entry, sha in kept.items():
                rev, _, tip = entry.partition("\0")
                if not rev or not is_object_id(tip) or not is_object_id(sha):
                    return {}
            return {str(k): str(v) for k, v in kept.items()}
        except (ValueError, KeyError, TypeError, AttributeError):
            return {}

    def save(self, kept: dict[str, str], new: dict[str, str]) -> None:
        """Keep *kept* (as loaded) and *new*, the oldest dropped past :data:`LIMIT`; nothing
        happens when the file cannot be written."""
        merged = {k: v for k, v in kept.items() if k not in new} | new
        if len(merged) > LIMIT:
            merged = dict(list(merged.items())[-LIMIT:])
        body = json.dumps(
            {"version": _VERSION, "revisions": merged}, ensure_ascii=False, separators=(",", ":")
        ).encode("utf-8", "surrogateescape")
        write_tagged_file(self.path, body, self._tag)

    def _tag(self, body: bytes) -> str:
        return blake2b(body, key=self.key, person=_PERSON, digest_size=16).hexdigest()
