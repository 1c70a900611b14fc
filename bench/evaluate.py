"""Evaluation harness (seed 003 §10): replay a git history commit by commit with a plan and
measure what the tool gets right and wrong.

For every commit after the first, with the evidence recorded at the commit before:

* **escaped** — nodes whose tests execute a changed file (ground truth: the repository files
  that a fresh process running only that node's tests executed at the commit before, by
  coverage.py) but that the tool still takes as valid: none of their criteria is stale, failed
  or missing (``plangraph impact --select``), so nothing re-verifies them. Escape rate =
  escaped / reached.
* **over-invalidated** — nodes ``impact`` makes stale that no changed file reaches (by the same
  ground truth; closure invalidation makes some of these on purpose: a node downstream of a
  changed node is stale whatever its tests execute).
* **incorrect completed** — nodes ``completed`` after ``pytest --plangraph --plangraph-stale``
  at that commit whose tests fail there (ground truth: the fresh per-node run).
* **rework** — tests run by ``--plangraph-stale`` against the tests of a full run.
* **impact latency** — wall time of ``plangraph impact --format json`` (store mode).

The tool under evaluation is this checkout's package, copied under another import name
(``plangraph_eval_tool``) so that a repository whose own code is ``pytest_plangraph`` (this
one's history) runs its old code under test while the current plugin judges it. Nothing is
written into the source repository: it is cloned into a temporary directory.

Run::

    .venv/bin/python bench/evaluate.py --generated [--coverage]
    .venv/bin/python bench/evaluate.py --repo . --last 6 [--coverage]

Each prints one Markdown table (a row per commit and a total row), as in docs/evaluation.md.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

from evaluate_history import generate_history

HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parent / "pytest_plangraph"
TOOL = "plangraph_eval_tool"
QUIET = ["-p", "no:cacheprovider", "-p", "no:randomly", "-q"]


@dataclass
class Row:
    """The measures of one commit."""

    commit: str
    changed: int
    reached: set[str]
    stale: set[str]
    rerun: set[str]
    incorrect: set[str]
    ran: int
    full: int
    latency: float

    @property
    def escaped(self) -> set[str]:
        """Nodes reached by a change that the tool still takes as valid (it re-verifies
        neither them nor any of their criteria: not stale, failed or missing)."""
        return self.reached - self.rerun

    @property
    def over(self) -> set[str]:
        """Nodes made stale that no changed file reaches."""
        return self.stale - self.reached


@dataclass
class Replay:
    """A clone of the history being replayed, the tool's copy and the plan."""

    work: Path
    tool: Path
    coverage: bool = False
    rows: list[Row] = field(default_factory=list)

    def env(self, tool: bool) -> dict[str, str]:
        env = {**os.environ, "PLANGRAPH_ACTOR": "evaluate", "PYTHONDONTWRITEBYTECODE": "1"}
        env.pop("PLANGRAPH_STORE", None)
        env["PYTHONPATH"] = str(self.tool) if tool else ""
        return env

    def run(self, command: list[str], *, tool: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            command, cwd=self.work, env=self.env(tool), capture_output=True, text=True
        )

    def pytest(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``pytest --plangraph …`` with the tool's copy as the plugin."""
        plugin = ["-p", "no:plangraph", "-p", f"{TOOL}.plugin", "--plangraph"]
        extra = ["--plangraph-coverage"] if self.coverage else []
        return self.run([sys.executable, "-m", "pytest", *QUIET, *plugin, *extra, *args])

    def cli(self, *args: str) -> dict[str, object]:
        proc = self.run([sys.executable, "-m", TOOL, *args, "--format", "json"])
        if proc.returncode not in (0, 1):
            raise SystemExit(f"plangraph {' '.join(args)} failed: {proc.stderr}")
        data: dict[str, object] = json.loads(proc.stdout)
        return data

    def checkout(self, commit: str) -> None:
        git(self.work, "checkout", "-q", "--force", commit)


def git(root: Path, *args: str) -> str:
    """Run git in *root*; its stdout."""
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return proc.stdout


def copy_tool(dest: Path) -> Path:
    """This checkout's package under the import name :data:`TOOL`, in *dest*."""
    target = dest / TOOL
    shutil.copytree(PACKAGE, target, ignore=shutil.ignore_patterns("__pycache__"))
    for path in target.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("pytest_plangraph", TOOL), encoding="utf-8")
    # the runs block the repository's own plugin (the entry point ``plangraph``, this package
    # at an old commit) with ``-p no:plangraph``: harmless here, so not a narrowing
    config = target / "plugin" / "config.py"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace('"randomly",', '"randomly",\n        "plangraph",'), "utf-8")
    return dest


def plan_yaml(
    nodes: dict[str, tuple[list[str], list[str]]], edges: Iterable[tuple[str, str]]
) -> str:
    """A plan of one test criterion per node: node → (outputs, test files)."""
    lines = ["plangraph: 1", "plan: evaluation", "nodes:"]
    for node, (outputs, tests) in nodes.items():
        lines += [f"  - id: {node}", f"    outputs: {json.dumps(outputs)}", "    acceptance:"]
        lines.append(
            f"      - {{id: ac-tests, verifier: {{type: test, tests: {json.dumps(tests)}}}}}"
        )
    lines.append("edges:" if edges else "edges: []")
    lines += [f"  - {{from: {a}, to: {b}, type: requires}}" for a, b in edges]
    return "\n".join(lines) + "\n"


def ground_truth(replay: Replay, tests: dict[str, list[str]]) -> dict[str, tuple[set[str], bool]]:
    """Node → (repository files its tests executed in a fresh process, whether they passed)."""
    found: dict[str, tuple[set[str], bool]] = {}
    for node, files in tests.items():
        data = replay.work / f".coverage-{node}"
        command = [sys.executable, "-m", "coverage", "run", f"--data-file={data}"]
        command += [f"--include={replay.work.resolve()}/*"]
        command += ["-m", "pytest", *QUIET, "-p", "no:plangraph", *files]
        proc = replay.run(command, tool=False)
        found[node] = (_executed(replay, data), proc.returncode == 0)
        data.unlink(missing_ok=True)
    return found


def _executed(replay: Replay, data: Path) -> set[str]:
    """Repository-relative files measured in a coverage data file."""
    import coverage

    if not data.exists():
        return set()
    measured = coverage.CoverageData(basename=str(data))
    measured.read()
    root = replay.work.resolve()
    found = set()
    for name in measured.measured_files():
        try:
            found.add(Path(name).resolve().relative_to(root).as_posix())
        except ValueError:
            continue
    return found


def replay_history(
    source: Path,
    commits: list[str],
    plan: str,
    tests: dict[str, list[str]],
    *,
    coverage: bool = False,
) -> list[Row]:
    """Replay *commits* (oldest first) of *source* with *plan*; one :class:`Row` per commit
    after the first."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        subprocess.run(["git", "clone", "-q", str(source), str(work)], check=True)
        (work / ".git" / "info" / "exclude").write_text(
            "plangraph.yaml\n.plangraph/\n.coverage*\n", encoding="utf-8"
        )
        replay = Replay(work, copy_tool(Path(tmp) / "tool"), coverage)
        replay.checkout(commits[0])
        (work / "plangraph.yaml").write_text(plan, encoding="utf-8")
        replay.pytest()  # the first full run records the baseline
        truth = ground_truth(replay, tests)
        for prev, commit in pairwise(commits):
            replay.checkout(commit)
            changed = set(git(work, "diff", "--name-only", prev, commit).split())
            start = time.perf_counter()
            impact = replay.cli("impact", "--no-commits")
            latency = time.perf_counter() - start
            stale = {str(e["node"]) for e in impact["invalidated"]}  # type: ignore[union-attr]
            chosen = replay.cli("impact", "--select")["criteria"]
            rerun = {str(c["criterion"]).split("/")[0] for c in chosen}  # type: ignore[union-attr]
            reached = {n for n, (files, _) in truth.items() if files & changed}
            ran, full = _counts(replay.pytest("--plangraph-stale").stdout)
            status = replay.cli("status")
            completed = {str(n["id"]) for n in status["nodes"] if n["status"] == "completed"}  # type: ignore[union-attr,index]
            truth = ground_truth(replay, tests)
            failing = {n for n, (_, passed) in truth.items() if not passed}
            replay.rows.append(
                Row(
                    commit[:8],
                    len(changed),
                    reached,
                    stale,
                    rerun,
                    completed & failing,
                    ran,
                    full,
                    latency,
                )
            )
        return replay.rows


def _counts(output: str) -> tuple[int, int]:
    """Tests run and tests collected, from pytest's last line."""
    found = {w: int(n) for n, w in re.findall(r"(\d+) (passed|failed|errors?|deselected)", output)}
    ran = sum(v for k, v in found.items() if k != "deselected")
    return ran, ran + found.get("deselected", 0)


def table(rows: list[Row]) -> str:
    """The rows and a total as a Markdown table."""
    head = (
        "| commit | changed files | reached | made stale | escaped | over-invalidated "
        "| incorrect completed | tests rerun / full | impact latency |\n"
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    )
    lines = [head]
    for r in rows:
        lines.append(
            f"| `{r.commit}` | {r.changed} | {len(r.reached)} | {len(r.stale)} | "
            f"{len(r.escaped)} | {len(r.over)} | {len(r.incorrect)} | {r.ran} / {r.full} | "
            f"{r.latency * 1000:.0f} ms |"
        )
    reached = sum(len(r.reached) for r in rows)
    escaped = sum(len(r.escaped) for r in rows)
    stale = sum(len(r.stale) for r in rows)
    over = sum(len(r.over) for r in rows)
    ran, full = sum(r.ran for r in rows), sum(r.full for r in rows)
    rate = f"{escaped / reached:.3f}" if reached else "n/a"
    over_rate = f"{over / stale:.3f}" if stale else "n/a"
    latency = statistics.median(r.latency for r in rows) * 1000 if rows else 0.0
    lines.append(
        f"| **total** | {sum(r.changed for r in rows)} | {reached} | {stale} | "
        f"{escaped} (rate {rate}) | {over} (share {over_rate}) | "
        f"{sum(len(r.incorrect) for r in rows)} | {ran} / {full} "
        f"({ran / full if full else 0:.3f}) | median {latency:.0f} ms |"
    )
    return "\n".join(lines)


def own_plan(
    root: Path, commit: str, only: set[str] | None = None
) -> tuple[str, dict[str, list[str]]]:
    """A plan over this package at *commit*: one node per subpackage or top-level module that
    has a ``tests/test_NAME.py``, its tests that file; an edge wherever one imports another
    (static imports, leaving out any that would close a cycle). *only* keeps those nodes."""
    names = git(root, "ls-tree", "--name-only", commit, "pytest_plangraph/").split()
    tests_there = set(git(root, "ls-tree", "--name-only", commit, "tests/").split())
    nodes: dict[str, tuple[list[str], list[str]]] = {}
    for path in names:
        name = Path(path).stem if path.endswith(".py") else Path(path).name
        test = f"tests/test_{name}.py"
        if name.startswith("_") or test not in tests_there or (only and name not in only):
            continue
        outputs = [path] if path.endswith(".py") else [f"{path}/*.py"]
        nodes[name] = (outputs, [test])
    edges: list[tuple[str, str]] = []
    for node, (outputs, _) in nodes.items():
        for other in sorted(_imports(root, commit, outputs[0]) & nodes.keys() - {node}):
            if not _reaches(edges, node, other):  # other → node closes no cycle
                edges.append((other, node))
    return plan_yaml(nodes, edges), {n: t for n, (_, t) in nodes.items()}


def _imports(root: Path, commit: str, output: str) -> set[str]:
    """Names of the package's modules and subpackages imported by the files of *output*."""
    folder = output.removesuffix("/*.py")
    files = (
        [output]
        if output.endswith(".py") and "*" not in output
        else [
            f
            for f in git(root, "ls-tree", "-r", "--name-only", commit, folder).split()
            if f.endswith(".py")
        ]
    )
    found: set[str] = set()
    for file in files:
        tree = ast.parse(git(root, "show", f"{commit}:{file}"))
        for item in ast.walk(tree):
            if isinstance(item, ast.ImportFrom) and item.module:
                found.add(item.module.lstrip(".").split(".")[0])
                found.update(alias.name for alias in item.names)
    return found


def _reaches(edges: list[tuple[str, str]], start: str, goal: str) -> bool:
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            todo.extend(b for a, b in edges if a == node)
    return False


def main(argv: list[str] | None = None) -> None:
    """Replay a history and print its table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, help="replay this repository's history")
    parser.add_argument("--last", type=int, default=6, help="how many recent commits (--repo)")
    parser.add_argument("--generated", action="store_true", help="replay a generated history")
    parser.add_argument("--nodes", help="comma-separated modules to keep in the plan (--repo)")
    parser.add_argument("--coverage", action="store_true", help="run with --plangraph-coverage")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        if args.generated:
            source = Path(tmp) / "generated"
            commits, plan, tests = generate_history(source)
        elif args.repo:
            source = args.repo.resolve()
            commits = git(source, "rev-list", "--first-parent", f"-{args.last}", "HEAD").split()[
                ::-1
            ]
            only = set(args.nodes.split(",")) if args.nodes else None
            plan, tests = own_plan(source, commits[0], only)
        else:
            parser.error("give --repo PATH or --generated")
        rows = replay_history(source, commits, plan, tests, coverage=args.coverage)
    mode = "--plangraph-coverage" if args.coverage else "default mode"
    print(f"{len(tests)} nodes, {len(commits)} commits, {mode}\n")
    print(table(rows))


if __name__ == "__main__":
    main()
