"""The bytes of the derived-state cache: one file in the plan cache folder
(``.plangraph/cache/derived.json``) holding the last derived state and the key it was derived
under (:func:`~pytest_plangraph.judge.statejson.derivation_key`).

The file starts with a tag, a keyed BLAKE2b digest of the rest with this user's key
(:func:`~.localkey.local_key`): a file written or edited by anything but plangraph run by this
user — copied from another machine, planted by a process that cannot read the key — is a miss.
A miss of any kind (no file, a damaged one, another key) means deriving again; nothing read
from here is ever needed, so deleting the file changes no answer. Writes are atomic.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..plan.cache import make_cache_dir, read_regular
from .localkey import local_key

__all__ = [
    "FREE",
    "FREE_PERSON",
    "NAME",
    "keep_derived",
    "read_derived",
    "read_tagged",
    "read_tagged_of",
    "write_tagged",
]

NAME = "derived.json"
"""The file's name in the cache folder."""

FREE = "derived-free.json"
"""The file of the nodes judged again without the plan since :data:`NAME` was written (its
overlay: :mod:`pytest_plangraph.derived.planfree`), beside it."""

FREE_PERSON = b"plangraph-free"
"""The tag's person of :data:`FREE` (it never reads as the derived state itself)."""

_PERSON = b"plangraph-derive"


def read_derived(cache_dir: Path, key: str) -> Any:
    """The data kept under *key*, or None (no file, another key, a tag that does not match,
    not JSON)."""
    kept = read_tagged(cache_dir / NAME)
    if not isinstance(kept, dict) or kept.get("key") != key:
        return None
    return kept.get("data")


def keep_derived(cache_dir: Path, key: str, data: Any) -> None:
    """Keep *data* under *key* in place of what was kept; nothing happens when the file
    cannot be written."""
    write_tagged(cache_dir / NAME, {"key": key, "data": data})


def read_tagged(path: Path, person: bytes = _PERSON) -> Any:
    """The JSON value kept at *path* by :func:`write_tagged` with the same *person*, or None
    (no file, a tag that does not match, not JSON)."""
    found = read_tagged_of(path, person)
    return None if found is None else found[1]


def read_tagged_of(path: Path, person: bytes = _PERSON) -> tuple[str, Any] | None:
    """The tag and the JSON value kept at *path* by :func:`write_tagged` with the same
    *person*, or None (no file, a tag that does not match, not JSON). The tag names the
    bytes written: a file kept beside this one names it by its tag."""
    try:
        raw = read_regular(path)
    except OSError:
        return None
    tag, _, body = raw.partition(b"\n")
    text = tag.decode("ascii", "replace")
    if not body or text != _tag(body, person):
        return None
    try:
        return text, json.loads(body)
    except ValueError:
        return None


def write_tagged(path: Path, data: Any, person: bytes = _PERSON) -> None:
    """Keep the JSON value *data* at *path*, tagged with this user's key and *person* (what
    kind of file it is: a file of one kind never reads as another); atomic, and nothing
    happens when the file cannot be written."""
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        body = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        encoded = body.encode("utf-8", "surrogateescape")
        make_cache_dir(path.parent)
        partial.write_bytes(_tag(encoded, person).encode("ascii") + b"\n" + encoded)
        os.replace(partial, path)
    except (OSError, TypeError, ValueError):
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)


def _tag(body: bytes, person: bytes) -> str:
    return hashlib.blake2b(body, key=local_key(), person=person, digest_size=16).hexdigest()
