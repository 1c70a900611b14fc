"""The fingerprint of the package's own code, which every cache key of the package mixes in.

A cache never decides (STYLE 19): what it keeps must be thrown away as soon as the code that
computed it changes. Listing by hand which source files a cache depends on breaks silently when a
module is renamed, moved or added, so the fingerprint covers the whole installed package instead:
the relative path and the bytes of every ``.py`` file found by walking the package's directory,
in a fixed order. Renaming a module changes its path, adding one adds a file, and editing one
changes its bytes; each of them changes the fingerprint. It is computed once per process.

When a file of the package cannot be read (or the package is not installed as files, say inside
a zip archive), the fingerprint is made unique to the process instead of falling back to the bare
version: a cache entry then serves this process at most and is never taken from other code.
"""

from __future__ import annotations

import functools
import json
import os
import time
from pathlib import Path

from . import usercache
from ._version import __version__
from .hashes import LARGE, sha256, sha256_hex
from .regularfile import read_regular


@functools.cache
def code_fingerprint() -> str:
    """The package version and the sha256 of every module of the installed package (computed
    once per process, and kept between runs: see :func:`kept_fingerprint`): what a cache of
    values this code computes is kept under."""
    return kept_fingerprint(Path(__file__).resolve().parent)


KIND = "code"
"""The kept fingerprints' file in the per-user cache (:mod:`.usercache`)."""


def kept_fingerprint(package_dir: Path) -> str:
    """:func:`fingerprint_of` *package_dir*, kept between runs under the stat of every module
    (path, size, inode, modification and change times): hashing the package's source is most
    of what a command that finds everything else kept pays. A module added, removed, renamed
    or written changes the key, and the fingerprint is hashed again; it is kept only when no
    module was written within :data:`~.usercache.RACY_NS` before (a later write could keep
    the same stat), and never when a module could not be read."""
    started = time.time_ns()
    try:
        folder = str(package_dir)
        stats = [(name, os.stat(os.path.join(folder, name))) for name in _python_files(package_dir)]
    except OSError:
        return fingerprint_of(package_dir)
    listing = [[name, s.st_size, s.st_ino, s.st_mtime_ns, s.st_ctime_ns] for name, s in stats]
    key = sha256_hex(json.dumps([str(package_dir), __version__, listing]).encode())
    kept = usercache.read(KIND)
    found = kept.get(key)
    if isinstance(found, str) and found.startswith(f"{__version__}+"):
        return found
    fingerprint = fingerprint_of(package_dir)
    newest = max((max(s.st_mtime_ns, s.st_ctime_ns) for _, s in stats), default=started)
    if newest < started - usercache.RACY_NS and "+unreadable-" not in fingerprint:
        usercache.keep(KIND, key, fingerprint, kept)
    return fingerprint


def fingerprint_of(package_dir: Path) -> str:
    """The package version and the sha256 of the relative path and the bytes of every ``.py``
    file under *package_dir*, in sorted order; a random one, unique to this call, when any of
    them cannot be read (or is not a regular file) or the folder cannot be walked."""
    fingerprint = sha256(expected=LARGE)
    try:
        files = _python_files(package_dir)
        if not files:
            raise OSError(f"no Python file under {package_dir}")
        for relative in files:
            # a FIFO or a device named like a module is not waited on nor read without end
            data = read_regular(os.path.join(package_dir, relative))
            # The lengths keep two different listings from hashing to the same stream.
            fingerprint.update(f"{len(relative)}:{relative}:{len(data)}:".encode())
            fingerprint.update(data)
    except OSError:
        return f"{__version__}+unreadable-{os.urandom(8).hex()}"
    return f"{__version__}+{fingerprint.hexdigest()[:16]}"


def _python_files(package_dir: Path) -> list[str]:
    """The POSIX paths, relative to *package_dir*, of its ``.py`` files, sorted (OSError when a
    folder of it cannot be listed): the files ``os.walk`` lists, ``__pycache__`` and the
    folders behind symbolic links not entered, walked with text paths (no :class:`Path` a
    module: every command that finds its answer kept pays this walk)."""
    found: list[str] = []
    folders = [("", str(package_dir))]
    while folders:
        prefix, folder = folders.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                name = entry.name
                if entry.is_dir():
                    if name != "__pycache__" and not entry.is_symlink():
                        folders.append((f"{prefix}{name}/", entry.path))
                elif name.endswith(".py"):
                    found.append(prefix + name)
    return sorted(found)
