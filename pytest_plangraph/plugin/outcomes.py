"""What a test criterion's evidence says about its tests: which did not pass and why, which
skips and xfails its policy allowed, and which tests it left out (``exclude:``, the project's
own deselection).

:func:`report_reason` reads one pytest report (duck-typed, so it also reads a report an xdist
worker sent); :func:`outcome_details` is pure: plain values in, the ``details`` entries of the
evidence out, with a ``message`` in plain words that names the tests.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..plan.policy import TestPolicy
from .origin import ORIGIN_ATTRIBUTE
from .verdicts import TOO_FEW_PASSED, Verdict, allowed_outcomes

SHOWN_TESTS = 3
"""How many tests a message names before "and N more"."""
_REASON_LENGTH = 200
SUBTEST_ATTRIBUTE = "plangraph_subtest"
"""The report attribute an xdist worker puts the subtest's label in (:func:`subtest_label`)."""


def report_reason(report: Any) -> str | None:
    """Why one test report is no pass, in one short line: the skip reason, the xfail reason,
    or the first line of the failure, after the subtest it came from (``subtest (i=2): …``,
    pytest's ``subtests`` and ``unittest``'s ``subTest``); None for a passing phase."""
    reason = _reason(report)
    if reason is None or not (subtest := _subtest(report)):
        return reason
    return _short(f"subtest {subtest}: {reason}")


def _subtest(report: Any) -> str:
    """The subtest a report is of, as pytest shows it (``[msg] (i=2)``); "" for a test's own
    report. A report an xdist worker sent carries it as :data:`SUBTEST_ATTRIBUTE`
    (:func:`subtest_label` there): pytest's controller would show the values repr'd twice."""
    label = getattr(report, SUBTEST_ATTRIBUTE, None)
    return label if isinstance(label, str) else subtest_label(report)


def subtest_label(report: Any) -> str:
    """The subtest *report* is of, read from its ``context`` (pytest's ``SubtestReport``); ""
    for a test's own report."""
    context = getattr(report, "context", None)
    msg, kwargs = getattr(context, "msg", None), getattr(context, "kwargs", None)
    if context is None or not hasattr(context, "msg") or not isinstance(kwargs, Mapping):
        return ""
    parts = [f"[{_text(msg)}]"] if msg is not None else []
    if kwargs:
        parts.append("(" + ", ".join(f"{_text(k)}={_text(v)}" for k, v in kwargs.items()) + ")")
    return " ".join(parts) or "(<subtest>)"


def _text(value: object) -> str:
    """*value* as pytest shows it in a subtest's label, on one line (a line break in a ``msg``
    would cut the reason, which keeps its first line, before the failure): a value whose
    ``__str__`` raises is named by its type."""
    try:
        text = value if isinstance(value, str) else str(value)
    except Exception:  # a test's object: whatever it raises, the label stays
        text = f"<{type(value).__name__} object: str() raised>"
    if text.isprintable():
        return text
    return " ".join(text.split()) if text.strip() else repr(text)


def _reason(report: Any) -> str | None:
    if raised_by := getattr(report, ORIGIN_ATTRIBUTE, None):
        kind = "xfailed" if hasattr(report, "wasxfail") else "skipped"
        why = getattr(report, "wasxfail", None) or _skip_text(report)
        return _short(f"{kind} by the code under test ({raised_by}), never allowed: {why}")
    wasxfail = getattr(report, "wasxfail", None)
    if wasxfail is not None:
        why = str(wasxfail) or "expected to fail"
        return _short(f"xpassed: {why}" if report.outcome == "passed" else why)
    if report.outcome == "passed":
        return None
    if report.outcome == "skipped" and (text := _skip_text(report)):
        return _short(text)
    longrepr = getattr(report, "longrepr", None)
    crash = getattr(longrepr, "reprcrash", None)
    message = getattr(crash, "message", None)
    text = str(message) if message else str(longrepr or "")
    return _short((not message and doctest_reason(text)) or text or report.outcome)


_DOCTEST_END = re.compile(r"^\S.*:(\d+|None): (?:DocTestFailure|UnexpectedException)$")
"""The last line of each failure in a failed doctest's report (``path:346: DocTestFailure``),
never indented (an expected or printed output that holds such a line is)."""
_DOCTEST_SOURCE = re.compile(r"(?:\d{3,}|\?\?\?) ")
"""A docstring line pytest shows before the failure, after its number (``346 ``)."""


def doctest_reason(text: str) -> str | None:
    """The first failure of a failed doctest's report in one line: the line, the example and
    what it printed (``doctest line 346: >>> a10n('abbreviation') Expected: 'a10n' Got:
    'a11n'``) or the exception it raised; None for any other report. Read from the text, the
    form an xdist worker sends it in too (the first line of it is the docstring's)."""
    lines = text.splitlines()
    end = next((i for i, line in enumerate(lines) if _DOCTEST_END.search(line)), None)
    if end is None:
        return None
    block = lines[:end]
    shown = [i for i, line in enumerate(block) if _DOCTEST_SOURCE.match(line)]
    example = block[shown[-1]].split(" ", 1)[1].strip() if shown else ""
    rest = [line.strip() for line in block[shown[-1] + 1 if shown else 0 :] if line.strip()]
    raised = [line for line in rest if line.startswith("UNEXPECTED EXCEPTION: ")]
    found = _DOCTEST_END.search(lines[end])
    where = f"doctest line {found.group(1)}" if found else "doctest"
    return " ".join(part for part in (f"{where}:", example, *(raised[:1] or rest)) if part)


def phase_outcome(report: Any) -> str:
    """The outcome a report counts with: ``failed`` for a skip or xfail the code under test
    raised (:mod:`.origin`), else pytest's."""
    return "failed" if getattr(report, ORIGIN_ATTRIBUTE, None) else str(report.outcome)


def _skip_text(report: Any) -> str:
    """The reason of a skip report ("" when it has none in pytest's form)."""
    longrepr = getattr(report, "longrepr", None)
    if isinstance(longrepr, (tuple, list)) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ") or "skipped"
    return ""


def _short(text: str) -> str:
    """The first line of *text* that holds more than blanks, cut to the reason's length; a
    character that is no valid Unicode (a lone surrogate, which no record's UTF-8 text can
    carry) written as its escape, ``\\ud800``."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    if not line.isascii():
        line = line.encode("utf-8", "backslashreplace").decode("utf-8")
    return line if len(line) <= _REASON_LENGTH else line[: _REASON_LENGTH - 1] + "…"


def outcome_details(
    outcomes: Mapping[str, str | None],
    reasons: Mapping[str, str],
    policy: TestPolicy,
    verdict: Verdict,
    left_out: Mapping[str, Sequence[str]],
) -> dict[str, Any]:
    """``allowed`` (skips and xfails the policy allowed), ``not_passed`` (the tests that keep
    the criterion from passing), ``excluded`` and ``outside_suite`` (from *left_out*), each
    only when it lists something, and a ``message`` when the verdict is no pass."""
    allowed_kinds = allowed_outcomes(policy)
    allowed = [_entry(t, o, reasons) for t, o in outcomes.items() if o in allowed_kinds]
    not_passed = [
        _entry(t, o, reasons)
        for t, o in outcomes.items()
        if o != "passed" and o not in allowed_kinds
    ]
    details: dict[str, Any] = {}
    if allowed:
        details["allowed"] = allowed
    if not_passed:
        details["not_passed"] = not_passed
    for name, tests in left_out.items():
        if tests:
            details[name] = list(tests)
    if verdict.outcome != "passed":
        message = _message(verdict, outcomes, not_passed, allowed, policy, left_out)
        if message:
            details["message"] = message
    return details


def _entry(test: str, outcome: str | None, reasons: Mapping[str, str]) -> dict[str, str]:
    entry = {"test": test, "outcome": outcome or "not run"}
    if reason := reasons.get(test):
        entry["reason"] = reason
    return entry


def _message(
    verdict: Verdict,
    outcomes: Mapping[str, str | None],
    not_passed: list[dict[str, str]],
    allowed: list[dict[str, str]],
    policy: TestPolicy,
    left_out: Mapping[str, Sequence[str]],
) -> str:
    if verdict.reason == TOO_FEW_PASSED:
        passed = sum(1 for o in outcomes.values() if o == "passed")
        text = f"{passed} test(s) ran and passed; min_passed is {max(policy.min_passed, 1)}"
        if allowed:
            text += f"; {len(allowed)} allowed skip(s)/xfail(s) never count as a pass"
        return text
    if not_passed:
        return f"{len(not_passed)} test(s) did not pass: {listing(not_passed)}"
    if verdict.reason == "TEST_NOT_FOUND" and any(left_out.values()):
        return (
            "no test is left to verify it: every test it matched is taken out by its "
            "exclude: patterns or left out of the suite by the project's configuration"
        )
    return ""


def listing(entries: Sequence[Mapping[str, str]], shown: int = SHOWN_TESTS) -> str:
    """``id (outcome: reason), …`` for the first *shown* entries, then ``and N more``."""
    parts = [
        f"{e['test']} ({e['outcome']}: {e['reason']})"
        if e.get("reason")
        else f"{e['test']} ({e['outcome']})"
        for e in entries[:shown]
    ]
    more = len(entries) - shown
    return ", ".join(parts) + (f" and {more} more" if more > 0 else "")
