"""Skips and xfails raised by the code under test are failures, whatever the policy.

``skips: allow`` and ``xfail: allow`` are for the suite's own decisions: a ``skipif`` marker,
``pytest.importorskip`` in a test, a fixture of a ``conftest.py`` that skips off its platform,
an ``xfail`` marker on a known bug. When the code under test itself raises the skip or the
xfail (``raise unittest.SkipTest(...)``, ``pytest.skip()`` or ``pytest.xfail()`` called from a
module of the project), the test checked nothing, and allowing it would let broken code turn
its own failing tests into allowed skips. So the frames between the test and the raise are
looked at, whatever hides them from pytest's report (``__tracebackhide__`` in a module of the
project hides nothing here): a frame of a repository file that is not the test's own file, a
file in the test's folder or below it (a helper of the tests), a ``conftest.py`` pytest loaded
or a test module it collected, inside the first frame of the tests, marks the report with
:data:`ORIGIN_ATTRIBUTE` (a plain string, so an xdist worker hands it over), and the test
counts as failed; so does ``pytest.importorskip`` asked for a module of the project. A test
module skipped whole the same way while it is imported (the code under test it imports raises
``pytest.skip(allow_module_level=True)`` or ``unittest.SkipTest``) is marked so on its
collection report, and its tests count as not collected (a collection error). Frames
of the installation (the standard library's ``TestCase.skipTest`` called by the code under
test) and frames of no file of the repository (code compiled under another file's name) are
passed through to the code that called them.
The installation's folders are those the bytecode guard found before the first conftest was
read (:func:`~.coverage.excluded_dirs`), so code that changes ``sysconfig`` while the tests run
moves none of them.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from collections.abc import Generator
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

ORIGIN_ATTRIBUTE = "plangraph_raised_by"
"""The report attribute naming ``file:line`` of the code under test that skipped or xfailed."""


class SkipOrigin:
    """The hook that marks a skip or xfail raised by the code under test (module docstring).

    A plain hook, not a wrapper around pytest's report (which every phase of every test would
    pay for): it runs first among ``pytest_runtest_makereport``'s implementations (``tryfirst``,
    registered after pytest's own, whose ``unittest`` plug-in turns a ``unittest.SkipTest`` into
    pytest's skip), looks at the exception, and keeps the origin by node id and phase in
    *origins*; :func:`mark` puts it on the report made for it."""

    def __init__(
        self, root: Path, config: pytest.Config, origins: dict[tuple[str, str], str]
    ) -> None:
        from .coverage import excluded_dirs

        self.root = os.path.realpath(root) + os.sep
        self.test_files = [str(p) for p in config.getini("python_files")]
        self.origins = origins
        # found once a process by the bytecode guard, before any conftest or test ran
        self.installed = tuple(f"{d}{os.sep}" for d in excluded_dirs(Path(self.root)))
        self._loaded: set[str] | None = None
        """The real paths of the conftests pytest loaded and the test modules it collected."""
        self._real: dict[str, str | None] = {}
        """A frame's file name → its real path when that lies in the repository outside the
        installation, else None (frames of no file, of the installation or elsewhere)."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> None:
        """Look at the exception before pytest turns a ``unittest.SkipTest`` into its own.

        A ``unittest.TestCase`` test raises nothing to pytest: unittest catches the skip (in
        the test or in one of its ``subTest`` blocks) and hands pytest its reason alone, and
        pytest keeps what it makes of it on the item (``_excinfo``) until its own
        ``unittest`` hook, which runs after this one, puts it on the call. The first one kept
        is the one that hook takes."""
        excinfo = call.excinfo
        if excinfo is None:
            kept = getattr(item, "_excinfo", None)
            if isinstance(kept, list) and kept and isinstance(kept[0], pytest.ExceptionInfo):
                excinfo = kept[0]
        if excinfo is not None and (origin := self.raised_by(item, excinfo)):
            self.origins[(item.nodeid, call.when)] = origin

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(
        self, collector: pytest.Collector
    ) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
        """Mark a collector skipped whole by the code under test (its exception is on the
        report until pytest's ``collect_one_node`` takes it off)."""
        report = yield
        if report.skipped:
            call = report.__dict__.get("call")
            if origin := self.raised_by(collector, getattr(call, "excinfo", None)):
                setattr(report, ORIGIN_ATTRIBUTE, origin)
        return report

    def raised_by(
        self, item: pytest.Item | pytest.Collector, excinfo: pytest.ExceptionInfo[Any] | None
    ) -> str | None:
        """``file:line`` (repository-relative) of the code under test that raised the skip or
        xfail in *excinfo* in the test or collector *item*, or None when the tests, a
        conftest, pytest or nothing raised it."""
        if excinfo is None or not excinfo.errisinstance(_skip_exceptions()):
            return None
        blamed = self._blamed(item, excinfo.tb)
        context = excinfo.value.__context__
        if blamed is None and isinstance(context, _skip_exceptions()):
            # pytest's skip made of the reason unittest handed over (``TestCase.addSkip``),
            # raised while unittest handled the skip the test raised: that one's frames
            blamed = self._blamed(item, context.__traceback__)
        if blamed is None:
            return None
        rel = blamed[0][len(self.root) :].replace(os.sep, "/")
        return f"{rel}:{blamed[1]}"

    def _blamed(
        self, item: pytest.Item | pytest.Collector, tb: TracebackType | None
    ) -> tuple[str, int] | None:
        """The repository file and line of the code under test innermost in *tb* below the
        first frame of the tests, or None."""
        own = os.path.realpath(str(item.path))
        folder = os.path.dirname(own) + os.sep
        inside = False  # past the first frame of the tests: a fixture, the test, its helpers
        blamed: tuple[str, int] | None = None
        while tb is not None:
            frame = tb.tb_frame
            path = self._repository_file(frame.f_code.co_filename)
            if path is not None:
                tests = self._of_tests(item, path, own, folder)
                if tests and not inside:
                    inside, blamed = True, None  # what called the tests is not under test
                elif not tests:
                    blamed = (path, tb.tb_lineno)
            elif frame.f_code is _IMPORTORSKIP and inside:
                module = self._project_module(frame.f_locals.get("modname"))
                if module is not None and not self._of_tests(item, module, own, folder):
                    blamed = (module, 1)  # the code under test could not be imported
            tb = tb.tb_next
        return blamed

    def _of_tests(
        self, item: pytest.Item | pytest.Collector, path: str, own: str, folder: str
    ) -> bool:
        """Whether the repository file *path* is the tests': the test's own file, one in the
        test's folder, or a ``conftest.py`` or file named like a test module that pytest
        loaded as such (a module of the project merely named so is not)."""
        if path == own or path.startswith(folder):
            return True
        name = os.path.basename(path)
        if name != "conftest.py" and not any(
            fnmatch.fnmatch(name, pattern) for pattern in self.test_files
        ):
            return False
        if self._loaded is None:  # found at the first skip inside the repository
            modules = item.config.pluginmanager.get_plugins()
            files = {getattr(module, "__file__", None) for module in modules}
            files.update({str(test.path) for test in item.session.items})  # each file once
            self._loaded = {os.path.realpath(f) for f in files if isinstance(f, str)}
        return path in self._loaded

    def _project_module(self, name: object) -> str | None:
        """The repository file of the top-level module of *name* (the module
        ``pytest.importorskip`` was asked for), found as the import system would find it
        (nothing imported), when it is the project's; else None."""
        if not isinstance(name, str) or not name:
            return None
        from ..hooks.entrypoints import top_level_spec

        top = name.partition(".")[0]
        loaded = sys.modules.get(top)
        origin = getattr(loaded, "__file__", None)
        if not isinstance(origin, str):
            spec = top_level_spec(top)
            if spec is None:
                return None
            places = list(spec.submodule_search_locations or ())
            origin = spec.origin if spec.has_location else (places[0] if places else None)
        return self._repository_file(origin) if isinstance(origin, str) else None

    def _repository_file(self, filename: str) -> str | None:
        """The real path of a frame's *filename* when it lies in the repository and outside
        the installation, else None (a relative name or ``<string>`` names no file)."""
        if filename not in self._real:
            try:  # a code object's file name may be any text, a NUL byte included
                real = os.path.realpath(filename) if os.path.isabs(filename) else ""
            except (OSError, ValueError):
                real = ""
            inside = real.startswith(self.root) and not real.startswith(self.installed)
            self._real[filename] = real if inside and os.path.isfile(real) else None
        return self._real[filename]


def mark(origins: dict[tuple[str, str], str], report: pytest.TestReport) -> None:
    """Put on *report* the origin :class:`SkipOrigin` kept for its test and phase, when the
    report is a skip (an xfail included)."""
    origin = origins.pop((report.nodeid, report.when), None)
    if origin is not None and report.outcome == "skipped":
        setattr(report, ORIGIN_ATTRIBUTE, origin)


_IMPORTORSKIP = pytest.importorskip.__code__
"""The code of ``pytest.importorskip``: a skip it raises for a module of the project is the
code under test's (that module could not be imported, or is older than the test asks)."""


def _skip_exceptions() -> tuple[type[BaseException], ...]:
    """pytest's skip and xfail exceptions and ``unittest.SkipTest``."""
    import unittest

    return (pytest.skip.Exception, pytest.xfail.Exception, unittest.SkipTest)
