"""Answers kept for this user between runs, outside any repository: what every command would
otherwise work out again at its start (the plug-ins' entry points, the fingerprint of the
package's code), each kept under a key that names everything the answer depends on.

Each kind of answer is one JSON file in ``$XDG_CACHE_HOME/plangraph`` (``~/.cache/…`` by
default) holding the answers of the last :data:`KEEP` keys, the last written first. A cache
never decides: a caller keeps an answer only under a key that cannot hide a change (a file's
stat is trusted only when its modification is older than :data:`RACY_NS`, as git's racy-clean
rule has it), and a file that cannot be read or written is simply not used.
"""

from __future__ import annotations

import contextlib
import json
import os

from . import regularfile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORMAT = 1
"""The format of the files; another format is not read."""
KEEP = 8
"""How many keys' answers a file keeps (the last written)."""
MAX_BYTES = 16 * 1024 * 1024
"""A file larger than this is not read (the answers of :data:`KEEP` keys are far smaller)."""
RACY_NS = 2_000_000_000
"""A file modified this close before the answer was worked out is not trusted by its stat
(timestamps are coarse on some file systems): the answer is then not kept."""


def folder() -> str:
    """This product's folder of the user's cache: ``$XDG_CACHE_HOME/plangraph`` (``~/.cache/…``
    by default); a relative path when there is no home directory to keep anything in."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "plangraph")


def path_of(kind: str) -> str | None:
    """The file of the answers of *kind* (None without a home to keep it in)."""
    path = os.path.join(folder(), f"{kind}.json")
    return path if os.path.isabs(path) else None


def read(kind: str) -> dict[str, Any]:
    """The kept answers of *kind*, by key (none when the file is missing or unreadable)."""
    path = path_of(kind)
    if path is None:
        return {}
    try:
        data = json.loads(regularfile.read_regular(path, MAX_BYTES))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return {}
    answers = data.get("answers")
    return answers if isinstance(answers, dict) else {}


def keep(kind: str, key: str, answer: Any, kept: dict[str, Any] | None = None) -> None:
    """Keep *answer* under *key* with the others of *kind* (*kept*: as :func:`read` gave them),
    written whole (a temporary file, then a rename); a failure is ignored."""
    path = path_of(kind)
    if path is None:
        return
    others = read(kind) if kept is None else kept
    answers = {key: answer, **{k: v for k, v in others.items() if k != key}}
    partial = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(partial, "w", encoding="utf-8") as handle:
            json.dump({"format": FORMAT, "answers": dict(list(answers.items())[:KEEP])}, handle)
        os.replace(partial, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(partial)
