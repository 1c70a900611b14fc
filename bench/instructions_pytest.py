"""The ``pytest`` and ``coverage`` parts of ``bench_instructions.py``: ``pytest --plangraph``
against plain pytest on the suites of ``bench_plugin.py`` (2,000 trivial tests mapped to 500
criteria, and more), and ``--plangraph-coverage`` against ``pytest --cov --cov-context=test``
on the suite of ``bench_coverage.py``, each a fresh process with a fresh store."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import bench_coverage
import bench_plugin

BASE = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
PLAIN = [*BASE, "-p", "no:randomly"]
TARGETS = {  # from issue 18
    "ratio at 2000": 1.20,
    "ratio at 20000": 1.10,
    "marginal per test": 0.25e6,
    "fixed over plain": 0.6e9,
    "coverage ratio": 1.0,
}


def use_python(python: str) -> None:
    """Count the commands with *python* (``bench_instructions.py --wheel``)."""
    BASE[0] = PLAIN[0] = python


Count = Callable[[Path, list[str]], int]
Warm = Callable[[Path, list[str]], None]


def _fresh(root: Path) -> None:
    shutil.rmtree(root / ".plangraph", ignore_errors=True)
    for data in root.glob(".coverage*"):
        data.unlink()


def measure(root: Path, command: list[str], count: Count, warm: Warm) -> int:
    """Instructions of one run of *command* with a fresh store, after one untimed run."""
    _fresh(root)
    warm(root, command)
    _fresh(root)
    return count(root, command)


def _verdict(value: float, target: float) -> str:
    return "met" if value <= target else "NOT met"


def peers() -> dict[str, list[str]]:
    """The peer plug-ins installed (the ``bench`` extra): name → command."""
    found: dict[str, list[str]] = {}
    if importlib.util.find_spec("pytest_randomly"):
        found["pytest-randomly"] = [*BASE, "-p", "randomly"]
    if importlib.util.find_spec("pytest_jsonreport"):
        found["pytest-json-report"] = [
            *PLAIN,
            "--json-report",
            "--json-report-file=.plangraph-bench-report.json",
        ]
    return found


def bench_pytest(tmp: Path, sizes: list[int], count: Count, warm: Warm, start: int) -> None:
    """Plain pytest and ``pytest --plangraph`` at every size; the marginal and fixed cost of
    the plug-in from the two smallest sizes; the peers at the smallest size."""
    plain: dict[int, int] = {}
    plangraph: dict[int, int] = {}
    print("pytest --plangraph, trivial tests mapped by markers to 500 criteria:")
    print(f"  {'tests':>6} {'plain':>9} {'--plangraph':>12} {'ratio':>6}  target")
    for size in sizes:
        root = tmp / f"suite-{size}"
        root.mkdir()
        bench_plugin.build(root, size)
        plain[size] = measure(root, PLAIN, count, warm)
        plangraph[size] = measure(root, [*PLAIN, "--plangraph"], count, warm)
        ratio = plangraph[size] / plain[size]
        target = TARGETS.get(f"ratio at {size}")
        verdict = f"<= {target:.2f}: {_verdict(ratio, target)}" if target else ""
        print(
            f"  {size:>6} {plain[size] / 1e9:8.3f}G {plangraph[size] / 1e9:11.3f}G "
            f"{ratio:6.3f}  {verdict}"
        )
        if size == sizes[0]:
            for name, command in peers().items():
                peer = measure(root, command, count, warm)
                print(f"  {size:>6} {name:<22} {peer / 1e9:8.3f}G {peer / plain[size]:6.3f}")
    print(f"  python -c pass (baseline): {start / 1e9:.3f} G")
    if len(sizes) >= 2:
        small, large = sorted(sizes)[:2]
        extra = {n: plangraph[n] - plain[n] for n in (small, large)}
        marginal = (extra[large] - extra[small]) / (large - small)
        fixed = extra[small] - marginal * small
        pytest_per_test = (plain[large] - plain[small]) / (large - small)
        print(
            f"  plain pytest per test: {pytest_per_test / 1e6:.3f} M; --plangraph adds "
            f"{marginal / 1e6:.3f} M per test (target <= 0.25 M: "
            f"{_verdict(marginal, TARGETS['marginal per test'])}) and "
            f"{fixed / 1e9:.3f} G fixed (target <= 0.6 G: "
            f"{_verdict(fixed, TARGETS['fixed over plain'])})"
        )


def bench_coverage_runs(tmp: Path, count: Count, warm: Warm, start: int) -> None:
    """``--plangraph --plangraph-coverage`` against ``--cov=src --cov-context=test`` (and
    plain pytest and ``--plangraph`` for reference) on the suite of ``bench_coverage.py``."""
    root = tmp / "coverage"
    root.mkdir()
    bench_coverage.build(root)
    variants = {
        "pytest": PLAIN,
        "--plangraph": [*PLAIN, "--plangraph"],
        "--plangraph --plangraph-coverage": [*PLAIN, "--plangraph", "--plangraph-coverage"],
        "--cov=src --cov-context=test": [*PLAIN, "--cov=src", "--cov-context=test"],
    }
    counts = {name: measure(root, command, count, warm) for name, command in variants.items()}
    plain = counts["pytest"]
    print(f"coverage, {bench_coverage.FILES * bench_coverage.TESTS_PER_FILE} tests:")
    for name, value in counts.items():
        print(f"  {name:<36} {value / 1e9:8.3f} G  ({value / plain:5.2f}x plain pytest)")
    ratio = counts["--plangraph --plangraph-coverage"] / counts["--cov=src --cov-context=test"]
    print(
        f"  --plangraph-coverage / --cov --cov-context=test: {ratio:.3f} "
        f"(target <= 1.0: {_verdict(ratio, TARGETS['coverage ratio'])})"
    )
    print(f"  python -c pass (baseline): {start / 1e9:.3f} G")
