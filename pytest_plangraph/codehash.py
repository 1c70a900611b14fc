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
import hashlib
import os
from pathlib import Path

from ._version import __version__


@functools.cache
def code_fingerprint() -> str:
    """The package version and the sha256 of every module of the installed package (computed
    once per process): what a cache of values this code computes is kept under."""
    return fingerprint_of(Path(__file__).resolve().parent)


def fingerprint_of(package_dir: Path) -> str:
    """The package version and the sha256 of the relative path and the bytes of every ``.py``
    file under *package_dir*, in sorted order; a random one, unique to this call, when any of
    them cannot be read or the folder cannot be walked."""
    fingerprint = hashlib.sha256()
    try:
        files = _python_files(package_dir)
        if not files:
            raise OSError(f"no Python file under {package_dir}")
        for relative in files:
            data = (package_dir / relative).read_bytes()
            # The lengths keep two different listings from hashing to the same stream.
            fingerprint.update(f"{len(relative)}:{relative}:{len(data)}:".encode())
            fingerprint.update(data)
    except OSError:
        return f"{__version__}+unreadable-{os.urandom(8).hex()}"
    return f"{__version__}+{fingerprint.hexdigest()[:16]}"


def _python_files(package_dir: Path) -> list[str]:
    """The POSIX paths, relative to *package_dir*, of its ``.py`` files, sorted (OSError when a
    folder of it cannot be listed)."""

    def fail(error: OSError) -> None:
        raise error

    found: list[str] = []
    for folder, subfolders, names in os.walk(package_dir, onerror=fail):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        base = Path(folder).relative_to(package_dir)
        found.extend((base / name).as_posix() for name in names if name.endswith(".py"))
    return sorted(found)
