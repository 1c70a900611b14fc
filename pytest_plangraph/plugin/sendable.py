"""Reports an xdist worker can send: text that is no valid Unicode escaped.

A worker sends each test report to the controller through execnet, which refuses text that
cannot be encoded as UTF-8: a lone surrogate (``"\\ud800"``) in a failure message, a skip or
xfail reason, captured output or a declared artifact stopped the worker with an internal
error before the report was sent, so the controller never heard the failure, its criterion
was left unverified (``NOT_RUN``) and the pass recorded before stood. :class:`SendableReports`
(registered on workers only) writes such a character as its escape (``\\ud800``) in the
report's serialized form, which is then what the controller hears and records.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from ..canonical import utf8_safe

__all__ = ["SendableReports"]


class SendableReports:
    """On an xdist worker: each report's serialized form made sendable
    (:func:`~pytest_plangraph.canonical.utf8_safe`)."""

    @pytest.hookimpl(wrapper=True)
    def pytest_report_to_serializable(
        self, report: pytest.CollectReport | pytest.TestReport
    ) -> Generator[None, Any, Any]:
        """The serialized form of *report*, its text that is no valid Unicode escaped."""
        data = yield
        if data is None or _plain_pass(report):
            return data  # nothing but the test's id, its location and ASCII properties
        return utf8_safe(data)


def _plain_pass(report: pytest.CollectReport | pytest.TestReport) -> bool:
    """True for a pass (not an xpass) with no captured output whose properties (the
    criteria it verifies, the artifacts it declared) are ASCII text: nothing to escape."""
    if not report.passed or report.sections or hasattr(report, "wasxfail"):
        return False
    properties = getattr(report, "user_properties", ())
    return all(type(part) is str and part.isascii() for pair in properties for part in pair)
