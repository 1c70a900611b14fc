"""Benchmark: what ``pytest --plangraph`` costs on a suite of 2,000 trivial tests.

The generated project has 100 nodes of 5 test criteria each (500 criteria); every test carries
one ``criterion`` marker, 4 tests per criterion, in 20 files, in a fresh git repository.
Commands run alternately, several rounds, each in a fresh process, and the script prints the
median wall and CPU time of each and the ratios (of the medians, and the median of the ratios
within each round, which a busy spell of a shared machine disturbs less):

* ``--plangraph`` against plain ``pytest`` (target ≤ 1.10), a fresh store every round;
* the plugin installed but not enabled against ``-p no:plangraph`` (target ≤ 1.02);
* the same two with ``-n 2`` when pytest-xdist is installed.

Run: ``.venv/bin/python bench/bench_plugin.py [--rounds 7] [--bytecode-cache | --installed]``,
or with ``--instructions`` (valgrind installed) to count instructions instead of timing: slower,
but the count does not move with the load of a shared machine.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import suite
from suite import commit, write_test_plan

NODES, CRITERIA, FILES, TESTS_PER_FILE = 100, 5, 20, 100
BASE = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]


def build(root: Path, tests: int = FILES * TESTS_PER_FILE) -> None:
    """Write the plan, sources and *tests* tests (100 a file), and commit them."""
    write_test_plan(root, NODES, CRITERIA)
    (root / "src").mkdir()
    (root / "tests").mkdir()
    for n in range(NODES):
        (root / "src" / f"m{n}.py").write_text(f"X = {n}\n", encoding="utf-8")
    for f in range(tests // TESTS_PER_FILE):
        lines = ["import pytest", ""]
        for t in range(TESTS_PER_FILE):
            ref = (f * TESTS_PER_FILE + t) % (NODES * CRITERIA)
            lines.append(
                f'@pytest.mark.criterion("step-{ref // CRITERIA}/ac-{ref % CRITERIA}")\n'
                f"def test_{t}():\n    assert True\n"
            )
        (root / "tests" / f"test_f{f}.py").write_text("\n".join(lines), encoding="utf-8")
    (root / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n", encoding="utf-8")
    (root / ".gitignore").write_text(".plangraph/\n", encoding="utf-8")
    commit(root)


def main(argv: list[str] | None = None) -> None:
    """Build the project, time every variant alternately and print medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument(
        "--bytecode-cache",
        action="store_true",
        help="let the runs write and reuse bytecode (in a private cache directory), as an "
        "installed package and pytest's rewritten test files normally do, even when "
        "PYTHONDONTWRITEBYTECODE is set; the first round (or a warm-up run) fills the cache",
    )
    parser.add_argument(
        "--installed",
        action="store_true",
        help="compile the package's modules first, as installing it from a wheel does, so no "
        "run compiles them (pytest's own modules are compiled at install too); test files are "
        "still rewritten by every run when PYTHONDONTWRITEBYTECODE is set",
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="instead of timing, count the instructions of one run of each serial variant "
        "under valgrind's callgrind (minutes; the count does not depend on what else the "
        "machine is doing)",
    )
    args = parser.parse_args(argv)
    if args.installed:
        compile_package()
    with contextlib.ExitStack() as stack:
        if args.bytecode_cache:
            os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
            os.environ["PYTHONPYCACHEPREFIX"] = stack.enter_context(tempfile.TemporaryDirectory())
        if args.instructions:
            count_instructions(warm_up=args.bytecode_cache)
        else:
            suite.compare(build, _variants(), BASE, args.rounds, RATIOS)
        if args.bytecode_cache:
            print("bytecode cached in a private directory")


def compile_package() -> None:
    """Write the package's bytecode beside its modules, as ``pip install`` does."""
    import compileall

    import pytest_plangraph

    package = Path(pytest_plangraph.__file__).parent
    if not compileall.compile_dir(package, quiet=1):
        raise SystemExit(f"compiling {package} failed")
    print(f"bytecode of {package.name} compiled beside its modules")


RATIOS = [
    ("--plangraph / installed", "--plangraph", "installed, not enabled"),
    ("installed / disabled", "installed, not enabled", "disabled (-p no:plangraph)"),
    ("-n 2 --plangraph / -n 2", "-n 2 --plangraph", "-n 2"),
]


def _variants() -> dict[str, list[str]]:
    variants = {
        # The marker is registered by hand, as a project without the plugin would.
        "disabled (-p no:plangraph)": ["-p", "no:plangraph", "-o", "markers=criterion"],
        "installed, not enabled": [],
        "--plangraph": ["--plangraph"],
    }
    if importlib.util.find_spec("xdist"):
        variants["-n 2"] = ["-n", "2"]
        variants["-n 2 --plangraph"] = ["-n", "2", "--plangraph"]
    return variants


def count_instructions(*, warm_up: bool = False) -> None:
    """Instructions executed by the serial variants (one run each, main process only; the git
    subprocess is not counted) and their ratios; with *warm_up*, each command runs once
    untimed first (to fill a bytecode cache)."""
    counts: dict[str, int] = {}
    serial = {name: args for name, args in _variants().items() if "-n" not in args}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        build(root)
        for name, args in serial.items():
            if warm_up:
                suite.timed(root, [*BASE, *args])
            shutil.rmtree(root / ".plangraph", ignore_errors=True)
            counts[name] = _callgrind(root, [*BASE, *args])
            print(f"{name:<28} {counts[name] / 1e9:7.3f} G instructions")
    for label, top, bottom in RATIOS:
        if top in counts and bottom in counts:
            print(f"ratio {label:<24} {counts[top] / counts[bottom]:.3f} (instructions)")


def _callgrind(root: Path, command: list[str]) -> int:
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
        cwd=root,
        capture_output=True,
        text=True,
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"{' '.join(command)} failed under valgrind:\n{done.stderr[-2000:]}")
    return int(found.group(1))


if __name__ == "__main__":
    main()
