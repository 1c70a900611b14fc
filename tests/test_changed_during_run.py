"""The one rule that voids a verdict whose subjects changed while it was reached, shared by
``plangraph verify`` and ``pytest --plangraph``: a table of before/after hashes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


_PATHS = st.sampled_from(["a", "b", "c", "d", "e"])
_SHAS = st.none() | st.sampled_from(["1", "2", "absent"])


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(_PATHS, _SHAS | st.lists(st.just("x"), max_size=1)),
    st.dictionaries(_PATHS, _SHAS | st.lists(st.just("x"), max_size=1)),
    st.lists(_PATHS, max_size=2),
)
def test_the_pairs_taken_out_in_one_pass_leave_what_the_rule_names(
    before: dict[str, Any], after: dict[str, Any], produced: list[str]
) -> None:
    """The pairs both sides hold as they are, taken out in one pass (or, with a value that
    cannot be hashed, every pair looked at), leave the paths the rule names, path by path."""
    expected = sorted(
        path
        for path, digest in after.items()
        if path in before and path not in produced and before[path] != digest
    )
    assert changed_during_run(before, after, produced=produced) == expected


@pytest.mark.parametrize("unhashable", [False, True])
def test_a_few_files_against_a_large_start_are_looked_up_one_by_one(unhashable: bool) -> None:
    """A few paths after the run against many before it (a node's files against every file
    the run started with) are each looked up in the start: the paths the set difference
    names, a value that cannot be hashed among them or not."""
    before: dict[str, Any] = {f"f{n}.py": str(n) for n in range(300)}
    before["list"] = ["x"] if unhashable else "x"
    after: dict[str, Any] = {"f3.py": "3", "f7.py": "changed", "new.py": "1", "list": ["x"]}
    expected = ["f7.py"] if unhashable else ["f7.py", "list"]
    assert changed_during_run(before, after) == expected
    assert changed_during_run(before, after, produced=["f7.py"]) == expected[1:]
    # the other way round (the start the smaller side): the set difference, the same rule
    assert changed_during_run({k: before[k] for k in after if k in before}, after) == expected


def test_voided_names_the_moved_subjects_and_keeps_the_details() -> None:
    details = {"message": "ok", "changed_during_run": "stale"}
    outcome, reason, voided_details = voided(details, ("b", "a"))
    assert (outcome, reason) == ("error", CHANGED_DURING_RUN)
    assert voided_details == {"message": "ok", "changed_during_run": ["b", "a"]}
    assert details["changed_during_run"] == "stale"  # the caller's details are not changed
