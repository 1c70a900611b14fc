"""The state after a ``pytest --plangraph`` run recorded its evidence (DESIGN §5).

Derived from the log as the session read it at its start and the events the run stored (not
read back), against the end-of-run snapshot and the new records' subjects: only what neither
holds is hashed again.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from ..judge.derive import derive
from ..judge.inputs import Snapshot, digests_since, needed_paths, subject_files
from ..judge.ledger import Context
from ..vcs.quotes import collected_now

if TYPE_CHECKING:
    from ..api import PlanGraph
    from ..judge.logfold import LogFold
    from ..judge.states import PlanState
    from ..plan.evidence import Evidence
    from ..plan.model import Event


def state_after(
    plangraph: PlanGraph,
    before_fold: LogFold,
    end: Snapshot,
    evidence: Iterable[Evidence],
    stored: Iterable[Event],
    digests: Mapping[str, str] | None = None,
) -> PlanState:
    """The state after recording: *before_fold* (the log read at the start) with the events
    this run *stored*, hashing only what *end* and the new records lack. The records' subjects
    are merged first (in C), so each distinct path is read once however many records bind it:
    the last record's binding of a path stands, a path bound absent is a missing file; the
    paths the rest needs are gathered from the other events only.
    *digests*, the input digests for *end* (the records' own), are kept for every node whose
    files the records' subjects did not change."""
    from ..store.trust import screen_stored

    stored = list(stored)
    fold = before_fold.copy()
    fold.add_stored(stored, screen_stored(plangraph.store, stored))
    files = dict(end.files)
    bound: dict[str, str] = {}
    merged: set[int] = set()
    for record in evidence:
        bound.update(record.subjects)
        merged.add(id(record.subjects))
    files.update(subject_files(bound))
    # a stored event whose subjects are a record's (the same object) has them all in files
    judged = [e for e in fold.judged() if id(e.payload.get("subjects")) not in merged]
    missing = needed_paths(plangraph.graph, judged, end.outputs) - files.keys()
    files.update(collected_now(os.fspath(plangraph.root), missing, set()))
    files.update(plangraph.workspace.hashes(missing))
    after = Snapshot(files=files, outputs=end.outputs, globs=end.globs, listed=end.listed)
    if digests is None:
        return derive(plangraph.graph, fold, after)
    graph = plangraph.graph
    inputs = digests_since(graph, end, after, digests)
    return derive(graph, fold, after, context=Context.of(graph, after, inputs))
