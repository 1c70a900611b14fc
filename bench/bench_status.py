"""Benchmark: ``status`` and one ``claim`` on generated plans of 500 … 5,000 nodes.

Each plan has three edges per node (a random DAG, seeded) and ten events per node (evidence
records and claims; each claim carries the gate's verdict, as ``plangraph claim`` records it),
written to a real SQLite store in a temporary repository. The script prints
the wall and CPU time of a full ``status`` (open the plan, read every event, hash every output,
derive every status) and of one ``claim``, and the growth ratio from the smallest plan to the
largest: with linear growth the time ratio equals the size ratio. Also one ``status`` right
after the plan cache is emptied, as after an edit of the plan (parsed again, digests again).

Run: ``.venv/bin/python bench/bench_status.py [--sizes 500,1000,5000]``
"""

from __future__ import annotations

import argparse
import functools
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import yaml

from pytest_plangraph.api import PlanGraph
from pytest_plangraph.model import Event

EDGES_PER_NODE = 3
EVENTS_PER_NODE = 10
CLAIM = {"verdict": "FAILED"}


def build(root: Path, size: int) -> None:
    """Write a plan of *size* nodes with their outputs, and a store of 10 events per node."""
    rng = random.Random(size)
    nodes, edges = [], []
    (root / ".git").mkdir(parents=True)
    (root / "out").mkdir()
    for i in range(size):
        (root / "out" / f"n{i}.txt").write_text(f"output {i}\n")
        nodes.append(
            {
                "id": f"n{i}",
                "outputs": [f"out/n{i}.txt"],
                "acceptance": [
                    {"id": "ac-out", "verifier": {"type": "artifact", "path": f"out/n{i}.txt"}},
                    {"id": "ac-ok", "verifier": {"type": "approval"}},
                ],
            }
        )
    for i in range(1, size):
        for j in rng.sample(range(max(0, i - 50), i), min(EDGES_PER_NODE, i)):
            edges.append({"from": f"n{j}", "to": f"n{i}", "type": "requires"})
    plan = {"plangraph": 1, "plan": f"bench-{size}", "nodes": nodes, "edges": edges}
    (root / "plangraph.yaml").write_text(yaml.safe_dump(plan, sort_keys=False))
    _fill_store(root)


def _fill_store(root: Path) -> None:
    with PlanGraph.open(root) as graph:
        records = graph.verify(by="bench")  # one evidence record per node
        digest = graph.plan.digest
        extra = []
        start = datetime.now(timezone.utc)
        per_node = EVENTS_PER_NODE - 1
        for n, record in enumerate(records):
            for k in range(per_node):
                at = (start + timedelta(microseconds=n * per_node + k)).isoformat()
                kind = "claim" if k % 3 == 0 else "evidence"
                # claims carry the gate's verdict, as `plangraph claim` records them
                payload = record.model_dump(mode="json") if kind == "evidence" else CLAIM
                extra.append(
                    Event(
                        kind=kind,
                        node=record.node,
                        criterion=record.criterion if kind == "evidence" else None,
                        at=at,
                        by="bench",
                        plan_digest=digest,
                        payload=payload,
                    )
                )
        graph.store.append_many(extra)


def timed(action, rounds: int) -> tuple[float, float]:
    """Median wall time and median CPU time of this process for *action* over *rounds* runs
    (CPU time moves less than wall time on a machine shared with other jobs)."""
    walls, cpus = [], []
    for _ in range(rounds):
        cpu, start = time.process_time(), time.perf_counter()
        action()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def status(root: Path) -> None:
    with PlanGraph.open(root) as graph:
        graph.status()


def cold_status(root: Path) -> float:
    """Wall time of one ``status`` with the plan cache emptied, as after an edit of the plan."""
    shutil.rmtree(root / ".plangraph" / "cache", ignore_errors=True)
    start = time.perf_counter()
    status(root)
    return time.perf_counter() - start


def claim(root: Path, node: str) -> None:
    with PlanGraph.open(root) as graph:
        graph.claim(node, by="bench")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="500,1000,2500,5000")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            root = Path(tmp) / str(size)
            build(root, size)
            with PlanGraph.open(root) as graph:
                events = graph.store.count()
                edge_count = len(graph.plan.edges)
            t_cold = cold_status(root)
            (t_status, c_status) = timed(functools.partial(status, root), args.rounds)
            (t_claim, c_claim) = timed(functools.partial(claim, root, f"n{size // 2}"), args.rounds)
            rows.append((size, edge_count, events, t_status, t_claim, c_status))
            print(
                f"nodes={size:>6} edges={edge_count:>6} events={events:>6} "
                f"status={t_status:.3f}s (cpu {c_status:.3f}s) "
                f"claim={t_claim:.3f}s (cpu {c_claim:.3f}s) "
                f"status-after-plan-edit={t_cold:.3f}s",
                flush=True,
            )
    small, large = rows[0], rows[-1]
    print(
        f"size ratio {large[0] / small[0]:.1f}x: status grew {large[3] / small[3]:.1f}x, "
        f"claim grew {large[4] / small[4]:.1f}x (linear = size ratio)"
    )
    verdict = "met" if large[3] < 1 else "MISSED"
    print(
        f"status at {large[0]} nodes: {large[3]:.3f}s, cpu {large[5]:.3f}s "
        f"(target < 1 s: {verdict})"
    )
    sys.exit(0)


if __name__ == "__main__":
    main()
