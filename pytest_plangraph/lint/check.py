"""Checking a repository's plan before a command judges anything: lint with the files on
disk, the plan-only errors kept in the plan cache, and which errors stop a command.

:class:`~pytest_plangraph.repository.Repository` delegates ``check_plan``, ``plan_problems``
and ``lint`` here; every function takes a :class:`LintSubject`: the loaded plan, its graph, the
verifier registry and the workspace (whose ``cache`` is the plan cache's folder), as values.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING

from ..errors import PlanError, Problem
from ..values import dataclass
from .files import WorkspaceFileCheck
from .findings import ERRORS, Finding, Severity, from_kept, to_kept
from .runner import lint_plan, plan_findings

if TYPE_CHECKING:
    from ..plan.file import LoadedPlan
    from ..plan.graph import Graph
    from ..vcs.workspace import Workspace
    from ..verifiers import Registry
    from .kept import KeptCheck


@dataclass(frozen=True)
class LintSubject:
    """The plan lint checks and what it checks the plan against."""

    loaded: LoadedPlan
    graph: Graph
    registry: Registry
    workspace: Workspace


def check_plan(
    subject: LintSubject, problems: tuple[list[Finding], list[Finding]] | None = None
) -> list[Finding]:
    """See :meth:`PlanGraph.check_plan <pytest_plangraph.api.PlanGraph.check_plan>`;
    *problems* are :func:`plan_problems` when the caller has them."""
    blocking, settings = plan_problems(subject) if problems is None else problems
    if blocking:
        found = [Problem(f.location, 0, 0, "", f"{f.code}: {f.hint}") for f in blocking]
        fix = Problem(subject.loaded.file, 0, 0, "", "fix these first (plangraph lint)")
        raise PlanError([*found, fix])
    return settings


def plan_problems(
    subject: LintSubject, look: KeptCheck | None = None
) -> tuple[list[Finding], list[Finding]]:
    """See :meth:`PlanGraph.plan_problems <pytest_plangraph.api.PlanGraph.plan_problems>`;
    *look* is the look at the kept answer that missed: the answer is kept with it."""
    types = subject.registry.names()
    known = kept_findings(subject, types, ERRORS)
    if known is None:
        known = plan_findings(
            subject.loaded, verifier_types=types, graph=subject.graph, severities=ERRORS
        )
    files = WorkspaceFileCheck(subject.workspace, subject.registry)
    found = lint(subject, severities=ERRORS, known=known, files=files)
    plan_only = set(known)
    goes_on = {f"{node}/{criterion}: " for node, criterion in files.not_settings}
    on_disk = [
        f
        for f in found
        if f.code == "VERIFIER_CONFIG" and f not in plan_only and f.hint.startswith(tuple(goes_on))
    ]
    problems = [f for f in found if f not in on_disk], on_disk
    if look is not None:
        registry = subject.registry
        used = {c.verifier.type for n in subject.loaded.plan.nodes for c in n.acceptance}
        settled = {t: registry.runs(t) for t in sorted(used) if registry.settings_alone(t)}
        look.keep(files, problems, settled)
    return problems


def lint(
    subject: LintSubject,
    *,
    run_data: Callable[[], Iterable[Finding]] | None = None,
    severities: Collection[Severity] | None = None,
    known: Collection[Finding] | None = None,
    files: WorkspaceFileCheck | None = None,
) -> list[Finding]:
    """See :meth:`PlanGraph.lint <pytest_plangraph.api.PlanGraph.lint>`; *files* is the file
    check to ask (a fresh one by default); *run_data* gives the findings of the run data (the
    coverage of the latest evidence), asked for while the file checks remember escapes."""
    from ..vcs.workspace import remembered_escapes

    registry = subject.registry
    types = registry.names()
    with remembered_escapes():
        return lint_plan(
            subject.loaded,
            verifier_types=types,
            files=WorkspaceFileCheck(subject.workspace, registry) if files is None else files,
            extra=run_data() if run_data is not None else (),
            graph=subject.graph,
            severities=severities,
            known=kept_findings(subject, types, severities) if known is None else known,
        )


def kept_findings(
    subject: LintSubject, types: list[str], severities: Collection[Severity] | None
) -> list[Finding] | None:
    """The plan-only lint findings of *severities* (only errors are kept, the check every
    command makes), from the plan cache, or found and kept there; None when the plan has
    no cache entries or other severities are asked for.

    They are kept under the plan's content key (its parsed data), so an edit of comments or
    layout keeps them: findings say where they are (lines, in their locations and hints), so
    kept ones are used for other bytes of the same data only when there are none."""
    from ..plan.cache import keep_entry, lint_version, read_entry

    loaded, cache, file = subject.loaded, subject.workspace.cache, subject.loaded.file
    key, source = loaded.content_key, loaded.cache_key
    if key is None or cache is None or severities is None or set(severities) != set(ERRORS):
        return None
    version = lint_version()
    kept = read_entry(cache, "lint", key, version)
    if isinstance(kept, dict) and kept.get("types") == types:
        found = from_kept(kept.get("findings"), file)
        if found is not None and (found == [] or kept.get("file") == source):
            return found
    from .nodecache import plan_findings_by_node  # a plan whose meaning changed

    found = plan_findings_by_node(
        subject.loaded, cache, verifier_types=types, graph=subject.graph, severities=severities
    )
    entry = {"types": types, "file": source, "findings": to_kept(found, file)}
    keep_entry(cache, "lint", key, version, entry)
    return found
