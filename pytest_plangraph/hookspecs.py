"""The extension API of pytest-plangraph: pluggy hook specifications (DESIGN §8).

The project name and the entry-point group are both ``plangraph``. A third-party package adds
verifier types, reacts to recorded evidence and gate decisions, or adds report formats by
exposing a module (or object) with hook implementations under that group::

    # pyproject.toml
    [project.entry-points.plangraph]
    linecount = "plangraph_linecount"

    # plangraph_linecount.py
    import pluggy
    hookimpl = pluggy.HookimplMarker("plangraph")

    @hookimpl
    def plangraph_verifier_types():
        return [LineCount()]

One plugin manager (:func:`pytest_plangraph.plugins.get_plugin_manager`) serves both the CLI and
the pytest plugin, so a verifier installed once works in both. Set
``PLANGRAPH_DISABLE_PLUGIN_AUTOLOAD=1`` to load no entry points.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from .model import Evidence
    from .verifiers import VerifierType

PROJECT = "plangraph"
"""pluggy project name and entry-point group."""

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def plangraph_verifier_types() -> list[VerifierType]:
    """Return the verifier types this plugin adds.

    Each type has a ``name`` (the ``type:`` written in plans), ``runs_in_pytest``,
    ``config_problems(settings, workspace) -> list[str]`` and
    ``run(node, criterion, workspace) -> VerifierResult`` (see
    :class:`pytest_plangraph.verifiers.VerifierType`). A name registered by two plugins is
    refused for the criteria that use it. An exception raised by ``run`` marks that criterion
    ``error`` with ``VERIFIER_CRASHED`` and the exception text; it never stops a run.
    """
    raise NotImplementedError


@hookspec
def plangraph_evidence_recorded(evidence: Evidence, store_path: str) -> None:
    """Called after *evidence* was appended to the store at *store_path*.

    The record is final and immutable; use it to notify, mirror or export evidence. It is
    called by the process that writes the store (under xdist, the controller only).
    """


@hookspec
def plangraph_gate_decision(decision: Any) -> None:
    """Called after the completion gate judged a node (a claim, or ``--plangraph-gate``).

    *decision* is a :class:`pytest_plangraph.state.GateDecision`: the node, the verdict
    (``PASSED``/``FAILED``), the status, the reasons and the evidence used.
    """


@hookspec
def plangraph_report_formats() -> dict[str, Callable[[dict[str, Any]], str]]:
    """Return extra report formats: format name -> function rendering a JSON report as text.

    The report is the ``--format json`` document of a command (a plain dict with
    ``"format": 1``). Built-in names (``text``, ``json``) cannot be replaced.
    """
    raise NotImplementedError
