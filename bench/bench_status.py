"""Benchmark: ``status`` and one ``claim`` on generated plans of 500 … 5,000 nodes.

Each plan has three edges per node (a random DAG, seeded) and ten events per node (evidence
records and claims; each claim carries the gate's verdict, as ``plangraph claim`` records it),
written to a real SQLite store in a temporary repository: the evidence by ``verify`` (every
artifact verifier run), the rest in one batch through the store's own ``append_many`` (one
transaction, chained and logged as any write), each record's JSON made once for its events.
The plan is written from a template (the bytes PyYAML writes), so a repository of 50,000 nodes
and 500,000 events builds in a few minutes. The script prints, for each size:

* the wall and CPU time of ``status`` and ``claim`` through the Python API, in this process
  (open the plan, read the log, hash every output, derive every status);
* the same two as commands, ``plangraph status`` and ``plangraph claim``, each in a fresh
  process as a user runs them: starting Python, importing the package, linting the plan and
  printing the table are included. Bytecode is cached in a private directory (an installed
  package has it) and one untimed run fills it;
* one API ``status`` right after the plan cache is emptied, as after an edit of the plan;
* API ``status`` derived from every event of the log, taking turns with the one above, which
  reads the log's checkpoint and the events recorded since (the ratio of the two);

then how each grew from the smallest plan to the largest (linear growth = the size ratio).

``--keys`` measures the same with signatures (see docs/trust.md): ``hmac`` (one HMAC key where
evidence is recorded and judged), ``ed25519`` (CI's private key and a trusted-keys file: CI's
checkpoints are signed, so a status checks only the signatures of events after one) and
``ed25519-judge`` (the store recorded by CI, judged where only the public key is: no checkpoint
can be signed there, so every status checks every signature).

Run: ``.venv/bin/python bench/bench_status.py [--sizes 500,1000,5000] [--rounds 5]
[--events-per-node 10] [--keys none|hmac|ed25519|ed25519-judge]``
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from pytest_plangraph.api import PlanGraph
from pytest_plangraph.checkpoint import whole_fold
from pytest_plangraph.plan.model import Event
from pytest_plangraph.store.keys import generate

EDGES_PER_NODE = 3
EVENTS_PER_NODE = 10
TARGET_NODES = 5_000
CLAIM = {"verdict": "FAILED"}


def build(root: Path, size: int, per_node: int = EVENTS_PER_NODE) -> None:
    """Write a plan of *size* nodes with their outputs, and a store of *per_node* events per
    node (see :func:`plan_text` and :func:`_fill_store`)."""
    (root / ".git").mkdir(parents=True)
    out = root / "out"
    out.mkdir()
    for i in range(size):
        (out / f"n{i}.txt").write_text(f"output {i}\n")
    (root / "plangraph.yaml").write_text(plan_text(size))
    _fill_store(root, per_node)


def plan_nodes(size: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The nodes and edges of the plan of *size* nodes: each node's output is verified as an
    artifact and by an approval; three ``requires`` edges into each node from the 50 before
    it (a random DAG, seeded by the size)."""
    rng = random.Random(size)
    nodes, edges = [], []
    for i in range(size):
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
    return nodes, edges


def plan_text(size: int) -> str:
    """The plan of :func:`plan_nodes` as YAML, the bytes ``yaml.safe_dump(plan,
    sort_keys=False)`` writes (a test compares them), written from a template: PyYAML's
    emitter took longer than the rest of building a 50,000-node repository."""
    nodes, edges = plan_nodes(size)
    parts = [f"plangraph: 1\nplan: bench-{size}\nnodes:\n"]
    for node in nodes:
        name, path = node["id"], node["outputs"][0]
        parts.append(
            f"- id: {name}\n  outputs:\n  - {path}\n  acceptance:\n  - id: ac-out\n"
            f"    verifier:\n      type: artifact\n      path: {path}\n  - id: ac-ok\n"
            "    verifier:\n      type: approval\n"
        )
    parts.append("edges:\n" if edges else "edges: []\n")
    parts.extend(f"- from: {e['from']}\n  to: {e['to']}\n  type: requires\n" for e in edges)
    return "".join(parts)


def _fill_store(root: Path, events_per_node: int) -> None:
    with PlanGraph.open(root) as graph:
        records = graph.verify(by="bench")  # one evidence record per node
        digest = graph.plan.digest
        extra = []
        start = datetime.now(timezone.utc)
        per_node = events_per_node - 1
        for n, record in enumerate(records):
            as_json = record.to_json()  # once per record, not once per event
            for k in range(per_node):
                at = (start + timedelta(microseconds=n * per_node + k)).isoformat()
                kind = "claim" if k % 3 == 0 else "evidence"
                # claims carry the gate's verdict, as `plangraph claim` records them
                payload = as_json if kind == "evidence" else CLAIM
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


def alternate(actions: list[Callable[[], None]], rounds: int) -> list[tuple[float, float]]:
    """:func:`timed` for several *actions* taking turns in each round, so a busy spell of the
    machine falls on all of them."""
    runs: list[list[tuple[float, float]]] = [[] for _ in actions]
    for _ in range(rounds):
        for action, found in zip(actions, runs, strict=True):
            found.append(timed(action, 1))
    return [
        (statistics.median(w for w, _ in found), statistics.median(c for _, c in found))
        for found in runs
    ]


def status(root: Path) -> None:
    with PlanGraph.open(root) as graph:
        graph.status()


def whole_log_status(root: Path) -> None:
    """``status`` derived from every event of the log, as without a checkpoint."""
    with PlanGraph.open(root) as graph:
        graph.status(whole_fold(graph.store))


def use_keys(kind: str, where: Path) -> None:
    """Set the environment of *kind* (see the module's docstring) for building and timing."""
    if kind == "none":
        return
    if kind == "hmac":
        os.environ["PLANGRAPH_SIGNING_KEY"] = "bench-secret"
        return
    private, public = generate(where / "ci-key")
    raw = public.read_text(encoding="utf-8").split()[1]
    trusted = where / "trusted-keys.json"
    entry = {"public_key": raw, "roles": ["ci"]}
    trusted.write_text(json.dumps({"format": 1, "keys": [entry]}), encoding="utf-8")
    os.environ["PLANGRAPH_SIGNING_KEY_FILE"] = str(private)
    os.environ["PLANGRAPH_TRUSTED_KEYS"] = str(trusted)


def cold_status(root: Path) -> float:
    """Wall time of one ``status`` with the plan cache emptied, as after an edit of the plan."""
    shutil.rmtree(root / ".plangraph" / "cache", ignore_errors=True)
    start = time.perf_counter()
    status(root)
    return time.perf_counter() - start


def claim(root: Path, node: str) -> None:
    with PlanGraph.open(root) as graph:
        graph.claim(node, by="bench")


def command_time(
    root: Path, args: list[str], rounds: int, env: dict[str, str]
) -> tuple[float, float]:
    """Median wall time and median CPU time (user + system) of ``plangraph ARGS`` in a fresh
    process, after one untimed run."""
    command = [str(Path(sys.executable).parent / "plangraph"), *args, "--root", str(root)]
    walls, cpus = [], []
    for n in range(rounds + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(command, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode not in (0, 1):  # 1: a refused claim
            raise SystemExit(f"{' '.join(command)} failed:\n{proc.stderr}")
        if n:  # the first run fills the bytecode cache
            walls.append(wall)
            cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="500,1000,2500,5000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--events-per-node",
        type=int,
        default=EVENTS_PER_NODE,
        help="events in the store per node of the plan (default %(default)s)",
    )
    parser.add_argument(
        "--keys", choices=("none", "hmac", "ed25519", "ed25519-judge"), default="none"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        use_keys(args.keys, Path(tmp))
        for size in sizes:
            root = Path(tmp) / str(size)
            build(root, size, args.events_per_node)
            if args.keys == "ed25519-judge":  # recorded by CI; judged with the public key only
                os.environ.pop("PLANGRAPH_SIGNING_KEY_FILE", None)
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "bytecode")
            with PlanGraph.open(root) as graph:
                events = graph.store.count()
                edge_count = len(graph.plan.edges)
            t_cold = cold_status(root)
            (t_status, c_status), whole = alternate(
                [functools.partial(status, root), functools.partial(whole_log_status, root)],
                args.rounds,
            )
            (t_claim, c_claim) = timed(functools.partial(claim, root, f"n{size // 2}"), args.rounds)
            (w_status, p_status) = command_time(root, ["status"], args.rounds, env)
            claim_args = ["claim", f"n{size // 3}", "--by", "bench"]
            (w_claim, p_claim) = command_time(root, claim_args, args.rounds, env)
            rows.append((size, t_status, t_claim, w_status, w_claim, c_status, p_status))
            print(
                f"nodes={size:>6} edges={edge_count:>6} events={events:>6}\n"
                f"  API      status={t_status:.3f}s (cpu {c_status:.3f}s) "
                f"claim={t_claim:.3f}s (cpu {c_claim:.3f}s) "
                f"status-after-plan-edit={t_cold:.3f}s\n"
                f"           status from every event (no checkpoint)={whole[0]:.3f}s "
                f"(cpu {whole[1]:.3f}s): {whole[0] / t_status:.2f}x the checkpointed\n"
                f"  command  status={w_status:.3f}s (cpu {p_status:.3f}s) "
                f"claim={w_claim:.3f}s (cpu {p_claim:.3f}s)",
                flush=True,
            )
    small, large = rows[0], rows[-1]
    grew = [f"{large[i] / small[i]:.1f}x" for i in range(1, 5)]
    print(
        f"size ratio {large[0] / small[0]:.1f}x: API status grew {grew[0]}, claim {grew[1]}; "
        f"command status {grew[2]}, claim {grew[3]} (linear = size ratio)"
    )
    for name, wall, cpu in (("API", large[1], large[5]), ("command", large[3], large[6])):
        if large[0] >= TARGET_NODES:
            verdict = "target < 1 s: " + ("met" if wall < 1 else "MISSED")
        else:
            verdict = f"the target, < 1 s, is for {TARGET_NODES:,} nodes"
        print(f"{name} status at {large[0]} nodes: {wall:.3f}s, cpu {cpu:.3f}s ({verdict})")
    sys.exit(0)


if __name__ == "__main__":
    main()
