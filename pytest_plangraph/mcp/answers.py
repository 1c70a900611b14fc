"""The answers of the MCP tools and resources, as plain JSON values (no SDK needed).

Each answer is the JSON that ``plangraph COMMAND --format json`` prints for the same question,
``"format": 1`` included, built from the same API objects (``status_json``, ``Explanation``,
``Agenda``, ``ImpactReport``, ``GateDecision``, ``PatchResult``). Every call opens the
repository afresh, so an answer never comes from a plan or a store read before: the server may
live for hours while the plan is patched, CI records evidence and people approve. Bad input
raises :class:`~pytest_plangraph.errors.PlangraphError`, which the server turns into a tool
error with the same message the command prints.

Only reading answers, :func:`claim` (a claim is the agent's word, judged by the gate) and
:func:`propose_patch` (``PlanGraph.patch``, which lints and counts replan rounds) are offered:
nothing here records evidence, approvals, retries or cancels.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..api import PlanGraph
from ..errors import UsageError
from ..plan.model import FORMAT_VERSION

__all__ = [
    "ServedRepository",
    "claim",
    "explain",
    "impact",
    "next_nodes",
    "plan_text",
    "propose_patch",
    "status",
]

PATCH_NAME = "<propose_patch>"
"""How messages name a patch given to ``propose_patch``."""


@dataclass(frozen=True)
class ServedRepository:
    """Where the server's answers come from: the repository root, the plan file and the store,
    resolved once when the server starts (so the working directory of a later call does not
    matter), and whether the store was named (``--store`` or ``$PLANGRAPH_STORE``)."""

    root: Path
    plan: Path | None
    store: Path
    store_named: bool

    @classmethod
    def resolve(cls, root: Path | None, plan: Path | None, store: Path | None) -> ServedRepository:
        """Open the repository once, as the commands do (a plan lint rejects is refused), and
        keep where its files are."""
        named = store is not None or bool(os.environ.get("PLANGRAPH_STORE"))
        with PlanGraph.open(root, plan=plan, store=store) as plangraph:
            found = cls(plangraph.root, plangraph.plan_path, plangraph.store_path, named)
            found._checked(plangraph, reading=False)
        return found

    def open(self, *, reading: bool = True, checked: bool = True) -> PlanGraph:
        """The repository as it is now. A *reading* answer makes no store, and one named that
        does not exist is an error (as for the commands); *checked*: a plan that lint rejects
        is refused."""
        plangraph = PlanGraph.open(self.root, plan=self.plan, store=self.store)
        try:
            if checked:
                self._checked(plangraph, reading=reading)
        except BaseException:
            plangraph.close()
            raise
        return plangraph

    def _checked(self, plangraph: PlanGraph, *, reading: bool) -> None:
        if reading and self.store_named and not plangraph.has_store():
            raise UsageError(
                f"there is no store at {plangraph.store_path} (no file, or an empty one); "
                "check --store and $PLANGRAPH_STORE (reading makes no store)"
            )
        for finding in plangraph.check_plan():  # files changed under the plan: told, no stop
            print(
                f"plangraph: warning: {finding.location}: {finding.code}: {finding.hint}",
                file=sys.stderr,
            )


def _answer(data: Mapping[str, Any]) -> dict[str, Any]:
    return {"format": FORMAT_VERSION, **data}


def status(repo: ServedRepository) -> dict[str, Any]:
    """``plangraph status --format json``: the state table."""
    with repo.open() as plangraph:
        fold = plangraph.fold()
        return _answer(plangraph.status_json(fold, plangraph.status(fold)))


def explain(repo: ServedRepository, node: str) -> dict[str, Any]:
    """``plangraph explain NODE --format json``."""
    with repo.open() as plangraph:
        return _answer(plangraph.explain(node).to_json())


def next_nodes(repo: ServedRepository) -> dict[str, Any]:
    """``plangraph next --format json``."""
    with repo.open() as plangraph:
        return _answer(plangraph.next().to_json())


def impact(repo: ServedRepository, since: str | None = None) -> dict[str, Any]:
    """``plangraph impact [--since REV] --format json`` (records nothing: no ``--apply``)."""
    with repo.open(reading=since is None) as plangraph:
        return _answer(plangraph.impact(since).to_json())


def claim(
    repo: ServedRepository,
    node: str,
    by: str,
    idempotency_key: str | None = None,
    expected_plan_version: int | None = None,
) -> dict[str, Any]:
    """``plangraph claim NODE --by WHO --format json``: the gate's decision on the claim."""
    with repo.open(reading=False) as plangraph:
        decision = plangraph.claim(
            node,
            by=by,
            idempotency_key=idempotency_key,
            expected_plan_version=expected_plan_version,
        )
        return _answer(decision.to_json())


def propose_patch(
    repo: ServedRepository, patch: str | Mapping[str, Any], by: str, expected_plan_version: int
) -> dict[str, Any]:
    """``plangraph patch FILE --by WHO --expected-plan-version N --format json``: the patch as
    the text of a patch file (YAML or JSON) or as its JSON object. Like the command, a plan
    that lint rejects may be patched (that is how it gets repaired)."""
    if not isinstance(patch, str | Mapping):
        raise UsageError(f"patch is the text of a patch or its object, not {type(patch).__name__}")
    with repo.open(reading=False, checked=False) as plangraph:
        result = plangraph.patch(
            patch, by=by, expected_plan_version=expected_plan_version, name=PATCH_NAME
        )
        return _answer(result.to_json())


def plan_text(repo: ServedRepository) -> str:
    """The plan file as it is now (the ``plangraph://plan`` resource)."""
    if repo.plan is None:
        raise UsageError("the server's plan was not read from a file")
    try:
        return repo.plan.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read the plan file {repo.plan}: {exc}") from exc
