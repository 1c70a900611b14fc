"""The report of a diff from what it is made of besides the diff: :class:`DiffBasis` holds, for
one plan and store, which node binds which path, the strong edges the walk follows, the nodes
that have criteria to invalidate, their evidence ids, the edges that recommend a review and the
claimed nodes that may be blocked; :meth:`DiffBasis.report` makes the report of any diff from
it. :func:`~.report.diff_impact` makes one from the graph and the state each time;
``impact --since`` keeps it (:meth:`DiffBasis.to_json`), so that a later diff over the same
plan and store — a new commit — is reported without opening the plan or deriving the state.
Both make the report with the same code, so a kept basis gives the answer a fresh one does.

Also the report's values (:class:`ImpactReport` and its parts). Nothing here imports the
plan's classes, the judge or :mod:`dataclasses`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..values import dataclass, field
from ..vcs.changes import Change
from .reach import PathIndex, Topology, Walk

if TYPE_CHECKING:
    from ..plan.edits import PlanEdit

__all__ = [
    "BASIS_FORMAT",
    "ChangedPath",
    "DiffBasis",
    "ImpactReport",
    "Invalidated",
    "Notice",
    "describe",
]

BASIS_FORMAT = 1
"""Changes when what :meth:`DiffBasis.to_json` writes does."""


@dataclass(frozen=True)
class ChangedPath:
    """One changed path, the nodes it reaches directly, and what is known of the change."""

    path: str
    change: str
    nodes: tuple[str, ...]
    old_path: str | None = None
    commit: str | None = None
    old: str | None = None
    new: str | None = None
    flows: tuple[str, ...] = ()
    """The nodes of ``nodes`` whose input digest the change moves: it goes downstream from
    them (from the others — a schema or test file read, a subject — it does not)."""

    def to_json(self) -> dict[str, Any]:
        """``{"path", "change", "nodes"}``, and ``"old_path"`` for a rename."""
        data: dict[str, Any] = {"path": self.path, "change": self.change, "nodes": list(self.nodes)}
        if self.old_path is not None:
            data["old_path"] = self.old_path
        return data


@dataclass(frozen=True)
class Invalidated:
    """A node whose evidence is (or would be) stale, with the reason chains and the changed
    paths they lead back to."""

    node: str
    evidence: tuple[str, ...]
    reasons: tuple[str, ...]
    paths: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """``{"node", "evidence", "reasons"}``."""
        return {"node": self.node, "evidence": list(self.evidence), "reasons": list(self.reasons)}


@dataclass(frozen=True)
class Notice:
    """A node to review or a blocked node, and why."""

    node: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        """``{"node", "reason"}``."""
        return {"node": self.node, "reason": self.reason}


@dataclass(frozen=True)
class ImpactReport:
    """changed → invalidated → review recommended → blocked; *notes* are said once to a person
    (hash-only mode, an evidence commit lost to a rebase) and are not part of the JSON."""

    changed: tuple[ChangedPath, ...]
    invalidated: tuple[Invalidated, ...]
    review_recommended: tuple[Notice, ...]
    blocked: tuple[Notice, ...]
    notes: tuple[str, ...] = ()
    basis: DiffBasis | None = field(default=None, compare=False, repr=False)
    """What the report of a diff was made from besides the diff (:class:`DiffBasis`), kept
    by ``impact --since`` for the next diff over the same plan and store; None otherwise."""

    def to_json(self) -> dict[str, Any]:
        """The report as the ``impact`` command prints it (without ``"format"``)."""
        return {
            "changed": [c.to_json() for c in self.changed],
            "invalidated": [i.to_json() for i in self.invalidated],
            "review_recommended": [n.to_json() for n in self.review_recommended],
            "blocked": [n.to_json() for n in self.blocked],
        }


class DiffBasis:
    """What the report of a diff over one plan and store is made of besides the diff (see the
    module docstring): the :class:`Topology` and the :class:`PathIndex` of the plan, the
    nodes a change can invalidate (*judged*: with criteria, not cancelled), the evidence ids
    of each node's criteria (*evidence*), the targets of each node's edges that recommend a
    review with their kind (*reviews*), the nodes in the plan's order (*nodes*), each claimed
    node with its strong prerequisites and descendants (*claimed*), the paths left out of
    every diff (*ignore*: the store's files, the cache folder ending in ``/``) and the plan
    file (*plan_file*)."""

    __slots__ = (
        "claimed",
        "evidence",
        "ignore",
        "index",
        "judged",
        "nodes",
        "plan_file",
        "reviews",
        "topology",
    )

    def __init__(
        self,
        topology: Topology,
        index: PathIndex,
        judged: frozenset[str],
        evidence: Mapping[str, tuple[str, ...]],
        reviews: Mapping[str, Sequence[tuple[str, str]]],
        nodes: Sequence[str],
        claimed: Sequence[tuple[str, Sequence[str], Sequence[str]]],
        ignore: Sequence[str],
        plan_file: str | None,
    ) -> None:
        self.topology = topology
        self.index = index
        self.judged = judged
        self.evidence = evidence
        self.reviews = reviews
        self.nodes = nodes
        self.claimed = claimed
        self.ignore = tuple(ignore)
        self.plan_file = plan_file

    def report(
        self,
        changes: Sequence[Change],
        *,
        commits: Mapping[str, str] | None = None,
        notes: Sequence[str] = (),
        edits: Mapping[str, Sequence[PlanEdit]] | None = None,
    ) -> ImpactReport:
        """The report of *changes* (see :func:`~.report.diff_impact`): *commits* the commit
        that last changed each path, *notes* said once, *edits* the plan edits of each node
        made in the plan file."""
        commits = commits or {}
        ignore = self.ignore
        folders = tuple(p for p in ignore if p.endswith("/"))
        kept = [c for c in changes if c.path not in ignore and not c.path.startswith(folders)]
        changed = [changed_path(self.index, c, commits.get(c.path)) for c in kept]
        direct = direct_paths(changed)
        if edits:
            changed = _with_edits(changed, edits, self.plan_file, commits, direct)
        walk = Walk(self.topology, direct, flowing(changed, edits))
        judged, evidence = self.judged, self.evidence
        reasons = walk.reasons
        invalidated = [
            _invalidated(n, evidence.get(n, ()), *reasons(n)) for n in walk.order if n in judged
        ]
        said = [*notes, *(c.note for c in changes if c.note)]  # submodules not looked into
        gone = {i.node for i in invalidated}
        return ImpactReport(
            tuple(changed),
            tuple(invalidated),
            tuple(self.review_notices(invalidated, gone)),
            tuple(self.blocked_notices(gone)),
            tuple(said),
            self,
        )

    def review_notices(self, invalidated: Sequence[Invalidated], gone: set[str]) -> list[Notice]:
        """Targets of weak and ``related`` edges out of invalidated nodes (related: both
        ways), in the plan's order."""
        notices: dict[str, Notice] = {}
        reviews = self.reviews
        for entry in invalidated:
            source = entry.node
            for other, kind in reviews.get(source, ()):
                # most edges out of an invalidated node lead to another one
                if other in gone or other in notices or other == source:
                    continue
                cause = f" ({entry.reasons[0]})" if entry.reasons else ""
                why = f"REVIEW_RECOMMENDED {kind} edge with {source}, which is invalidated"
                notices[other] = Notice(other, why + cause)
        if not notices:
            return []
        return [notices[n] for n in self.nodes if n in notices]

    def blocked_notices(self, gone: set[str]) -> list[Notice]:
        """Claimed nodes, not invalidated themselves, that wait on an invalidated strong
        prerequisite or (objectives and milestones) an invalidated child."""
        blocked: list[Notice] = []
        for node_id, prerequisites, descendants in self.claimed:
            if node_id in gone:
                continue
            upstream = [p for p in prerequisites if p in gone]
            children = [c for c in descendants if c in gone]
            if upstream:
                blocked.append(Notice(node_id, f"PREREQUISITE_INVALIDATED {', '.join(upstream)}"))
            elif children:
                blocked.append(Notice(node_id, f"CHILD_INVALIDATED {', '.join(children)}"))
        return blocked

    def to_json(self) -> dict[str, Any]:
        """The basis as JSON values (:meth:`from_json` reads them back)."""
        return {
            "format": BASIS_FORMAT,
            "prerequisites": self.topology.prerequisites,
            "order": self.topology.order,
            "exact": self.index.exact,
            "globs": self.index.globs,
            "judged": sorted(self.judged),
            "evidence": self.evidence,
            "reviews": self.reviews,
            "nodes": self.nodes,
            "claimed": self.claimed,
            "ignore": self.ignore,
            "plan_file": self.plan_file,
        }

    @classmethod
    def from_json(cls, data: Any) -> DiffBasis | None:
        """The basis :meth:`to_json` wrote as *data* (parsed); None when it is not one (a
        damaged file: the report is made from the plan)."""
        try:
            if not isinstance(data, dict) or data.get("format") != BASIS_FORMAT:
                return None
            prerequisites = {str(n): tuple(map(str, p)) for n, p in data["prerequisites"].items()}
            order = [str(n) for n in data["order"]]
            if set(order) != set(prerequisites) or not all(
                set(p) <= prerequisites.keys() for p in prerequisites.values()
            ):
                return None
            topology = Topology(prerequisites, order)
            exact = {
                str(path): {str(n): int(b) for n, b in nodes.items()}
                for path, nodes in data["exact"].items()
            }
            globs = [(str(p), str(n), int(b)) for p, n, b in data["globs"]]
            if not all(n in prerequisites for nodes in exact.values() for n in nodes) or not all(
                n in prerequisites for _, n, _ in globs
            ):
                return None
            index = PathIndex(prerequisites, exact, globs)
            evidence = {str(n): tuple(map(str, ids)) for n, ids in data["evidence"].items()}
            reviews = {
                str(n): [(str(o), str(k)) for o, k in pairs] for n, pairs in data["reviews"].items()
            }
            claimed = [
                (str(n), [str(p) for p in ps], [str(d) for d in ds])
                for n, ps, ds in data["claimed"]
            ]
            plan_file = data["plan_file"]
            if plan_file is not None and not isinstance(plan_file, str):
                return None
            return cls(
                topology,
                index,
                frozenset(str(n) for n in data["judged"]),
                evidence,
                reviews,
                [str(n) for n in data["nodes"]],
                claimed,
                [str(p) for p in data["ignore"]],
                plan_file,
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            return None


# --- paths to nodes --------------------------------------------------------------------------


def changed_path(
    index: PathIndex,
    change: Change,
    commit: str | None,
    old: str | None = None,
    new: str | None = None,
) -> ChangedPath:
    """*change* with the nodes *index* says it reaches directly."""
    paths = (change.path,) if change.old_path is None else (change.path, change.old_path)
    reached = index.reach(*paths, below=change.subtree)
    flows = tuple(n for n, moves in reached.items() if moves)
    made: ChangedPath = _new(ChangedPath)  # one per changed path: without the generic __init__
    _put(made, "path", change.path)
    _put(made, "change", change.change)
    _put(made, "nodes", tuple(reached))
    _put(made, "old_path", change.old_path)
    _put(made, "commit", commit)
    _put(made, "old", old)
    _put(made, "new", new)
    _put(made, "flows", flows)
    return made


_new = object.__new__
_put = object.__setattr__


def _invalidated(
    node: str, evidence: tuple[str, ...], reasons: tuple[str, ...], paths: tuple[str, ...]
) -> Invalidated:
    """``Invalidated(node, evidence, reasons, paths)`` made without the value classes' generic
    ``__init__`` (one per invalidated node): the same value."""
    made: Invalidated = _new(Invalidated)
    _put(made, "node", node)
    _put(made, "evidence", evidence)
    _put(made, "reasons", reasons)
    _put(made, "paths", paths)
    return made


def flowing(
    changed: Sequence[ChangedPath], edits: Mapping[str, Sequence[PlanEdit]] | None = None
) -> set[str]:
    """The directly reached nodes a change goes downstream from: those whose input digest a
    changed path moves, and the nodes edited in the plan."""
    return {n for entry in changed for n in entry.flows} | set(edits or ())


def direct_paths(changed: Sequence[ChangedPath]) -> dict[str, list[tuple[str, str]]]:
    """Node → (changed path, its description) for each path that reaches it directly."""
    direct: dict[str, list[tuple[str, str]]] = {}
    for entry in changed:
        described = (entry.path, describe(entry))
        for node_id in entry.nodes:
            direct.setdefault(node_id, []).append(described)
    return direct


def _with_edits(
    changed: list[ChangedPath],
    edits: Mapping[str, Sequence[PlanEdit]],
    plan_file: str | None,
    commits: Mapping[str, str],
    direct: dict[str, list[tuple[str, str]]],
) -> list[ChangedPath]:
    """Add the plan edits to *direct* (in place) and the edited nodes to the plan file's
    entry in *changed* (made when the diff lacks it)."""
    where = plan_file or "the plan"
    commit = commits.get(where)
    detail = (where, f"commit {commit[:7]}" if commit else None)
    for node_id, node_edits in edits.items():
        texts = [(where, edit.describe(*detail)) for edit in node_edits]
        direct.setdefault(node_id, []).extend(texts)
    found = [c for c in changed if c.path == where]
    entry = found[0] if found else ChangedPath(where, "modified", ())
    nodes = tuple(dict.fromkeys([*entry.nodes, *edits]))
    updated = ChangedPath(where, entry.change, nodes, entry.old_path, entry.commit, flows=nodes)
    if found:
        return [updated if c is entry else c for c in changed]
    return sorted([*changed, updated], key=lambda c: c.path)


def describe(changed: ChangedPath) -> str:
    """``ARTIFACT_CHANGED path (details)`` or ``ARTIFACT_DELETED path (details)``."""
    code = "ARTIFACT_DELETED" if changed.change == "deleted" else "ARTIFACT_CHANGED"
    details = []
    if changed.change == "renamed":
        details.append(f"renamed from {changed.old_path}")
    elif changed.change in ("added", "untracked"):
        details.append(changed.change)
    if changed.commit:
        details.append(f"commit {changed.commit[:7]}")
    return f"{code} {changed.path}" + (f" ({', '.join(details)})" if details else "")
