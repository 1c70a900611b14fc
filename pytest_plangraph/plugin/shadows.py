"""The repository paths where a new file would shadow a module a pytest run imported
(DESIGN §5 "What binds"): Python's import system would load it instead, under the same name.
:class:`ShadowPaths` names them; the record maker
(:class:`~pytest_plangraph.plugin.building.EvidenceBuilder`) binds them absent.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Sequence
from importlib.machinery import BYTECODE_SUFFIXES, EXTENSION_SUFFIXES, SOURCE_SUFFIXES
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .binding import FileBinder


IMPORT_SUFFIXES = (*EXTENSION_SUFFIXES, *SOURCE_SUFFIXES, *BYTECODE_SUFFIXES)
"""Every suffix Python's path finder loads a module or a package's ``__init__`` from, in the
order it tries them: extension modules, source, sourceless bytecode."""

INITS = tuple(f"__init__{suffix}" for suffix in IMPORT_SUFFIXES)
"""The names of a package folder's ``__init__`` in each import suffix: any of them makes the
folder a package, which its finder takes before a module of the same name beside it."""


class ShadowPaths:
    """The repository paths where a new file would shadow a module the run imported: Python's
    import system would load it instead, under the same name, had it been there.

    For a module ``d/name.py``: a package folder beside it, whose ``__init__`` has any import
    suffix (:data:`INITS`: ``d/name/__init__.py``, ``__init__.pyc`` without a source,
    ``__init__.so`` …), and an extension module beside it (``d/name`` + each of
    ``importlib.machinery.EXTENSION_SUFFIXES``: ``.cpython-311-x86_64-linux-gnu.so``,
    ``.abi3.so``, ``.so``), which ``FileFinder`` looks for first in the same folder; for a
    package's ``d/__init__.py``, its extension forms. And the module's top-level name in
    every ``sys.path`` entry inside the repository that comes before the one the module was
    found under (``login.py`` at the root when ``src`` comes later): as a package (any of
    :data:`INITS`) and as a module of any import suffix (:data:`IMPORT_SUFFIXES`: an
    extension module, ``.py``, a sourceless ``.pyc``). The
    entries are the run's ``sys.path`` (``pythonpath``, ``sitecustomize`` …) with, under
    pytest's ``prepend`` and ``importlib`` import modes, the folders pytest puts first to
    import each test module and conftest (its first folder up without ``__init__.py``), so
    that a run under xdist, whose controller imports none, binds the same; ``append`` puts them
    last. An entry the module's top folder is not on (the module was loaded by its path) makes
    every other entry come before it: conservative.

    Computed once per module and run (a module's paths serve every criterion that binds it);
    which of them are files is looked up once per path.
    """

    def __init__(
        self,
        root: Path,
        relative: Callable[[Path], str | None],
        test_files: Iterable[str],
        *,
        import_mode: str = "prepend",
        path: Sequence[str] | None = None,
        started_in: Sequence[str] = (),
    ) -> None:
        self.root = root
        self._packages: dict[str, bool] = {}
        self._of: dict[str, tuple[str, ...]] = {}
        self._there: dict[str, bool] = {}
        self.lookups = 0
        """How many paths were looked up on disk (:meth:`there`): each once per run."""
        entries: dict[str, None] = {}
        for entry in sys.path if path is None else path:
            folder = Path(os.path.abspath(entry or "."))
            if not folder.is_dir():  # a zip file, a path hook's name (an editable install)
                continue
            found = relative(folder)
            if found is not None:
                entries["" if found == "." else found] = None
        self.startup: tuple[str, ...] = ()
        """``sitecustomize.py`` and ``usercustomize.py`` in each ``PYTHONPATH`` folder inside
        the repository and in the folder pytest was started in (pytest-xdist puts it on its
        workers' ``PYTHONPATH``): Python's start imports the first it finds on ``sys.path``,
        before any test (``.pth`` files are read in site-packages only, which never bind)."""
        starts = [*os.environ.get("PYTHONPATH", "").split(os.pathsep), *(started_in or ())]
        for entry in dict.fromkeys(starts) if path is None else ():
            if entry and (found := relative(Path(os.path.abspath(entry)))) is not None:
                base = "" if found == "." else f"{found}/"
                self.startup += (f"{base}sitecustomize.py", f"{base}usercustomize.py")
        self.startup = tuple(dict.fromkeys(self.startup))
        inserted = dict.fromkeys(self._basedir(f) for f in test_files)
        if import_mode == "append":
            self.entries = [*entries, *(e for e in inserted if e not in entries)]
        else:
            self.entries = [*inserted, *(e for e in entries if e not in inserted)]
        """The ``sys.path`` entries inside the repository, in the order Python searches them."""

    @classmethod
    def of(cls, binder: FileBinder, test_files: Iterable[str]) -> ShadowPaths:
        """The shadowing paths of *binder*'s run, whose test modules and conftests are
        *test_files*."""
        config = binder.config
        mode = str(config.getoption("importmode", "prepend") or "prepend")
        started_in = [str(config.invocation_params.dir)]
        root, relative = binder.plangraph.root, binder.relative
        return cls(root, relative, test_files, import_mode=mode, started_in=started_in)

    def __call__(self, modules: Iterable[str]) -> dict[str, None]:
        """The shadowing paths of every ``.py`` file of *modules*, each once, in order, after
        :attr:`startup` (none when *modules* hold no ``.py`` file: a verifier item's)."""
        found: dict[str, None] = {}
        for module in modules:
            if module.endswith(".py"):
                found.update(dict.fromkeys(self.paths_of(module)))
        return dict.fromkeys((*self.startup, *found)) if found else found

    def paths_of(self, module: str) -> tuple[str, ...]:
        """The paths that would shadow the module file *module* (a repository path)."""
        if module in self._of:
            return self._of[module]
        folder, _, name = module.rpartition("/")
        stem = name[: -len(".py")]
        beside = f"{folder}/{stem}" if folder else stem
        if stem == "__init__":
            paths = [beside + suffix for suffix in EXTENSION_SUFFIXES]
        else:
            paths = [*(f"{beside}/{init}" for init in INITS)]
            paths.extend(beside + suffix for suffix in EXTENSION_SUFFIXES)
        top, top_name = folder, stem
        if stem == "__init__":
            top, _, top_name = folder.rpartition("/")
        while top_name and self._is_package(top):
            top, _, top_name = top.rpartition("/")
        if top_name:
            before = self.entries
            if top in before:
                before = before[: before.index(top)]
            for entry in before:
                if entry == top:
                    continue
                base = f"{entry}/{top_name}" if entry else top_name
                paths.extend(f"{base}/{init}" for init in INITS)
                paths.extend(base + suffix for suffix in IMPORT_SUFFIXES)
        self._of[module] = found = tuple(p for p in dict.fromkeys(paths) if p != module)
        return found

    def there(self, path: str) -> bool:
        """Whether something is at the repository path *path* (a link, a folder included)."""
        if path not in self._there:
            self.lookups += 1
            self._there[path] = os.path.lexists(self.root / path)
        return self._there[path]

    def _is_package(self, folder: str) -> bool:
        if not folder:
            return (self.root / "__init__.py").is_file()
        if folder not in self._packages:
            self._packages[folder] = (self.root / folder / "__init__.py").is_file()
        return self._packages[folder]

    def _basedir(self, file: str) -> str:
        """The folder pytest puts on ``sys.path`` to import the test module or conftest
        *file* by name: the first folder above it that is not a package."""
        folder = file.rpartition("/")[0]
        while folder and self._is_package(folder):
            folder = folder.rpartition("/")[0]
        return folder
