"""The ``format`` keywords the ``schema`` verifier checks: the same on every machine.

jsonschema checks some formats only when optional packages are installed (``date-time`` needs
one, ``uri`` another), so the same artifact could pass on one machine and fail on another. The
verifier checks a fixed set instead: :data:`CHECKED` (those jsonschema checks with the standard
library alone) and ``date-time`` (RFC 3339, checked here). Other formats are annotations only,
as JSON Schema 2020-12 makes them by default.
"""

from __future__ import annotations

import functools
import re
from datetime import datetime
from typing import Any

CHECKED = frozenset({"date", "time", "email", "idn-email", "ipv4", "ipv6", "regex", "uuid"})
"""Formats taken from jsonschema's own checks, which need nothing beyond the standard library."""

_DATE_TIME = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$"
)


def date_time(value: object) -> bool:
    """True when *value* is an RFC 3339 date-time (``2026-12-01T08:30:00Z``), or not text
    (``format`` applies to strings only)."""
    if not isinstance(value, str):
        return True
    found = _DATE_TIME.match(value)
    if found is None:
        return False
    year, month, day, hour, minute, second, off_hour, off_minute = found.groups()
    if off_hour is not None and (int(off_hour) > 23 or int(off_minute) > 59):
        return False
    try:  # a leap second (:60) is a valid time of day in RFC 3339
        datetime(int(year), int(month), int(day), int(hour), int(minute), min(int(second), 59))
    except ValueError:
        return False
    return int(second) <= 60


@functools.cache
def format_checker(validator_class: Any) -> Any:
    """A format checker for *validator_class*'s dialect with exactly the checks described
    above, whatever else is installed."""
    from jsonschema import FormatChecker

    own = validator_class.FORMAT_CHECKER.checkers
    checker = FormatChecker(formats=())
    checker.checkers = {name: own[name] for name in CHECKED if name in own}
    checker.checks("date-time")(date_time)
    return checker
