"""Benchmark: ``pytest --plangraph --plangraph-stale`` against a full run, after a change to one
node's output.

Three projects, each a fresh git repository verified once by a full ``pytest --plangraph``:

* ``seed-000`` — the twelve-step fixture ``fixtures/seed-000`` as it is (one artifact verifier
  item per step); ``out/t5.txt`` changes.
* ``seed-000-tests`` — the same DAG with seed 000's rerun cost of each step as its number of
  tests (T1 2, T2 4 … 46 in all); ``out/t5.txt`` changes, so the closure T5…T12 holds 31 tests
  (seed 000: closure invalidation 31 steps, full rerun 46).
* ``suite-2000`` — the 2,000-test project of ``bench_plugin.py`` (100 steps of 5 criteria, 4
  tests each) with each step requiring step ``n // 2`` (a binary tree); ``src/m10.py`` changes,
  so the closure holds 15 steps.

Each round restores the store as the full run left it, then times the stale run and the full
run in fresh processes, alternately. Printed per project: tests (items) run by each, their
ratio, the median wall times and their ratio, and whether both runs left the same node
statuses.

Run: ``.venv/bin/python bench/bench_stale.py [--rounds 3] [--quick]``
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_plugin import build as build_suite
from suite import commit

HERE = Path(__file__).resolve().parent
FIXTURE = HERE.parent / "fixtures" / "seed-000"
PLANGRAPH = Path(sys.executable).parent / "plangraph"
BASE = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
SEED_COSTS = {1: 2, 2: 4, 3: 6, 4: 3, 5: 3, 6: 4, 7: 2, 8: 4, 9: 4, 10: 5, 11: 5, 12: 4}
"""Seed 000's rerun cost of each step T1…T12 (46 in all; T5's closure 31)."""


def build_fixture(root: Path) -> str:
    """The seed-000 fixture as it is; returns the output to change."""
    shutil.copytree(FIXTURE, root, dirs_exist_ok=True)
    (root / ".gitignore").write_text(".plangraph/\n", encoding="utf-8")
    commit(root)
    return "out/t5.txt"


def build_fixture_tests(root: Path) -> str:
    """The seed-000 DAG with ``SEED_COSTS[n]`` tests per step (a ``tests:`` criterion)."""
    shutil.copytree(FIXTURE, root, dirs_exist_ok=True)
    plan = (root / "plangraph.yaml").read_text(encoding="utf-8")
    for n, cost in SEED_COSTS.items():
        plan = plan.replace(
            f"        verifier: {{type: artifact, path: out/t{n}.txt}}\n",
            f"        verifier: {{type: artifact, path: out/t{n}.txt}}\n"
            f"      - id: ac-tests\n"
            f'        verifier: {{type: test, tests: ["tests/test_t{n}.py"]}}\n',
        )
        body = "from pathlib import Path\n\n" + "".join(
            f"def test_{i}():\n    assert Path('out/t{n}.txt').read_text()\n\n" for i in range(cost)
        )
        (root / "tests").mkdir(exist_ok=True)
        (root / "tests" / f"test_t{n}.py").write_text(body, encoding="utf-8")
    (root / "plangraph.yaml").write_text(plan, encoding="utf-8")
    (root / ".gitignore").write_text(".plangraph/\n", encoding="utf-8")
    commit(root)
    return "out/t5.txt"


def build_tree(root: Path) -> str:
    """The 2,000-test project with step n requiring step n // 2."""
    build_suite(root)
    edges = "".join(
        f"  - {{from: step-{n // 2}, to: step-{n}, type: requires}}\n" for n in range(1, 100)
    )
    with (root / "plangraph.yaml").open("a", encoding="utf-8") as plan:
        plan.write("edges:\n" + edges)
    subprocess.run(["git", "commit", "-qam", "edges"], cwd=root, check=True)
    return "src/m10.py"


PROJECTS: dict[str, Callable[[Path], str]] = {
    "seed-000": build_fixture,
    "seed-000-tests": build_fixture_tests,
    "suite-2000": build_tree,
}


def run(root: Path, args: list[str]) -> tuple[float, int]:
    """Wall time and how many items ran (passed, failed or errored)."""
    start = time.perf_counter()
    proc = subprocess.run([*BASE, *args], cwd=root, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 5):
        raise SystemExit(f"pytest {' '.join(args)} failed:\n{proc.stdout[-3000:]}{proc.stderr}")
    counts = dict(
        (word, int(n)) for n, word in re.findall(r"(\d+) (passed|failed|error)", proc.stdout)
    )
    return elapsed, sum(counts.values())


def statuses(root: Path) -> dict[str, str]:
    """Every node's status after a run."""
    proc = subprocess.run(
        [str(PLANGRAPH), "status", "--format", "json"], cwd=root, capture_output=True, text=True
    )
    return {n["id"]: n["status"] for n in json.loads(proc.stdout)["nodes"]}


def measure(name: str, rounds: int) -> None:
    """Build *name*, verify it, change one output, and compare the two runs."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        changed = PROJECTS[name](root)
        run(root, ["--plangraph"])
        path = root / changed
        path.write_text(path.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
        saved = root / "verified.db"
        shutil.copy(root / ".plangraph" / "store.db", saved)
        times: dict[str, list[float]] = {"stale": [], "full": []}
        ran: dict[str, int] = {}
        after: dict[str, dict[str, str]] = {}
        for _ in range(rounds):
            for variant, args in (("stale", ["--plangraph-stale"]), ("full", [])):
                shutil.rmtree(root / ".plangraph")
                (root / ".plangraph").mkdir()
                shutil.copy(saved, root / ".plangraph" / "store.db")
                elapsed, count = run(root, ["--plangraph", *args])
                times[variant].append(elapsed)
                ran[variant] = count
                after[variant] = statuses(root)
    wall = {v: statistics.median(t) for v, t in times.items()}
    same = "same" if after["stale"] == after["full"] else "DIFFERENT"
    print(
        f"{name:<15} changed {changed:<11} tests run {ran['stale']:>4} / {ran['full']:<4} "
        f"= {ran['stale'] / ran['full']:.3f}   wall {wall['stale']:6.2f}s / {wall['full']:6.2f}s "
        f"= {wall['stale'] / wall['full']:.3f}   statuses after: {same}"
    )


def main(argv: list[str] | None = None) -> None:
    """Measure every project and print one line each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one round")
    args = parser.parse_args(argv)
    rounds = 1 if args.quick else args.rounds
    print(f"median of {rounds} round(s); ratios are --plangraph-stale / full run")
    for name in PROJECTS:
        measure(name, rounds)


if __name__ == "__main__":
    main()
