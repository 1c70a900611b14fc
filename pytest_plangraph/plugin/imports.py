"""The dynamic import graph of a ``--plangraph-coverage`` run (DESIGN §7).

Code that runs only while a module is imported — module-level statements, class bodies,
decorators — runs once per process: during collection, or inside whichever test imported the
module first. Per-test coverage contexts therefore give it to one test or to none. What every
test that uses a module has in common is that it *imports* it, or imports something that does.
:class:`ImportGraph` records who imports whom, for the whole run (collection included), and
:meth:`ImportGraph.closure` adds to the files a test executed every repository module they
import, transitively, whoever imported it first.

Two observers, because neither sees everything alone:

* ``builtins.__import__`` is wrapped: every ``import`` statement calls it, also those that
  ``sys.modules`` answers without loading anything (a module a test imports that another
  test's collection loaded already). The importer is the ``__file__`` of the calling globals.
* ``importlib.import_module`` is wrapped likewise (code that looks it up when it calls it).
* a finder first on ``sys.meta_path`` sees every module *loaded* (``importlib.import_module``,
  pytest importing a test module or conftest, ``__import__`` from C); the importer is the
  nearest caller frame outside the import machinery.

An import from a package module also runs the ``__init__.py`` of every package above it, so the
closure adds those. Edges are kept between repository files only (see
:func:`~pytest_plangraph.plugin.coverage.repository_file`). The cost is one dictionary lookup
per ``import`` statement already seen, and a little more for each new one; see
docs/performance.md.
"""

from __future__ import annotations

import builtins
import importlib
import sys
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from inspect import CO_OPTIMIZED
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

_MACHINERY = ("<frozen importlib", str(Path(__file__)))
"""Frames skipped when looking for the code that asked for an import."""
_IMPORTLIB = str(Path(sys.modules["importlib"].__file__ or "").parent)


class ImportGraph:
    """Records, between install and remove, which repository file imports which; *relative*
    turns an absolute file name into a repository path (None outside the repository)."""

    def __init__(self, relative: Callable[[str], str | None]) -> None:
        self.relative = relative
        self.edges: dict[str, set[str]] = {}
        """Repository file → the repository files of the modules it imports whenever it is
        imported itself (from its module body, its class bodies, functions run meanwhile)."""
        self._seen: set[tuple[object, ...]] = set()
        self.looked = 0
        """Import statements looked at so far (those whose importer may add an edge)."""
        self.lazy: dict[str, dict[int, set[str]]] = {}
        """File → line of an import inside a function → the repository files it imports: they
        bind a test only when the test ran that line."""
        self._pending: list[tuple[tuple[str, int, str | None], str]] = []
        self._files: dict[str, str | None] = {}
        self._above: dict[str, list[str]] = {}
        self._depth = 0
        self._busy = False
        """Imports under way through the wrappers (module bodies running)."""
        self.testing = False
        """True while a test runs: an import inside a function outside any test (collection,
        a hook) binds like one in a module body, as no test's coverage holds its line."""
        self._base: Callable[..., ModuleType] = builtins.__import__
        self._import_module_base: Callable[..., ModuleType] = importlib.import_module
        self._installed = False
        self._finder = _LoadWatcher(self)

    # --- installing --------------------------------------------------------------------------

    def install(self) -> None:
        """Start observing imports (once)."""
        if self._installed:
            return
        self._installed = True
        self._base = builtins.__import__
        builtins.__import__ = self._import
        self._import_module_base = importlib.import_module
        importlib.import_module = self._import_module
        sys.meta_path.insert(0, self._finder)

    def remove(self) -> None:
        """Stop observing; leave ``builtins.__import__`` alone when someone replaced it since
        (undoing theirs would break them), and keep what was recorded."""
        installed, self._installed = self._installed, False
        # a bound method is made anew on each access: equal, never identical
        if installed and builtins.__import__ == self._import:
            builtins.__import__ = self._base
        if installed and importlib.import_module == self._import_module:
            importlib.import_module = self._import_module_base
        if self._finder in sys.meta_path:
            sys.meta_path.remove(self._finder)
        self._resolve_pending()

    # --- observing ---------------------------------------------------------------------------

    def _import(
        self,
        name: str,
        globals: Mapping[str, Any] | None = None,
        locals: Mapping[str, Any] | None = None,
        fromlist: Sequence[str] | None = (),
        level: int = 0,
    ) -> ModuleType:
        self._depth += 1
        try:
            return self._base(name, globals, locals, fromlist, level)
        finally:
            self._depth -= 1
            # noted even when the import failed: the modules above it may have run
            frame = sys._getframe(1)
            code = frame.f_code
            # _may_note, inline: this runs for every import statement of the process
            if self._files.get(code.co_filename, True) is not None or (
                self.testing and self._depth and code.co_flags & CO_OPTIMIZED
            ):
                self._guarded(self._statement, frame, name, globals, fromlist or (), level)

    def _import_module(self, name: str, package: str | None = None) -> ModuleType:
        self._depth += 1
        try:
            return self._import_module_base(name, package)
        finally:
            self._depth -= 1
            if isinstance(name, str):
                level = len(name) - len(name.lstrip("."))
                caller = sys._getframe(1)
                if self._may_note(caller):
                    self._guarded(
                        self._statement, caller, name[level:], {"__package__": package}, (), level
                    )

    def _may_note(self, frame: FrameType) -> bool:
        """Whether an import asked for from *frame* can add an edge: the importer is a
        repository file, or a test is running a function while a module is being imported
        (the module may be the repository's). Every other import is the environment's own
        (pytest, the plug-ins, the libraries loading their modules): one lookup each."""
        code = frame.f_code
        if self._files.get(code.co_filename, True) is not None:  # ours, or not placed yet
            return True
        return self.testing and self._depth > 0 and bool(code.co_flags & CO_OPTIMIZED)

    def _guarded(self, note: Callable[..., None], *args: Any) -> None:
        """Run *note* unless a note is already under way (an import made by the bookkeeping
        itself); whatever it raises is dropped: observing never changes what an import does."""
        if self._busy:
            return
        self._busy = True
        try:
            note(*args)
        except Exception:  # an odd module or name: nothing is learned from it
            pass
        finally:
            self._busy = False

    def _statement(
        self,
        frame: FrameType,
        name: str,
        globals: Mapping[str, Any] | None,
        fromlist: Sequence[str],
        level: int,
    ) -> None:
        """Note the edges of one executed ``import`` statement (once per place and kind)."""
        self.looked += 1
        site = self._site(frame)
        key = (*site, name, level, tuple(fromlist))
        if key in self._seen:
            return
        self._seen.add(key)
        absolute = _absolute(name, globals, level)
        if absolute is None:
            return
        modules = [absolute]
        if fromlist:
            names = list(fromlist)
            if "*" in names:
                exported = getattr(sys.modules.get(absolute), "__all__", ())
                names.extend(n for n in exported if isinstance(n, str))
            modules.extend(f"{absolute}.{item}" for item in names if item != "*")
        for module_name in modules:
            self._add(site, self._module_files(module_name))

    def _site(self, frame: FrameType) -> tuple[str, int, str | None]:
        """Where an import runs: the file, the line when inside a function run by a test (0 in
        a module or class body, which runs whenever the module is imported) and, for such a
        function, the
        innermost repository module being imported around it (a function called while a
        module is imported imports on that module's behalf)."""
        code = frame.f_code
        if not code.co_flags & CO_OPTIMIZED or not self.testing:
            return (code.co_filename, 0, None)
        if not self._depth:  # no import under way: no module body can be on the stack
            return (code.co_filename, frame.f_lineno, None)
        outer = frame.f_back
        while outer is not None:
            if outer.f_code.co_name == "<module>" and self._file(outer.f_code.co_filename):
                return (code.co_filename, frame.f_lineno, outer.f_code.co_filename)
            outer = outer.f_back
        return (code.co_filename, frame.f_lineno, None)

    def _add(self, site: tuple[str, int, str | None], targets: Iterable[str]) -> None:
        filename, line, outer = site
        for module_file in (outer, None if line else filename):
            holder = self._file(module_file) if module_file else None
            if holder is not None:
                self.edges.setdefault(holder, set()).update(t for t in targets if t != holder)
        source = self._file(filename) if line else None
        if source is not None:
            lines = self.lazy.setdefault(source, {})
            lines.setdefault(line, set()).update(t for t in targets if t != source)

    def _module_files(self, name: str) -> list[str]:
        """Repository files of *name* and of the packages above it, as loaded now."""
        found = []
        parts = name.split(".")
        for depth in range(1, len(parts) + 1):
            module = sys.modules.get(".".join(parts[:depth]))
            file = getattr(module, "__file__", None)
            if isinstance(file, str) and (relative := self._file(file)) is not None:
                found.append(relative)
        return found

    def _file(self, filename: str) -> str | None:
        if filename not in self._files:
            self._files[filename] = self.relative(filename)
        return self._files[filename]

    def loading(self, fullname: str) -> None:
        """A module is about to be loaded: remember who asked (resolved when it is done)."""
        self._guarded(self._loading, fullname)

    def _loading(self, fullname: str) -> None:
        frame: FrameType | None = sys._getframe(3)
        while frame is not None:
            filename = frame.f_code.co_filename
            if not filename.startswith(_MACHINERY) and not filename.startswith(_IMPORTLIB):
                if self._may_note(frame):
                    self._pending.append((self._site(frame), fullname))
                return
            frame = frame.f_back

    def _resolve_pending(self) -> None:
        pending, self._pending = self._pending, []
        for site, fullname in pending:
            self._add(site, self._module_files(fullname))

    # --- closing over ------------------------------------------------------------------------

    def closure(
        self, files: Iterable[str], root: Path, ran: Mapping[str, Collection[int]] | None = None
    ) -> list[str]:
        """*files*, the repository modules they import transitively, and the ``__init__.py``
        of every package above each of them, sorted. An import inside a function counts
        when *ran* (file → lines the test executed) holds its line."""
        self._resolve_pending()
        ran = ran or {}
        found: set[str] = set()
        stack = list(files)
        while stack:
            file = stack.pop()
            if file in found:
                continue
            found.add(file)
            stack.extend(self.edges.get(file, ()))
            lazy = self.lazy.get(file)
            if lazy and file in ran:
                for line in ran[file]:
                    stack.extend(lazy.get(line, ()))
            if file not in self._above:
                self._above[file] = _packages_above(file, root)
            stack.extend(self._above[file])
        return sorted(found)

    def lazy_lines(self, file: str) -> Collection[int]:
        """The lines of *file* that import inside a function."""
        self._resolve_pending()
        return self.lazy.get(file, {}).keys()


class _LoadWatcher:
    """A finder that finds nothing and tells *graph* which module is about to load."""

    def __init__(self, graph: ImportGraph) -> None:
        self.graph = graph

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> None:
        """Note the load; the finders after this one find the module."""
        self.graph.loading(fullname)

    def invalidate_caches(self) -> None:
        """Nothing cached."""


def _absolute(name: str, globals: Mapping[str, Any] | None, level: int) -> str | None:
    """The absolute module name of ``__import__(name, globals, level=level)``."""
    if level == 0:
        return name or None
    if not isinstance(globals, Mapping):
        return None
    package = globals.get("__package__")
    if not isinstance(package, str) or not package:
        module = globals.get("__name__")
        if not isinstance(module, str):
            return None
        package = module if "__path__" in globals else module.rpartition(".")[0]
    bits = package.rsplit(".", level - 1)
    if len(bits) < level:
        return None
    base = bits[0]
    return f"{base}.{name}" if name else base


def _packages_above(file: str, root: Path) -> list[str]:
    """The ``__init__.py`` files of the packages holding *file* (a Python module), nearest
    first, as long as each directory up is a package."""
    if not file.endswith(".py"):
        return []
    found = []
    directory = file.rpartition("/")[0]
    if file.endswith("/__init__.py"):  # a package's own module: start from the one above
        directory = directory.rpartition("/")[0]
    while directory and (root / directory / "__init__.py").is_file():
        found.append(f"{directory}/__init__.py")
        directory = directory.rpartition("/")[0]
    return found
