"""The ``plangraph`` section of pytest's terminal summary.

:func:`render` is pure: a :class:`RunReport` in, lines of coloured segments out, so the wording
is tested without a terminal. :func:`write_summary` hands the lines to pytest's terminal
reporter. Three levels: ``-q`` gives the counts, the changes, the criteria that did not pass
(naming a few of their tests) and the refusals; the default adds the state table (node,
status, criteria n/m, in topological order); ``-v`` adds each criterion, every test that did not
pass, the evidence recorded and the criteria left unverified.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..values import dataclass, field

if TYPE_CHECKING:
    from ..judge.gate import GateDecision
    from ..judge.states import NodeState, PlanState, Reason
    from ..plan.evidence import Evidence, PlanRef

Markup = dict[str, bool]
Segment = tuple[str, Markup]
Line = list[Segment]

_GOOD = {"completed", "valid", "passed"}
_BAD = {"stale", "failed", "blocked", "error"}
_WAITING = {"awaiting_approval", "awaiting_verification", "in_progress", "missing"}
_SHOWN_REASONS = 2
_SHOWN_TESTS = 10


@dataclass(frozen=True)
class Outcome:
    """One evidence record made by this run."""

    ref: str
    outcome: str
    reason: str | None
    not_passed: tuple[Mapping[str, str], ...] = ()
    """The tests that kept it from passing: ``{"test", "outcome", "reason"}`` each."""
    allowed: tuple[Mapping[str, str], ...] = ()
    """The skips and xfails its policy allowed (never a pass), in the same form."""
    message: str | None = None

    def __init__(  # its own: one a record of the run (values.dataclass keeps it)
        self,
        ref: str,
        outcome: str,
        reason: str | None,
        not_passed: tuple[Mapping[str, str], ...] = (),
        allowed: tuple[Mapping[str, str], ...] = (),
        message: str | None = None,
    ) -> None:
        fields = self.__dict__
        fields["ref"] = ref
        fields["outcome"] = outcome
        fields["reason"] = reason
        fields["not_passed"] = not_passed
        fields["allowed"] = allowed
        fields["message"] = message

    @classmethod
    def of(cls, record: Evidence) -> Outcome:
        """What the summary shows of one record: its verdict and the tests that did not
        pass."""
        details = record.details
        message = details.get("message")
        return cls(
            record.ref,
            record.outcome,
            record.reason,
            tuple(details.get("not_passed", ())),
            tuple(details.get("allowed", ())),
            message if isinstance(message, str) else None,
        )


@dataclass
class RunReport:
    """What the ``plangraph`` section shows about one run."""

    before: PlanState | None = None
    after: PlanState | None = None
    plan: PlanRef | None = None
    recorded: list[Outcome] = field(default_factory=list)
    unverified: dict[str, str] = field(default_factory=dict)
    held_up: dict[str, list[str]] = field(default_factory=dict)
    """The tests that kept each unverified criterion undecided (deselected, not finished)."""
    decisions: list[GateDecision] = field(default_factory=list)
    gate: bool = False
    error: str | None = None
    collection_errors: list[str] = field(default_factory=list)
    skipped_whole: list[str] = field(default_factory=list)
    """Collectors (test files, directories) that failed: their tests never ran."""
    no_pass: list[str] = field(default_factory=list)
    """Why this run records no pass at all (its tests could not fail), one message each."""
    narrowed: str | None = None
    """What narrowed this run's collection (:func:`~.config.narrowed_by`): it records
    failures, never a pass."""

    @property
    def refusals(self) -> list[GateDecision]:
        """Gate decisions that refused their node."""
        return [d for d in self.decisions if d.verdict != "PASSED"]


def colour(status: str) -> Markup:
    """pytest markup for a status or outcome word."""
    if status in _GOOD:
        return {"green": True}
    if status in _BAD:
        return {"red": True}
    if status in _WAITING:
        return {"yellow": True}
    return {}


def render(report: RunReport, verbosity: int = 0) -> list[Line]:
    """The section's lines for *report* at pytest's *verbosity* (-1 quiet, 0, 1 verbose)."""
    if report.error:
        return [[(f"plangraph: {report.error}", {"red": True, "bold": True})]]
    lines: list[Line] = [_headline(report)]
    if verbosity >= 0 and report.after is not None:
        lines.extend(_table(report.after, verbose=verbosity > 0))
    lines.extend(_changes(report))
    lines.extend(_still_stale(report))
    lines.extend(_incomplete(report.collection_errors, report.skipped_whole))
    lines.extend(
        [(f"no pass recorded: {why}", {"red": True, "bold": True})] for why in report.no_pass
    )
    if report.narrowed:
        lines.append(_narrowed(report.narrowed))
    lines.extend(_unverified(report.unverified, report.held_up, verbose=verbosity > 0))
    lines.extend(_not_passed(report.recorded, verbose=verbosity > 0))
    lines.extend(_allowed(report.recorded, verbose=verbosity > 0))
    if verbosity > 0:
        lines.extend(_recorded(report.recorded))
    lines.extend(_refusals(report))
    return lines


def _narrowed(narrowed: str) -> Line:
    """Why a narrowed run's criteria are not verified: what narrowed it, and how to record."""
    text = (
        f"no pass recorded: the suite is narrowed by {narrowed}; a test left out could fail, "
        "so only `pytest --plangraph` over the whole suite records passes"
    )
    return [(text, {"yellow": True})]


def _headline(report: RunReport) -> Line:
    counts = Counter(o.outcome for o in report.recorded)
    recorded = ", ".join(f"{n} {word}" for word, n in sorted(counts.items())) or "none"
    plan = f"plan {report.plan.id} v{report.plan.version}" if report.plan else "plan"
    done = total = 0
    if report.after is not None:
        total = len(report.after.nodes)
        done = sum(1 for n in report.after.nodes.values() if n.status == "completed")
    return [(f"{plan}: {done}/{total} nodes completed; evidence recorded: {recorded}", {})]


def _table(state: PlanState, *, verbose: bool) -> list[Line]:
    width = max([len("node"), *(len(n) for n in state.nodes)])
    status_width = max([len("status"), *(len(n.status) for n in state.nodes.values())])
    lines: list[Line] = [[(f"{'node':<{width}}  {'status':<{status_width}}  criteria", {})]]
    for node in state.nodes.values():
        count = f"{node.satisfied}/{node.required_count}" if node.required_count else "-"
        lines.append(
            [
                (f"{node.id:<{width}}  ", {}),
                (f"{node.status:<{status_width}}", colour(node.status)),
                (f"  {count}", {}),
            ]
        )
        if verbose:
            lines.extend(_criteria(node))
    return lines


def _criteria(node: NodeState) -> list[Line]:
    lines: list[Line] = []
    for criterion in node.criteria:
        optional = "" if criterion.required else " (optional)"
        why = _reasons_text(criterion.reasons)
        lines.append(
            [
                (f"    {criterion.id}{optional}: ", {}),
                (criterion.state, colour(criterion.state)),
                (f" — {why}" if why else "", {}),
            ]
        )
    return lines


def _changes(report: RunReport) -> list[Line]:
    if report.before is None or report.after is None:
        return []
    lines: list[Line] = []
    for node_id, node in report.after.nodes.items():
        old = report.before.nodes.get(node_id)
        if old is None or old.status == node.status:
            continue
        why = "" if node.status == "completed" else _reasons_text(node.reasons)
        lines.append(
            [
                (f"  {node_id}: {old.status} -> ", {}),
                (node.status, colour(node.status)),
                (f" ({why})" if why else "", {}),
            ]
        )
    if not lines:
        return [[("no node changed status in this run", {})]]
    return [[("changed in this run:", {"bold": True})], *lines]


def _still_stale(report: RunReport) -> list[Line]:
    """Stale nodes that were already stale before the run, with why (changes show the rest)."""
    if report.before is None or report.after is None:
        return []
    lines: list[Line] = []
    for node_id, node in report.after.nodes.items():
        old = report.before.nodes.get(node_id)
        if node.status == "stale" and old is not None and old.status == "stale":
            lines.append([(f"  {node_id}: {_reasons_text(node.reasons)}", {})])
    return [[("stale, to verify again:", {"bold": True, "red": True})], *lines] if lines else []


def _incomplete(collection_errors: Sequence[str], skipped_whole: Sequence[str]) -> list[Line]:
    """Shown at every verbosity: a file that failed to import, or was skipped whole, may hold
    tests of any criterion."""
    texts = []
    if collection_errors:
        texts.append(
            f"collection errors in {', '.join(collection_errors)}: evidence may be incomplete "
            "(their tests never ran)"
        )
    if skipped_whole:
        texts.append(
            f"skipped whole: {', '.join(skipped_whole)} (their tests never ran; criteria they "
            "may hold are TEST_SKIPPED)"
        )
    return [[(text, {"yellow": True, "bold": True})] for text in texts]


def _unverified(
    unverified: dict[str, str], held_up: dict[str, list[str]], *, verbose: bool
) -> list[Line]:
    """The count per reason; ``-v``: each criterion, with the tests that held it up."""
    if not unverified:
        return []
    by_reason = Counter(unverified.values())
    parts = ", ".join(f"{n} {reason}" for reason, n in sorted(by_reason.items()))
    lines: list[Line] = [[(f"not verified in this run: {len(unverified)} ({parts})", {})]]
    if verbose:
        for ref, why in sorted(unverified.items()):
            tests = held_up.get(ref, [])
            shown = ", ".join(tests[:_SHOWN_TESTS]) + (
                f" and {len(tests) - _SHOWN_TESTS} more" if len(tests) > _SHOWN_TESTS else ""
            )
            lines.append([(f"  {ref}: {why}" + (f" ({shown})" if tests else ""), {})])
    return lines


def _not_passed(recorded: Sequence[Outcome], *, verbose: bool) -> list[Line]:
    """Each criterion this run did not pass, with the tests that kept it from passing (a few,
    then "and N more"; ``-v``: every one, a line each) or, without them, its message."""
    lines: list[Line] = []
    for item in recorded:
        if item.outcome == "passed":
            continue
        from .outcomes import listing  # a criterion not passed: a run that passed lists none

        why = f"{item.outcome} {item.reason}" if item.reason else item.outcome
        text = f"  {item.ref}: {why}"
        if item.not_passed and not verbose:
            text += f": {listing(item.not_passed)}"
        elif item.message and not item.not_passed:
            text += f": {item.message}"
        lines.append([(text, colour(item.outcome))])
        if verbose:
            lines.extend([(f"    {listing([entry])}", {})] for entry in item.not_passed)
    return [[("not passed in this run:", {"bold": True})], *lines] if lines else []


def _allowed(recorded: Sequence[Outcome], *, verbose: bool) -> list[Line]:
    """The skips and xfails the criteria's policies allowed: counted; ``-v`` names them."""
    entries = [(item.ref, entry) for item in recorded for entry in item.allowed]
    if not entries:
        return []
    text = f"allowed skips and xfails (never a pass): {len(entries)}"
    lines: list[Line] = [[(text + ("" if verbose else " (-v lists them)"), {})]]
    if verbose:
        from .outcomes import listing

        lines.extend([(f"  {ref}: {listing([entry])}", {})] for ref, entry in entries)
    return lines


def _recorded(recorded: Sequence[Outcome]) -> list[Line]:
    if not recorded:
        return []
    lines: list[Line] = [[("evidence recorded:", {"bold": True})]]
    for item in recorded:
        reason = f" {item.reason}" if item.reason else ""
        lines.append([(f"  {item.ref}: ", {}), (f"{item.outcome}{reason}", colour(item.outcome))])
    return lines


def _refusals(report: RunReport) -> list[Line]:
    lines: list[Line] = []
    for decision in report.refusals:
        why = _reasons_text(decision.reasons) or decision.status
        lines.append(
            [("gate refused ", {"red": True}), (f"{decision.node} ({decision.status}): {why}", {})]
        )
    if report.gate and report.refusals:
        count = len(report.refusals)
        lines.append(
            [
                (
                    f"plangraph gate: {count} claimed or required node(s) not completed; "
                    "the session fails",
                    {"red": True, "bold": True},
                )
            ]
        )
    elif report.gate and report.decisions:
        lines.append([("plangraph gate: every claimed or required node is completed", {})])
    elif report.gate:
        lines.append([("plangraph gate: no node is claimed or required", {})])
    return lines


def _reasons_text(reasons: Iterable[Reason]) -> str:
    reasons = list(reasons)
    shown = "; ".join(r.message for r in reasons[:_SHOWN_REASONS])
    more = len(reasons) - _SHOWN_REASONS
    return shown + (f"; and {more} more" if more > 0 else "")


def write_summary(terminalreporter: Any, report: RunReport, verbosity: int) -> None:
    """Write the section to pytest's terminal reporter."""
    terminalreporter.write_sep("=", "plangraph")
    for line in render(report, verbosity):
        for text, markup in line:
            terminalreporter.write(text, **markup)
        terminalreporter.line("")
