"""Benchmark: what recording the import graph (``--plangraph-coverage``) costs per import.

Every ``import`` statement goes through the wrapped ``builtins.__import__`` while the graph is
recorded. This times statements answered from ``sys.modules`` — the common case at run time —
with and without :class:`~pytest_plangraph.plugin.imports.ImportGraph` installed: at module
level (one dictionary lookup after the first) and inside a function run by a test (the place
and the module being imported around it are looked up on every call, so the stack depth
matters; *depth* frames are put under it). It prints nanoseconds per statement.

With ``--run ROUNDS`` it also times whole runs on the project of ``bench_coverage.py`` (1,000
tests, 20 files, 51 modules): ``--plangraph --plangraph-coverage`` as it is, and with the
import graph left out (a ``-p`` plugin of the benchmark makes its ``install`` do nothing, so
only the closure over an empty graph remains), alternately in fresh processes.

Run: ``.venv/bin/python bench/bench_imports.py [--count 200000] [--depth 60] [--run 5]``
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import bench_coverage
import suite

from pytest_plangraph.plugin.imports import ImportGraph

MODULE_LEVEL = compile("import json\nfrom os import path\n", __file__, "exec")


def in_function() -> None:
    """Two import statements answered from sys.modules, inside a function."""
    import json  # noqa: F401
    from os import path  # noqa: F401


def at_depth(depth: int, run: Callable[[], float]) -> float:
    """*run* called under *depth* more frames (a test runs under pytest's and pluggy's)."""
    return run() if depth <= 0 else at_depth(depth - 1, run)


def timed(count: int, statement: Callable[[], object]) -> float:
    """Nanoseconds per import statement (each call runs two)."""
    start = time.perf_counter_ns()
    for _ in range(count):
        statement()
    return (time.perf_counter_ns() - start) / count / 2


NO_GRAPH = """
from pytest_plangraph.plugin.imports import ImportGraph

ImportGraph.install = lambda self: None  # the benchmark's baseline: no import is observed
"""


def build(root: Path) -> None:
    """bench_coverage's project, and the plugin module that switches the graph off."""
    bench_coverage.build(root)
    (root / "no_import_graph.py").write_text(NO_GRAPH, encoding="utf-8")


def whole_runs(rounds: int) -> None:
    """Time runs with and without the import graph."""
    coverage = ["--plangraph", "--plangraph-coverage"]
    variants = {
        "--plangraph": ["--plangraph"],
        "coverage, import graph": coverage,
        "coverage, no import graph": [*coverage, "-p", "no_import_graph"],
    }
    ratios = [("graph / no graph", "coverage, import graph", "coverage, no import graph")]
    suite.compare(build, variants, bench_coverage.BASE, rounds, ratios)


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=200_000)
    parser.add_argument("--depth", type=int, default=60)
    parser.add_argument("--run", type=int, default=0, metavar="ROUNDS")
    args = parser.parse_args()
    namespace = {"__file__": __file__, "__name__": "bench_module"}
    cases = {
        "module level": lambda: exec(MODULE_LEVEL, namespace),
        "inside a function": in_function,
    }
    print("| statement | without | with the import graph | extra |")
    print("| --- | --- | --- | --- |")
    for label, statement in cases.items():
        plain = at_depth(args.depth, lambda s=statement: timed(args.count, s))
        graph = ImportGraph(lambda filename: filename)
        graph.install()
        graph.testing = True
        try:
            observed = at_depth(args.depth, lambda s=statement: timed(args.count, s))
        finally:
            graph.remove()
        print(f"| {label} | {plain:.0f} ns | {observed:.0f} ns | {observed - plain:.0f} ns |")
    if args.run:
        whole_runs(args.run)


if __name__ == "__main__":
    main()
