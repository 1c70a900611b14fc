"""Benchmark: change-driven invalidation — the impact report, ``impact --since``, the hash cache.

(a) ``diff_impact`` on plans of 1,000 / 10,000 / 50,000 nodes (three ``requires`` edges per
    node, a seeded random DAG) and 1,000 changed outputs, graph and changes built untimed; then
    ``PlanGraph.impact(since=…)`` end to end on a 10,000-node repository. Target < 0.5 s.
(b) ``PlanGraph.impact(since=REV)`` in this process against ``git diff --name-only REV`` (a
    process) over the last 1,000 of 3,000 commits, built with ``git fast-import``, each changing
    two of the plan's 1,000 outputs; with and without naming the commit behind each change
    (``--no-commits``). Target ratio ≤ 2.
(c) ``PlanGraph.open(root).status()`` over 10,000 unchanged artifact files (100 nodes with a
    directory of 100 files), backdated an hour so the racy-clean guard trusts the cache: the
    first run (empty hash cache) against the second. Target ≥ 10x faster.

Times are medians over rounds: wall, and CPU of this process and its children (steadier on a
busy machine). Every ratio compares figures taken in the same run.

Run: ``.venv/bin/python bench/bench_impact.py [--quick] [--only a,b,c] [--rounds 3]``
"""

from __future__ import annotations

import argparse
import functools
import gc
import itertools
import os
import random
import resource
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from pytest_plangraph.api import PlanGraph
from pytest_plangraph.impact.report import diff_impact
from pytest_plangraph.plan.graph import Graph
from pytest_plangraph.plan.model import runtime_plan
from pytest_plangraph.vcs.changes import Change
from pytest_plangraph.vcs.history import changed_paths, last_commits

EDGES_PER_NODE = 3
VERDICT = {True: "met", False: "MISSED"}


@dataclass(frozen=True)
class Sizes:
    """What each benchmark generates."""

    plans: tuple[int, ...]  # (a) nodes per plan
    changed: int  # (a) changed paths
    end_to_end: int  # (a) nodes of the plan timed end to end
    commits: int  # (b) commits in the history
    span: int  # (b) commits in the range REV..HEAD
    outputs: int  # (b) nodes (one output each)
    files: int  # (c) artifact files
    kib: int  # (c) size of each artifact file


FULL = Sizes((1_000, 10_000, 50_000), 1_000, 10_000, 3_000, 1_000, 1_000, 10_000, 4)
QUICK = Sizes((200, 1_000, 2_000), 100, 1_000, 300, 100, 200, 1_000, 4)


def measure(action: Callable[[], object], rounds: int) -> tuple[float, float]:
    """Median wall time and median CPU time (this process and its children) of *action*."""
    return medians([once(action) for _ in range(rounds)])


def once(action: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU time of one run of *action*."""
    gc.collect()  # garbage left by the setup is not the action's cost
    cpu, start = _cpu(), time.perf_counter()
    action()
    return time.perf_counter() - start, _cpu() - cpu


def alternating(actions: list[Callable[[], object]], rounds: int) -> list[tuple[float, float]]:
    """Median wall and CPU time of each action, the actions taking turns in every round (so a
    burst of load on a shared machine falls on all of them)."""
    runs: list[list[tuple[float, float]]] = [[] for _ in actions]
    for _ in range(rounds):
        for action, times in zip(actions, runs, strict=True):
            times.append(once(action))
    return [medians(times) for times in runs]


def medians(runs: Iterable[tuple[float, float]]) -> tuple[float, float]:
    """Median wall and median CPU time of *runs*."""
    walls, cpus = zip(*runs, strict=True)
    return statistics.median(walls), statistics.median(cpus)


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def plan_dict(size: int) -> dict[str, object]:
    """A plan of *size* nodes, node i outputs ``out/n{i}.txt`` checked by an artifact criterion
    and requires three random nodes among the 50 before it."""
    rng = random.Random(size)
    nodes = [
        {
            "id": f"n{i}",
            "outputs": [f"out/n{i}.txt"],
            "acceptance": [{"id": "ac", "verifier": {"type": "artifact", "path": f"out/n{i}.txt"}}],
        }
        for i in range(size)
    ]
    edges = [
        {"from": f"n{j}", "to": f"n{i}", "type": "requires"}
        for i in range(1, size)
        for j in rng.sample(range(max(0, i - 50), i), min(EDGES_PER_NODE, i))
    ]
    return {"plangraph": 1, "plan": f"bench-{size}", "nodes": nodes, "edges": edges}


def changed_outputs(size: int, count: int) -> list[str]:
    """*count* outputs of distinct random nodes, sorted."""
    rng = random.Random(count)
    return sorted(f"out/n{i}.txt" for i in rng.sample(range(size), min(count, size)))


def fast_import(root: Path, commits: Iterable[dict[str, str]]) -> None:
    """A repository at *root* whose ``main`` has one commit per mapping of path → new content
    (ASCII), the last one checked out."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    stream = "".join(_commit(n, files) for n, files in enumerate(commits, start=1))
    subprocess.run(["git", "fast-import", "--quiet"], cwd=root, input=stream.encode(), check=True)
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=root, check=True)


def _commit(n: int, files: dict[str, str]) -> str:
    """Commit *n* of a ``git fast-import`` stream, on top of commit n - 1."""
    message = f"commit {n}"
    parts = [f"commit refs/heads/main\nmark :{n}\n"]
    parts.append(f"committer bench <bench@example.invalid> {1_700_000_000 + n * 60} +0000\n")
    parts.append(f"data {len(message)}\n{message}\n" + (f"from :{n - 1}\n" if n > 1 else ""))
    parts += [f"M 100644 inline {p}\ndata {len(t)}\n{t}\n" for p, t in files.items()]
    return "".join(parts)


def first_commit(size: int) -> dict[str, str]:
    """The plan of *size* nodes, its outputs, and a ``.gitignore`` for the store."""
    files = {f"out/n{i}.txt": f"output {i}\n" for i in range(size)}
    files["plangraph.yaml"] = yaml.safe_dump(plan_dict(size), sort_keys=False)
    files[".gitignore"] = ".plangraph/\n"
    return files


def impact_since(root: Path, rev: str) -> None:
    """``plangraph impact --since REV`` without the interpreter start."""
    with PlanGraph.open(root) as graph:
        graph.impact(since=rev)


def bench_a(sizes: Sizes, rounds: int, tmp: Path) -> None:
    """``diff_impact`` at each plan size, then ``PlanGraph.impact`` end to end."""
    print(f"(a) diff_impact, {EDGES_PER_NODE} edges per node, {sizes.changed} changed paths")
    rows = []
    for size in sizes.plans:
        graph = Graph.of(runtime_plan(plan_dict(size)))
        changes = [Change(path, "modified") for path in changed_outputs(size, sizes.changed)]
        invalidated = len(diff_impact(graph, changes).invalidated)
        wall, cpu = measure(lambda g=graph, c=changes: diff_impact(g, c), rounds)
        rows.append((size, wall, cpu))
        print(f"    nodes={size:>6} invalidated={invalidated:>6} {wall:.3f}s (cpu {cpu:.3f}s)")
        del graph, changes
    (small, w0, c0), (large, w1, c1) = rows[0], rows[-1]
    print(f"    size grew {large / small:.0f}x: time grew {w1 / w0:.1f}x (cpu {c1 / c0:.1f}x)")
    for wall in [wall for size, wall, _ in rows if size == 10_000]:
        print(f"    at 10,000 nodes: {wall:.3f}s, target < 0.5 s: {VERDICT[wall < 0.5]}")
    size, root = sizes.end_to_end, tmp / "a-repo"
    paths = changed_outputs(size, sizes.changed)
    fast_import(root, [first_commit(size), {p: f"changed {p}\n" for p in paths}])
    impact_since(root, "HEAD~1")  # imports, the plan's parse cache
    wall, cpu = measure(lambda: impact_since(root, "HEAD~1"), rounds)
    print(
        f"    end to end, PlanGraph.open(root).impact(since='HEAD~1') at {size} nodes: "
        f"{wall:.3f}s (cpu {cpu:.3f}s; plan file, git and report; no store: nothing hashed)"
    )


def history(outputs: int, commits: int) -> Iterable[dict[str, str]]:
    """The first commit, then commits that each rewrite two random outputs."""
    rng = random.Random(commits)
    yield first_commit(outputs)
    for n in range(2, commits + 1):
        yield {f"out/n{i}.txt": f"version {n}\n" for i in rng.sample(range(outputs), 2)}


def git_diff(root: Path, rev: str) -> None:
    """``git diff --name-only REV`` in a process of its own."""
    subprocess.run(["git", "diff", "--name-only", rev], cwd=root, check=True, capture_output=True)


def bench_b(sizes: Sizes, rounds: int, tmp: Path) -> None:
    """``impact --since`` in process against ``git diff --name-only`` over the same range."""
    root, rev = tmp / "b-repo", f"HEAD~{sizes.span}"
    fast_import(root, history(sizes.outputs, sizes.commits))
    with PlanGraph.open(root) as graph:
        report = graph.impact(since=rev)
        paths = [c.path for c in report.changed]
        print(
            f"(b) impact --since over {sizes.span} of {sizes.commits} commits, plan of "
            f"{sizes.outputs} nodes: {len(paths)} paths changed, "
            f"{len(report.invalidated)} nodes invalidated"
        )
        parts = {
            "git diff --name-only REV (a process)": lambda: git_diff(root, rev),
            "graph.impact(since=REV), plan loaded": lambda: graph.impact(since=rev),
            "  the same, commits=False (--no-commits)": lambda: graph.impact(
                since=rev, commits=False
            ),
            "  of which vcs.changed_paths": lambda: changed_paths(root, rev),
            "  of which vcs.last_commits": lambda: last_commits(root, rev, paths),
            "PlanGraph.open(root).impact(since=REV)": lambda: impact_since(root, rev),
        }
        times = alternating(list(parts.values()), rounds)
    for name, (wall, cpu) in zip(parts, times, strict=True):
        print(f"    {name:<42} {wall:.3f}s (cpu {cpu:.3f}s)")
    (w_git, c_git), (w_call, c_call), (w_bare, c_bare), (w_diff, c_diff) = times[:4]
    print(f"    changed_paths / git diff: {w_diff / w_git:.1f} (cpu {c_diff / c_git:.1f})")
    print(f"    open and impact / git diff: {times[-1][0] / w_git:.1f}")
    for label, wall, cpu in (("", w_call, c_call), (" --no-commits", w_bare, c_bare)):
        print(
            f"    impact{label} / git diff: {wall / w_git:.1f} (cpu {cpu / c_git:.1f}), "
            f"target <= 2: {VERDICT[wall / w_git <= 2]}"
        )


def build_files(root: Path, files: int, kib: int) -> None:
    """100 nodes, each with a directory of files/100 artifact files of *kib* KiB, backdated an
    hour so that no file is racily clean."""
    per_node = max(1, files // 100)
    (root / ".git").mkdir(parents=True)
    hour_ago = time.time() - 3600
    for n in range(100):
        folder = root / "out" / f"d{n}"
        folder.mkdir(parents=True)
        for k in range(per_node):
            path = folder / f"f{k}.bin"
            path.write_bytes(random.Random(n * per_node + k).randbytes(kib * 1024))
            os.utime(path, (hour_ago, hour_ago))
    nodes = [{"id": f"d{n}", "outputs": [f"out/d{n}/"]} for n in range(100)]
    plan = {"plangraph": 1, "plan": "bench-files", "nodes": nodes}
    (root / "plangraph.yaml").write_text(yaml.safe_dump(plan, sort_keys=False))


def status(root: Path, store: Path) -> None:
    """``plangraph status`` without the interpreter start."""
    with PlanGraph.open(root, store=store) as graph:
        graph.status()


def bench_c(sizes: Sizes, rounds: int, tmp: Path) -> None:
    """A second ``status`` (hash cache hits) against the first (empty hash cache); the same for
    ``Workspace.hashes`` alone. Each round starts from an empty store."""
    root = tmp / "c-tree"
    build_files(root, sizes.files, sizes.kib)
    runs: dict[str, list[tuple[float, float]]] = {}
    for n, kind in itertools.product(range(rounds), ("status", "Workspace.hashes alone")):
        with PlanGraph.open(root, store=root / ".plangraph" / f"{n}-{kind}.db") as graph:
            graph.store.count()  # an empty store and the plan's parse cache, untimed
            files = graph.workspace.expand(o for node in graph.plan.nodes for o in node.outputs)
            action: Callable[[], object] = functools.partial(status, root, graph.store_path)
            if kind != "status":
                action = functools.partial(graph.workspace.hashes, files, cache=graph.store)
            for turn in ("first", "second"):
                runs.setdefault(f"{kind}, {turn}", []).append(once(action))
    print(f"(c) status over {len(files)} unchanged artifact files of {sizes.kib} KiB")
    times = {label: medians(values) for label, values in runs.items()}
    for label, (wall, cpu) in times.items():
        print(f"    {label:<32} {wall:.3f}s (cpu {cpu:.3f}s)")
    (w1, c1), (w2, c2), (h1, _), (h2, _) = times.values()
    print(f"    hashing alone: second is {h1 / h2:.1f}x faster")
    print(
        f"    status: second is {w1 / w2:.1f}x faster (cpu {c1 / c2:.1f}x), "
        f"target >= 10x: {VERDICT[w1 / w2 >= 10]}"
    )


def main(argv: list[str] | None = None) -> None:
    """Run the selected benchmarks and print their figures and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (for make bench)")
    parser.add_argument("--only", default="a,b,c", help="comma-separated: a, b, c")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--kib", type=int, help="(c) size of each artifact file, KiB")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    if args.kib:
        sizes = replace(sizes, kib=args.kib)
    benches = {"a": bench_a, "b": bench_b, "c": bench_c}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only.split(","):
            benches[name.strip()](sizes, args.rounds, Path(tmp))


if __name__ == "__main__":
    main()
