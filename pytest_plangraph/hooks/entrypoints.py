"""The ``plangraph`` entry points of the installed distributions, kept between runs.

Finding them means importing :mod:`importlib.metadata` (and through it ``email``, ``zipfile``,
``csv`` …) and reading the metadata of every installed distribution: more than a third of a
``plangraph claim`` before anything else. What that scan answers depends on nothing but the
distributions' metadata folders on ``sys.path`` and their ``entry_points.txt`` files, so its
answer is kept under a *signature* of exactly those: each ``sys.path`` entry, the names of the
``*.dist-info``/``*.egg-info`` folders it lists (in the order listed, the order the scan
follows), and the size, inode, modification and change times of each one's
``entry_points.txt`` (of a zip file on the path: the file's own). A distribution installed,
removed, upgraded or edited changes the signature, and the next run scans again.

A cache never decides: the kept answer is the scan's (the distribution's folder, the entry's
name and value, in the scan's order), each entry is then loaded exactly as
:meth:`importlib.metadata.EntryPoint.load` loads it, and deleting the file changes nothing but
the time taken. An answer is kept only when the signature cannot hide a change: not when a
file in it was modified within :data:`~pytest_plangraph.usercache.RACY_NS` before the scan
began (a later edit could keep its size and time, as git's racy-clean rule has it), nor when
another finder than the standard path finder offers distributions. The file is
``plugins.json`` in the per-user cache folder (:mod:`pytest_plangraph.usercache`), outside any
repository.
"""

from __future__ import annotations

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

from .. import usercache
from .._version import __version__

GROUP = "plangraph"
"""The entry-point group of plangraph plugins."""
KIND = "plugins"
"""The kept answers' file in the per-user cache (:mod:`pytest_plangraph.usercache`)."""


@functools.cache
def _pattern() -> re.Pattern[str]:
    """What :class:`importlib.metadata.EntryPoint` matches a value with (module, attribute),
    compiled when first asked for: a run whose plug-ins' answer is kept loads no entry point
    and signs none."""
    return re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")


scans = 0
"""How many times this process scanned the distributions (the tests count them)."""
last_found: list[Entry] | None = None
"""The entry points :func:`plugins_key` found last in this process (a command's check of its
plan): what a manager built later in the same command would load."""


class Entry(NamedTuple):
    """One ``plangraph`` entry point: the distribution's metadata folder, the name, the value
    (and the distribution itself when this process scanned it)."""

    path: str
    name: str
    value: str
    dist: Any = None

    def load(self) -> Any:
        """The object the entry names, imported as ``EntryPoint.load`` imports it."""
        match = _pattern().match(self.value)
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
    kept = usercache.read(KIND)
    found = kept.get(key) if key is not None else None
    if isinstance(found, list) and all(_is_entry(item) for item in found):
        return [Entry(*item) for item in found]
    entries = scan()
    settled = newest < started - usercache.RACY_NS and all(e.path for e in entries)
    if key is not None and settled:
        usercache.keep(KIND, key, [list(e[:3]) for e in entries], kept)
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
    signature: list[Any] = [sys.version, __version__]
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
            signature.append([root, "file", *_identity(info)])
            newest = max(newest, info.st_mtime_ns, info.st_ctime_ns)
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
                folders.append([name, *_identity(found)])
                newest = max(newest, found.st_mtime_ns, found.st_ctime_ns)
        signature.append(folders)
    return signature, newest


def _identity(info: os.stat_result) -> tuple[int, int, int, int]:
    """What tells a file changed without reading it: size, inode and both times."""
    return (info.st_size, info.st_ino, info.st_mtime_ns, info.st_ctime_ns)


def _digest(signature: list[Any]) -> str:
    return hashlib.sha256(json.dumps(signature).encode("utf-8", "surrogateescape")).hexdigest()


def plugins_key() -> list[Any] | None:
    """What names the plug-ins a registry built now would hold, without loading them: each
    ``plangraph`` entry point (its distribution's metadata folder, whose name carries the
    version, the entry's name and value) and, when this process built its manager already,
    the plugins registered with it (:func:`.manager.registered`), with the
    :func:`code_signature` of each entry point's module (a plug-in edited in place keeps its
    version: an editable install, the same version installed again). None when one of those
    is no entry point's (a ``conftest.py`` registered it), or an entry point's code cannot be
    told: no version names what it answers."""
    global last_found
    found = last_found = entry_points()
    entries: list[list[Any]] = []
    for entry in found:
        code = code_signature(entry.value)
        if code is None:
            return None
        entries.append([*entry[:3], code])
    manager = sys.modules.get(f"{__package__}.manager")
    if manager is None:
        return [entries, None]
    registered = manager.registered()
    if registered is not None:
        known = {manager.BUILTIN_PLUGIN, *(entry[1] for entry in entries)}
        if any(name not in known for name in registered):
            return None
    return [entries, registered]


def code_signature(value: str) -> list[Any] | None:
    """What tells the code an entry point's *value* names changed, without importing it: the
    size, inode, modification and change times of its top-level module's file, or of every
    file under its package's folders, as the standard path finder finds it on ``sys.path``;
    None when it finds none (a module another finder offers, a bad value)."""
    match = _pattern().match(value)
    if match is None:
        return None
    spec = top_level_spec(match.group("module").split(".", 1)[0])
    if spec is None:
        return None
    places = list(spec.submodule_search_locations or ())
    if not places:
        return None if spec.origin is None else _file_code(spec.origin)
    found: list[Any] = []
    for place in places:
        for folder, folders, names in os.walk(place):
            folders[:] = sorted(f for f in folders if f != "__pycache__")
            for name in sorted(names):
                code = _file_code(os.path.join(folder, name))
                if code is None:
                    return None
                found.append(code)
    return found


def top_level_spec(top: str) -> Any:
    """The ``ModuleSpec`` the standard path finder finds on ``sys.path`` for the top-level
    module *top* (without importing it); None when it finds none or the name is no module's."""
    import importlib.machinery

    try:
        return importlib.machinery.PathFinder.find_spec(top)
    except (ImportError, ValueError, OSError):
        return None


def _file_code(path: str) -> list[Any] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [path, *_identity(info)]
