"""The ``format`` keywords the ``schema`` verifier checks: the same on every machine.

jsonschema checks some formats only when optional packages are installed (``date-time`` needs
one, ``uri`` another), so the same artifact could pass on one machine and fail on another. The
verifier checks a fixed set instead: :data:`CHECKED` (those jsonschema checks with the standard
library alone), ``date-time`` (RFC 3339, checked here) and ``time`` as the dialect defines it
(RFC 3339 full-time, checked here, since draft-07; ``hh:mm:ss`` in draft-03; none in
draft-04 and draft-06). Other formats are annotations only, as JSON Schema 2020-12 makes them
by default.
"""

from __future__ import annotations

import functools
import re
from datetime import datetime
from typing import Any

CHECKED = frozenset({"date", "email", "idn-email", "ipv4", "ipv6", "regex", "uuid"})
"""Formats taken from jsonschema's own checks, which need nothing beyond the standard library."""

_TIME = r"([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.[0-9]+)?(?:[Zz]|[+-]([0-9]{2}):([0-9]{2}))"
_DATE_TIME = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]" + _TIME)
_FULL_TIME = re.compile(_TIME)


def date_time(value: object) -> bool:
    """True when *value* is an RFC 3339 date-time (``2026-12-01T08:30:00Z``), or not text
    (``format`` applies to strings only)."""
    if not isinstance(value, str):
        return True
    found = _DATE_TIME.fullmatch(value)
    if found is None:
        return False
    year, month, day, *clock = found.groups()
    try:
        datetime(int(year), int(month), int(day))
    except ValueError:
        return False
    return _clock(*clock)


def time_of_day(value: object) -> bool:
    """True when *value* is an RFC 3339 full-time (``08:30:00Z``, ``23:59:60+01:00``), or not
    text."""
    if not isinstance(value, str):
        return True
    found = _FULL_TIME.fullmatch(value)
    return found is not None and _clock(*found.groups())


def _clock(
    hour: str, minute: str, second: str, off_hour: str | None, off_minute: str | None
) -> bool:
    if off_hour is not None and (int(off_hour) > 23 or int(str(off_minute)) > 59):
        return False
    # a leap second (:60) is a valid time of day in RFC 3339
    return int(hour) <= 23 and int(minute) <= 59 and int(second) <= 60


@functools.cache
def format_checker(validator_class: Any) -> Any:
    """A format checker for *validator_class*'s dialect with exactly the checks described
    above, whatever else is installed."""
    from jsonschema import FormatChecker

    own = validator_class.FORMAT_CHECKER.checkers
    checker = FormatChecker(formats=())
    checker.checkers = {name: own[name] for name in CHECKED if name in own}
    checker.checks("date-time")(date_time)
    dialect = str(validator_class.META_SCHEMA.get("$schema", ""))
    if "draft-03" in dialect:  # hh:mm:ss, checked by jsonschema with the standard library
        checker.checkers["time"] = own["time"]
    elif not any(old in dialect for old in ("draft-04", "draft-06")):  # which define no time
        checker.checks("time")(time_of_day)  # RFC 3339 full-time since draft-07
    return checker
