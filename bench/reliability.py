"""Reliability figures: the store under SIGKILL and many writers, fuzzed plan files, tampering.

The same scenarios as ``tests/reliability/`` (the code lives there, in ``harness_*.py``), at
full counts:

1. ``kill``: 200 writers forked one after another, each appending batches of 1–3 events through
   the Store API until it is killed with SIGKILL at a random moment, plus 40 fresh interpreters
   running ``plangraph cancel`` again and again, killed the same way. Afterwards: SQLite's
   ``PRAGMA integrity_check``, the store's own chain check, and every acknowledged event
   (printed by the writer after its append returned) looked up.
2. ``concurrent``: 32 writer processes started at once, 100 appends each.
3. ``fuzz``: 2,000 random plan files (plausible plans with mutated fields, text edits, byte
   mutations) through ``plangraph lint`` (text and JSON), ``plangraph status`` and the pytest
   plugin's plan loading, in this process, with a 60 s hang guard per call.
4. ``tamper``: every tampering measured today (``harness_tamper.CASES``), each on a copy of a
   real store: caught by ``plangraph audit``, refused by the gate, or neither. The cases of
   the trust list not measured yet are listed as pending.

Run: ``.venv/bin/python bench/reliability.py [--quick] [--only kill,concurrent,fuzz,tamper]
[--seed N]``. Exit 1 when any figure is not clean. docs/reliability.md keeps the figures.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path[:0] = [str(TESTS), str(TESTS / "reliability")]

import harness_fuzz  # noqa: E402
import harness_store  # noqa: E402
import harness_tamper  # noqa: E402

FULL = {"kills": 200, "cli_kills": 40, "writers": 32, "appends": 100, "plans": 2000}
QUICK = {"kills": 16, "cli_kills": 2, "writers": 4, "appends": 15, "plans": 100}
SCENARIOS = ("kill", "concurrent", "fuzz", "tamper")


def _kill(work: Path, counts: dict[str, int], seed: int) -> bool:
    api = harness_store.run_in_own_process(
        "kill-loop", str(work / "api.db"), str(counts["kills"]), str(seed)
    )
    cli = harness_store.kill_cli_writers(work / "cli-repo", counts["cli_kills"], seed)
    for label, figures in (("Store API writers", api), ("plangraph cancel writers", cli)):
        print(
            f"  {label}: {figures.kills} SIGKILLs, {figures.acknowledged} acknowledged events, "
            f"{figures.stored} stored; lost {len(figures.lost)}; integrity_check "
            f"{figures.integrity!r}; chain problems {len(figures.chain_problems)}; "
            f"gaps {figures.gaps}; half-written batches {figures.half_batches}"
        )
    return api.sound and cli.sound


def _concurrent(work: Path, counts: dict[str, int], seed: int) -> bool:
    figures = harness_store.concurrent_writers(
        work / "concurrent.db", counts["writers"], counts["appends"]
    )
    print(
        f"  {figures.writers} processes x {counts['appends']} appends: "
        f"{figures.acknowledged} acknowledged, {figures.stored} stored; lost "
        f"{len(figures.lost)}; writers refused {len(figures.refused)}; integrity_check "
        f"{figures.integrity!r}; chain problems {len(figures.chain_problems)}; gaps {figures.gaps}"
    )
    for line in figures.refused[:5]:
        print(f"    {line}")
    return figures.sound


def _fuzz(work: Path, counts: dict[str, int], seed: int) -> bool:
    figures = harness_fuzz.fuzz(harness_fuzz.make_root(work / "fuzz"), counts["plans"], suite=False)
    made = ", ".join(f"{n} {how}" for how, n in sorted(figures.made.items()))
    print(f"  {figures.files} plan files ({made}); excluded {figures.excluded}")
    for reader in (*figures.readers, "plugin"):
        exits = {k.split(" ", 1)[1]: n for k, n in figures.exits.items() if k.startswith(reader)}
        print(f"    {reader:<10} answers: {dict(sorted(exits.items()))}")
    for kind in ("traceback", "hang", "exit", "message"):
        print(f"  {kind}s: {figures.count(kind)}")
    for finding in figures.findings[:5]:  # the first few, each with the file that caused it
        print("    " + harness_fuzz.describe(finding)[:1500].replace("\n", "\n    "))
    print(f"  status on the {figures.excluded} files holding an excluded glob: not asserted;")
    for pattern, answer in harness_fuzz.known_pattern_answers(
        harness_fuzz.make_root(work / "known")
    ).items():
        print(f"    alone, status on outputs ['{pattern}']: {answer}")
    return not figures.findings


def _tamper(work: Path, counts: dict[str, int], seed: int) -> bool:
    results = [harness_tamper.measure(work / "tamper", case) for case in harness_tamper.CASES]
    for r in results:
        gate = _yes(r.refused) if r.case.flips else "n/a"
        print(
            f"  {r.case.name:<11} {r.case.what:<55} audit {_yes(r.audited)} "
            f"({r.case.expect}); gate refuses {gate}"
        )
    caught = sum(r.caught for r in results)
    flips = [r for r in results if r.case.flips]
    print(f"  caught by audit or refused by the gate: {caught}/{len(results)}")
    print(f"  caught by audit: {sum(r.audited for r in results)}/{len(results)}")
    print(
        f"  refused by the gate, of those that turn the failure into a pass: "
        f"{sum(r.refused for r in flips)}/{len(flips)}"
    )
    print("  pending (not measured yet):")
    for item in harness_tamper.PENDING:
        print(f"    - {item}")
    return caught == len(results)


def _yes(flag: bool) -> str:
    return "yes" if flag else "NO"


RUNNERS: dict[str, Callable[[Path, dict[str, int], int], bool]] = {
    "kill": _kill,
    "concurrent": _concurrent,
    "fuzz": _fuzz,
    "tamper": _tamper,
}


def main() -> int:
    """Run the chosen scenarios; return 1 when any of them is not clean."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small counts (as the suite)")
    parser.add_argument("--only", default=",".join(SCENARIOS), help="comma-separated scenarios")
    parser.add_argument("--seed", type=int, default=20261201, help="seed of the kill moments")
    args = parser.parse_args()
    counts = QUICK if args.quick else FULL
    for name in [n for n in os.environ if n.startswith("PLANGRAPH_")]:
        del os.environ[name]
    clean = True
    with tempfile.TemporaryDirectory(prefix="plangraph-reliability-") as tmp:
        for name in args.only.split(","):
            print(f"== {name}", flush=True)
            started = time.perf_counter()
            work = Path(tmp) / name
            work.mkdir()
            ok = RUNNERS[name](work, counts, args.seed)
            clean = clean and ok
            seconds = time.perf_counter() - started
            print(f"  -> {'clean' if ok else 'NOT CLEAN'} ({seconds:.0f} s)", flush=True)
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
