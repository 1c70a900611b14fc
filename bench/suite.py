"""What the pytest benchmarks share: a generated plan of test criteria, a committed repository,
and timing one pytest run in a fresh process with a fresh store."""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path


def write_test_plan(root: Path, nodes: int, criteria: int) -> None:
    """``plangraph.yaml`` with *nodes* steps of *criteria* test criteria each."""
    lines = []
    for n in range(nodes):
        listed = "\n".join(
            f"      - {{id: ac-{c}, verifier: {{type: test}}}}" for c in range(criteria)
        )
        lines.append(f"  - id: step-{n}\n    outputs: [src/m{n}.py]\n    acceptance:\n{listed}")
    (root / "plangraph.yaml").write_text(
        "plangraph: 1\nplan: bench\nnodes:\n" + "\n".join(lines) + "\n", encoding="utf-8"
    )


def commit(root: Path) -> None:
    """Make *root* a git repository holding one commit of everything in it."""
    identity = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    for args in (["init", "-q"], ["add", "-A"], [*identity, "commit", "-q", "-m", "bench"]):
        subprocess.run(["git", *args], cwd=root, check=True)


def timed(root: Path, command: list[str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system, subprocesses included) of *command* in *root*,
    with a fresh store each time. CPU time is the steadier figure on a busy machine."""
    shutil.rmtree(root / ".plangraph", ignore_errors=True)
    before = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=root, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{proc.stdout[-2000:]}{proc.stderr}")
    return elapsed, _children_cpu() - before


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def compare(
    build: Callable[[Path], None],
    variants: dict[str, list[str]],
    base: list[str],
    rounds: int,
    ratios: list[tuple[str, str, str]],
) -> None:
    """Build a project, time each variant (``BASE + args``) alternately for *rounds* rounds,
    and print the median wall and CPU times and the *ratios* ``(label, top, bottom)``."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        build(root)
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
        for _ in range(rounds):
            for name, args in variants.items():
                runs[name].append(timed(root, [*base, *args]))
    wall = {name: statistics.median(r[0] for r in values) for name, values in runs.items()}
    cpu = {name: statistics.median(r[1] for r in values) for name, values in runs.items()}
    width = max(len(name) for name in variants) + 2
    print(f"{'median of ' + str(rounds) + ' rounds':<{width}} {'wall':>8} {'cpu':>8}")
    for name in variants:
        print(f"{name:<{width}} {wall[name]:7.2f}s {cpu[name]:7.2f}s")
    labels = max((len(label) for label, _, _ in ratios), default=0) + 1
    for label, top, bottom in ratios:
        if top in wall and bottom in wall:
            print(
                f"ratio {label:<{labels}} wall {wall[top] / wall[bottom]:.3f}  "
                f"cpu {cpu[top] / cpu[bottom]:.3f}  "
                f"(median of per-round ratios: wall {_paired(runs, top, bottom, 0):.3f}  "
                f"cpu {_paired(runs, top, bottom, 1):.3f})"
            )
    print(
        f"load average (1, 5, 15 min) at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("PYTHONDONTWRITEBYTECODE is set: every run compiled its modules and test files")


def _paired(runs: dict[str, list[tuple[float, float]]], top: str, bottom: str, at: int) -> float:
    """The median over rounds of *top* / *bottom* measured in the same round: the two ran
    one after the other, so a busy spell of a shared machine slows both."""
    return statistics.median(t[at] / b[at] for t, b in zip(runs[top], runs[bottom], strict=True))
