"""What the pytest benchmarks share: a generated plan of test criteria, a committed repository,
and timing one pytest run in a fresh process with a fresh store."""

from __future__ import annotations

import resource
import shutil
import subprocess
import time
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
