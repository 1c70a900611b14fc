"""Benchmark: the cost of ``pytest --plangraph --plangraph-coverage``, ``pytest --cov`` beside it.

The generated project has 50 nodes of 4 test criteria each (200 criteria) and 1,000 tests in 20
files; every test calls code of its node's module and of a shared helper module (a loop of a few
hundred lines executed), so tracing has real work to do. Commands run alternately, several
rounds, each in a fresh process with a fresh store, and the script prints the median wall and
CPU time of each and the ratios measured in the same run:

* ``--plangraph --plangraph-coverage`` against plain ``pytest`` and against ``--plangraph``;
* ``pytest --cov=src`` against plain ``pytest`` (reference: what coverage alone costs);
* ``--plangraph --plangraph-coverage`` against ``pytest --cov=src --cov-context=test`` (per-test
  contexts both; target ≤ 1.0);
* ``--plangraph --plangraph-coverage --cov=src`` against ``--cov=src`` (pytest-cov's
  measurement reused).

Run: ``.venv/bin/python bench/bench_coverage.py [--rounds 5]``
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import suite
from suite import commit, write_test_plan

NODES, CRITERIA, FILES, TESTS_PER_FILE = 50, 4, 20, 50
BASE = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
MODULE = """
from helper import scale


def work(n):
    total = 0
    for i in range(n):
        total += scale(i) % 7
    return total
"""
HELPER = """
def scale(x):
    return x * 3 + 1
"""


def build(root: Path, tests: int = FILES * TESTS_PER_FILE) -> None:
    """Write the plan, sources and *tests* tests (50 a file; the last file holds the rest),
    and commit them."""
    write_test_plan(root, NODES, CRITERIA)
    (root / "src").mkdir()
    (root / "tests").mkdir()
    (root / "src" / "helper.py").write_text(HELPER, encoding="utf-8")
    for n in range(NODES):
        (root / "src" / f"m{n}.py").write_text(MODULE, encoding="utf-8")
    for f in range(-(-tests // TESTS_PER_FILE)):
        count = min(TESTS_PER_FILE, tests - f * TESTS_PER_FILE)
        (root / "tests" / f"test_f{f}.py").write_text(_test_file(f, count), encoding="utf-8")
    (root / "pytest.ini").write_text(
        "[pytest]\ntestpaths = tests\npythonpath = src\n", encoding="utf-8"
    )
    (root / ".gitignore").write_text(".plangraph/\n.coverage*\n", encoding="utf-8")
    commit(root)


def _test_file(f: int, count: int = TESTS_PER_FILE) -> str:
    lines = ["import pytest", ""]
    for t in range(count):
        ref = (f * TESTS_PER_FILE + t) % (NODES * CRITERIA)
        node = ref // CRITERIA
        lines.append(
            f"import m{node}\n\n"
            f'@pytest.mark.criterion("step-{node}/ac-{ref % CRITERIA}")\n'
            f"def test_{t}():\n    assert m{node}.work(300) >= 0\n"
        )
    return "\n".join(lines)


def variants() -> dict[str, list[str]]:
    """Name → pytest arguments of each timed command."""
    found = {
        "pytest": [],
        "--plangraph": ["--plangraph"],
        "--plangraph --plangraph-coverage": ["--plangraph", "--plangraph-coverage"],
    }
    if importlib.util.find_spec("pytest_cov"):
        found["--cov=src"] = ["--cov=src"]
        found["--cov=src --cov-context=test"] = ["--cov=src", "--cov-context=test"]
        found["--plangraph-coverage --cov=src"] = [
            "--plangraph",
            "--plangraph-coverage",
            "--cov=src",
        ]
    return found


RATIOS = [
    ("coverage / pytest", "--plangraph --plangraph-coverage", "pytest"),
    ("coverage / --plangraph", "--plangraph --plangraph-coverage", "--plangraph"),
    ("--cov / pytest (reference)", "--cov=src", "pytest"),
    (
        "coverage / --cov --cov-context=test",
        "--plangraph --plangraph-coverage",
        "--cov=src --cov-context=test",
    ),
    ("coverage + --cov / --cov", "--plangraph-coverage --cov=src", "--cov=src"),
]


def main(argv: list[str] | None = None) -> None:
    """Build the project, time every variant alternately and print medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args(argv).rounds
    commands = variants()
    suite.compare(build, commands, BASE, rounds, RATIOS)


if __name__ == "__main__":
    main()
