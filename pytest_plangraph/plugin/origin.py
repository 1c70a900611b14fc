"""Skips and xfails raised by the code under test are failures, whatever the policy.

``skips: allow`` and ``xfail: allow`` are for the suite's own decisions: a ``skipif`` marker,
``pytest.importorskip`` in a test, a fixture of a ``conftest.py`` that skips off its platform,
an ``xfail`` marker on a known bug. When the code under test itself raises the skip or the
xfail (``raise unittest.SkipTest(...)``, ``pytest.skip()`` or ``pytest.xfail()`` called from a
module of the project), the test checked nothing, and allowing it would let broken code turn
its own failing tests into allowed skips. So the innermost frame that raised it (pytest's hidden
frames left out) is looked at: in a repository file that is not the test's own file, a
``conftest.py``, a file named like a test module (``python_files``) or a file in the test's
folder or below it (a helper of the tests), the report is marked with :data:`ORIGIN_ATTRIBUTE`
(a plain string, so an xdist worker hands it over), and the test counts as failed.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import sysconfig
from pathlib import Path
from typing import Any

import pytest

ORIGIN_ATTRIBUTE = "plangraph_raised_by"
"""The report attribute naming ``file:line`` of the code under test that skipped or xfailed."""


@functools.cache
def _installed() -> tuple[str, ...]:
    """The interpreter's install folders, resolved: found when a skip is first raised inside
    the repository (most runs raise none)."""
    keys = ("stdlib", "platstdlib", "purelib", "platlib")
    return tuple(os.path.realpath(p) + os.sep for p in {sysconfig.get_paths()[k] for k in keys})


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
        self.root = os.path.realpath(root) + os.sep
        self.test_files = [str(p) for p in config.getini("python_files")]
        self.origins = origins

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> None:
        """Look at the exception before pytest turns a ``unittest.SkipTest`` into its own."""
        if call.excinfo is not None and (origin := self.raised_by(item, call.excinfo)):
            self.origins[(item.nodeid, call.when)] = origin

    def raised_by(self, item: pytest.Item, excinfo: pytest.ExceptionInfo[Any] | None) -> str | None:
        """``file:line`` (repository-relative) of the code under test that raised the skip or
        xfail in *excinfo*, or None when the tests, a conftest, pytest or nothing raised it."""
        if excinfo is None or not excinfo.errisinstance(_skip_exceptions()):
            return None
        try:
            entries = list(excinfo.traceback.filter(excinfo))
        except Exception:
            return None
        if not entries:
            return None
        innermost = os.path.realpath(str(entries[-1].path))
        if not innermost.startswith(self.root) or innermost.startswith(_installed()):
            return None
        name = os.path.basename(innermost)
        own = os.path.realpath(str(item.path))
        if (
            innermost == own
            or name == "conftest.py"
            or any(fnmatch.fnmatch(name, pattern) for pattern in self.test_files)
            or innermost.startswith(os.path.dirname(own) + os.sep)
        ):
            return None
        rel = innermost[len(self.root) :].replace(os.sep, "/")
        return f"{rel}:{entries[-1].lineno + 1}"


def mark(origins: dict[tuple[str, str], str], report: pytest.TestReport) -> None:
    """Put on *report* the origin :class:`SkipOrigin` kept for its test and phase, when the
    report is a skip (an xfail included)."""
    origin = origins.pop((report.nodeid, report.when), None)
    if origin is not None and report.outcome == "skipped":
        setattr(report, ORIGIN_ATTRIBUTE, origin)


def _skip_exceptions() -> tuple[type[BaseException], ...]:
    """pytest's skip and xfail exceptions and ``unittest.SkipTest``."""
    import unittest

    return (pytest.skip.Exception, pytest.xfail.Exception, unittest.SkipTest)
