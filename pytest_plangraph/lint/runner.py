"""Running the lint rules (DESIGN §3.4): a loaded plan in, sorted findings out (pure).

The rules live in :mod:`pytest_plangraph.lint.rules` and :mod:`pytest_plangraph.lint.effects`;
the findings they give, as values, in :mod:`pytest_plangraph.lint.findings`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from ..plan.file import LoadedPlan
from ..plan.graph import Graph
from ..plan.model import BUILTIN_VERIFIERS
from .findings import FileCheck, Finding, LintContext, Severity, sort_key
from .rules import FILE_RULES, RULES

__all__ = ["lint_plan", "plan_findings"]


def lint_plan(
    loaded: LoadedPlan,
    *,
    verifier_types: Collection[str] = BUILTIN_VERIFIERS,
    files: FileCheck | None = None,
    extra: Iterable[Finding] = (),
    graph: Graph | None = None,
    severities: Collection[Severity] | None = None,
    known: Iterable[Finding] | None = None,
) -> list[Finding]:
    """Every finding of every rule on *loaded*, plus *extra*, deduplicated and sorted by
    location line, then code. *graph* is the plan's graph when the caller has built it;
    *severities*, when given, keeps only findings of those severities (the others are not
    located: locating a finding of a plan read from its cache reads the YAML again). *known*
    are :func:`plan_findings` of the same plan bytes, verifier types and severities, kept from
    an earlier run: then only the rules that look at files run."""
    graph = Graph.of(loaded.plan) if graph is None else graph
    wanted = None if severities is None else frozenset(severities)
    found = set(extra)
    if known is None:
        known = plan_findings(
            loaded, verifier_types=verifier_types, graph=graph, severities=severities
        )
    found.update(known)
    if files is not None:
        context = LintContext(loaded, graph, verifier_types, files, wanted)
        for rule in FILE_RULES:
            found.update(rule(context))
    kept = found if wanted is None else {f for f in found if f.severity in wanted}
    return sorted(kept, key=sort_key)


def plan_findings(
    loaded: LoadedPlan,
    *,
    verifier_types: Collection[str] = BUILTIN_VERIFIERS,
    graph: Graph | None = None,
    severities: Collection[Severity] | None = None,
    clean: frozenset[int] = frozenset(),
    wrong: set[int] | None = None,
) -> list[Finding]:
    """The findings of the rules that read the plan alone (no file is looked at), of the
    given *severities*, sorted: they follow from the plan file's bytes and the verifier types
    known, so a caller may keep them between runs. The rules that read one node alone skip
    the nodes of *clean* (known to give them nothing) and add to *wrong* the nodes they found
    something wrong with (:class:`~.findings.LintContext`)."""
    graph = Graph.of(loaded.plan) if graph is None else graph
    wanted = None if severities is None else frozenset(severities)
    context = LintContext(loaded, graph, verifier_types, None, wanted, clean, wrong)
    found = {finding for rule in RULES for finding in rule(context)}
    return sorted((f for f in found if wanted is None or f.severity in wanted), key=sort_key)
