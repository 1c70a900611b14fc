"""Deleting the repository's cached bytecode before a ``pytest --plangraph`` run reads any of
it (:class:`~.soundness.BytecodeGuard`): pytest and the processes the tests start then find no
``.pyc`` older than the run but the rewritten test modules this product vouched for."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path


def purge_bytecode(
    root: Path,
    installed: Sequence[Path],
    *,
    keep: Callable[[Path], bool] | None = None,
    prefix: str | None = None,
) -> list[str]:
    """Delete every cached bytecode file (``__pycache__/*.pyc``, pytest's rewritten modules
    included) of the repository under *root* but those *keep* vouches for, and return them
    (relative to *root*). Any of them may have been planted: a checked-hash file carries the
    hash of the current source but can hold other code, and pytest and plain Python both take
    it (*keep*: :meth:`~.rewritten.RewriteCache.authentic`, which vouches only for a file this
    product saw pytest write from the current source). Directories of the
    installed environment, virtual environments (a ``pyvenv.cfg``), ``node_modules`` and the
    folders of version control and of tools' caches (:data:`NOT_WALKED`) are left alone: the
    project's code is not there. Other hidden folders are walked: a tracked ``.tools/x.py`` a
    test runs is the project's code. A folder is taken for a virtual environment only when it
    looks like nothing else (:func:`_environment`). A ``__pycache__`` that is a symbolic link
    is deleted (the link, not what it leads to): the bytecode behind it would otherwise be read
    unchecked.
    *prefix*: the user's ``PYTHONPYCACHEPREFIX``, under which Python keeps the repository's
    bytecode in a tree of its own; that tree under the repository's path is purged too, the
    same way. A tree of that kind inside the repository (a ``conftest.py`` can point the
    processes the tests start at one) holds no ``__pycache__``: a ``.pyc`` anywhere whose
    name carries an interpreter's tag (``login.cpython-311.pyc``) is deleted as well."""
    purged: list[str] = []
    tops = [root, *_mirror(root, prefix)]
    for top in tops:
        for directory, subdirectories, files in os.walk(top):
            here = Path(directory)
            if "__pycache__" in subdirectories and os.path.islink(here / "__pycache__"):
                # a link is not walked: what it leads to would stay, so the link goes
                with contextlib.suppress(OSError):
                    (here / "__pycache__").unlink()
                    purged.append((here / "__pycache__").relative_to(top).as_posix())
            subdirectories[:] = [
                name
                for name in subdirectories
                if name not in NOT_WALKED
                and not _environment(here / name)
                and not any((here / name).resolve() == d for d in installed)
            ]
            cache = here.name == "__pycache__"
            for name in files:
                # outside __pycache__, a cache file's name has its interpreter's tag (a tree
                # of PYTHONPYCACHEPREFIX); a module kept as bytecode has none
                if not name.endswith(".pyc") or not (cache or name.count(".") > 1):
                    continue
                if not (keep is not None and keep(here / name)):
                    with contextlib.suppress(OSError):
                        (here / name).unlink()
                        purged.append((here / name).relative_to(top).as_posix())
    return purged


def purge_prefix(root: Path, installed: Sequence[Path], prefix: str) -> list[str]:
    """Delete the ``.pyc`` files of the repository at *root* in the bytecode tree of *prefix*
    (a ``PYTHONPYCACHEPREFIX``), as :func:`purge_bytecode` does, and return them."""
    mirror = _mirror(root, prefix)
    return purge_bytecode(mirror[0], installed) if mirror else []


def _mirror(root: Path, prefix: str | None) -> list[Path]:
    """Where Python keeps the bytecode of *root*'s modules under *prefix* (none when there is
    no prefix, or the tree is the repository or inside it, walked with it)."""
    if not prefix:
        return []
    mirror = Path(os.path.abspath(prefix), *root.parts[1:])
    if root == mirror or root.is_relative_to(mirror) or mirror.is_relative_to(root):
        return []
    return [mirror]


NOT_WALKED = frozenset(
    {"node_modules", ".git", ".hg", ".svn", ".jj", ".mypy_cache", ".ruff_cache", ".pytest_cache"}
    | {".hypothesis", ".plangraph", ".import_linter_cache"}
)
"""Folders the purge does not enter, by name: version control's and tools' caches."""

ENVIRONMENT_ENTRIES = frozenset(
    {"pyvenv.cfg", "bin", "Scripts", "include", "Include", "lib", "lib64", "Lib", "share"}
    | {"etc", "man", "CACHEDIR.TAG"}
)
"""What the top folder of a virtual environment holds (besides hidden entries)."""


def _environment(folder: Path) -> bool:
    """True when *folder* is a virtual environment the purge may pass over: it holds a
    ``pyvenv.cfg`` and nothing but what an environment's top folder holds, and its ``lib``
    folders hold interpreters' folders only. A ``pyvenv.cfg`` dropped beside the project's
    modules (or above them) does not hide their bytecode from the purge."""
    if not os.path.exists(folder / "pyvenv.cfg"):  # one stat for any other folder
        return False
    try:
        names = os.listdir(folder)
        if any(not n.startswith(".") and n not in ENVIRONMENT_ENTRIES for n in names):
            return False
        for lib in ("lib", "lib64", "Lib"):
            if lib in names and (folder / lib).is_dir():
                inside = os.listdir(folder / lib)
                if any(not n.startswith(("python", "pypy", "site-packages")) for n in inside):
                    return False
    except OSError:
        return False
    return True
