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

__all__ = ["SendableReports", "escaped"]


def escaped(value: Any) -> Any:
    """*value* (a report's serialized form: dicts, lists, tuples, text and scalars) with each
    character that no UTF-8 text can carry written as its escape; *value* itself when it holds
    none."""
    if type(value) is str:
        if value.isascii():
            return value
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    if isinstance(value, dict):
        found = {key: escaped(item) for key, item in value.items()}
        same = all(found[key] is item for key, item in value.items())
        return value if same else found
    if isinstance(value, (list, tuple)):
        items = [escaped(item) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return items if isinstance(value, list) else tuple(items)
    return value


class SendableReports:
    """On an xdist worker: each report's serialized form made sendable (:func:`escaped`)."""

    @pytest.hookimpl(wrapper=True)
    def pytest_report_to_serializable(
        self, report: pytest.CollectReport | pytest.TestReport
    ) -> Generator[None, Any, Any]:
        """The serialized form of *report*, its text that is no valid Unicode escaped."""
        data = yield
        if data is None or (report.passed and not report.sections):
            return data  # a plain pass: nothing but the test's id and location
        return escaped(data)
