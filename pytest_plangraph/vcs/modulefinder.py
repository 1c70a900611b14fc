"""The repository files an import may load: :class:`ModuleFinder` turns each
:data:`~pytest_plangraph.vcs.imports.Import` that :func:`~pytest_plangraph.vcs.imports.imports_of`
reads into the module files Python may load for it (the rules are in
:mod:`pytest_plangraph.vcs.imports`'s docstring), each place looked at on the disk once."""

from __future__ import annotations

import os
from collections.abc import Iterable
from importlib.machinery import EXTENSION_SUFFIXES

from .imports import PATH_LEVEL, Import

__all__ = ["ModuleFinder"]


class ModuleFinder:
    """The repository files the imports of a file under *root* may load (see the module
    docstring); each place looked at on the disk once."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._real_root = os.path.realpath(root)
        self.missing: set[str] = set()
        """The places a module was looked for in vain: one made there later is found."""
        self.escaped: set[str] = set()
        """The module files found whose real path leaves the repository: not read."""
        self.wide = False
        """Whether a file read mentions ``sys.path`` (a ``sys.path.insert`` in a conftest may
        put any folder on the path): an absolute name is then also looked for in every folder
        of the repository that holds a module of its first name (:meth:`_holding`)."""
        self._files: dict[str, bool] = {}
        self._folders: dict[str, bool] = {}
        self._found: dict[tuple[str, Import, frozenset[str], bool], tuple[str, ...]] = {}
        self._modules: dict[str, list[str]] | None = None

    def modules(
        self, path: str, imports: Iterable[Import], folders: frozenset[str] = frozenset()
    ) -> list[str]:
        """The repository files the *imports* of the file *path* may load, each once; an
        absolute name is also looked for in the ``sys.path`` *folders* of the run
        (:meth:`path_folders`)."""
        folder = _parent(path)
        found: dict[str, None] = {}
        for each in imports:
            key = (folder, each, folders, self.wide)
            if key not in self._found:
                places = self._candidates(folder, each, folders)
                self._found[key] = tuple(self._existing(places))
            found.update(dict.fromkeys(self._found[key]))
        return list(found)

    def path_folders(self, files: Iterable[str]) -> frozenset[str]:
        """The folders pytest puts on ``sys.path`` to import *files* (its default
        ``prepend`` import mode): for each, the first folder above it that holds no
        ``__init__.py``. A module there may be imported by any file of the run."""
        found: set[str] = set()
        for path in files:
            folder = _parent(path)
            while folder and self._is_file(_join(folder, "__init__.py")):
                folder = _parent(folder)
            found.add(folder)
        return frozenset(found)

    def _candidates(self, folder: str, each: Import, folders: frozenset[str]) -> list[str]:
        level, module, names = each
        if level == PATH_LEVEL:  # a file named by its path, from the file's folder or above
            return _named_files(folder, module)
        parts = module.split(".") if module else []
        if level:
            base: str | None = folder
            for _ in range(level - 1):
                base = None if not base else _parent(base)
            if base is None:  # above the repository root: nothing here
                return []
            return [_join(base, "__init__.py"), *_under(base, parts, names, self)]
        bases = [folder]
        while folder:
            folder = _parent(folder)
            bases.append(folder)
        bases += ["src", *sorted(folders)]
        if self.wide and parts:
            bases += self._holding(parts[0])
        found: list[str] = []
        for base in dict.fromkeys(bases):
            found.extend(_under(base, parts, names, self))
        return found

    def _holding(self, name: str) -> list[str]:
        """The folders of the repository holding a module or package *name* (one walk of
        the repository, folders whose name starts with a dot, ``__pycache__``,
        ``node_modules`` and virtual environments left out)."""
        if self._modules is None:
            self._modules = {}
            for folder, dirs, files in os.walk(self.root):
                if "pyvenv.cfg" in files:
                    dirs[:] = []
                    continue
                dirs[:] = sorted(d for d in dirs if d not in _SKIPPED and not d.startswith("."))
                where = os.path.relpath(folder, self.root).replace(os.sep, "/")
                where = "" if where == "." else where
                for name_here in [*dirs, *files]:
                    stem = name_here.partition(".")[0]
                    if stem.isidentifier():
                        self._modules.setdefault(stem, []).append(where)
        return list(dict.fromkeys(self._modules.get(name, ())))

    def _existing(self, candidates: list[str]) -> Iterable[str]:
        """The files there of each module source *candidates* names, of its sourceless
        bytecode (``m.pyc``) and of its extension modules (``m.abi3.so``): Python may load
        any."""
        for source in dict.fromkeys(candidates):
            stem = source[:-3]
            for path in (source, f"{stem}.pyc", *(stem + s for s in EXTENSION_SUFFIXES)):
                if self._is_file(path):
                    yield path
                else:
                    self.missing.add(path)

    def _is_file(self, path: str) -> bool:
        if path not in self._files:
            full = os.path.join(self.root, path)
            there = self._files[path] = os.path.isfile(full)
            if there and not _inside(os.path.realpath(full), self._real_root):
                self.escaped.add(path)
        return self._files[path]

    def is_folder(self, path: str) -> bool:
        """Whether the repository path *path* is a folder now (asked once)."""
        if path not in self._folders:
            self._folders[path] = os.path.isdir(os.path.join(self.root, path) if path else ".")
        return self._folders[path]

    def listing(self, folder: str) -> list[str]:
        """The modules of *folder* (sources, bytecode, extensions), for an ``import *`` from
        its package."""
        try:
            names = os.listdir(os.path.join(self.root, folder))
        except OSError:
            return []
        loaded = (".py", ".pyc", *EXTENSION_SUFFIXES)
        return [_join(folder, name) for name in sorted(names) if name.endswith(loaded)]


_SKIPPED = frozenset({"__pycache__", "node_modules", "site-packages"})
"""Folders :meth:`ModuleFinder._holding` does not enter."""


def _under(base: str, parts: list[str], names: tuple[str, ...], finder: ModuleFinder) -> list[str]:
    """The files of the module *parts* (dotted) under *base*, each parent package's
    ``__init__.py``, and the submodules *names* of it."""
    found: list[str] = []
    for at in range(1, len(parts) + 1):
        prefix = _join(base, "/".join(parts[:at]))
        found += [f"{prefix}.py", f"{prefix}/__init__.py"]
    package = _join(base, "/".join(parts)) if parts else base
    for name in names:
        if name == "*":
            if finder.is_folder(package):
                found.extend(finder.listing(package))
        else:
            found += [_join(package, f"{name}.py"), _join(package, f"{name}/__init__.py")]
    return found


def _named_files(folder: str, named: str) -> list[str]:
    """The repository files the relative path *named* may be, taken from *folder* and from
    each folder above it (``os.path.join(os.path.dirname(__file__), "marks.py")`` names the
    file beside the test; a path from the root names it from there): none that leaves the
    repository."""
    if os.path.isabs(named) or not named.endswith(".py"):
        return []
    found: list[str] = []
    while True:
        path = os.path.normpath(_join(folder, named)).replace(os.sep, "/")
        if path != ".." and not path.startswith("../"):
            found.append(path)
        if not folder:
            return found
        folder = _parent(folder)


def _parent(path: str) -> str:
    return path.rpartition("/")[0]


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)
