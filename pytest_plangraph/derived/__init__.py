"""Status from a kept derived state (DESIGN §4): an unchanged repository is answered without
deriving again.

What :func:`derived_state` skips is the derivation alone. The log is still read and checked
(its chain from the checkpoint, the signatures under the keys configured) and the files are
still looked at (their stat, hashed again when it changed, with the racy-clean rule of the hash
cache): the key of the kept state (:func:`~pytest_plangraph.judge.statejson.derivation_key`) is
made of what those reads found — the store's head, the checkpoint the log was read from and the
trust policy, the plan as read (its canonical digest and node order: a comment added to the
file keeps the state), the package code, the ``PLANGRAPH_*`` settings and every file's sha256 — so a
store edited by hand still stops the command, and a changed file still changes the answer.

A cache never decides: on a miss (no file, another key, a tag that is not this user's, damaged
data) the state is derived as without it, and kept for the next call. It is used only with a
store (reading makes no ``.plangraph`` folder), without keys configured (with keys, no cache of
this user's stands for a read: :func:`~pytest_plangraph.store.trust.local_caches_count`), and
for a fold read from the store just now and not added to since.

``plangraph status`` goes one step further (:mod:`.kept`): what it printed is kept with what
the answer depends on, and an unchanged repository is answered from it without loading the
plan's models, linting or reading the log (:mod:`.watch` looks at the files).

This package's ``__init__`` imports nothing heavy: the command line imports :mod:`.kept`
through it, and the models, the derivation and the store come with the first miss.
"""

from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..judge.inputs import Snapshot
    from ..judge.logfold import LogFold
    from ..judge.states import PlanState
    from ..repository import Repository

__all__ = ["derived_state"]


def derived_state(repo: Repository, fold: LogFold, snapshot: Snapshot) -> PlanState:
    """``derive(repo.graph, fold, snapshot)``, taken from the kept state when its key matches
    (see the module docstring)."""
    from ..judge.derive import derive
    from ..judge.statejson import state_from_json, state_to_json
    from ..plan.cache import cache_dir_of
    from ..store.derived import keep_derived, read_derived

    key = _key(repo, fold, snapshot)
    if key is None:
        return derive(repo.graph, fold, snapshot)
    folder = cache_dir_of(repo.store_path)
    kept = read_derived(folder, key)
    if kept is not None:
        try:
            return state_from_json(kept)
        except (KeyError, TypeError, ValueError):  # not a state: derived again below
            pass
    state = derive(repo.graph, fold, snapshot)
    keep_derived(folder, key, state_to_json(state))
    return state


def _key(repo: Repository, fold: LogFold, snapshot: Snapshot) -> str | None:
    """The key of the state of *fold* and *snapshot*, or None when no kept state may stand
    for deriving it."""
    from ..codehash import code_fingerprint
    from ..judge.statejson import derivation_key
    from ..store.trust import local_caches_count, policy_from_env

    source = repo.loaded.source
    if source is None or not repo.read_just_now(fold) or not local_caches_count():
        return None
    if not repo.has_store() or repo.store.readonly:
        return None
    head = repo.store.head()
    if head.seq != fold.last_seq:  # appended since the fold was read: its head is not known
        return None
    # the plan as read, not its bytes: a comment added keeps the kept state (the node order
    # is the plan's too: it orders the state, and the digest sorts the nodes)
    plan = hashlib.sha256(
        "\n".join([repo.plan.digest, *repo.plan.topological_order]).encode("utf-8")
    ).hexdigest()
    return derivation_key(
        code=code_fingerprint(),
        plan=plan,
        head=(head.seq, head.hash, fold.origin),
        policy=policy_from_env().fingerprint(),
        settings=settings(),
        snapshot=snapshot,
    )


def settings() -> dict[str, str]:
    """The ``PLANGRAPH_*`` settings of this process a kept state is kept under (keys left
    out: with keys configured nothing is kept)."""
    return {
        name: value
        for name, value in os.environ.items()
        if name.startswith("PLANGRAPH_") and "KEY" not in name
    }
