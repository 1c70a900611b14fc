"""``plangraph status`` after files changed, answered without opening the plan.

When the kept answer (:mod:`.kept`) missed only because watched files changed — the plan
file's bytes, the store's head, the checkpoint, the code, the settings and the installation
all as kept; the log is read and checked as a full status reads it — the state kept with it
(``derived.json``, :mod:`pytest_plangraph.derived`) says what every node read. Only the
nodes that read a changed file and their dependents can have another state; they are judged
again by the derivation itself (:func:`~pytest_plangraph.judge.rederive.rederive`, bounded)
over a part of the plan: those nodes and the nodes around them (their strong prerequisites),
built from the plan's kept validated form, not the whole plan. Every other node keeps its
kept row, and the answer's rows are made from the kept rows as they are. ``derived.json`` is
not written again: what this judged since it was written (the changed files' sha256, the
judged nodes' rows, input digests and reads) is kept beside it
(:data:`~pytest_plangraph.store.derived.FREE`, tied to it by its tag) and read over it here
alone; without it the kept state is for other files than the kept answer's, and this falls
back. Of the kept state only the rows of the part's nodes are decoded (its rows are kept one
a line: :func:`~pytest_plangraph.store.derived.write_state`), of the log's checkpoint only
the part's entries are built, and the kept table is printed with the judged nodes' lines
anew (:func:`~pytest_plangraph.cli.tables.patched`) when no column's width changes.

The files of the ``tests:`` globs and what each recording run could collect (the
``…/::collect{…}`` subjects of :mod:`pytest_plangraph.vcs.testglob`, no files) are taken as
kept: the look found every folder the kept answer's watch walked to list them unchanged (by
inode, mode, mtime and ctime), or it would have found no files changed at all; a file added
to or removed from one of them is a miss of the folder, answered in full. They are listed
again all the same (folders listed, no file read) and a listing other than the kept one
falls back: the kept state then was not made for the kept answer's listing. The files a
walk reads for the references they quote (:mod:`pytest_plangraph.vcs.quotes`) are watched
files: one changed is among the look's changed files, and the walk's values found again then
differ from the kept ones when its quotes changed (a full status answers).

Anything this cannot judge without the whole plan is today's path (None), and so is a change
that reaches more than half of the plan's nodes (judging them is a derivation of the whole
plan, whose criterion digests the plan's kept facts hold): another format
than ``text``, a plan with a parent, a conflicts edge, a repeated node id, an output that
expands (every output a plain path), a changed path that is no longer
a regular file or missing, a kept state for other files, plan, checkpoint, head, code,
policy or settings, a claim without a verdict, a node around the part without an input
digest on record, a node around it kept completed that is not now. A cache never decides:
deleting ``derived.json`` or the kept answer makes this a full derivation, with the same
answer (``tests/test_plan_free_miss.py``).
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..canonical import json_loads
from ..errors import PlangraphError
from ..memory import collector_paused
from ..plan.cache import cache_dir_of, read_regular, validated_text
from ..plan.paths import COLLECT
from ..store.derived import (
    FREE,
    FREE_PERSON,
    NAME,
    StateRows,
    read_state_rows,
    read_tagged,
    write_tagged,
)
from ..values import dataclass
from . import base_key, settings
from .kept import STATUS_PERSON
from .look import MISSED, Look
from .watch import file_entry, sha256_of

if TYPE_CHECKING:
    from ..judge.logfold import LogFold
    from ..judge.states import NodeState

__all__ = ["FreeMiss", "plan_free_miss"]


@dataclass(frozen=True)
class FreeMiss:
    """A status judged again without the plan: every node in the plan's *order*, its row
    (:func:`~pytest_plangraph.judge.statejson.node_to_json`) given by :meth:`row` (*fresh*:
    those judged again now or since the kept state was written, else the kept rows, each
    decoded when asked for), the place in *order* of each node judged again (*at*), their new
    *states*, the *fold* of the log, the nodes judged again that the plan cancels
    (*settled*), the kept ``--check`` failures of the other nodes (*failures*, by node), the
    kept *warnings* and the rows of the nodes judged again before (*was*); :meth:`keep`
    keeps the answer made of them."""

    order: list[str]
    kept_rows: StateRows
    fresh: dict[str, list[Any]]
    at: dict[str, int]
    states: dict[str, NodeState]
    fold: LogFold
    settled: frozenset[str]
    failures: dict[str, str]
    warnings: list[str]
    look: Look
    free: dict[str, Any]
    entries: dict[str, list[Any]]
    was: dict[str, list[Any]]

    def row(self, index: int) -> list[Any]:
        """The row of the node at *index* of :attr:`order` (ValueError: a kept row that is
        not that node's)."""
        fresh = self.fresh.get(self.order[index])
        return fresh if fresh is not None else self.kept_rows.row(index)

    def keep(self, printed: str | None, failures: Sequence[tuple[str, str]]) -> None:
        """Keep the new state (the overlay :data:`~pytest_plangraph.store.derived.FREE`:
        the kept derived state is not written again) and the answer *printed* with its
        *failures* for the next status (nothing is kept when a changed file cannot be
        watched)."""
        record = dict(self.look.record)
        path = Path(record["where"][2])
        write_tagged(cache_dir_of(path) / FREE, self.free, FREE_PERSON)
        watch = dict(record["watch"])
        files = [self.entries.get(e[0], e) for e in watch["files"]]
        if any(not e for e in files):
            return
        watch["files"] = files
        record["watch"] = watch
        record["answer"] = [printed, self.warnings, [list(f) for f in failures]]
        write_tagged(Path(self.look.path), record, STATUS_PERSON)


def plan_free_miss(fmt: str) -> FreeMiss | None:
    """The status after the files the last look at the kept answer found changed, judged
    without opening the plan; None when it cannot be (see the module docstring)."""
    if fmt != "text" or not MISSED:
        return None
    look = MISSED[0]
    try:
        with collector_paused():  # large JSON values read, no cycles made
            return _miss(look)
    except (PlangraphError, OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None  # the command runs in full and says what is wrong


def _miss(look: Look) -> FreeMiss | None:
    from ..store.trust import local_caches_count

    record = look.record
    answer = look.answer
    # the log is read as a full status reads it (its chain checked from the checkpoint on)
    if not isinstance(record, dict) or not isinstance(answer, list):
        return None
    if record["head"] is None or not local_caches_count():
        return None
    root, plan_path, store_path = (Path(p) for p in record["where"][:3])
    cache = cache_dir_of(store_path)
    found = read_state_rows(cache / NAME)  # its rows decoded when asked for
    if found is None:
        return None
    kept, free = _overlaid(found[0], found[1], read_tagged(cache / FREE, FREE_PERSON))
    observed = kept["observed"]
    if observed.get("source") != look.plan or observed["head"] != record["head"]:
        return None
    if observed["outputs"]:
        return None
    files: dict[str, str | None] = {str(p): s for p, s in observed["files"]}
    watched = {e[0]: e[2] for e in record["watch"]["files"]}
    # what a run could collect is no file: it is as kept while the folders walked to list it
    # are (the look found every walked folder unchanged, or it would have found no files)
    if {p: s for p, s in files.items() if COLLECT not in p} != watched:
        return None
    # the changed files, hashed (each a regular file or missing, as every file was)
    started = time.time_ns()
    changed: set[str] = set()
    now = dict(files)
    for rel in look.seen.fresh:
        full = os.path.join(root, rel)
        try:
            info = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):
            sha = None
        else:
            if not stat.S_ISREG(info.st_mode):
                return None
            sha = sha256_of(full)
            if sha is None:
                return None
        if sha != files[rel]:
            changed.add(rel)
        now[rel] = sha
    entries = {rel: file_entry(str(root), rel, now[rel], started) or [] for rel in look.seen.fresh}
    globs = {str(g): tuple(str(p) for p in found) for g, found in observed.get("globs", {}).items()}
    if not _listed_as_kept(str(root), files, globs):
        return None
    return _judge(
        look,
        kept,
        root,
        plan_path,
        store_path,
        (files, now, globs),
        changed,
        (entries, free, found[2]),
    )


def _overlaid(tag: str, kept: Any, free: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The kept derived state *kept* (whose tag is *tag*) with what the misses judged
    without the plan since it was written changed (*free*, the overlay
    :data:`~pytest_plangraph.store.derived.FREE`: the files hashed, the rows, input digests
    and reads of the nodes judged again), and that overlay (an empty one for *tag* when
    *free* is none, another state's, or names what *kept* does not hold)."""
    empty: dict[str, Any] = {"base": tag, "files": {}, "rows": {}, "digests": {}, "reads": {}}
    if not isinstance(free, dict) or free.get("base") != tag:
        return kept, empty
    observed, data = kept["observed"], kept["data"]
    files, rows, digests, reads = (free[k] for k in ("files", "rows", "digests", "reads"))
    known = {p for p, _ in observed["files"]}
    if not (known.issuperset(files) and observed["reads"].keys() >= reads.keys() >= rows.keys()):
        return kept, empty  # not made for this state: as if there were none
    observed["files"] = [[p, files.get(p, s)] for p, s in observed["files"]]
    observed["reads"].update(reads)
    data["input_digests"].update(digests)  # the rows: read over the kept ones (FreeMiss.row)
    return kept, free


def _judge(
    look: Look,
    kept: dict[str, Any],
    root: Path,
    plan_path: Path,
    store_path: Path,
    snapshots: tuple[dict[str, str | None], dict[str, str | None], dict[str, tuple[str, ...]]],
    changed: set[str],
    kept_free: tuple[dict[str, list[Any]], dict[str, Any], StateRows],
) -> FreeMiss | None:
    from ..checkpoint import checkpoint_path, read_fold
    from ..codehash import code_fingerprint
    from ..judge.inputs import Snapshot
    from ..judge.rederive import Observed, rederive
    from ..judge.statejson import kept_state, node_to_json
    from ..plan.graph import Graph, reach
    from ..plan.model import Plan
    from ..store.sqlite import Store
    from ..store.trust import policy_from_env

    observed, data = kept["observed"], kept["data"]
    entries, free, kept_rows = kept_free
    was, now, globs = snapshots
    reads: dict[str, list[str]] = observed["reads"]
    seed = {n for n, paths in reads.items() if not changed.isdisjoint(paths)}
    if observed.get("plain") is not True:
        return None  # a parent or a conflicts edge: their links are the whole plan's
    dependents: dict[str, list[str]] = observed["dependents"]
    judged = set(reach(seed, lambda n: dependents.get(n, ())))
    part = judged | {p for p, below in dependents.items() if not judged.isdisjoint(below)}
    if len(part) * 2 > len(reads):  # most of the plan: a derivation from the whole plan
        return None
    with Store.open(store_path, create=False) as store:
        head = store.head()
        if [head.seq, head.hash] != observed["head"]:
            return None
        fold = read_fold(store, checkpoint_path(store_path), part)  # the part's alone
    if fold.last_seq != head.seq or fold.unjudged:
        return None
    base = base_key(
        code_fingerprint(),
        observed["structure"],
        fold.origin,
        policy_from_env().fingerprint(),
        settings(),
    )
    if observed["base"] != base:
        return None
    plan = _validated(plan_path, store_path, look.plan)
    if plan is None:
        return None
    sub = dict(plan)
    sub["nodes"] = [n for n in plan["nodes"] if n["id"] in part]
    sub["edges"] = [e for e in plan.get("edges", ()) if e["from"] in part and e["to"] in part]
    graph = Graph.of(Plan.from_data(sub))
    position = {n: i for i, n in enumerate(kept_rows.order)}

    def row_of(node: str) -> list[Any]:
        fresh = free["rows"].get(node)
        return fresh if fresh is not None else kept_rows.row(position[node])

    state = kept_state({"nodes": [row_of(n) for n in part], "input_digests": data["input_digests"]})
    digests = state.input_digests
    sub_kept = Observed(
        type(state)(state.nodes, {n: digests[n] for n in part}),
        {n: reads[n] for n in part},
        0,
    )
    # the globs' files are as kept: the folders listed to find them were found unchanged
    snapshot_was = Snapshot(was, {}, globs)
    snapshot = Snapshot(now, {}, globs)
    new = rederive(graph, fold, snapshot, sub_kept, snapshot_was, (), bounded=True)
    if new is None or new.again is None:
        return None
    again = new.again
    states = {n: new.state.nodes[n] for n in again}
    anew = {n: node_to_json(states[n]) for n in again}
    before = {n: row_of(n) for n in again}
    # the kept derived state stays as written (for the files it was derived for); what
    # changed since is the overlay's, which only this path reads
    moved = {n: d for n, d in new.state.input_digests.items() if digests.get(n) != d}
    free = {
        "base": free["base"],
        "files": {**free["files"], **{p: now[p] for p in changed}},
        "rows": {**free["rows"], **anew},
        "digests": {**free["digests"], **moved},
        "reads": {**free["reads"], **{n: new.reads[n] for n in again}},
    }
    settled = frozenset(n for n in again if graph.nodes[n].cancelled)
    kept_failures = {str(n): str(why) for n, why in look.answer[2] if n not in again}
    warnings = [str(w) for w in look.answer[1]]
    return FreeMiss(
        kept_rows.order,
        kept_rows,
        free["rows"],
        {n: position[n] for n in again},
        states,
        fold,
        settled,
        kept_failures,
        warnings,
        look,
        free,
        entries,
        before,
    )


def _listed_as_kept(
    root: str, files: Mapping[str, str | None], globs: Mapping[str, tuple[str, ...]]
) -> bool:
    """Whether what each run could collect (the collect subjects of *files*) and the files
    of each ``tests:`` glob are, listed again now, what the kept state holds. The look found
    the folders listed for them unchanged, so they are; listed again all the same, so that
    a kept state made for another listing than the kept answer's watch never stands (the few
    test folders are listed; the test files are read for the references they quote, which a
    changed one may have gained or lost)."""
    from ..vcs.quotes import collected_now
    from ..vcs.testglob import glob_files

    keys = {p for p in files if COLLECT in p}
    if keys and collected_now(root, set(keys), set()) != {k: files[k] for k in keys}:
        return False
    return all(glob_files(root, glob).files == found for glob, found in globs.items())


def _validated(plan_path: Path, store_path: Path, source: str) -> Mapping[str, Any] | None:
    """The kept validated form of the plan file whose bytes' sha256 is *source* (as read
    when it was kept), or None."""
    import hashlib

    from ..plan.file import cache_key

    raw = read_regular(plan_path)
    if hashlib.sha256(raw).hexdigest() != source:
        return None
    data = json_loads(validated_text(cache_dir_of(store_path), cache_key(raw, plan_path.suffix)))
    return data if isinstance(data, dict) else None
