"""The one rule that voids a verdict whose subjects changed while it was reached, shared by
``plangraph verify`` and ``pytest --plangraph``: a table of before/after hashes."""

from __future__ import annotations

import pytest

from pytest_plangraph.judge.records import CHANGED_DURING_RUN, changed_during_run, voided


@pytest.mark.parametrize(
    ("before", "after", "produced", "moved"),
    [
        ({"a": "1"}, {"a": "1"}, (), []),
        ({"a": "1"}, {"a": "2"}, (), ["a"]),
        ({"a": "1"}, {"a": None}, (), ["a"]),  # deleted during the run
        ({"a": None}, {"a": "1"}, (), ["a"]),  # made during the run, not declared
        ({"a": None}, {"a": "1"}, ("a",), []),  # made during the run, declared
        ({"b": "1", "a": "1"}, {"b": "2", "a": "2"}, (), ["a", "b"]),  # sorted
        ({}, {"new": "1"}, (), []),  # hashed only at the end: nothing to compare
        ({"gone": "1"}, {}, (), []),  # not hashed at the end
    ],
)
def test_changed_during_run(
    before: dict[str, str | None],
    after: dict[str, str | None],
    produced: tuple[str, ...],
    moved: list[str],
) -> None:
    assert changed_during_run(before, after, produced=produced) == moved


def test_voided_names_the_moved_subjects_and_keeps_the_details() -> None:
    details = {"message": "ok", "changed_during_run": "stale"}
    outcome, reason, voided_details = voided(details, ("b", "a"))
    assert (outcome, reason) == ("error", CHANGED_DURING_RUN)
    assert voided_details == {"message": "ok", "changed_during_run": ["b", "a"]}
    assert details["changed_during_run"] == "stale"  # the caller's details are not changed
