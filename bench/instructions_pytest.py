"""The ``pytest`` and ``coverage`` parts of ``bench_instructions.py``: ``pytest --plangraph``
against plain pytest on the suites of ``bench_plugin.py`` (2,000 trivial tests mapped to 500
criteria, and more), and ``--plangraph-coverage`` against ``pytest --cov --cov-context=test``
on the suite of ``bench_coverage.py``, each a fresh process with a fresh store.

``pytest --plangraph`` is counted twice at each size: with a fresh store but the plan cache
(``.plangraph/cache``) kept from the untimed run before (a developer's repeated runs on a known
plan: the row the targets are for), and with the whole ``.plangraph`` deleted (a CI job on a
fresh clone: the plan read as YAML and validated by pydantic). The peers (pytest-randomly,
pytest-json-report, pytest-cov, pytest-testmon; the ``bench`` extra) are counted beside them
at the smallest size when the counted interpreter has them."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import bench_coverage
import bench_plugin

from pytest_plangraph.usercache import RACY_NS

BASE = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
PLAIN = [*BASE, "-p", "no:randomly"]
TARGETS = {  # from issue 18
    "ratio at 2000": 1.20,
    "ratio at 20000": 1.10,
    "marginal per test": 0.25e6,
    "fixed over plain": 0.6e9,
    "coverage ratio": 1.0,
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``--only pytest`` and ``--only coverage``."""
    parser.add_argument(
        "--no-peers", action="store_true", help="--only pytest: do not count the peers"
    )
    parser.add_argument(
        "--rows",
        default="plan cache kept,fresh .plangraph",
        help="--only pytest: the --plangraph rows counted at each size (default %(default)s)",
    )
    parser.add_argument(
        "--coverage-tests",
        type=_tests,
        default=None,
        help="--only coverage: the size of the coverage suite (default its 1,000 tests)",
    )
    parser.add_argument(
        "--coverage-pair",
        action="store_true",
        help="--only coverage: count only the two commands the target compares",
    )


def _tests(value: str) -> int:
    """A number of tests above 0 (``--coverage-tests``)."""
    if not value.strip().isdigit() or int(value) == 0:
        raise argparse.ArgumentTypeError(f"a whole number of tests above 0, not {value!r}")
    return int(value)


def chosen_rows(parser: argparse.ArgumentParser, value: str) -> list[str]:
    """The rows ``--rows`` names (each a key of :data:`ROWS`)."""
    rows = [row.strip() for row in value.split(",")]
    if unknown := set(rows) - set(ROWS):
        parser.error(f"--rows: no row {', '.join(sorted(unknown))}; rows: {', '.join(ROWS)}")
    return rows


def use_python(python: str) -> None:
    """Count the commands with *python* (``bench_instructions.py --wheel``)."""
    BASE[0] = PLAIN[0] = python


Count = Callable[[Path, list[str]], int]
Warm = Callable[[Path, list[str]], None]


def _fresh(root: Path, *, keep_plan_cache: bool = False) -> None:
    """Delete the store (and with it, unless *keep_plan_cache*, the plan cache) and the data
    files of coverage and testmon."""
    state = root / ".plangraph"
    if keep_plan_cache and state.is_dir():
        for path in state.iterdir():
            if path.is_file() and path.name != ".gitignore":
                path.unlink()
    else:
        shutil.rmtree(state, ignore_errors=True)
    for data in [*root.glob(".coverage*"), *root.glob(".testmondata*")]:
        data.unlink()


def measure(
    root: Path, command: list[str], count: Count, warm: Warm, *, keep_plan_cache: bool = False
) -> int:
    """Instructions of one run of *command* with a fresh store, after one untimed run (with
    *keep_plan_cache* the plan cache the untimed runs filled is kept).

    With *keep_plan_cache* there are two untimed runs, the second once the folders the first
    made are older than the racy window: the first run of a project makes ``.plangraph`` and
    reading its plan makes no cache folder, and what is kept by folders' times is not kept
    while they are that young. The second run keeps it all, as a developer's repeated runs
    on a known plan find it; counted after the first alone, the run read the plan as YAML
    and validated it (about 0.55 G on the coverage suite)."""
    _fresh(root)
    warm(root, command)
    if keep_plan_cache:
        time.sleep(RACY_NS / 1e9)
        warm(root, command)
    _fresh(root, keep_plan_cache=keep_plan_cache)
    return count(root, command)


def _verdict(value: float, target: float) -> str:
    return "met" if value <= target else "NOT met"


PEERS = {
    "pytest-randomly": ("pytest_randomly", ["-p", "randomly"]),
    "pytest-json-report": (
        "pytest_jsonreport",
        ["--json-report", "--json-report-file=.plangraph-bench-report.json"],
    ),
    "pytest-cov": ("pytest_cov", ["--cov=src"]),
    "pytest-testmon": ("testmon", ["--testmon"]),
}
"""The peer plug-ins: name → (module, options added to plain pytest)."""


def peers() -> dict[str, list[str]]:
    """The peer plug-ins the counted interpreter has (the ``bench`` extra): name → command."""
    found: dict[str, list[str]] = {}
    for name, (module, options) in PEERS.items():
        probe = f"import importlib.util as u, sys; sys.exit(u.find_spec({module!r}) is None)"
        if subprocess.run([BASE[0], "-c", probe], check=False).returncode == 0:
            base = BASE if name == "pytest-randomly" else PLAIN
            found[name] = [*base, *options]
    return found


ROWS = {"plan cache kept": True, "fresh .plangraph": False}
"""The two ``--plangraph`` rows: label → whether the plan cache is kept (see the module)."""


def bench_pytest(
    tmp: Path,
    sizes: list[int],
    count: Count,
    warm: Warm,
    start: int,
    *,
    with_peers: bool = True,
    rows: list[str] | None = None,
) -> None:
    """Plain pytest and ``pytest --plangraph`` (the *rows* of :data:`ROWS`, both by default) at
    every size; the marginal and fixed cost of the plug-in from the two smallest sizes; the
    peers at the smallest size."""
    chosen = {row: keep for row, keep in ROWS.items() if rows is None or row in rows}
    plain: dict[int, int] = {}
    counted: dict[str, dict[int, int]] = {row: {} for row in chosen}
    print("pytest --plangraph, trivial tests mapped by markers to 500 criteria:")
    print(f"  {'tests':>6} {'':<34} {'count':>9} {'ratio':>6}  target")
    for size in sizes:
        root = tmp / f"suite-{size}"
        root.mkdir()
        bench_plugin.build(root, size)
        plain[size] = measure(root, PLAIN, count, warm)
        print(f"  {size:>6} {'plain pytest':<34} {plain[size] / 1e9:8.3f}G")
        for row, keep in chosen.items():
            value = counted[row][size] = measure(
                root, [*PLAIN, "--plangraph"], count, warm, keep_plan_cache=keep
            )
            ratio = value / plain[size]
            target = TARGETS.get(f"ratio at {size}") if keep else None
            verdict = f"<= {target:.2f}: {_verdict(ratio, target)}" if target else ""
            name = f"--plangraph, {row}"
            print(f"  {size:>6} {name:<34} {value / 1e9:8.3f}G {ratio:6.3f}  {verdict}")
        if size == sizes[0] and with_peers:
            for name, command in peers().items():
                peer = measure(root, command, count, warm)
                print(f"  {size:>6} {name:<34} {peer / 1e9:8.3f}G {peer / plain[size]:6.3f}")
    print(f"  python -c pass (baseline): {start / 1e9:.3f} G")
    if len(sizes) >= 2:
        small, large = sorted(sizes)[:2]
        pytest_per_test = (plain[large] - plain[small]) / (large - small)
        print(f"  plain pytest per test: {pytest_per_test / 1e6:.3f} M")
        for row, keep in chosen.items():
            extra = {n: counted[row][n] - plain[n] for n in (small, large)}
            marginal = (extra[large] - extra[small]) / (large - small)
            fixed = extra[small] - marginal * small
            verdicts = (
                f" (targets <= 0.25 M: {_verdict(marginal, TARGETS['marginal per test'])}; "
                f"<= 0.6 G: {_verdict(fixed, TARGETS['fixed over plain'])})"
                if keep
                else ""
            )
            print(
                f"  --plangraph, {row}: {marginal / 1e6:.3f} M per test and "
                f"{fixed / 1e9:.3f} G fixed over plain{verdicts}"
            )


def bench_pytest_imports(tmp: Path, count: Count, warm: Warm, start: int) -> None:
    """How much of the plug-in's fixed cost is imports: importing pytest, and pytest with the
    module a ``--plangraph`` run starts from (the session and what it imports)."""
    commands = {
        "import pytest": [BASE[0], "-c", "import pytest"],
        "import pytest and the plug-in's session": [
            BASE[0],
            "-c",
            "import pytest, pytest_plangraph.plugin.session",
        ],
    }
    counts = {}
    for name, command in commands.items():
        warm(tmp, command)
        counts[name] = count(tmp, command)
        print(f"  {name:<44} {counts[name] / 1e9:8.3f} G")
    extra = counts["import pytest and the plug-in's session"] - counts["import pytest"]
    print(f"  the plug-in's imports over pytest's: {extra / 1e9:.3f} G")
    print(f"  python -c pass (baseline): {start / 1e9:.3f} G")


def bench_coverage_runs(
    tmp: Path,
    count: Count,
    warm: Warm,
    start: int,
    tests: int | None = None,
    rows: list[str] | None = None,
    *,
    pair: bool = False,
) -> None:
    """``--plangraph --plangraph-coverage`` against ``--cov=src --cov-context=test`` (and
    plain pytest and ``--plangraph`` for reference) on the suite of ``bench_coverage.py``
    (its 1,000 tests, or the first *tests*); the fresh-``.plangraph`` variant only when
    *rows* (default: both) hold its row; with *pair* only the two commands the target
    compares."""
    tests = tests or bench_coverage.FILES * bench_coverage.TESTS_PER_FILE
    root = tmp / "coverage"
    root.mkdir()
    bench_coverage.build(root, tests)
    variants = {
        "pytest": PLAIN,
        "--plangraph": [*PLAIN, "--plangraph"],
        "--plangraph --plangraph-coverage": [*PLAIN, "--plangraph", "--plangraph-coverage"],
        "--plangraph --plangraph-coverage, fresh .plangraph": [
            *PLAIN,
            "--plangraph",
            "--plangraph-coverage",
        ],
        "--cov=src --cov-context=test": [*PLAIN, "--cov=src", "--cov-context=test"],
    }
    if rows is not None and "fresh .plangraph" not in rows:
        del variants["--plangraph --plangraph-coverage, fresh .plangraph"]
    if pair:
        compared = ("--plangraph --plangraph-coverage", "--cov=src --cov-context=test")
        variants = {name: variants[name] for name in compared}
    counts = {
        name: measure(root, command, count, warm, keep_plan_cache="fresh" not in name)
        for name, command in variants.items()
    }
    plain = counts.get("pytest")
    print(f"coverage, {tests} tests:")
    for name, value in counts.items():
        times = f"  ({value / plain:5.2f}x plain pytest)" if plain else ""
        print(f"  {name:<52} {value / 1e9:8.3f} G{times}")
    if plain and "--plangraph" in counts:  # what each measurement adds, split from the rest
        ours = counts["--plangraph --plangraph-coverage"] - counts["--plangraph"]
        theirs = counts["--cov=src --cov-context=test"] - plain
        print(f"  --plangraph-coverage over --plangraph: {ours / 1e9:.3f} G")
        print(f"  --cov --cov-context=test over pytest:  {theirs / 1e9:.3f} G")
        fixed = counts["--plangraph"] - plain
        print(f"  --plangraph over pytest:               {fixed / 1e9:.3f} G")
    ratio = counts["--plangraph --plangraph-coverage"] / counts["--cov=src --cov-context=test"]
    print(
        f"  --plangraph-coverage / --cov --cov-context=test: {ratio:.3f} "
        f"(target <= 1.0: {_verdict(ratio, TARGETS['coverage ratio'])})"
    )
    print(f"  python -c pass (baseline): {start / 1e9:.3f} G")
