"""The subject rule of DESIGN §4, for many records at once: every subject's current sha256
as recorded, a subject bound :data:`~pytest_plangraph.plan.evidence.ABSENT` still without a
file. :func:`subjects_hold` compares a record's subjects with the snapshot's files as two item
sets (one C call for a record that holds, as nearly all do) before it goes subject by subject;
:func:`missing_as_absent` is the snapshot seen with each missing file as ``ABSENT``, made once
for every record of a derivation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..plan.evidence import ABSENT


def subjects_hold(
    subjects: Mapping[str, str],
    files: Mapping[str, str | None],
    missing_as_absent: Callable[[], Mapping[str, str | None]] | None = None,
) -> bool:
    """Whether every subject's current sha256 is as recorded (a subject recorded
    :data:`~pytest_plangraph.plan.evidence.ABSENT`: still no file). Every subject among the
    items of *files*, or of *missing_as_absent()* (where a missing file is ``ABSENT``), holds:
    one comparison of the two item sets, in C, for a record that holds, as nearly all do."""
    if type(files) is dict and type(subjects) is dict:
        items = subjects.items()
        if items <= files.items():
            return True
        if missing_as_absent is not None and items <= missing_as_absent().items():
            return True
    return all(
        files.get(path) == sha or (sha == ABSENT and files.get(path) is None)
        for path, sha in subjects.items()
    )


def missing_as_absent(files: Mapping[str, str | None]) -> dict[str, str | None]:
    """*files* with each missing file (None) as :data:`~pytest_plangraph.plan.evidence.ABSENT`:
    a subject bound absent holds where its path is missing (:func:`subjects_hold`)."""
    missing = [path for path, sha in files.items() if sha is None]
    return {**files, **dict.fromkeys(missing, ABSENT)} if missing else dict(files)
