"""The gate's subject rule (DESIGN §4) answered by comparing item sets: every subject's
current sha256 as recorded, a subject bound absent still without a file. The fast form
(:func:`subjects_hold`, with the snapshot's files seen once with each missing file as
``ABSENT``) gives the rule's own answer on every generated record and snapshot."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pytest_plangraph.judge.subjects import missing_as_absent, subjects_hold
from pytest_plangraph.plan.evidence import ABSENT

PATHS = st.sampled_from(["a.py", "b.py", "t/test_a.py", "t/test_a/__init__.py", "x.so"])
RECORDED = st.sampled_from(["1" * 64, "2" * 64, ABSENT])
NOW = st.sampled_from(["1" * 64, "2" * 64, ABSENT, None])


def rule(subjects: dict[str, str], files: dict[str, str | None]) -> bool:
    """DESIGN §4, one subject at a time."""
    return all(
        files.get(path) == sha or (sha == ABSENT and files.get(path) is None)
        for path, sha in subjects.items()
    )


@given(st.dictionaries(PATHS, RECORDED), st.dictionaries(PATHS, NOW))
def test_the_fast_form_gives_the_rules_answer(
    subjects: dict[str, str], files: dict[str, str | None]
) -> None:
    expected = rule(subjects, files)
    assert subjects_hold(subjects, files) == expected
    assert subjects_hold(subjects, files, lambda: missing_as_absent(files)) == expected


def test_a_path_bound_absent_holds_while_missing_and_not_once_there() -> None:
    subjects = {"a.py": "1" * 64, "t/test_a/__init__.py": ABSENT}
    missing = {"a.py": "1" * 64, "t/test_a/__init__.py": None}
    view = missing_as_absent(missing)
    assert view == {"a.py": "1" * 64, "t/test_a/__init__.py": ABSENT}
    assert subjects_hold(subjects, missing, lambda: view)
    assert subjects_hold(subjects, {"a.py": "1" * 64})  # not in the snapshot: no file
    there = {"a.py": "1" * 64, "t/test_a/__init__.py": "2" * 64}
    assert not subjects_hold(subjects, there, lambda: missing_as_absent(there))
