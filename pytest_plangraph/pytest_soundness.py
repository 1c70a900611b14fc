"""Whether the tests of a ``pytest --plangraph`` run could fail: asserts and bytecode.

A test that cannot fail is no evidence. Two things make a passing run prove nothing, whatever the
tests say:

* **Stripped asserts.** Under ``python -O``, ``-OO`` or ``PYTHONOPTIMIZE`` the interpreter drops
  every ``assert`` statement it compiles. pytest's assertion rewriting turns the asserts of test
  modules and conftest files into ordinary ``if`` statements, so those still fail, but the asserts
  of every other module (the code under test, helpers) are gone; with ``--assert=plain`` the tests'
  own asserts are gone too. So a run whose interpreter optimizes records no pass, in either mode
  (reason :data:`ASSERTS_DISABLED`).
* **Stale bytecode.** Python trusts a ``__pycache__`` file whose recorded source size and mtime
  match, so a source file changed to the same size with its old mtime set back runs its old
  bytecode. :class:`BytecodeGuard` points ``sys.pycache_prefix`` at a private, empty directory
  before any conftest, test module or source module of the run is imported, so every module the
  run imports from then on is compiled from its source as it is now (pytest's assertion rewriter
  honours the prefix too). Modules of the repository imported before that (a ``-p`` plugin,
  ``PYTEST_PLUGINS``, an installed entry point) are compared with a compilation of their current
  source; one that differs makes the run record no pass (reason :data:`STALE_BYTECODE`).

Each process checks itself: under pytest-xdist each worker is its own interpreter (it may be
started with other flags or another environment), so a worker puts its :func:`run_facts` on
every report it sends and the controller joins them with :func:`join_facts`.
"""

from __future__ import annotations

import importlib.util
import marshal
import shutil
import sys
import tempfile
import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ASSERTS_DISABLED = "ASSERTS_DISABLED"
"""No pass: the interpreter strips ``assert`` statements (``-O``, ``PYTHONOPTIMIZE``)."""
STALE_BYTECODE = "STALE_BYTECODE"
"""No pass: a repository module ran bytecode that does not match its source."""

FACTS_ATTRIBUTE = "plangraph_python"
"""The report attribute that carries a worker's :func:`run_facts` to the controller."""


@dataclass
class BytecodeGuard:
    """The private bytecode cache of one pytest process and the modules imported before it."""

    directory: Path
    previous: str | None
    early: dict[str, str] = field(default_factory=dict)
    """Module name → source file of every module imported before the cache was switched."""
    stale: list[str] | None = None
    """Repository files whose loaded bytecode differs from their source (None: not checked)."""

    @classmethod
    def install(cls) -> BytecodeGuard:
        """Switch this interpreter's bytecode cache to a new private directory."""
        # The plugin's own dependencies are imported before the switch, from the installation's
        # own cache: compiling them from source on every run would cost time and protect
        # nothing, since evidence never binds the installed environment.
        import pytest_plangraph.pytest_session  # noqa: F401

        directory = Path(tempfile.mkdtemp(prefix="plangraph-pyc-"))
        guard = cls(directory=directory, previous=sys.pycache_prefix)
        guard.early = {
            name: source
            for name, module in list(sys.modules.items())
            if (source := _source_of(module)) is not None
        }
        sys.pycache_prefix = str(directory)
        return guard

    def remove(self) -> None:
        """Put the previous cache setting back and delete the private directory."""
        if sys.pycache_prefix == str(self.directory):
            sys.pycache_prefix = self.previous
        shutil.rmtree(self.directory, ignore_errors=True)

    def check(self, config: pytest.Config, project_file: Any) -> list[str]:
        """Repository files (as *project_file* names them, None outside the repository) whose
        module was imported before the switch and whose bytecode is not their source's, and
        any repository module loaded from bytecode without source; computed once."""
        if self.stale is None:
            found: set[str] = set()
            for name, source in self.early.items():
                module = sys.modules.get(name)
                relative = project_file(source)
                if module is not None and relative and not _matches_source(module, config):
                    found.add(relative)
            for module in list(sys.modules.values()):
                filename = getattr(module, "__file__", None)
                sourceless = isinstance(filename, str) and filename.endswith((".pyc", ".pyo"))
                if sourceless and (relative := project_file(filename)):
                    found.add(relative)
            self.stale = sorted(found)
        return self.stale


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


def run_facts(config: pytest.Config, stale: Iterable[str] = ()) -> dict[str, Any]:
    """This process's interpreter facts, in plain values: the optimize level, the assertion
    mode and the repository files that ran stale bytecode."""
    return {
        "optimize": sys.flags.optimize,
        "assert_mode": str(config.getoption("assertmode", "rewrite")),
        "stale_bytecode": sorted(stale),
    }


def join_facts(facts: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The facts of a whole run from those of its processes: the highest optimize level,
    ``plain`` when any process did not rewrite asserts, every stale file."""
    joined: dict[str, Any] = {"optimize": 0, "assert_mode": "rewrite", "stale_bytecode": []}
    stale: set[str] = set()
    for one in facts:
        joined["optimize"] = max(joined["optimize"], int(one.get("optimize", 0)))
        if one.get("assert_mode") != "rewrite":
            joined["assert_mode"] = str(one.get("assert_mode"))
        stale.update(one.get("stale_bytecode", ()))
    joined["stale_bytecode"] = sorted(stale)
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
    return reasons
