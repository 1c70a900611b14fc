"""Running fuzzed plan files through every reader of plans, in this process, with a hang guard.

Each plan file is written into a small repository and given to ``plangraph lint`` (text and
JSON), ``plangraph status`` and the pytest plugin's plan loading (``PlanGraph.open`` and the
plan check the plugin makes before a run). The command is called through
``pytest_plangraph.cli.main(argv)``, the function the console script runs, so that thousands
of files cost no interpreter start each. What may happen: an exit code the command documents
(lint 0, 1 or 2; status 0 or 2) with, for 2, one ``plangraph: error:`` message and no
traceback; for the plugin's loading, a :class:`PlangraphError` (pytest turns it into a usage
error). Anything else — another exception, another exit code, a call still running after the
guard's deadline — is a finding.
"""

from __future__ import annotations

import contextlib
import io
import sys
import threading
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness_plans import EXCLUDED_PATTERNS, HOSTILE_GLOBS, PlanFile

from pytest_plangraph.errors import PlangraphError

HANG_GUARD_S = 60.0
"""How long one call may run before it counts as hung: a plan check takes milliseconds, so
only a call that never ends reaches it, even on a loaded machine."""
ROOT_FILES = {
    "src/a.json": '{"name": "x"}\n',
    "src/schema.json": '{"type": "object"}\n',
    "tests/test_x.py": "def test_t():\n    pass\n",
}
ALLOWED_EXITS = {"lint": {0, 1, 2}, "lint-json": {0, 1, 2}, "status": {0, 2}}


@dataclass(frozen=True)
class Finding:
    """One way a reader of plans misbehaved on one file."""

    reader: str
    kind: str
    """``traceback``, ``hang``, ``exit`` (an undocumented exit code) or ``message``."""
    detail: str
    plan: PlanFile


@dataclass
class FuzzFigures:
    """Counts over all the files checked."""

    files: int = 0
    made: Counter[str] = field(default_factory=Counter)
    exits: Counter[str] = field(default_factory=Counter)
    findings: list[Finding] = field(default_factory=list)
    excluded: int = 0
    """Files not given to ``status`` (see :data:`harness_plans.EXCLUDED_PATTERNS`)."""
    readers: tuple[str, ...] = ("lint", "lint-json", "status")
    """The commands each file is given to (the plugin's loading always comes last)."""

    def count(self, kind: str) -> int:
        """How many findings of *kind*."""
        return sum(1 for f in self.findings if f.kind == kind)


def make_root(root: Path) -> Path:
    """A repository for the plans: a ``.git`` folder and the files plausible plans name."""
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for name, text in ROOT_FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def check_plan_file(root: Path, plan: PlanFile, figures: FuzzFigures) -> list[Finding]:
    """Give *plan* to every reader; add what happened to *figures*; return the findings."""
    figures.files += 1
    figures.made[plan.how] += 1
    for old in root.glob("plan*"):
        old.unlink()
    path = root / plan.name
    path.write_bytes(plan.data)
    found = []
    excluded = any(pattern.encode() in plan.data for pattern in EXCLUDED_PATTERNS)
    for reader, argv in _commands(root, path):
        if reader not in figures.readers:
            continue
        if reader == "status" and excluded:
            figures.excluded += 1
            continue
        found.extend(_run_command(reader, argv, plan, figures))
    found.extend(_load_as_plugin(root, path, plan, figures))
    figures.findings.extend(found)
    return found


def _commands(root: Path, path: Path) -> list[tuple[str, list[str]]]:
    where = ["--root", str(root)]
    return [
        ("lint", ["lint", str(path), *where]),
        ("lint-json", ["lint", str(path), "--format", "json", *where]),
        ("status", ["status", "--plan", str(path), "--format", "json", *where]),
    ]


def _run_command(
    reader: str, argv: list[str], plan: PlanFile, figures: FuzzFigures
) -> list[Finding]:
    from pytest_plangraph.cli import main

    out, err = io.StringIO(), io.StringIO()

    def call() -> int:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                return main(argv)
            except SystemExit as exc:  # argparse: not expected here, but a documented exit
                return exc.code if isinstance(exc.code, int) else 2

    code, problem = guarded(call)
    if problem is not None:
        return [Finding(reader, problem[0], problem[1], plan)]
    figures.exits[f"{reader} {code}"] += 1
    if code not in ALLOWED_EXITS[reader]:
        return [Finding(reader, "exit", f"exit {code}: {err.getvalue()[-500:]}", plan)]
    message = err.getvalue()
    if code == 2 and (not message.startswith("plangraph: error: ") or "Traceback" in message):
        return [Finding(reader, "message", message[-500:], plan)]
    return []


def _load_as_plugin(root: Path, path: Path, plan: PlanFile, figures: FuzzFigures) -> list[Finding]:
    """What ``pytest --plangraph=PLAN`` does with the plan before any test runs."""
    from pytest_plangraph.api import PlanGraph

    def call() -> str:
        try:
            graph = PlanGraph.open(root, plan=path, store=root / ".plangraph" / "store.db")
        except PlangraphError:
            return "usage error"
        with graph:
            errors, _ = graph.plan_problems()
        return "usage error" if errors else "loaded"

    result, problem = guarded(call)
    if problem is not None:
        return [Finding("plugin", problem[0], problem[1], plan)]
    figures.exits[f"plugin {result}"] += 1
    return []


def guarded(call: Callable[[], Any], limit: float = HANG_GUARD_S) -> tuple[Any, Any]:
    """Run *call* in a thread; return ``(value, None)``, or ``(None, (kind, detail))`` when it
    raised (``traceback``) or was still running after *limit* seconds (``hang``). A hung
    call's thread cannot be stopped: it is left to run as a daemon, and the streams it had
    redirected are put back."""
    box: dict[str, Any] = {}
    streams = sys.stdout, sys.stderr

    def target() -> None:
        try:
            box["value"] = call()
        except BaseException:  # everything a reader lets out is the finding
            box["error"] = traceback.format_exc()

    thread = threading.Thread(target=target, daemon=True, name="plangraph-fuzz")
    thread.start()
    thread.join(limit)
    if thread.is_alive():
        sys.stdout, sys.stderr = streams
        return None, ("hang", f"still running after {limit:.0f} s")
    if "error" in box:
        return None, ("traceback", box["error"][-3000:])
    return box["value"], None


def describe(finding: Finding) -> str:
    """A finding as text, with the file that caused it (its bytes as a Python literal)."""
    data = finding.plan.data
    shown = repr(data[:600]) + (" …" if len(data) > 600 else "")
    return (
        f"{finding.reader}: {finding.kind} on {finding.plan.name} ({finding.plan.how})\n"
        f"{finding.detail}\nfile: {shown}"
    )


def known_pattern_answers(root: Path) -> dict[str, str]:
    """What ``status`` answers for a plan whose one output is each hostile glob: ``answered``,
    else the kind of finding."""
    answers = {}
    for pattern in HOSTILE_GLOBS:
        text = f"plangraph: 1\nplan: p\nnodes:\n  - id: a\n    outputs: ['{pattern}']\n"
        plan = PlanFile("plangraph.yaml", text.encode(), "known")
        (root / plan.name).write_bytes(plan.data)
        argv = dict(_commands(root, root / plan.name))["status"]
        found = _run_command("status", argv, plan, FuzzFigures())
        shown = pattern if len(pattern) < 20 else f"{pattern[:8]}... ({len(pattern)} chars)"
        answers[shown] = (
            f"{found[0].kind}: {found[0].detail.splitlines()[-1]}" if found else "answered"
        )
    return answers


def fuzz(root: Path, examples: int, *, suite: bool) -> FuzzFigures:
    """Check *examples* fuzzed plan files in the repository at *root*.

    In the *suite* the examples are derandomized (the same files on every run, so CI is
    deterministic), the first finding fails the run and Hypothesis shrinks it to a small file.
    Otherwise (the benchmark) the files are random, every finding is counted and the run goes
    on; the figures say what happened.
    """
    from harness_plans import plan_files
    from hypothesis import HealthCheck, Phase, given, settings

    # the suite leaves out lint's JSON output (the same reading as its text) to stay quick
    figures = FuzzFigures(readers=("lint", "status") if suite else FuzzFigures.readers)
    phases = list(Phase) if suite else [Phase.generate]

    @settings(
        max_examples=examples,
        deadline=None,  # a loaded machine is slow, never wrong
        database=None,
        derandomize=suite,
        phases=phases,
        suppress_health_check=list(HealthCheck),
    )
    @given(plan_files())
    def each(plan: PlanFile) -> None:
        found = check_plan_file(root, plan, figures)
        if suite and found:
            raise AssertionError("\n\n".join(describe(f) for f in found))

    each()
    return figures
