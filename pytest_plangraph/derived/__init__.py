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

A miss is not a full derivation when the kept state was derived under the same plan (as
read), code, trust policy, settings and checkpoint, for a head that is an event of this log's
chain: the kept state records what each node's judgement read, and
:func:`~pytest_plangraph.judge.rederive.rederive` derives again only the nodes whose reads
changed, that the events recorded since name, and what depends on them; the other nodes keep
their kept rows.

``plangraph status`` goes one step further (:mod:`.kept`): what it printed is kept with what
the answer depends on, and an unchanged repository is answered from it without loading the
plan's models, linting or reading the log (:mod:`.watch` looks at the files).

This package's ``__init__`` imports nothing heavy: the command line imports :mod:`.kept`
through it, and the models, the derivation and the store come with the first miss.
"""

from __future__ import annotations

import json
import os

from ..errors import GIT_TIMEOUT_SETTING
from ..hashes import sha256

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..judge.inputs import Snapshot
    from ..judge.logfold import LogFold
    from ..judge.rederive import Observed
    from ..judge.states import NodeState, PlanState
    from ..repository import Repository
    from ..store.derived import StateRows

__all__ = ["derived_state"]


def derived_state(repo: Repository, fold: LogFold, snapshot: Snapshot) -> PlanState:
    """``derive(repo.graph, fold, snapshot)``, taken from the kept state when its key matches,
    or derived again only where what the kept state read changed (see the module
    docstring)."""
    from ..judge.derive import derive
    from ..judge.rederive import derive_observed
    from ..judge.statejson import state_from_json, state_to_json
    from ..plan.cache import cache_dir_of
    from ..store.derived import NAME, read_state_rows, write_state

    keys = _key(repo, fold, snapshot)
    if keys is None:
        return derive(repo.graph, fold, snapshot)
    key, base, head, plan, structure = keys
    path = cache_dir_of(repo.store_path) / NAME
    found = read_state_rows(path)  # the rows decoded when asked for
    kept, rows = (None, None) if found is None else found[1:]
    if isinstance(kept, dict) and rows is not None and kept.get("key") == key:
        try:
            whole = [rows.row(index) for index in range(len(rows.order))]
            return state_from_json({**kept["data"], "nodes": whole})
        except (KeyError, TypeError, ValueError):  # not a state: derived below
            pass
    try:
        observed = _reused(repo, fold, snapshot, kept, rows, base, plan)
    except (KeyError, TypeError, ValueError, AttributeError):  # damaged: derived in full
        observed = None
    if observed is None:
        observed = derive_observed(repo.graph, fold, snapshot)
    if observed.again is None or rows is None:
        data = state_to_json(observed.state)
    else:
        data = _rows(observed, rows)
    record = {
        "key": key,
        "data": data,
        "observed": {
            "base": base,
            "head": list(head),
            "files": list(snapshot.files.items()),
            "outputs": _expanded(repo, snapshot),
            "globs": {g: list(f) for g, f in snapshot.globs.items()},
            "reads": observed.reads,
            "plan": plan,
            # what a miss that does not open the plan checks the kept state against
            # (:mod:`.planfree`): the plan file's bytes it was read from, and the base's
            # part of the plan (:func:`_plan`)
            "source": repo.loaded.source,
            "structure": structure,
            **_links(repo),
        },
    }
    write_state(path, record)  # its rows one a line: a miss without the plan reads a few
    return observed.state


def _links(repo: Repository) -> dict[str, Any]:
    """What a miss that does not open the plan needs of its links: whether the plan is a
    plain DAG (*plain*: no parent, no conflicts edge, no repeated node id), and each node's
    strong dependents (only the nodes that have some)."""
    from ..judge.inputs import Links

    graph = repo.graph
    links = Links.of(graph)
    plain = (
        len(graph.plan.nodes) == len(graph.nodes)
        and not links.parent
        and not any(node.parent is not None for node in graph.nodes.values())
        and not any(links.conflicts.values())
    )
    return {"plain": plain, "dependents": {n: d for n, d in links.dependents.items() if d}}


def _expanded(repo: Repository, snapshot: Snapshot) -> dict[str, list[str]]:
    """The outputs the snapshot expanded to other paths than the plan names (the others are
    the plan's, which the kept state's key holds)."""
    nodes = repo.graph.nodes
    return {
        n: list(paths)
        for n, paths in snapshot.outputs.items()
        if n not in nodes or tuple(paths) != tuple(nodes[n].outputs)
    }


def _rows(observed: Observed, kept: StateRows) -> dict[str, Any]:
    """The JSON form of *observed*'s state, the rows of the nodes not derived again taken as
    they were kept: their text as it was read (:class:`~..store.derived.KeptRow`), neither
    decoded nor encoded again."""
    from ..judge.statejson import node_to_json
    from ..store.derived import KeptRow

    again = observed.again or frozenset()
    index = {node: n for n, node in enumerate(kept.order)}
    nodes: list[Any] = []
    for state in observed.state.nodes.values():
        if state.id in again:
            nodes.append(node_to_json(state))
            continue
        at = index[state.id]
        text = kept.text(at)
        nodes.append(kept.row(at) if text is None else KeptRow(state.id, text))
    return {"nodes": nodes, "input_digests": observed.state.input_digests}


class _KeptRows(dict[str, "NodeState"]):
    """The node states of a kept derived state, each made from its row when first asked for
    by id (as :class:`~pytest_plangraph.judge.statejson.KeptNodes`, from the rows as
    :func:`~pytest_plangraph.store.derived.read_state_rows` gives them: the rows are decoded
    in one go when the first is asked for, a state not asked for is never made)."""

    def __init__(self, rows: StateRows) -> None:
        super().__init__()
        self.rows = rows
        self.index = {node: n for n, node in enumerate(rows.order)}
        self.decoded: list[list[Any]] | None = None

    def __missing__(self, node_id: str) -> NodeState:
        from ..judge.statejson import node_from_json

        if self.decoded is None:  # a state reused asks for every row: all decoded at once
            self.decoded = self.rows.all_rows()
        found = self[node_id] = node_from_json(self.decoded[self.index[node_id]])
        return found


def _reused(
    repo: Repository,
    fold: LogFold,
    snapshot: Snapshot,
    kept: object,
    rows: StateRows | None,
    base: str,
    plan: dict[str, Any],
) -> Observed | None:
    """The state of *fold* and *snapshot* derived again from *kept* where what it read
    changed (:func:`~pytest_plangraph.judge.rederive.rederive`), or where the plan changed in
    what some nodes hold alone (*plan*: see :func:`_plan`); None when *kept* was derived for
    another plan (of another structure), code, policy, setting or checkpoint, or for a head
    that is not one of this log's."""
    from ..judge.inputs import Snapshot
    from ..judge.logfold import evidence_key
    from ..judge.rederive import Observed, rederive
    from ..judge.states import PlanState

    if not isinstance(kept, dict) or not isinstance(kept.get("observed"), dict) or rows is None:
        return None
    observed = kept["observed"]
    if observed["base"] != base:
        return None
    changed = _plan_changed(observed.get("plan"), plan)
    if changed is None:
        return None
    seq, chain = int(observed["head"][0]), str(observed["head"][1])
    head = repo.store.head()
    touched: set[str] = set()
    if seq > head.seq or (repo.store.hash_at(seq) if seq else "") != chain:
        return None  # not an event of this log's chain
    if seq != head.seq:  # the events recorded since: the nodes they name are judged again
        for event in repo.store.log(after_seq=seq):
            node = evidence_key(event)[0] if event.kind == "evidence" else event.node
            if not node:
                return None
            touched.add(node)
    nodes = repo.graph.nodes
    digests = kept["data"]["input_digests"]
    if not isinstance(digests, dict):
        raise TypeError("input_digests is not an object")
    state = Observed(
        # the nodes derived again are never decoded
        PlanState(_KeptRows(rows), {str(k): str(v) for k, v in digests.items()}),
        {str(n): [str(p) for p in paths] for n, paths in observed["reads"].items()},
        0,
    )
    was = Snapshot(
        {str(p): None if sha is None else str(sha) for p, sha in observed["files"]},
        {str(n): tuple(str(p) for p in paths) for n, paths in observed["outputs"].items()},
        {str(g): tuple(str(p) for p in f) for g, f in observed.get("globs", {}).items()},
    )
    return rederive(repo.graph, fold, snapshot, state, was, touched & nodes.keys(), edited=changed)


def _plan(repo: Repository) -> tuple[str, dict[str, Any]]:
    """What the kept state's base holds of the plan, and what it records of it: the plan as
    read (its digest and node order: a comment added to the file keeps the state) in the base;
    or, when the plan's facts give its shape (:func:`~pytest_plangraph.plan.factcache.shape`),
    its structure in the base and each node's signature recorded, so a plan edited in what
    some nodes hold alone judges those nodes again, not every node."""
    from ..plan.factcache import shape

    whole = sha256(
        "\n".join([repo.plan.digest, *repo.plan.topological_order]).encode("utf-8")
    ).hexdigest()
    found = shape(repo.plan)
    if found is None:
        return whole, {"whole": whole, "nodes": None}
    return f"structure:{found[0]}", {"whole": whole, "nodes": found[1]}


def _plan_changed(kept: Any, plan: dict[str, Any]) -> set[str] | None:
    """The nodes whose signatures differ between the *kept* record of the plan and this
    *plan*'s (none when the plan is as kept); None when that cannot be told."""
    if not isinstance(kept, dict):
        return None
    if kept.get("whole") == plan["whole"]:
        return set()
    was, now = kept.get("nodes"), plan["nodes"]
    if not isinstance(was, dict) or now is None or was.keys() != now.keys():
        return None
    return {node for node, signature in now.items() if was[node] != signature}


def _key(
    repo: Repository, fold: LogFold, snapshot: Snapshot
) -> tuple[str, str, tuple[int, str], dict[str, Any], str] | None:
    """The key of the state of *fold* and *snapshot*, the key of what a kept state must share
    to be derived again in part (all but the head, the files and the nodes' own content), the
    head and what is recorded of the plan (:func:`_plan`); None when no kept state may stand
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
    structure, recorded = _plan(repo)
    plan = recorded["whole"]
    code, policy, now = code_fingerprint(), policy_from_env().fingerprint(), settings()
    key = derivation_key(
        code=code,
        plan=plan,
        head=(head.seq, head.hash, fold.origin),
        policy=policy,
        settings=now,
        snapshot=snapshot,
    )
    base = base_key(code, structure, fold.origin, policy, now)
    return key, base, (head.seq, head.hash), recorded, structure


def base_key(code: str, structure: str, origin: str, policy: str, now: dict[str, str]) -> str:
    """What a kept state must share to be derived again in part: the code, the plan's part
    of the base (:func:`_plan`), the checkpoint the log was read from, the trust policy and
    the settings."""
    fixed = [_BASE_FORMAT, code, structure, origin, policy, sorted(now.items())]
    base = sha256(json.dumps(fixed, ensure_ascii=False).encode("utf-8", "surrogateescape"))
    return base.hexdigest()


_BASE_FORMAT = 2
"""Changes when what :func:`~pytest_plangraph.judge.rederive.rederive` keeps does."""


def settings() -> dict[str, str]:
    """The ``PLANGRAPH_*`` settings of this process a kept state is kept under (keys left
    out: with keys configured nothing is kept; so is the bound on git's time, which changes
    no answer: git finishes within it and answers as it would without, or the command fails
    and keeps nothing)."""
    return {
        name: value
        for name, value in os.environ.items()
        if name.startswith("PLANGRAPH_") and "KEY" not in name and name != GIT_TIMEOUT_SETTING
    }
