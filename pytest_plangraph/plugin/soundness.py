"""Whether the tests of a ``pytest --plangraph`` run could fail: asserts and bytecode.

A test that cannot fail is no evidence. Two things make a passing run prove nothing, whatever the
tests say:

* **Stripped asserts.** Under ``python -O``, ``-OO`` or ``PYTHONOPTIMIZE`` the interpreter drops
  every ``assert`` statement it compiles. pytest's assertion rewriting turns the asserts of test
  modules and conftest files into ordinary ``if`` statements, so those still fail, but the asserts
  of every other module (the code under test, helpers) are gone; with ``--assert=plain`` the tests'
  own asserts are gone too. So a run whose interpreter optimizes records no pass, in either mode
  (reason :data:`ASSERTS_DISABLED`).
* **Bytecode that is not the source.** Python trusts a ``__pycache__`` file whose recorded
  source size and mtime match (a source changed to the same size with its old mtime set back
  runs its old bytecode), and a checked-hash file whose recorded hash matches — though nothing
  checks that the code in it was compiled from that source, so a planted one runs other code.
  :class:`BytecodeGuard` puts a finder on ``sys.meta_path`` before any conftest, test module or
  module under test is imported: a module of the project (any source file outside the installed
  environment) that the standard loader would load is loaded by :class:`CheckedSourceLoader`
  instead, which compiles the source unless this product vouches for its cached bytecode
  (:mod:`~pytest_plangraph.plugin.rewritten`). Then, before the first conftest is read, every
  ``.pyc`` of the repository is deleted (:func:`~.purge.purge_bytecode`): pytest's cache of
  rewritten test modules and conftest files, and what processes the tests start would read,
  hold nothing older than this run — but the rewritten files this product vouched for
  (:mod:`~pytest_plangraph.plugin.rewritten`: written by pytest, in an earlier run, from exactly
  the current source), which pytest then reads through a reader that checks them again. With
  an older pytest, whose rewriter trusts size and mtime even within
  the run, the guard also points ``sys.pycache_prefix`` at a private, empty directory. Modules
  imported before the guard (a ``-p`` plugin, ``PYTEST_PLUGINS``, an installed entry point) are
  compared with a compilation of their current source; one that differs makes the run record no
  pass (reason :data:`STALE_BYTECODE`).

Each process checks itself: under pytest-xdist each worker is its own interpreter (it may be
started with other flags or another environment), so a worker puts its :func:`run_facts` on
every report it sends and the controller joins them with :func:`join_facts`.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import marshal
import os
import shutil
import sys
import tempfile
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..values import dataclass, field

if TYPE_CHECKING:
    from .rewritten import RewriteCache

ASSERTS_DISABLED = "ASSERTS_DISABLED"
"""No pass: the interpreter strips ``assert`` statements (``-O``, ``PYTHONOPTIMIZE``)."""
STALE_BYTECODE = "STALE_BYTECODE"
"""No pass: a repository module ran bytecode that does not match its source."""
UNBOUND_CODE = "UNBOUND_CODE"
"""No pass: code or configuration the run loaded from the repository's tree is a link to a file
outside it, which evidence cannot bind (its change would go unseen)."""

FACTS_ATTRIBUTE = "plangraph_python"
"""The report attribute that carries a worker's :func:`run_facts` to the controller."""


class CheckedSourceLoader(importlib.machinery.SourceFileLoader):
    """Loads a module of the project from its source, through a bytecode cache that is checked
    against the source's hash (PEP 552), never against its size and mtime."""

    vouching: RewriteCache | None = None
    """What vouches for the bytecode this loader wrote in an earlier run (set by the guard)."""

    def get_code(self, fullname: str) -> types.CodeType:
        """The module's code, compiled from its source. Cached bytecode is read only when
        :attr:`vouching` vouches for it: this product wrote it, in an earlier run, from
        exactly these source bytes, and its bytes are exactly those written. A checked-hash
        file alone only says which source it claims to come from, and anyone who can write
        ``__pycache__`` can pair the current source's hash with other code. What is compiled
        is cached as checked-hash bytecode (unless writing is off) for the next run and for
        the processes the tests start."""
        path = self.get_filename(fullname)
        source = self.get_data(path)
        try:
            pyc: str | None = importlib.util.cache_from_source(path)
        except NotImplementedError:  # an implementation without a bytecode cache
            pyc = None
        vouching = self.vouching
        if pyc is not None and vouching is not None:
            kept = vouching.module_code(pyc, path, source)
            if kept is not None:
                return kept
        code = self.source_to_code(source, path)
        if pyc is not None and not sys.dont_write_bytecode:
            header = importlib.util.MAGIC_NUMBER + _CHECKED_HASH.to_bytes(4, "little")
            data = header + importlib.util.source_hash(source) + marshal.dumps(code)
            if vouching is not None:
                vouching.vouch(pyc, path, source, data)
            self.set_data(pyc, data)
        return code


_CHECKED_HASH = 0b11
"""The flags word of a PEP 552 pyc that is hash-based and checked against its source."""


class ProjectFinder(importlib.abc.MetaPathFinder):
    """Asks the finders after it on ``sys.meta_path`` for a module's spec and, for a source file
    of the project that the standard loader would load, hands the spec a
    :class:`CheckedSourceLoader` instead."""

    def __init__(self, installed: Sequence[Path]) -> None:
        self.installed = installed
        self._directories: dict[str, bool] = {}
        """A directory as the modules' file names give it → whether it resolves outside the
        installed directories (each resolved once)."""
        self.vouching: RewriteCache | None = None
        """Handed to each :class:`CheckedSourceLoader` (set once the guard opened it)."""
        self.resolutions = 0
        """Paths resolved so far: one per directory, plus each file that is itself a symbolic
        link (or has a relative name)."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        """The spec the rest of ``sys.meta_path`` finds, its loader replaced for the project."""
        finders = sys.meta_path
        after = finders[finders.index(self) + 1 :] if self in finders else []
        spec: importlib.machinery.ModuleSpec | None = None
        for finder in after:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                break
        if spec is None:
            return None
        origin = spec.origin
        standard = type(spec.loader) is importlib.machinery.SourceFileLoader
        if standard and origin and self.in_project(origin):
            loader = spec.loader = CheckedSourceLoader(fullname, origin)
            loader.vouching = self.vouching
        return spec

    def in_project(self, origin: str) -> bool:
        """True unless *origin* resolves into an installed directory. A regular file is placed
        by its directory, resolved once per directory (a module import costs one ``lstat``); a
        file that is itself a symbolic link, or a relative name, is resolved whole."""
        if not os.path.isabs(origin) or os.path.islink(origin):
            return self._outside_installed(Path(origin))
        directory = os.path.dirname(origin)
        known = self._directories.get(directory)
        if known is None:
            known = self._directories[directory] = self._outside_installed(Path(directory))
        return known

    def _outside_installed(self, path: Path) -> bool:
        from .coverage import within_resolved

        self.resolutions += 1
        if path.is_absolute() and within_resolved(str(path), self.installed):
            return False  # a folder of the installation, reached through no link
        resolved = path.resolve()
        return not any(resolved.is_relative_to(d) for d in self.installed)


@dataclass
class BytecodeGuard:
    """What one pytest process changed to run no stale bytecode, and the modules imported before
    it did."""

    finder: ProjectFinder
    directory: Path | None = None
    """The private bytecode cache, with a pytest whose rewriter trusts size and mtime."""
    previous: str | None = None
    rewritten: RewriteCache | None = None
    """pytest's rewritten test modules kept between runs (a pytest whose rewriter checks the
    source's hash), installed by :meth:`secure`."""
    root: Path | None = None
    """The repository whose bytecode :meth:`secure` purged."""
    prefix: str | None = None
    """The ``PYTHONPYCACHEPREFIX`` whose tree was purged with it."""
    early: dict[str, str] = field(default_factory=dict)
    """Module name → source file of every module imported before the guard."""
    stale: list[str] | None = None
    """Repository files imported before the guard whose bytecode differs from their source
    (None: not compared yet)."""
    unpurged: bool = False
    """The run's plan file was not there when the guard was installed, so nothing was purged
    (a run that finds it later stops: :meth:`.session.PlangraphSession.start`)."""

    @classmethod
    def install(cls, rootdir: Path) -> BytecodeGuard:
        """Guard this interpreter's imports from now on (*rootdir*: pytest's, which tells the
        project from the installed environment that may hold it)."""
        from .coverage import excluded_dirs

        finder = ProjectFinder(excluded_dirs(rootdir))
        guard = cls(finder=finder, previous=sys.pycache_prefix)
        guard.early = {
            name: source
            for name, module in list(sys.modules.items())
            if (source := _source_of(module)) is not None
        }
        # after pytest's assertion rewriter, which must still see the test modules first
        rewriters = [
            i for i, f in enumerate(sys.meta_path) if type(f).__name__ == "AssertionRewritingHook"
        ]
        sys.meta_path.insert(rewriters[-1] + 1 if rewriters else 0, finder)
        if not _rewriter_checks_hashes():
            guard.directory = Path(tempfile.mkdtemp(prefix="plangraph-pyc-"))
            sys.pycache_prefix = str(guard.directory)
        return guard

    def secure(self, config: pytest.Config, root: Path, *, purge: bool) -> None:
        """Compare the modules imported before the guard with their bytecode (while that is
        still on disk), then, with *purge* (the process that starts the run, not each xdist
        worker), delete the repository's cached bytecode under *root* — before any conftest or
        test module is read, so that pytest's own cache of rewritten modules holds nothing
        planted and the processes the tests start compile what they import from source."""
        from .coverage import RepositoryFiles

        installed = self.finder.installed
        self.check(config, RepositoryFiles(root, installed))
        cache = None
        if self.directory is None:  # the rewriter checks hashes: its files may be kept
            from .rewritten import RewriteCache, counts

            # with keys configured, none is: an earlier run's code could have vouched for any
            cache = RewriteCache.open(root, self.finder.in_project) if counts() else None
        if purge:
            from .purge import purge_bytecode

            keep = cache.authentic if cache else None
            purge_bytecode(root, installed, keep=keep, prefix=self.previous)
            if cache is not None:
                cache.save()  # before any xdist worker starts, so none reads a false entry
        self.root, self.prefix = root, os.environ.get("PYTHONPYCACHEPREFIX") or None
        if cache is not None and cache.install():
            self.rewritten = self.finder.vouching = cache

    def purge_new_prefix(self) -> None:
        """Purge the repository's tree under a ``PYTHONPYCACHEPREFIX`` set since :meth:`secure`
        (a ``conftest.py`` pointing the processes the tests start at a bytecode tree outside
        the repository, which could hold stale bytecode of its modules)."""
        value = os.environ.get("PYTHONPYCACHEPREFIX") or None
        if self.root is None or value == self.prefix:
            return
        self.prefix = value
        if value:
            from .purge import purge_prefix

            purge_prefix(self.root, self.finder.installed, value)

    def remove(self) -> None:
        """Take the finder off ``sys.meta_path``; put back the previous cache setting and delete
        the private directory, when there is one."""
        if self.finder in sys.meta_path:
            sys.meta_path.remove(self.finder)
        if self.rewritten is not None:
            self.rewritten.uninstall()
            self.rewritten = self.finder.vouching = None
        if self.directory is not None:
            if sys.pycache_prefix == str(self.directory):
                sys.pycache_prefix = self.previous
            shutil.rmtree(self.directory, ignore_errors=True)

    def check(self, config: pytest.Config, project_file: Callable[[str], str | None]) -> list[str]:
        """Repository files (as *project_file* names them, None outside the repository) whose
        module was imported before the guard and whose bytecode is not their source's
        (compared once, before :func:`~.purge.purge_bytecode` removes that bytecode), and the
        repository modules loaded so far from bytecode without source."""
        if self.stale is None:
            self.stale = [
                relative
                for name, source in self.early.items()
                if (module := sys.modules.get(name)) is not None
                and (relative := project_file(source))
                and not _matches_source(module, config)
            ]
        found = set(self.stale)
        for module in list(sys.modules.values()):
            filename = getattr(module, "__file__", None)
            if not isinstance(filename, str) or not filename.endswith((".pyc", ".pyo")):
                continue
            if relative := project_file(filename):  # bytecode without its source
                found.add(relative)
        return sorted(found)


def _rewriter_checks_hashes() -> bool:
    """True when pytest's assertion rewriter takes its cached bytecode only for the source's
    hash (recent pytest), not for its size and mtime: its reader's code names
    ``source_hash`` (read from the compiled function, which costs nothing), else its source
    text does."""
    from _pytest.assertion import rewrite

    code = getattr(getattr(rewrite, "_read_pyc", None), "__code__", None)
    if code is not None and "source_hash" in (*code.co_names, *code.co_varnames):
        return True  # a name the code uses is in its source text as well
    return _source_names_hash(rewrite)


def _source_names_hash(rewrite: types.ModuleType) -> bool:
    """Whether the source text of the rewriter's reader of cached bytecode names
    ``source_hash`` (False when it cannot be read)."""
    import inspect

    try:
        return "source_hash" in inspect.getsource(rewrite._read_pyc)
    except (OSError, TypeError, AttributeError):
        return False


def _source_of(module: types.ModuleType) -> str | None:
    filename = getattr(module, "__file__", None)
    return filename if isinstance(filename, str) and filename.endswith(".py") else None


def _matches_source(module: types.ModuleType, config: pytest.Config) -> bool:
    """True when *module* was compiled from its current source: no cached bytecode would have
    been read for it, or the bytecode that would be equals a fresh compilation."""
    source = Path(module.__file__ or "")
    loader = getattr(module, "__loader__", None)
    try:
        if type(loader).__name__ == "AssertionRewritingHook":
            return _rewritten_matches(source, config)
        cached = getattr(module, "__cached__", None)
        if not isinstance(cached, str):
            return True  # nothing was cached for it: it was compiled from source
        code = _valid_pyc(source, Path(cached))
        if code is None:
            return True
        fresh = compile(source.read_bytes(), str(source), "exec", dont_inherit=True)
        return bool(code == fresh)
    except (OSError, ValueError, SyntaxError, EOFError, TypeError, AttributeError):
        return False  # what cannot be checked is not vouched for


def _valid_pyc(source: Path, pyc: Path) -> types.CodeType | None:
    """The code in *pyc* when the import system would use it for *source* (its header matches
    the source's size and mtime, or it is hash-based), else None."""
    try:
        data = pyc.read_bytes()
    except OSError:
        return None
    if len(data) < 16 or data[:4] != importlib.util.MAGIC_NUMBER:
        return None
    flags = int.from_bytes(data[4:8], "little")
    if flags == 0:
        stat = source.stat()
        mtime = int.from_bytes(data[8:12], "little")
        size = int.from_bytes(data[12:16], "little")
        if (mtime, size) != (int(stat.st_mtime) & 0xFFFFFFFF, stat.st_size & 0xFFFFFFFF):
            return None
    code = marshal.loads(data[16:])
    return code if isinstance(code, types.CodeType) else None


def _rewritten_matches(source: Path, config: pytest.Config) -> bool:
    """The same check for a module pytest's assertion rewriter loaded (a ``-p`` plugin)."""
    from _pytest.assertion import rewrite

    pyc = rewrite.get_cache_dir(source) / (source.name[:-3] + rewrite.PYC_TAIL)
    cached = rewrite._read_pyc(source, pyc)
    if cached is None:
        return True
    fresh = rewrite._rewrite_test(source, config)[1]
    return bool(cached == fresh)


def run_facts(
    config: pytest.Config, stale: Iterable[str] = (), unbound: Iterable[str] = ()
) -> dict[str, Any]:
    """This process's interpreter facts, in plain values: the optimize level, the assertion
    mode, the repository files that ran stale bytecode and those that are links out of the
    repository (:func:`links_out`)."""
    return {
        "optimize": sys.flags.optimize,
        "assert_mode": str(config.getoption("assertmode", "rewrite")),
        "stale_bytecode": sorted(stale),
        "unbound_code": sorted(unbound),
    }


def links_out(config: pytest.Config, root: Path) -> list[str]:
    """Paths under *root* (as loaded, before links are followed) of the modules loaded so far
    and of the configuration file, whose real file lies outside *root*: a ``conftest.py``, a
    test module, a plugin or a source module that is a symbolic link out of the repository is
    loaded, but evidence can only bind files inside it."""
    sources = [getattr(module, "__file__", None) for module in list(sys.modules.values())]
    sources.append(str(config.inipath) if config.inipath is not None else None)
    top = str(root)
    prefix = top if top.endswith(os.sep) else top + os.sep
    found = set()
    for source in sources:  # plain text tests: hundreds of modules, each looked at once
        if not isinstance(source, str) or not os.path.isabs(source):
            continue
        path = os.path.normpath(source)
        if not _under(path, top, prefix) or _under(os.path.realpath(path), top, prefix):
            continue
        found.add(path[len(prefix) :].replace(os.sep, "/") if path != top else ".")
    return sorted(found)


def _under(path: str, top: str, prefix: str) -> bool:
    """True when the normalized *path* is the directory *top* or lies below it."""
    return path == top or path.startswith(prefix)


def join_facts(facts: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The facts of a whole run from those of its processes: the highest optimize level,
    ``plain`` when any process did not rewrite asserts, every stale file."""
    joined: dict[str, Any] = {"optimize": 0, "assert_mode": "rewrite"}
    stale: set[str] = set()
    unbound: set[str] = set()
    for one in facts:
        joined["optimize"] = max(joined["optimize"], int(one.get("optimize", 0)))
        if one.get("assert_mode") != "rewrite":
            joined["assert_mode"] = str(one.get("assert_mode"))
        stale.update(one.get("stale_bytecode", ()))
        unbound.update(one.get("unbound_code", ()))
    joined["stale_bytecode"] = sorted(stale)
    joined["unbound_code"] = sorted(unbound)
    return joined


def no_pass_reasons(facts: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Why a run with these *facts* may record no pass: (reason code, message) pairs."""
    reasons = []
    if facts.get("optimize", 0) > 0:
        reasons.append(
            (
                ASSERTS_DISABLED,
                f"the interpreter strips assert statements (optimize level "
                f"{facts['optimize']}: python -O or PYTHONOPTIMIZE); run without it to "
                "record passes",
            )
        )
    if stale := facts.get("stale_bytecode"):
        reasons.append(
            (
                STALE_BYTECODE,
                f"bytecode that does not match its source ran for {', '.join(stale)}; "
                "delete its __pycache__ files and run again",
            )
        )
    if unbound := facts.get("unbound_code"):
        reasons.append(
            (
                UNBOUND_CODE,
                f"{', '.join(unbound)} link(s) to files outside the repository, which evidence "
                "cannot bind; replace each link with the file itself",
            )
        )
    return reasons
