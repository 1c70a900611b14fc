"""The ``plangraph`` entry points of the installed distributions, kept between runs.

Finding them means importing :mod:`importlib.metadata` (and through it ``email``, ``zipfile``,
``csv`` …) and reading the metadata of every installed distribution: more than a third of a
``plangraph claim`` before anything else. What that scan answers depends on nothing but the
distributions' metadata folders on ``sys.path`` and their ``entry_points.txt`` files, so its
answer is kept under a *signature* of exactly those: each ``sys.path`` entry, the names of the
``*.dist-info``/``*.egg-info`` folders it lists (in the order listed, the order the scan
follows), and the size, inode and modification time of each one's ``entry_points.txt`` (of a
zip file on the path: the file's own). A distribution installed, removed, upgraded or edited
changes the signature, and the next run scans again.

A cache never decides: the kept answer is the scan's (the distribution's folder, the entry's
name and value, in the scan's order), each entry is then loaded exactly as
:meth:`importlib.metadata.EntryPoint.load` loads it, and deleting the file changes nothing but
the time taken. An answer is kept only when the signature cannot hide a change: not when a
file in it was modified in the :data:`RACY_NS` before the scan began (a later edit could keep
its size and time, as git's racy-clean rule has it), nor when another finder than the standard
path finder offers distributions. The file is ``plugins.json`` in the per-user cache folder
(``$XDG_CACHE_HOME/plangraph``, ``~/.cache/…`` by default), outside any repository, with the
answers of the last :data:`KEEP` environments; one that cannot be read or written is not used.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import json
import os
import re
import stat
import sys
import time
from typing import Any, NamedTuple

GROUP = "plangraph"
"""The entry-point group of plangraph plugins."""
FORMAT = 1
"""The format of the kept file; another format is not read."""
KEEP = 8
"""How many environments' answers the file keeps (the last written)."""
RACY_NS = 2_000_000_000
"""A file modified this close before a scan is not trusted by its stat (timestamps are coarse
on some file systems): the answer is then not kept."""
_PATTERN = re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")
"""What :class:`importlib.metadata.EntryPoint` matches a value with (module, attribute)."""

scans = 0
"""How many times this process scanned the distributions (the tests count them)."""


class Entry(NamedTuple):
    """One ``plangraph`` entry point: the distribution's metadata folder, the name, the value
    (and the distribution itself when this process scanned it)."""

    path: str
    name: str
    value: str
    dist: Any = None

    def load(self) -> Any:
        """The object the entry names, imported as ``EntryPoint.load`` imports it."""
        match = _PATTERN.match(self.value)
        if match is None:  # as the scan would fail: let importlib.metadata say it
            from importlib.metadata import EntryPoint

            return EntryPoint(self.name, self.value, GROUP).load()
        module = importlib.import_module(match.group("module"))
        attrs = filter(None, (match.group("attr") or "").split("."))
        return functools.reduce(getattr, attrs, module)

    def distribution(self) -> tuple[str, str]:
        """The name and version of the distribution (for a message; its metadata is read)."""
        dist = self.dist
        if dist is None:
            from importlib.metadata import PathDistribution
            from pathlib import Path

            dist = PathDistribution(Path(self.path))
        return dist.metadata["Name"] or "?", dist.version


def entry_points() -> list[Entry]:
    """Every ``plangraph`` entry point of the distributions on ``sys.path``, in the order
    :func:`importlib.metadata.distributions` gives them: kept from the last scan of the same
    signature, else scanned (and kept when it may be)."""
    started = time.time_ns()
    signature, newest = _signature()
    key = None if signature is None else _digest(signature)
    kept = _read()
    found = kept.get(key) if key is not None else None
    if isinstance(found, list) and all(_is_entry(item) for item in found):
        return [Entry(*item) for item in found]
    entries = scan()
    settled = newest < started - RACY_NS and all(e.path for e in entries)
    if key is not None and settled:
        kept = {key: [list(e[:3]) for e in entries], **{k: v for k, v in kept.items() if k != key}}
        _write(dict(list(kept.items())[:KEEP]))
    return entries


def _is_entry(item: Any) -> bool:
    return isinstance(item, list) and len(item) == 3 and all(isinstance(v, str) for v in item)


def scan() -> list[Entry]:
    """The entry points, read from every distribution's metadata (no kept answer)."""
    global scans
    import importlib.metadata

    scans += 1
    found: list[Entry] = []
    for dist in importlib.metadata.distributions():
        for entry in dist.entry_points:
            if entry.group == GROUP:
                path = getattr(dist, "_path", None)  # a PathDistribution's folder
                where = "" if path is None else str(path)
                found.append(Entry(where, entry.name, entry.value, dist))
    return found


def _signature() -> tuple[list[Any] | None, int]:
    """What the scan's answer depends on (see the module text), and the newest modification
    time in it; None when it cannot be told."""
    import importlib.machinery

    finders = [f for f in sys.meta_path if hasattr(f, "find_distributions")]
    if finders != [importlib.machinery.PathFinder]:
        return None, 0
    signature: list[Any] = [sys.version, FORMAT]
    newest = 0
    for entry in sys.path:
        if not isinstance(entry, str):
            return None, 0
        root = os.path.abspath(entry or ".")
        try:
            info = os.stat(root)
        except OSError:
            signature.append([root])
            continue
        if not stat.S_ISDIR(info.st_mode):  # a zip file: its metadata is inside
            signature.append([root, "file", info.st_size, info.st_ino, info.st_mtime_ns])
            newest = max(newest, info.st_mtime_ns)
            continue
        try:
            names = os.listdir(root)
        except OSError:
            signature.append([root, "unlisted"])
            continue
        folders: list[Any] = [root, "folder"]
        for name in names:
            low = name.lower()
            if low.endswith((".dist-info", ".egg-info")) or low == "egg-info":
                try:
                    found = os.stat(os.path.join(root, name, "entry_points.txt"))
                except OSError:
                    folders.append([name])
                    continue
                folders.append([name, found.st_size, found.st_ino, found.st_mtime_ns])
                newest = max(newest, found.st_mtime_ns)
        signature.append(folders)
    return signature, newest


def _digest(signature: list[Any]) -> str:
    return hashlib.sha256(json.dumps(signature).encode("utf-8", "surrogateescape")).hexdigest()


def cache_file() -> str | None:
    """Where the kept answers are: ``plangraph/plugins.json`` in the per-user cache folder
    (None without a home to keep it in)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "plangraph", "plugins.json") if os.path.isabs(base) else None


def _read() -> dict[str, Any]:
    path = cache_file()
    if path is None:
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return {}
    answers = data.get("answers")
    return answers if isinstance(answers, dict) else {}


def _write(answers: dict[str, Any]) -> None:
    """Keep *answers* (written whole: a temporary file, then a rename); a failure is ignored."""
    path = cache_file()
    if path is None:
        return
    partial = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(partial, "w", encoding="utf-8") as handle:
            json.dump({"format": FORMAT, "answers": answers}, handle)
        os.replace(partial, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(partial)
