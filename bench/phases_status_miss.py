"""Benchmark: where ``plangraph status`` after one leaf artifact changed (the miss answered
without opening the plan) spends what the hit does not, phase by phase, in instructions.

On the repository of ``bench_instructions.py --only miss`` (``bench_status.build``), the
real ``plangraph status`` command runs under callgrind once per phase, stopped (``os._exit``)
when the product function that ends the phase is entered or has returned; each phase is the
difference of two counts. The hit's phases are counted first (the same milestones up to the
look), then ``out/n<last>.txt`` is changed and the miss's. The files the miss keeps (the
kept answer's record, the overlay) are put back byte for byte after each count, so that each
count starts from the same kept state.

Run: ``.venv/bin/python bench/phases_status_miss.py [--nodes 5000] [--lock FILE]
[--keep-profiles DIR]``
"""

from __future__ import annotations

import argparse
import time

import bench_instructions as bi
import bench_status
from floor_status_miss import count_options, wheel_counts

from pytest_plangraph.usercache import RACY_NS

MILESTONES = [
    ("derived.kept", "kept_status", "before", "Python's start, the imports, the parser"),
    ("derived.kept", "kept_status", "after", "the look at the kept answer"),
    ("derived.planfree", "read_state_rows", "after", "derived.json's head read (its tag, JSON)"),
    ("derived.planfree", "_listed_as_kept", "after", "the overlay, the changed file hashed"),
    ("checkpoint", "read_fold", "after", "the store opened, the checkpoint read (the part's)"),
    ("derived.planfree", "base_key", "after", "the code's fingerprint and the base key"),
    ("derived.planfree", "_validated", "after", "the plan's kept validated form parsed"),
    ("plan.graph", "Graph.of", "after", "the part's plan and graph built"),
    ("judge.rederive", "rederive", "after", "the kept rows of the part, the judgement"),
    ("derived.planfree", "plan_free_miss", "after", "the new rows and the overlay made"),
    ("derived.planfree", "FreeMiss.keep", "before", "the table patched, --check's failures"),
    ("derived.planfree", "FreeMiss.keep", "after", "the overlay and the kept answer written"),
    (None, None, None, "printed, the process's end"),
]

RUN = r"""
import gc, os, sys
gc.set_threshold(200_000, 50, 50)
from pytest_plangraph.bundle import install
install()
module, name, when = sys.argv[1:4]
if module != "-":
    import importlib
    owner = importlib.import_module("pytest_plangraph." + module)
    holder, _, attr = name.rpartition(".")
    if holder:
        owner = getattr(owner, holder)
    real = getattr(owner, attr)
    def stop(*args, **kwargs):
        if when == "before":
            os._exit(0)
        real(*args, **kwargs)
        os._exit(0)
    if holder == "Graph":
        stop = staticmethod(stop)
    setattr(owner, attr, stop)
from pytest_plangraph.cli import main
sys.argv = ["plangraph", "status"]
sys.exit(main())
"""
"""The command, stopped where the phase named by its arguments ends."""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    count_options(parser)
    args = parser.parse_args(argv)
    with wheel_counts(args) as (tmp, env, python, plangraph, counted):
        root = tmp / "repo"
        root.mkdir()
        bench_status.build(root, args.nodes)
        status = [plangraph, "status"]
        bi.warm(root, status, env)
        bi.warm(root, status, env)
        time.sleep(RACY_NS / 1e9)
        bi.warm(root, status, env)
        cache = root / ".plangraph/cache"
        kept = {
            p: p.read_bytes()
            for p in (cache / "status-text.json", cache / "derived-free.json")
            if p.exists()
        }

        def count(command: list[str]) -> int:
            found = counted(root, command)
            for path in (cache / "status-text.json", cache / "derived-free.json"):
                if path in kept:
                    if path.read_bytes() != kept[path]:
                        with path.open("r+b") as out:  # the same file, its bytes as kept
                            out.write(kept[path])
                            out.truncate()
                else:
                    path.unlink(missing_ok=True)
            return found

        bi.warm(tmp, [python, "-c", "pass"], env)
        start = counted(tmp, [python, "-c", "pass"])
        print(f"python -c pass (baseline): {start / 1e9:.3f} G instructions")
        hit = [*MILESTONES[:2], MILESTONES[-1]]
        for title, milestones in (("the hit", hit), ("the leaf miss", MILESTONES)):
            if title == "the leaf miss":
                (root / f"out/n{args.nodes - 1}.txt").write_text("changed\n")
            print(f"plangraph status, {args.nodes} nodes, {title}, by phase:")
            before = start
            for module, name, when, what in milestones:
                command = [python, "-c", RUN, module or "-", name or "-", when or "-"]
                if module is None:
                    command = status
                n = count(command)
                print(f"  {what:<58} {(n - before) / 1e9:7.3f} G  (up to here {n / 1e9:.3f} G)")
                before = n


if __name__ == "__main__":
    main()
