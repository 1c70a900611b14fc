"""Per-test coverage for ``pytest --plangraph --plangraph-coverage`` (DESIGN §4, §6).

:class:`CoverageRecorder` is registered beside the session object in every process that runs
tests (the only one in a serial run, each worker under pytest-xdist). Around each test mapped to
a criterion it switches coverage.py to a *dynamic context* named after the test's node id, and
back to the empty context afterwards; when the test loop ends it reads, per test, which source
files executed at least one line, keeping only files inside the repository (never the standard
library, site-packages or a virtual environment, wherever they live). A worker hands the result
to the controller as plain lists through ``workeroutput``; only the controller writes evidence.

Which coverage.py object measures:

* With pytest-cov active (``--cov``), its own ``Coverage`` object is reused, so ``--cov`` users
  keep their full report; the plugin only switches its context around mapped tests. pytest-cov's
  ``--cov-context=test`` labels (``node-id|setup``, ``|run``, ``|teardown``) are understood too.
  What the plugin learns is then limited to what ``--cov`` measures.
* Otherwise the recorder starts its own ``Coverage`` (no data file, no configuration file)
  limited to the repository, at the first mapped test.

Dynamic contexts need a tracing core: the ``sysmon`` core records only the first context that
runs a line. :func:`force_ctrace` sets ``COVERAGE_CORE=ctrace`` before pytest-cov builds its
``Coverage`` object (the plugin calls it from ``pytest_load_initial_conftests``) and
:func:`restore_core` undoes it when pytest ends.
"""

from __future__ import annotations

import contextlib
import functools
import os
import stat
import sys
import sysconfig
from collections.abc import Callable, Collection, Generator, Sequence
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from coverage import Coverage

    from .imports import ImportGraph

CORE_VARIABLE = "COVERAGE_CORE"
WORKER_KEY = "plangraph_coverage"
"""The ``workeroutput`` key a worker's {node id: [paths]} travels under."""
PHASES = ("|setup", "|run", "|teardown")
"""Suffixes of pytest-cov's ``--cov-context=test`` labels."""

_SAVED_CORE: pytest.StashKey[str | None] = pytest.StashKey()
_IMPORTS: pytest.StashKey[ImportGraph] = pytest.StashKey()


def observe_imports(config: pytest.Config) -> ImportGraph:
    """This process's :class:`~pytest_plangraph.plugin.imports.ImportGraph`, installed on first
    use (before the first conftest is read, when called from ``pytest_load_initial_conftests``)
    and removed when pytest ends."""
    graph = config.stash.get(_IMPORTS, None)
    if graph is None:
        from ..vcs.roots import find_root
        from .imports import ImportGraph

        root = find_root(config.rootpath).resolve()
        excluded = excluded_dirs(root)
        graph = config.stash[_IMPORTS] = ImportGraph(RepositoryFiles(root, excluded))
        graph.install()
        config.add_cleanup(graph.remove)
    return graph


@contextlib.contextmanager
def no_origin_stack() -> Generator[None]:
    """While coverage.py's ``Collector`` is made, its ``short_stack`` gives an empty text.

    A ``Collector`` keeps ``short_stack()`` of where it was made, which coverage.py prints in
    its debug output alone; ``inspect.stack()`` reads the source lines of every frame for it.
    The plugin starts its own measurement at the first mapped test, about fifty frames deep in
    pytest's run, where that reading cost more than the rest of starting coverage.py (about
    0.2 G instructions). Where coverage.py has no such name, nothing is changed."""
    try:
        from coverage import collector
    except ImportError:  # pragma: no cover - coverage.py is a dependency
        yield
        return
    saved = getattr(collector, "short_stack", None)
    if saved is None:
        yield
        return
    setattr(collector, "short_stack", _no_stack)  # noqa: B010 - a name mypy cannot see
    try:
        yield
    finally:
        setattr(collector, "short_stack", saved)  # noqa: B010


def _no_stack(*args: object, **kwargs: object) -> str:
    return ""


def force_ctrace(config: pytest.Config) -> None:
    """Make every ``Coverage`` built from now on use the ``ctrace`` core (remember the old
    ``COVERAGE_CORE`` in *config* for :func:`restore_core`)."""
    if _SAVED_CORE in config.stash:
        return
    config.stash[_SAVED_CORE] = os.environ.get(CORE_VARIABLE)
    os.environ[CORE_VARIABLE] = "ctrace"


def restore_core(config: pytest.Config) -> None:
    """Put ``COVERAGE_CORE`` back as it was before :func:`force_ctrace`."""
    if _SAVED_CORE not in config.stash:
        return
    saved = config.stash[_SAVED_CORE]
    del config.stash[_SAVED_CORE]
    if saved is None:
        os.environ.pop(CORE_VARIABLE, None)
    else:
        os.environ[CORE_VARIABLE] = saved


class CoverageRecorder:
    """Measures the tests that *wanted* accepts, each in its own coverage context."""

    def __init__(self, config: pytest.Config, root: Path, wanted: Callable[[str], bool]) -> None:
        self.config = config
        self.root = root.resolve()
        self.wanted = wanted
        self.executed: dict[str, list[str]] | None = None
        """pytest node id → repository-relative files it executed (after the test loop)."""
        self._cov: Coverage | None = None
        self._own = False
        self._paused = False
        """Our own measurement is stopped while unmapped tests run."""
        self._tests: dict[str, str | None] = {}
        """Measured test → its module, relative to the repository."""
        self.imports = observe_imports(config)
        self._files = self._placer(config)
        self._relatives: dict[str, str | None] = {}

    def _placer(self, config: pytest.Config) -> RepositoryFiles:
        """The import graph's :class:`RepositoryFiles` when it places files in this
        repository (each directory then resolved once for both), else one of our own."""
        placer = self.imports.relative
        if isinstance(placer, RepositoryFiles) and placer.root == self.root:
            return placer
        return RepositoryFiles(self.root, excluded_dirs(self.root))

    # --- hooks -------------------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Generator[None, object, object]:
        """Run a mapped test (setup, call and teardown) in the context named after it."""
        if not self.wanted(item.nodeid):
            self.imports.testing = True
            try:
                return (yield)
            finally:
                self.imports.testing = False
        cov = self._coverage()
        if self._paused:
            cov.start()
            self._paused = False
        self._tests[item.nodeid] = self.relative(str(item.path))
        cov.switch_context(item.nodeid)
        self.imports.testing = True
        try:
            return (yield)
        finally:
            self.imports.testing = False
            # each switch writes the data measured so far: when a mapped test follows, its own
            # switch ends this context (only pytest's code, not measured, runs in between)
            if nextitem is None or not self.wanted(nextitem.nodeid):
                cov.switch_context("")
                if self._own and nextitem is not None and type(cov).current() is cov:
                    # what an unmapped test runs would count for no test: our own measurement
                    # pauses until the next mapped one (pytest-cov's goes on for its report;
                    # one a test started and left running stays on top of ours)
                    cov.stop()
                    self._paused = True

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(self, fixturedef: pytest.FixtureDef[Any]) -> Generator[None, Any, Any]:
        """A fixture shared by several tests runs in the first one's context: what it imports
        binds its module for every test, as if imported outside any test."""
        if fixturedef.scope == "function":
            return (yield)
        testing, self.imports.testing = self.imports.testing, False
        try:
            return (yield)
        finally:
            self.imports.testing = testing

    # inner to pytest-cov's wrapper: read its data before it stops, saves and combines
    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        """Read what each test executed when the loop ends; a worker sends it on."""
        try:
            return (yield)
        finally:
            self.executed = self.collect()
            workeroutput: dict[str, Any] | None = getattr(self.config, "workeroutput", None)
            if workeroutput is not None:
                workeroutput[WORKER_KEY] = self.executed

    # --- measuring ---------------------------------------------------------------------------

    def _coverage(self) -> Coverage:
        if self._cov is None:
            self._cov = self._borrowed() or self._start_own()
        return self._cov

    def _borrowed(self) -> Coverage | None:
        """pytest-cov's running ``Coverage`` object, when ``--cov`` is active."""
        plugin = self.config.pluginmanager.getplugin("_cov")
        controller = getattr(plugin, "cov_controller", None)
        cov: Coverage | None = getattr(controller, "cov", None)
        return cov

    def _start_own(self) -> Coverage:
        from coverage import Coverage
        from coverage.exceptions import CoverageException

        omit = [f"{d}/*" for d in self._files.excluded]
        cov = Coverage(data_file=None, config_file=False, include=[f"{self.root}/*"], omit=omit)
        with contextlib.suppress(CoverageException):  # older coverage.py: COVERAGE_CORE does
            cov.set_option("run:core", "ctrace")
        with no_origin_stack():
            cov.start()
        self._own = True
        return cov

    def collect(self) -> dict[str, list[str]]:
        """Node id → sorted repository-relative files its contexts executed (stops our own
        ``Coverage``; a borrowed one keeps running for pytest-cov)."""
        cov = self._cov
        if cov is None:
            return {}
        if self._own:
            cov.stop()
        else:
            cov.switch_context("")
        data = cov.get_data()
        found: dict[str, set[str]] = {test: set() for test in self._tests}
        ran: dict[str, dict[str, set[int]]] = {}  # test → file → lines that import lazily
        static = cov.config.context
        for filename in data.measured_files():
            rel = self.relative(filename)
            if rel is None:
                continue
            by_line = data.contexts_by_lineno(filename)
            for context in set(chain.from_iterable(by_line.values())):
                test = context_test(context, self._tests, static)
                if test is not None:
                    found[test].add(rel)
            for line in self.imports.lazy_lines(rel):
                for context in by_line.get(line, ()):
                    test = context_test(context, self._tests, static)
                    if test is not None:
                        ran.setdefault(test, {}).setdefault(rel, set()).add(line)
        if self._own:
            cov.erase()
        return self._with_imports(found, ran)

    def _with_imports(
        self, executed: dict[str, set[str]], ran: dict[str, dict[str, set[int]]]
    ) -> dict[str, list[str]]:
        """Each test's executed files, its module and the modules pytest loaded as plugins
        (conftest files among them), closed over the import graph: import-time code runs
        once per process, under whichever test (or collection) imported the module first."""
        plugins = {
            relative
            for plugin in self.config.pluginmanager.get_plugins()
            if isinstance(source := getattr(plugin, "__file__", None), str)
            and (relative := self.relative(source)) is not None
        }
        learned: dict[str, list[str]] = {}
        closed: dict[frozenset[str], list[str]] = {}  # many tests share their files
        for test, paths in sorted(executed.items()):
            module = self._tests.get(test)
            seeds = frozenset({*paths, *plugins, *([module] if module else [])})
            if test in ran:  # imports inside functions this test ran: its own closure
                learned[test] = self.imports.closure(seeds, self.root, ran[test])
                continue
            if seeds not in closed:
                closed[seeds] = self.imports.closure(seeds, self.root)
            learned[test] = closed[seeds]
        return learned

    def relative(self, filename: str) -> str | None:
        """The repository-relative path of a measured file, None when it does not count;
        each file is resolved once per run (every test of a module shares its file)."""
        if filename not in self._relatives:
            self._relatives[filename] = self._files(filename)
        return self._relatives[filename]


def context_test(context: str, tests: Collection[str], static: str | None = None) -> str | None:
    """The measured test (node id) a coverage context label belongs to, else None: our labels
    are node ids, pytest-cov's ``--cov-context=test`` ones end in ``|setup``, ``|run`` or
    ``|teardown``, and a static context (``[run] context``) comes first, joined by ``|``."""
    if static and context.startswith(f"{static}|"):
        context = context[len(static) + 1 :]
    if context in tests:
        return context
    for phase in PHASES:
        if context.endswith(phase) and context[: -len(phase)] in tests:
            return context[: -len(phase)]
    return None


def repository_file(filename: str, root: Path, excluded: Sequence[Path] = ()) -> str | None:
    """*filename* relative to *root* (resolved), or None when it is not an existing file
    inside the repository, or lies in *excluded* (the installed environment). A folder that is
    only *named* ``site-packages`` is the repository's like any other: what Python or pytest
    loads from it binds."""
    path = Path(filename)
    if not path.is_absolute() or not path.is_file():
        return None
    resolved = path.resolve()
    if any(resolved.is_relative_to(d) for d in excluded):
        return None
    try:
        rel = resolved.relative_to(root)
    except ValueError:
        return None
    return rel.as_posix()


def within_resolved(directory: str, bases: Sequence[Path]) -> bool:
    """Whether the absolute *directory* is one of *bases* (each resolved, as
    :func:`excluded_dirs` gives them) or lies under one through no symbolic link: what
    resolving it would find, with one ``lstat`` per folder below that base instead of one per
    folder from the top (stdlib and site-packages folders hold most modules a run imports). A
    name with ``.``, ``..`` or an empty part, or a folder that cannot be looked at: False (the
    caller resolves it)."""
    for base in bases:
        text = str(base)
        if directory == text:
            return True
        if text == os.sep or not directory.startswith(text + os.sep):
            continue
        path = text
        for part in directory[len(text) + 1 :].split(os.sep):
            if part in ("", ".", ".."):
                return False
            path = f"{path}{os.sep}{part}"
            try:
                if stat.S_ISLNK(os.lstat(path).st_mode):
                    return False
            except (OSError, ValueError):
                return False
        return True
    return False


class RepositoryFiles:
    """:func:`repository_file` for the many files of one run: each directory is resolved and
    placed (inside *root*, not in *excluded*) once, so a file costs one ``lstat`` and a
    lookup; a file that is itself a symbolic link is resolved whole, as
    :func:`repository_file` does. The answers are :func:`repository_file`'s."""

    def __init__(self, root: Path, excluded: Sequence[Path] = ()) -> None:
        self.root = root
        self.excluded = excluded
        self._directories: dict[str, str | None] = {}
        """A directory as the file names give it → its repository-relative prefix ("" at the
        root, else ending in "/"), or None outside the repository or in *excluded*."""
        self.resolutions = 0
        """Directories resolved so far (each once)."""

    def __call__(self, filename: str) -> str | None:
        """*filename* relative to the repository, or None (see :func:`repository_file`)."""
        try:
            mode = os.lstat(filename).st_mode if os.path.isabs(filename) else 0
        except (OSError, ValueError):
            return None
        if stat.S_ISLNK(mode):
            return repository_file(filename, self.root, self.excluded)
        if not stat.S_ISREG(mode):
            return None
        directory, _, name = filename.rpartition(os.sep)
        if directory not in self._directories:
            self._directories[directory] = self._place(directory or os.sep)
        prefix = self._directories[directory]
        return None if prefix is None else prefix + name

    def _place(self, directory: str) -> str | None:
        self.resolutions += 1
        if within_resolved(directory, self.excluded):  # the installation: no resolving
            return None
        resolved = Path(directory).resolve()
        if any(resolved.is_relative_to(d) for d in self.excluded):
            return None
        try:
            rel = resolved.relative_to(self.root)
        except ValueError:
            return None
        return "" if rel == Path(".") else f"{rel.as_posix()}/"


def excluded_dirs(root: Path) -> list[Path]:
    """The interpreter's prefixes (a virtual environment), its install directories and this
    package (its hooks run inside every test), except directories that hold the repository."""
    return [d for d in _installation() if not root.is_relative_to(d)]


@functools.cache
def _installation() -> tuple[Path, ...]:
    """The folders :func:`excluded_dirs` leaves out, resolved and sorted: found once a process
    (the guard, the binder and the import graph each ask), the install paths read once."""
    paths = sysconfig.get_paths()
    found = {paths.get(name) for name in ("stdlib", "platstdlib", "purelib", "platlib")}
    package = Path(__file__).resolve().parent.parent  # all of pytest_plangraph, not plugin/
    found.update({sys.prefix, sys.base_prefix, sys.exec_prefix, str(package)})
    return tuple(sorted({Path(d).resolve() for d in found if d}))
