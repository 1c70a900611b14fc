"""Patch-only replanning (seed 001, issue 20 §3): a patch applied to the plan file, linted first,
within a per-node budget of rounds, each attempt an event.

Order of a patch, and why:

1. The patch is read and checked against the plan models (bad input: exit 2, nothing written);
   a JSON Patch (:mod:`.plan.jsonpatch`) is applied to the plan file's data first, so that a
   failing ``test`` or a pointer that names nothing is bad input too.
2. The replan budget: a node may be re-planned ``max_replan_rounds`` times (plan-level, default 2)
   since the last retry grant a person gave it. A patch touching a node whose rounds are spent is
   refused with ``REPLAN_BUDGET_EXHAUSTED`` and marks that node for a person (a ``patch`` event
   with that outcome): degrade — narrow the goal or hand over — rather than patch again. Status
   derives the mark from that event (:mod:`.judge.logfold`): the node shows ``blocked`` and the
   gate refuses it until a person's retry grant.
3. The patch is applied to the plan *text* (comments and layout kept, :mod:`.plan.patch`) and the
   result linted as the commands would; lint errors refuse it whole (``LINT_ERRORS``, the
   findings with code, node and hint) and the file is not touched. That attempt spends a round.
   A patch that raises a node's ``max_retry`` is refused the same way (``PATCH_WIDENS_BUDGET``,
   checked before the text is edited): the retry budget is a person's to widen, not the agent's.
   A patch touching a node held by its refused claims (``RETRY_BUDGET_EXHAUSTED``) is refused
   too: renaming the node would leave a fresh one without the hold.
4. One ``patch`` event per touched node records who, the patch, the plan versions and digests
   before and after, and what it invalidated: each criterion whose evidence was valid before
   the patch and is not after it. The new text is staged beside the plan file first, the events
   and the new plan version are stored in one transaction, and only then does the staged file
   replace the plan (:mod:`.planwrite`): a store that refuses the write (read-only, locked)
   leaves the plan file as it was. A store opened read-only is refused before anything else.

Retry grants count as the gate counts them (:mod:`.store.trust`): with keys configured, only a
grant signed by a key trusted for ``approver`` renews a node's rounds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from . import apicheck
from .canonical import non_finite_member
from .errors import ConflictError, PlanError, UsageError
from .judge.logfold import REPLAN_BUDGET_EXHAUSTED
from .plan.evidence import PlanRef
from .repository import Repository
from .values import dataclass, field, replace

if TYPE_CHECKING:  # re-planning's machinery is imported by the calls that re-plan
    from .judge.saga import Saga
    from .judge.states import PlanState
    from .lint.findings import Finding
    from .plan.model import Plan
    from .plan.patch import AnyPatch
    from .store.exchange import PlanVersion

__all__ = ["PatchResult", "Replanning", "apply_patch", "as_patch", "replan_rounds"]

LINT_ERRORS = "LINT_ERRORS"
BUDGET_WIDENED = "PATCH_WIDENS_BUDGET"
RETRY_BUDGET_EXHAUSTED = "RETRY_BUDGET_EXHAUSTED"


@dataclass(frozen=True)
class PatchResult:
    """What became of a patch: ``applied``, or ``refused`` with a code and why."""

    outcome: Literal["applied", "refused"]
    code: str | None
    nodes: list[str]
    version_before: int
    version_after: int
    findings: list[Finding] = field(default_factory=list)
    exhausted: dict[str, int] = field(default_factory=dict)
    invalidated: list[dict[str, Any]] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The JSON shape of ``plangraph patch`` (without the ``format`` key)."""
        return {
            "outcome": self.outcome,
            "code": self.code,
            "nodes": list(self.nodes),
            "version_before": self.version_before,
            "version_after": self.version_after,
            "findings": [
                {"code": f.code, "node": f.node, "hint": f.hint, "location": f.location}
                for f in self.findings
            ],
            "exhausted": dict(self.exhausted),
            "invalidated": list(self.invalidated),
            "dropped": list(self.dropped),
            "events": list(self.events),
        }


class Replanning(Repository):
    """What :class:`~pytest_plangraph.api.PlanGraph` re-plans with: patches within a budget of
    rounds, the saga view, and the plan-version check every write makes."""

    def patch(
        self,
        patch: AnyPatch | Mapping[str, Any] | Sequence[Mapping[str, Any]] | bytes | str,
        *,
        by: str,
        expected_plan_version: int | None = None,
        name: str = "patch",
    ) -> PatchResult:
        """Re-plan with a patch (:mod:`~pytest_plangraph.plan.patch` gives the format, and
        :mod:`~pytest_plangraph.plan.jsonpatch` the JSON Patch alternative: a list of
        operations; *name* names it in messages): applied to the plan file when lint passes
        and no touched node's replan rounds are spent, else refused with the file unchanged
        (module text). *expected_plan_version* as for :meth:`PlanGraph.append
        <pytest_plangraph.api.PlanGraph.append>`. A plan that lint rejects may be patched (a
        patch is how it gets repaired); the patched plan must pass."""
        from .planwrite import patch_lock  # the plan's writing: only when re-planning

        found = as_patch(patch, apicheck.name(name, "name"))
        apicheck.name(by, "by")
        expected = apicheck.version(expected_plan_version, "expected_plan_version")
        self.plan_ref()  # makes the store, and its folder for the lock
        if self.store.readonly:  # nothing could be recorded: said before the lock is taken
            raise self.store.write_refusal()
        with patch_lock(self.store_path):
            self.refresh()  # the plan as the last patch left it
            self._expect(expected)
            return apply_patch(self, found, by=by, judged=not self.plan_problems()[0])

    def saga(self, node: str | None = None) -> Saga:
        """The compensation plan of the steps with side effects that ran (for *node* and what
        depends on it), downstream first; it executes nothing (:mod:`.judge.saga`)."""
        from .judge.saga import saga

        self._ready()
        if node is not None:
            self.require_node(node)
        return saga(self.graph, _state(self), node)

    def _expect(self, expected: int | None) -> None:
        """:class:`ConflictError` unless the plan in the repository is version *expected*."""
        if expected is None:
            return
        # a store not made yet would number this plan 1: a conflict creates no store
        current = self.plan_ref().version if self.has_store() else 1
        if expected != current:
            raise ConflictError(
                f"PLAN_VERSION_CONFLICT: the writer expected plan version {expected}, but the "
                f"plan in the repository is version {current}; reload the plan and decide again"
            )


def as_patch(
    patch: AnyPatch | Mapping[str, Any] | Sequence[Mapping[str, Any]] | bytes | str, name: str
) -> AnyPatch:
    """*patch* as a :class:`PlanPatch` or :class:`JsonPatch`: the model itself, its JSON form
    (a mapping, or a list of JSON Patch operations), or the text of a patch file (YAML or
    JSON) called *name* in messages."""
    from .plan.jsonpatch import JsonPatch, read_json_patch
    from .plan.patch import PlanPatch, read_patch  # pydantic: only when re-planning

    if isinstance(patch, PlanPatch | JsonPatch):
        return patch
    found = None if isinstance(patch, str | bytes) else non_finite_member(patch)
    if found is not None:  # its JSON text would say NaN, which a YAML reader takes as text
        raise UsageError(
            f"{name}: {found[0] or 'the patch'} holds {found[1]!r}, which JSON has no value "
            "for; give a finite number, a text or None there (nothing was changed)"
        )
    if isinstance(patch, str):
        patch = patch.encode("utf-8", "surrogateescape")
    if isinstance(patch, bytes):
        return read_patch(patch, name)
    if isinstance(patch, list | tuple):
        return read_json_patch(json.loads(json.dumps(list(patch), default=str)), name)
    if not isinstance(patch, Mapping):
        raise UsageError(
            f"a patch is a PlanPatch, a mapping, a list of JSON Patch operations or the text "
            f"of a patch file, not {type(patch).__name__}"
        )
    return read_patch(json.dumps(dict(patch), default=str).encode("utf-8"), name)


def replan_rounds(repo: Repository) -> dict[str, int]:
    """Per node, the patch rounds spent since its last counted retry grant: every patch
    applied to it or refused by lint (a refusal for a spent budget spends nothing)."""
    from .store.trust import policy_from_env, screen

    if not repo.has_store():
        return {}
    events = repo.store.events(kinds=["patch", "retry"])
    ignored = screen(repo.store, events, policy_from_env()) if events else {}
    rounds: dict[str, int] = {}
    for event in events:
        node = event.node or ""
        if event.kind == "retry":
            if event.seq not in ignored:
                rounds[node] = 0
        elif event.payload.get("code") != REPLAN_BUDGET_EXHAUSTED:
            rounds[node] = rounds.get(node, 0) + 1
    return rounds


def apply_patch(repo: Repository, patch: AnyPatch, *, by: str, judged: bool = True) -> PatchResult:
    """Apply *patch* to *repo*'s plan file (see the module text). The caller has checked the
    expected plan version; *judged* is False when lint rejects the plan as it is (nothing was
    judged against it, so the patch invalidates nothing)."""
    from .lint.check import LintSubject, plan_problems
    from .plan.file import parse_plan
    from .plan.graph import Graph
    from .plan.jsonpatch import JsonPatch
    from .plan.patch import PlanPatch, edit_plan_text, json_patched, patched_plan, touched_nodes
    from .planwrite import put_in_place, stage

    if repo.plan_path is None:
        raise UsageError("this plan was not read from a file, so there is no file to patch")
    if repo.store.readonly:  # nothing could be recorded: say so before anything is done
        raise repo.store.write_refusal()
    path = repo.plan_path
    raw = path.read_bytes()
    if isinstance(patch, JsonPatch):  # every operation (a test too) is checked first
        expected, nodes = json_patched(raw, patch, repo.loaded.file, suffix=path.suffix)
    if patch.is_empty():
        raise UsageError("the patch changes nothing: give nodes, criteria or edges to change")
    if isinstance(patch, PlanPatch):
        expected, nodes = patched_plan(repo.plan, patch, repo.loaded.file), touched_nodes(patch)
    before = repo.plan_ref()
    limit = repo.plan.max_replan_rounds
    rounds = replan_rounds(repo)
    spent = {n: rounds.get(n, 0) for n in nodes if rounds.get(n, 0) >= limit}
    if spent:
        payload = _payload(patch, "refused", REPLAN_BUDGET_EXHAUSTED, before, before, nodes)
        payload["hint"] = (
            f"re-planned {limit} round(s) already: a person takes over — narrow the goal or "
            "hand it over — and may grant more rounds with `plangraph retry NODE`"
        )
        events = _record(repo, list(spent), by, before, payload)
        return PatchResult("refused", REPLAN_BUDGET_EXHAUSTED, nodes, before.version,
                           before.version, exhausted=spent, events=events)  # fmt: skip
    old_state = _state(repo) if judged else None
    held = _held(old_state, nodes)
    if held:
        payload = _payload(patch, "refused", RETRY_BUDGET_EXHAUSTED, before, before, nodes)
        payload["hint"] = (
            "a node held for a person after its refused claims is not re-planned by the agent: "
            "a person runs `plangraph retry NODE` (or edits the plan file, reviewed)"
        )
        events = _record(repo, held, by, before, payload)
        return PatchResult("refused", RETRY_BUDGET_EXHAUSTED, nodes, before.version,
                           before.version, events=events)  # fmt: skip
    widened = _widened(repo.plan, expected)
    if widened:
        payload = _payload(patch, "refused", BUDGET_WIDENED, before, before, nodes)
        payload["widened"] = widened
        payload["hint"] = (
            "a patch may not raise a node's max_retry: the retry budget is a person's to give "
            "(`plangraph retry NODE`, or an edit of the plan file that is reviewed)"
        )
        events = _record(repo, [w["node"] for w in widened], by, before, payload)
        return PatchResult("refused", BUDGET_WIDENED, nodes, before.version, before.version,
                           events=events)  # fmt: skip
    text = raw.decode("utf-8")  # a byte order mark is kept
    json_file = path.suffix.lower() == ".json"
    old_loaded = repo.loaded
    shown = f"{old_loaded.file} (as patched)"  # the lines of the text lint saw, not the file's
    # read once, with the plan cache (only the nodes the patch changed are validated again)
    read = partial(parse_plan, name=shown, suffix=path.suffix, cache_dir=repo.workspace.cache)
    # the untouched nodes' (and edges') text kept as written, the rest through the round trip
    edited = edit_plan_text(text, patch, old_loaded.file, json_file=json_file, plan=repo.plan)
    try:
        loaded = read(edited.encode("utf-8"))
    except PlanError:  # an alias cut from its anchor: the whole text through the round trip
        loaded = None
    if loaded is None or loaded.plan.digest != expected.digest:
        edited = edit_plan_text(text, patch, old_loaded.file, json_file=json_file)
        loaded = read(edited.encode("utf-8"))
    if loaded.plan.digest != expected.digest:
        raise UsageError(
            f"{repo.loaded.file} could not be edited without changing what the patch does not "
            "touch (a construct the round-trip editor does not keep); nothing was written: "
            "apply this change by hand"
        )
    subject = LintSubject(loaded, Graph.of(loaded.plan), repo.registry, repo.workspace)
    errors = plan_problems(subject)[0]
    if errors:
        payload = _payload(patch, "refused", LINT_ERRORS, before, before, nodes)
        payload["findings"] = [f.to_json() for f in errors]
        events = _record(repo, nodes, by, before, payload)
        return PatchResult("refused", LINT_ERRORS, nodes, before.version, before.version,
                           findings=errors, events=events)  # fmt: skip
    target, staged = stage(path, edited)  # the plan file is replaced once the events are in
    try:
        repo.use_plan(replace(loaded, file=old_loaded.file))  # judged as the file will be read
        registering = _next_version(repo)
        after = PlanRef(id=repo.plan.plan, version=registering.version, digest=loaded.plan.digest)
        invalidated = _invalidated(old_state, _state(repo))
        dropped = _dropped(old_loaded.plan, repo.plan, old_state)
        payload = _payload(patch, "applied", None, before, after, nodes)
        payload["invalidated"] = invalidated
        payload["dropped"] = dropped
        events = _record(repo, nodes, by, after, payload, registering)
    except BaseException:
        staged.unlink(missing_ok=True)
        repo.use_plan(old_loaded)
        raise
    put_in_place(staged, target, after.version, events)
    repo.refresh()
    return PatchResult("applied", None, nodes, before.version, after.version,
                       invalidated=invalidated, events=events, dropped=dropped)  # fmt: skip


def _held(state: PlanState | None, nodes: Sequence[str]) -> list[str]:
    """The *nodes* held for a person by their refused claims (``RETRY_BUDGET_EXHAUSTED``)."""
    if state is None:
        return []
    return [
        n
        for n in nodes
        if n in state.nodes
        and any(r.code == RETRY_BUDGET_EXHAUSTED for r in state.nodes[n].reasons)
    ]


def _widened(old: Plan, new: Plan) -> list[dict[str, Any]]:
    """Each node of *old* whose ``max_retry`` *new* raises (a node removed and added again
    under its id included): ``node``, ``max_retry_before`` and ``max_retry_after``."""
    before = {n.id: n.max_retry for n in old.nodes}
    return [
        {"node": n.id, "max_retry_before": before[n.id], "max_retry_after": n.max_retry}
        for n in new.nodes
        if n.id in before and n.max_retry > before[n.id]
    ]


def _dropped(old: Plan, new: Plan, state: PlanState | None) -> list[dict[str, Any]]:
    """Each required criterion of a node not cancelled that the gate checked before the patch
    and does not after it: ``how`` (``removed`` with itself or its node, ``not required``,
    ``node cancelled``) and ``was``, its state before (None when nothing was judged)."""
    after = {n.id: n for n in new.nodes}
    found: list[dict[str, Any]] = []
    for node in old.nodes:
        if node.cancelled:
            continue
        now = after.get(node.id)
        criteria = {c.id: c for c in now.acceptance} if now is not None else {}
        judged = state.nodes.get(node.id) if state is not None else None
        was = {c.id: c.state for c in judged.criteria} if judged is not None else {}
        for criterion in node.acceptance:
            if not criterion.required:
                continue
            current = criteria.get(criterion.id)
            if current is None:
                how = "removed"
            elif now is not None and now.cancelled:
                how = "node cancelled"
            elif not current.required:
                how = "not required"
            else:
                continue
            found.append(
                {
                    "node": node.id,
                    "criterion": criterion.id,
                    "how": how,
                    "was": was.get(criterion.id),
                }
            )
    return found


def _payload(
    patch: AnyPatch,
    outcome: str,
    code: str | None,
    before: PlanRef,
    after: PlanRef,
    nodes: Sequence[str],
) -> dict[str, Any]:
    from .plan.jsonpatch import JsonPatch

    return {
        "outcome": outcome,
        "code": code,
        "patch": (
            patch.to_json()
            if isinstance(patch, JsonPatch)
            else patch.model_dump(mode="json", by_alias=True, exclude_unset=True)
        ),
        "nodes": list(nodes),
        "version_before": before.version,
        "version_after": after.version,
        "digest_before": before.digest,
        "digest_after": after.digest,
    }


def _record(
    repo: Repository,
    nodes: Sequence[str],
    by: str,
    plan: PlanRef,
    payload: dict[str, Any],
    registering: PlanVersion | None = None,
) -> list[str]:
    """One ``patch`` event per node, all in one transaction (with the new plan's version
    *registering*, when given); their ids."""
    from .plan.model import Event
    from .vcs.environment import now

    at = now()
    events = [
        Event(kind="patch", node=n, at=at, by=by, plan_digest=plan.digest, payload=payload)
        for n in nodes
    ]
    return [e.id for e in repo.store.append_many(events, registering=registering)]


def _next_version(repo: Repository) -> PlanVersion:
    """The version the store gives the plan *repo* now holds (registered with its events)."""
    from .store.exchange import PlanVersion
    from .store.opening import now

    digest = repo.plan.digest
    return PlanVersion(digest, repo.plan.plan, repo.store.next_plan_version(digest), now())


def _state(repo: Repository) -> PlanState:
    from .judge.derive import derive

    fold = repo.fold()
    return derive(repo.graph, fold, repo.snapshot(fold))


def _invalidated(old: PlanState | None, new: PlanState) -> list[dict[str, Any]]:
    """Each criterion valid before the patch and not after it (gone with its node or itself,
    or its evidence stale against the new plan), with the reason codes."""
    found: list[dict[str, Any]] = []
    if old is None:
        return found
    for node_id, state in old.nodes.items():
        now_state = new.nodes.get(node_id)
        after = {c.id: c for c in now_state.criteria} if now_state else {}
        for criterion in state.criteria:
            if criterion.state != "valid":
                continue
            current = after.get(criterion.id)
            if current is not None and current.state == "valid":
                continue
            codes = [r.code for r in current.reasons] if current else ["REMOVED_BY_PATCH"]
            found.append(
                {
                    "node": node_id,
                    "criterion": criterion.id,
                    "evidence": criterion.evidence,
                    "reasons": codes,
                }
            )
    return found
