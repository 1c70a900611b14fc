"""Deriving again only what changed since a kept state (pure): the reads of each node's
judgement are observed, not guessed.

:func:`derive_observed` derives every node as :func:`~.derive.derive` does and records, per
node, which files its input digest and the judgement of its criteria asked the snapshot for
(:class:`~.inputs.ReadLog`). :func:`rederive` takes such a kept state with the snapshot it was
derived from, the current snapshot, and the nodes the events recorded since name, and derives
again only

* the nodes whose recorded reads changed (a file's sha256, or its presence), whose outputs
  expand to other files, or that an event recorded since names;
* the nodes whose input digest changed with them (the digest is a Merkle DAG: each strong
  dependent of a node whose files changed has its digest computed again, and the others keep
  theirs);
* everything whose state can depend on those: the reverse of :func:`~.derive._cone`
  (dependents over strong edges, the parent, conflicts-edge partners), transitively.

Every other node keeps its kept state. What the kept state does not record is not reused: the
plan, the code, the trust policy, the settings and the checkpoint the log was read from are
the caller's key (:mod:`pytest_plangraph.derived`), and a fold that must replay claims without
a recorded verdict is always derived in full (None).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from ..plan.graph import Graph, reach
from ..plan.model import TestVerifier
from ..values import dataclass
from .derive import deciding, derive_nodes
from .inputs import Links, ReadLog, Snapshot, input_digests
from .ledger import Context
from .logfold import LogFold
from .states import NodeState, PlanState

__all__ = ["Observed", "derive_observed", "rederive"]


@dataclass(frozen=True)
class Observed:
    """A derived *state*, the paths each node's digest and judgement *reads* (by node, sorted)
    and how many nodes were *judged* to make it (every node for a full derivation); *again*
    names them when some states were reused (None: none was)."""

    state: PlanState
    reads: dict[str, list[str]]
    judged: int
    again: frozenset[str] | None = None


def derive_observed(graph: Graph, fold: LogFold, snapshot: Snapshot) -> Observed:
    """Every node's state, as :func:`~.derive.derive` gives it, with what each one read."""
    observed = _derive(graph, fold, snapshot, None, set(graph.nodes), {}, None)
    assert observed is not None  # a full derivation always stands
    return observed


def rederive(
    graph: Graph,
    fold: LogFold,
    snapshot: Snapshot,
    kept: Observed,
    was: Snapshot,
    touched: Collection[str],
    *,
    edited: Collection[str] = (),
    bounded: bool = False,
) -> Observed | None:
    """The state of *graph* for *fold* and *snapshot*, reusing the states of *kept* (derived
    for the same plan from *was*, and from the events of *fold* but those naming the nodes
    *touched*) where nothing they read changed; None when it cannot be reused. *edited* are
    nodes the plan changed in what they hold alone since *kept* (the plan's structure the
    same): they are judged again, with their digests; when nothing else changed and their
    digests and states come out as kept, nothing around them is judged again.

    With *bounded*, *graph* may be a part of the plan: the nodes judged again with every
    dependent, parent and conflicts-edge partner of theirs, and the nodes around them (their
    strong prerequisites and children), whose own links it need not hold. The nodes judged
    again are then judged against the kept completion of the nodes around them alone, and
    None is returned where that cannot stand (where :func:`rederive` would judge their
    cones, or a node around them has no input digest on record: whether it drifted depends
    on nodes the part does not hold)."""
    nodes = graph.nodes
    plan_changed = set(edited)
    # every node has a kept digest and reads (its kept state may be decoded when asked for)
    if fold.unjudged or kept.state.input_digests.keys() != nodes.keys():
        return None
    if kept.reads.keys() != nodes.keys():
        return None
    if not set(touched) <= set(nodes) or not plan_changed <= set(nodes):
        return None
    links = Links.of(graph)
    before, now = was.files, snapshot.files
    changed = {p for p in before.keys() | now.keys() if before.get(p) != now.get(p)}
    moved = {
        n for n in nodes if tuple(was.outputs_of(nodes[n])) != tuple(snapshot.outputs_of(nodes[n]))
    }
    moved |= _globs_moved(graph, was, snapshot)
    seed = {n for n, paths in kept.reads.items() if not changed.isdisjoint(paths)} | moved
    if plan_changed and not seed and not touched:  # the plan alone changed, in a few nodes
        alone = _changed_alone(graph, fold, snapshot, kept, plan_changed)
        if alone is not None:
            return alone
    seed |= plan_changed
    redo = set(reach(seed, lambda n: links.dependents[n]))
    digest_reads: dict[str, set[str]] = {}
    old = kept.state.input_digests
    digests = input_digests(graph, snapshot, only=redo, prior=old, reads=digest_reads)
    seed |= {n for n in redo if digests[n] != old.get(n)}

    def depending(current: str) -> Iterable[str]:
        parent = nodes[current].parent
        above = (parent,) if parent is not None and parent in nodes else ()
        return (*links.dependents[current], *above, *links.conflicts[current])

    dirty = set(reach(seed | set(touched), depending))
    return _derive(graph, fold, snapshot, digests, dirty, digest_reads, kept, bounded)


def _changed_alone(
    graph: Graph, fold: LogFold, snapshot: Snapshot, kept: Observed, changed: set[str]
) -> Observed | None:
    """The state when only the plan's *changed* nodes differ from *kept* (no file, no event):
    their digests computed again and, when those are as kept, their criteria judged again
    with the criteria of the nodes that decide them taken as kept (their digests, files and
    events are as kept, so are their verdicts); None when a digest or a state does not come
    out as kept (then what depends on them is judged again too)."""
    digest_reads: dict[str, set[str]] = {}
    old = kept.state.input_digests
    digests = input_digests(graph, snapshot, only=changed, prior=old, reads=digest_reads)
    if any(digests[n] != old.get(n) for n in changed):
        return None
    reads: dict[str, set[str]] = {}
    observed = Snapshot(
        ReadLog(snapshot.files, reads), snapshot.outputs, snapshot.globs, snapshot.listed
    )
    context = Context.of(graph, observed, digests)
    kept_nodes = kept.state.nodes
    cone = set(reach(changed, lambda n: deciding(context, n))) - changed
    states = derive_nodes(context, fold, changed, {n: kept_nodes[n].criteria for n in cone})
    if any(states[n] != kept_nodes[n] for n in changed):
        return None
    found: dict[str, NodeState] = {}
    paths: dict[str, list[str]] = {}
    for node_id in context.order:
        if node_id in changed:
            found[node_id] = states[node_id]
            paths[node_id] = sorted(digest_reads.get(node_id, set()) | reads.get(node_id, set()))
        else:
            found[node_id] = kept_nodes[node_id]
            paths[node_id] = kept.reads[node_id]
    return Observed(PlanState(found, digests), paths, len(changed), frozenset(changed))


def _globs_moved(graph: Graph, was: Snapshot, snapshot: Snapshot) -> set[str]:
    """The nodes with a test criterion whose ``tests:`` globs find other files than *was*'s."""
    if was.globs == snapshot.globs:
        return set()
    moved = {
        g
        for g in was.globs.keys() | snapshot.globs.keys()
        if was.globs.get(g) != snapshot.globs.get(g)
    }
    return {
        node.id
        for node in graph.nodes.values()
        for criterion in node.acceptance
        if isinstance(criterion.verifier, TestVerifier)
        and not moved.isdisjoint(criterion.verifier.tests)
    }


def _judged(
    context: Context, fold: LogFold, dirty: set[str], kept: Observed | None, bounded: bool
) -> dict[str, NodeState] | None:
    """The states of the *dirty* nodes: judged against the kept completion of the nodes
    around them (their strong prerequisites and children not judged again), or, when that
    cannot stand (:func:`~.derive.derive_nodes`), with the criteria of the rest of their
    cones taken as kept (*bounded*: None instead, see :func:`rederive`)."""
    if kept is None:
        return derive_nodes(context, fold, dirty)
    kept_nodes = kept.state.nodes
    graph, prerequisites = context.graph, context.links.prerequisites
    around = {n for d in dirty for n in (*prerequisites[d], *graph.children[d]) if n not in dirty}
    if bounded and not all(fold.on_record.get(n) for n in around):
        return None  # whether it drifted depends on its own prerequisites
    try:
        done = {n: kept_nodes[n].status == "completed" for n in around}
        return derive_nodes(context, fold, dirty, done=done)
    except ValueError:
        if bounded:
            return None
    # the criteria of the nodes around them that are not judged again are as kept
    known = {n: kept_nodes[n].criteria for n in context.order if n not in dirty}
    return derive_nodes(context, fold, dirty, known)


def _derive(
    graph: Graph,
    fold: LogFold,
    snapshot: Snapshot,
    digests: dict[str, str] | None,
    dirty: set[str],
    digest_reads: dict[str, set[str]],
    kept: Observed | None,
    bounded: bool = False,
) -> Observed | None:
    reads: dict[str, set[str]] = {}
    if digests is None:
        digests = input_digests(graph, snapshot, reads=digest_reads)
    else:  # the digest reads of the nodes judged again whose digest was not computed again
        input_digests(
            graph, snapshot, only=dirty - digest_reads.keys(), prior=digests, reads=digest_reads
        )
    observed = Snapshot(
        ReadLog(snapshot.files, reads), snapshot.outputs, snapshot.globs, snapshot.listed
    )
    context = Context.of(graph, observed, digests)
    states = _judged(context, fold, dirty, kept, bounded) if dirty else {}
    if states is None:
        return None
    found: dict[str, NodeState] = {}
    paths: dict[str, list[str]] = {}
    for node_id in context.order:
        if node_id in dirty or kept is None:
            found[node_id] = states[node_id]
            paths[node_id] = sorted(digest_reads.get(node_id, set()) | reads.get(node_id, set()))
        else:
            found[node_id] = kept.state.nodes[node_id]
            paths[node_id] = kept.reads[node_id]
    again = None if kept is None else frozenset(dirty)
    return Observed(PlanState(found, digests), paths, len(dirty), again)
