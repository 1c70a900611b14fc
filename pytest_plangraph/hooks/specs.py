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

One plugin manager (:func:`.manager.get_plugin_manager`) serves both the CLI and
the pytest plugin, so a verifier installed once works in both. Set
``PLANGRAPH_DISABLE_PLUGIN_AUTOLOAD=1`` to load no entry points.

A plugin's bug stays the plugin's: the notification hooks are called one implementation at a
time, and one that raises is reported in a warning line while the command goes on with the
same result and exit code; a verifier that raises or answers junk makes its criteria ``error``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from ..plan.evidence import Evidence
    from ..verifiers import VerifierType

PROJECT = "plangraph"
"""pluggy project name and entry-point group."""

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def plangraph_verifier_types() -> list[VerifierType]:
    """Return the verifier types this plugin adds.

    Each type has a ``name`` (the ``type:`` written in plans), ``runs_in_pytest``,
    ``config_problems(settings, workspace) -> list[str]``,
    ``run(node, criterion, workspace) -> VerifierResult`` and optionally
    ``subjects(settings) -> list[str]`` (see :class:`pytest_plangraph.verifiers.VerifierType`).

    A name registered by two plugins is refused for the criteria that use it: lint reports
    ``VERIFIER_CONFIG`` on them and running them gives ``error``; other criteria work. An
    exception (``SystemExit`` included) raised by ``run`` or ``subjects``, or a ``subjects``
    answer that is not a list of paths, marks that criterion ``error`` with
    ``VERIFIER_CRASHED`` and the exception text; it never stops a run. ``config_problems``
    may answer one string (one problem); a crash or an answer that is not a list becomes one
    problem saying so.
    """
    raise NotImplementedError


@hookspec
def plangraph_evidence_recorded(evidence: Evidence, store_path: str) -> None:
    """Called after *evidence* was appended to the store at *store_path*.

    The record is final and immutable; use it to notify, mirror or export evidence. It is
    called by the process that writes the store (under xdist, the controller only). An
    implementation that raises (``SystemExit`` included) gets one warning line on stderr,
    naming the plugin, the hook and the exception; the evidence stays recorded, the other
    plugins are still called and the command's result and exit code do not change.
    """


@hookspec
def plangraph_gate_decision(decision: Any) -> None:
    """Called after the completion gate judged a node (a claim, or ``--plangraph-gate``).

    *decision* is a :class:`pytest_plangraph.judge.derive.GateDecision`: the node, the verdict
    (``PASSED``/``FAILED``), the status, the reasons and the evidence used. An implementation
    that raises is reported and ignored, as for :func:`plangraph_evidence_recorded`: the claim
    stays recorded and its verdict and exit code stand.
    """


@hookspec
def plangraph_report_formats() -> dict[str, Callable[[dict[str, Any]], str]]:
    """Return extra report formats: format name -> function rendering a JSON report as text.

    ``plangraph status --format NAME`` offers them; the function gets the document that
    ``status --format json`` prints (a plain dict with ``"format": 1``) and returns the text
    to print. Built-in names (``text``, ``json``) cannot be replaced; when two plugins add one
    name, the plugin registered first wins. An implementation that raises or answers
    something other than a mapping is left out with a warning; a format function that raises
    or returns no text is an error of that command (exit 2).
    """
    raise NotImplementedError
