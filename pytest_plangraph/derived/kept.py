"""``plangraph status`` answered from what it printed last time, when nothing it depends on
changed: no plan model loaded, no lint, no log read, no derivation.

A status that derives keeps, per output format, what it printed (stdout, the warnings on
stderr, the ``--check`` failures) with everything that answer depends on
(``status-<format>.json`` in the plan cache folder, tagged with this user's key as every cache
file is: :func:`~pytest_plangraph.store.derived.write_tagged`):

* where it ran: the repository root, plan and store paths, the working directory;
* the package's code (:func:`~pytest_plangraph.codehash.code_fingerprint`), the package
  folders of the installation (a plug-in installed or removed) and the ``PLANGRAPH_*``
  settings;
* the sha256 of the plan file's bytes (hashed again when its stat changed, as a watched file);
* the store's head (seq and chain hash), and the event the chain was checked from: the one
  the log's checkpoint covers (its file watched too), or the first;
* the files (:mod:`.watch`): every path the snapshot hashed, the directories above them and
  those expanding an output walks.

The next ``status`` in the same format hashes the plan file, opens the store with the checks
of opening it and reads its head (:mod:`~pytest_plangraph.store.glance`), checks the chain
after the checkpoint as a derivation would (nothing to check when the checkpoint covers the
head; then the ``log`` table must hold no row past it), and looks at the watched files. When
all of it is as kept, the kept answer is printed. Anything else — a changed file, a new event,
a damaged or missing cache file, a problem of any kind on the way — is a miss, and the command
runs as without the cache, which says what the problem is; so deleting the cache changes no
answer.

Nothing is kept with keys configured (no cache of this user's stands for a read: see
:func:`~pytest_plangraph.store.trust.local_caches_count`), for a read-only store, for a plugin
format, or for a plan with a verifier type whose settings check may read any file (``command``
and plugin types: lint's answer for them is not bound to the watched files).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

from ..canonical import json_loads
from ..codehash import code_fingerprint
from ..errors import PlangraphError
from ..hashes import sha256_hex
from ..plan.cache import cache_dir_of, read_regular
from ..store.derived import read_tagged, write_tagged
from ..values import dataclass
from ..vcs.environment import resolve_paths
from . import retitled as titles
from . import settings
from .look import (
    MISSED,
    Look,
    checkpoint_of,
    kept_lint,
    keys_configured,
    known_files,
    settle,
    still_files,
    where_of,
)
from .look import answer_path as _path
from .look import installed as _installed
from .retitled import FORMAT as RETITLED
from .retitled import head_of
from .watch import Seen, changed_files, file_entry, file_holds, make_watch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..judge.logfold import LogFold
    from ..repository import Repository

__all__ = [
    "FORMATS",
    "KEPT_FORMAT",
    "STATUS_PERSON",
    "KeptStatus",
    "checkpoint_of",
    "keep_answer",
    "keep_status",
    "kept_answer",
    "kept_lint",
    "kept_status",
    "kept_status_of_meaning",
    "keys_configured",
    "known_files",
    "where_of",
]

FORMATS = ("text", "json", "markdown")
"""The formats whose output is kept (a plugin format's is not)."""

WATCHED_TYPES = frozenset({"test", "artifact", "approval", "schema"})
"""The verifier types whose lint findings depend on the plan and the watched files alone."""

STATUS_PERSON = b"plangraph-status"
"""The tag of the kept answer files (:func:`~pytest_plangraph.store.derived.write_tagged`)."""
KEPT_FORMAT = 2
"""The kept answer's record format: changes when the record (:func:`_record`) does."""

LINT_READS = frozenset({"schema"})
"""The verifier types among :data:`WATCHED_TYPES` whose settings check reads a file's bytes
(a schema file, the files it refers to); the others' look at paths alone (a path escaping
the root through a symlink), as lint's own rules do."""


@dataclass(frozen=True)
class KeptStatus:
    """What a status printed: *printed* on stdout (None: nothing), *warnings* on stderr
    first, and the ``--check`` *failures* (node, why)."""

    printed: str | None
    warnings: list[str]
    failures: list[tuple[str, str]]


def kept_status(
    root: Path | None, plan: Path | None, store: Path | None, fmt: str
) -> KeptStatus | None:
    """The kept answer of ``status --format fmt`` for the repository the options name, when
    nothing it depends on changed; None otherwise (see the module docstring)."""
    MISSED.clear()
    if fmt not in FORMATS or keys_configured():
        return None
    if root is not None and not Path(root).is_dir():
        return None
    return _status_of(kept_answer(root, plan, store, f"status-{fmt}"))


def _status_of(answer: Any) -> KeptStatus | None:
    """The :class:`KeptStatus` of a kept *answer*; None when it is not one."""
    if not isinstance(answer, list) or len(answer) != 3:
        return None
    printed, warnings, failures = answer
    if printed is not None and not isinstance(printed, str):
        return None
    if not isinstance(warnings, list) or not all(isinstance(w, str) for w in warnings):
        return None
    if not isinstance(failures, list) or not all(
        isinstance(f, list) and len(f) == 2 and all(isinstance(v, str) for v in f) for f in failures
    ):
        return None
    return KeptStatus(printed, warnings, [(n, why) for n, why in failures])


def kept_answer(
    root: Path | None, plan: Path | None, store: Path | None, name: str, extra: Any = None
) -> Any:
    """The answer kept as *name* (``status-text``, ``impact-json``...) for the repository the
    options name, when nothing it depends on changed and *extra* (what else the command's
    answer depends on, as JSON values: git's side of ``impact``) is what it was kept with;
    None otherwise (see the module docstring)."""
    MISSED.clear()
    if keys_configured():
        return None
    if root is not None and not Path(root).is_dir():
        return None
    try:
        return _answer(root, plan, store, name, extra)
    except (PlangraphError, OSError, ValueError, KeyError, TypeError, IndexError):
        return None  # the command runs in full and says what is wrong


def keep_status(
    repo: Repository,
    fold: LogFold,
    fmt: str,
    printed: str | None,
    warnings: Sequence[str],
    failures: Sequence[tuple[str, str]],
) -> None:
    """Keep what ``status --format fmt`` printed for *repo* and the log *fold*, when it may
    stand for the next one (see the module docstring); nothing happens otherwise."""
    if fmt in FORMATS:
        answer = [printed, list(warnings), [list(f) for f in failures]]
        keep_answer(repo, fold, f"status-{fmt}", answer)


def keep_answer(
    repo: Repository,
    fold: LogFold,
    name: str,
    answer: Any,
    extra: Any = None,
    *,
    storeless: bool = False,
) -> None:
    """Keep *answer* (JSON values) as *name* for *repo* and the log *fold* with *extra*, when
    it may stand for the next call (see the module docstring); nothing happens otherwise.
    With *storeless*, a repository without a store keeps it too (the next call finds no
    store either), *fold* then being the empty one its snapshot was taken of."""
    path = _path(repo.store_path, name)
    look = MISSED.pop() if MISSED and MISSED[0].path == str(path) else None
    if look is not None and look.plan != repo.loaded.source:
        look = None  # the plan read is not the one the look was kept for
    try:
        record = _record(repo, fold, storeless=storeless, look=look)
    except (OSError, ValueError, KeyError, TypeError):  # the checkpoint replaced meanwhile
        return
    if record is None:
        return
    record["extra"] = extra
    record["answer"] = answer
    if name == RETITLED:  # what a title edit is told by (:mod:`.retitled`)
        record["title"] = head_of(repo.loaded.cache_key, repo.store_path)
    write_tagged(path, record, STATUS_PERSON)


def kept_status_of_meaning(
    root: Path | None, plan: Path | None, store: Path | None, fmt: str, repo: Repository
) -> KeptStatus | None:
    """:func:`kept_status` once the plan was read (*repo*), for a plan file whose bytes changed
    but not its meaning (comments, layout: its parsed data has the content key the answer was
    kept with, :func:`~pytest_plangraph.plan.file.content_key`) while nothing else the answer
    depends on did; the answer found is kept under the new bytes (so the next status finds it
    before reading the plan). Only an answer that printed no warning stands for other bytes:
    a warning names lines of the plan file."""
    meaning, source = repo.loaded.content_key, repo.loaded.source
    if fmt not in FORMATS or meaning is None or source is None or keys_configured():
        return None
    if root is not None and not Path(root).is_dir():
        return None
    name = f"status-{fmt}"
    path = str(_path(repo.store_path, name))
    if MISSED and MISSED[0].path == path and MISSED[0].plan == source:
        # the look found this plan file's bytes as kept, and watched files changed: no
        # answer kept for its meaning can stand either (nothing is read twice)
        return None
    try:
        record = _held(root, plan, store, name, None, meaning)
    except (PlangraphError, OSError, ValueError, KeyError, TypeError, IndexError):
        return None
    kept = None if record is None else _status_of(record["answer"])
    if kept is None or kept.warnings or repo.plan_path is None:
        return None
    entry = file_entry(str(repo.plan_path.parent), repo.plan_path.name, source, repo.plan_read_ns)
    if entry is not None and record is not None:
        record["plan"] = entry[1:]
        if name == RETITLED:
            record["title"] = head_of(repo.loaded.cache_key, repo.store_path)
        write_tagged(_path(repo.store_path, name), record, STATUS_PERSON)
    return kept


def _answer(root: Path | None, plan: Path | None, store: Path | None, name: str, extra: Any) -> Any:
    record = _held(root, plan, store, name, extra)
    return None if record is None else record["answer"]


def _held(
    root: Path | None,
    plan: Path | None,
    store: Path | None,
    name: str,
    extra: Any,
    meaning: str | None = None,
) -> dict[str, Any] | None:
    """The record kept as *name* when nothing it depends on changed, else None; with
    *meaning* (the content key of the plan just read), a plan file whose bytes changed holds
    when the record was kept for a plan of that content key."""
    started = time.time_ns()  # before anything is hashed: what a file is trusted from
    root_path, plan_path, store_path = resolve_paths(root, plan, store)
    record = read_tagged(_path(store_path, name), STATUS_PERSON)
    if not isinstance(record, dict) or record.get("format") != KEPT_FORMAT:
        return None
    if record["where"] != where_of(root_path, plan_path, store_path):
        return None
    if record["extra"] != extra:
        return None
    if record["code"] != code_fingerprint() or record["settings"] != settings():
        return None
    if record["installed"] != _installed():
        return None
    same_meaning = meaning is not None and record.get("meaning") == meaning
    retitled = None  # the plan file changed: it may be one node's title (:mod:`.retitled`)
    if not same_meaning and not file_holds(str(plan_path.parent), plan_path.name, *record["plan"]):
        if meaning is not None or name != RETITLED or extra is not None or "title" not in record:
            return None
        retitled = titles.retitled_plan(plan_path, store_path, record)
        if retitled is None:
            return None
    if record["head"] is None:  # kept without a store: there is none now either
        if os.path.lexists(store_path) or checkpoint_of(store_path).exists():
            return None
        if changed_files(str(root_path), record["watch"]) != []:
            return None
        return _kept(store_path, name, record, retitled)
    from ..store.glance import glance  # here: a kept answer without a store opens none

    checked_seq, checked_hash = record["checked"]
    head = glance(store_path, checked_seq)
    if head is None or [head.seq, head.hash] != record["head"]:
        return None
    checkpoint = record["checkpoint"]
    if checkpoint is not None and not file_holds(*checkpoint):
        return None
    if checkpoint is None and checkpoint_of(store_path).exists():
        return None
    seen: list[Seen] = []
    settled = None if same_meaning or retitled is not None else plan_path
    if changed_files(str(root_path), record["watch"], seen) != []:
        # only files changed: what the derivation and the next watch may take (not when the
        # plan file changed too: it is read, and its look is another)
        if seen and retitled is None:
            settle(record, str(root_path), settled, None, started)  # kept by the next answer
            lint = None
            if not record["lint_reads"] and still_files(str(root_path), seen[0]):
                lint = record["answer"]  # lint reads no bytes: its answer is as kept
            path = str(_path(store_path, name))
            plan_sha, installed = str(record["plan"][1]), record["installed"]
            MISSED[:] = [Look(path, plan_sha, seen[0], lint, installed, record)]
        return None
    if checked_seq == head.seq:
        if head.log_after:  # a log row past the last event: the full read says what it is
            return None
    elif not _tail_holds(store_path, checked_seq, checked_hash):
        return None
    now_trusted = settle(record, str(root_path), settled, seen[0] if seen else None, started)
    if now_trusted and retitled is None and meaning is None:  # else written with its plan
        write_tagged(_path(store_path, name), record, STATUS_PERSON)
    return _kept(store_path, name, record, retitled)


def _kept(store_path: Path, name: str, record: dict[str, Any], retitled: Any) -> dict[str, Any]:
    """*record*, found to hold: kept again under the plan file's new bytes when it holds for
    a title edit (*retitled*, :func:`~.retitled.retitled_plan`)."""
    if retitled is not None:
        new = titles.kept_retitled(store_path, record, retitled)
        write_tagged(_path(store_path, name), new, STATUS_PERSON)
    return record


def _record(
    repo: Repository, fold: LogFold, *, storeless: bool = False, look: Look | None = None
) -> dict[str, Any] | None:
    """What the answer for *repo* and *fold* depends on, or None when it may not be kept."""
    from ..checkpoint import checkpoint_path
    from ..store.trust import local_caches_count

    taken = repo.taken
    if keys_configured() or not local_caches_count():
        return None
    if taken is None or taken[0] is not fold or repo.plan_path is None:
        return None
    if not repo.has_store():  # kept only when asked, and only while nothing is there
        if not storeless or fold.count or os.path.lexists(repo.store_path):
            return None
        return _storeless_record(repo, fold)
    if repo.loaded.source is None or not repo.read_just_now(fold):
        return None
    # with *look*, the plan file and the installation are those of a record kept before,
    # which was kept only for watched types: no need to load the plug-ins to tell again
    if repo.store.readonly or (look is None and not _watched_types(repo)):
        return None
    head = repo.store.head()
    if head.seq != fold.last_seq:
        return None
    started = time.time_ns()
    checked: list[Any] = [0, ""]
    path = checkpoint_path(repo.store_path)
    checkpoint = None
    if fold.origin:  # read from the checkpoint: the chain is checked from its event on
        raw = read_regular(path)
        kept = json_loads(raw.partition(b"\n")[0])
        sha = sha256_hex(raw)
        if kept.get("sha256") != fold.origin:
            return None
        checked = [int(kept["seq"]), str(kept["hash"])]
        checkpoint = file_entry(str(path.parent), path.name, sha, started)
        if checkpoint is None:
            return None
        checkpoint = [str(path.parent), *checkpoint]
    elif path.exists():  # written just now: the next status reads it, and keeps then
        return None
    return _keyed_record(repo, [head.seq, head.hash], checked, checkpoint, look)


def _storeless_record(repo: Repository, fold: LogFold) -> dict[str, Any] | None:
    """:func:`_record` of a repository without a store (and without a checkpoint)."""
    assert repo.taken is not None and repo.plan_path is not None
    if repo.loaded.source is None or not _watched_types(repo):
        return None
    if checkpoint_of(repo.store_path).exists() or not cache_dir_of(repo.store_path).is_dir():
        return None  # a preview in a repository that keeps nothing writes nothing
    return _keyed_record(repo, None, None, None)


def _keyed_record(
    repo: Repository,
    head: list[Any] | None,
    checked: list[Any] | None,
    checkpoint: Any,
    look: Look | None = None,
) -> dict[str, Any] | None:
    """The record's key with the plan file's entry and the watch of the bound files (None
    when either cannot be kept), around the store's *head*, *checked* and *checkpoint*. With
    *look* (the plan read is the one it was kept for: the same outputs), the watch takes what
    it found as kept (:func:`~.watch.make_watch`) and the record the installation it saw."""
    assert repo.taken is not None and repo.plan_path is not None
    assert repo.loaded.source is not None
    plan = file_entry(
        str(repo.plan_path.parent), repo.plan_path.name, repo.loaded.source, repo.plan_read_ns
    )
    if plan is None:
        return None
    _, snapshot, snapshot_started = repo.taken
    outputs = [p for node in repo.graph.nodes.values() for p in node.outputs]
    seen = None if look is None else look.seen
    watch = make_watch(
        str(repo.root), snapshot.files, outputs, snapshot_started, seen, snapshot.listed
    )
    if watch is None:
        return None
    return {
        "format": KEPT_FORMAT,
        "where": where_of(repo.root, repo.plan_path, repo.store_path),
        "code": code_fingerprint(),
        "settings": settings(),
        "installed": _installed() if look is None else look.installed,
        "plan": plan[1:],
        "meaning": repo.loaded.content_key,
        "head": head,
        "checked": checked,
        "checkpoint": checkpoint,
        "watch": watch,
        "lint_reads": _lint_reads(repo),
    }


def _lint_reads(repo: Repository) -> bool:
    """Whether lint's check of *repo*'s plan reads the bytes of a file (:data:`LINT_READS`)."""
    return any(
        c.verifier.type in LINT_READS for node in repo.graph.nodes.values() for c in node.acceptance
    )


def _watched_types(repo: Repository) -> bool:
    registry = repo.registry
    used = {c.verifier.type for node in repo.graph.nodes.values() for c in node.acceptance}
    return used <= WATCHED_TYPES and not any(registry.clashing(name) for name in used)


def _tail_holds(store_path: Path, after: int, chain: str) -> bool:
    """Whether the events after event *after* (whose chain hash is *chain*) match their
    content ids, the chain and their ``log`` rows, as reading the log checks them."""
    from ..store.sqlite import Store

    with Store.open(store_path, create=False) as store:
        return store.check_tail(after, chain, log=True) is None
