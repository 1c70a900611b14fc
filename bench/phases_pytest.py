"""Benchmark: where the instructions of ``pytest --plangraph`` go, phase by phase, beside plain
pytest on the same suite (``bench_plugin.py``'s trivial tests mapped to 500 criteria).

Python's frames cannot be told apart in callgrind's profile (every function is the
interpreter's loop), so each phase is cut out by a marker: a plug-in loaded with ``-p`` calls
``binascii.crc_hqx`` (which nothing else of a run calls) when a hook or a function of the
session begins and ends, and valgrind dumps its count before each such call
(``--dump-before=binascii_crc_hqx``). The counts between two markers are that phase's
instructions; the marker plug-in names them in the order they were reached.

The phases common to both runs (start, configure, collection, the tests, the session's end,
the summary, the process's end) are printed side by side with the difference; the
``--plangraph`` run's session steps (the plan opened and linted, the log folded, the state
derived, the records built and stored, the state after) are printed on their own below. The
run counted has a fresh store and the plan cache kept from untimed runs before it, as the
``plan cache kept`` row of ``bench_instructions.py`` (the second when the folders the first
made are older than the racy window, so that what is kept by their times is kept, as in a
repository whose folders were not made just now); bytecode is cached in a private folder.

Run: ``.venv/bin/python bench/phases_pytest.py [--tests 500] [--python PATH]`` (valgrind
installed; a few minutes)."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench_plugin

from pytest_plangraph.usercache import RACY_NS

MARKER = """
import atexit, binascii, functools, os, pytest
LABELS = []
def mark(label):
    LABELS.append(label)
    binascii.crc_hqx(b"x", 0)
atexit.register(lambda: open(os.environ["PHASE_LABELS"], "w").write("\\n".join(LABELS)))
def wrap(owner, name, label):
    raw = vars(owner).get(name)
    method = raw.__func__ if isinstance(raw, classmethod) else getattr(owner, name)
    @functools.wraps(method)
    def marked(*args, **kwargs):
        mark("+" + label)
        try:
            return method(*args, **kwargs)
        finally:
            mark("-" + label)
    setattr(owner, name, classmethod(marked) if isinstance(raw, classmethod) else marked)
@pytest.hookimpl(hookwrapper=True)
def pytest_cmdline_main(config):
    mark("+run")
    from _pytest import unraisableexception
    wrap(unraisableexception, "gc_collect_harder", "pytest's gc.collect")
    if config.getoption("plangraph", None) is not None:
        from pytest_plangraph import api
        from pytest_plangraph.plugin import session as S
        from pytest_plangraph.store import sqlite as Q
        Session = S.PlangraphSession
        for owner, name, label in [
            (Session, "start", "session start"),
            (api.PlanGraph, "open", "plan opened"),
            (api.PlanGraph, "plan_problems", "plan linted"),
            (api.PlanGraph, "fold", "log folded"),
            (api.PlanGraph, "snapshot", "snapshot"),
            (S, "derive", "state before"),
            (Session, "pytest_collection_finish", "mapping"),
            (Session, "_finish", "session end"),
            (S, "decide", "verdicts"),
            (Session, "_builder", "record maker"),
            (api.PlanGraph, "record_run", "records stored"),
            (S, "state_after", "state after"),
            (S, "write_summary", "summary written"),
            (Q.Store, "append_many", "store append"),
            (Q.Store, "_insert", "store insert"),
            (Session, "close", "session closed"),
            (Q.Store, "close", "store closed"),
        ]:
            wrap(owner, name, label)
    yield
    mark("-run")
@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session):
    mark("+collection"); yield; mark("-collection")
@pytest.hookimpl(hookwrapper=True)
def pytest_sessionfinish(session):
    mark("+sessionfinish"); yield; mark("-sessionfinish")
@pytest.hookimpl(hookwrapper=True)
def pytest_unconfigure(config):
    mark("+unconfigure"); yield; mark("-unconfigure")
"""
"""The marker plug-in (see the module)."""

COMMON = ["+run", "+collection", "-collection", "+sessionfinish", "-sessionfinish", "+unconfigure"]
"""The markers both runs reach: the phases compared side by side start at these."""

NAMES = {
    "START": "start: pytest and plug-ins loaded",
    "+run": "configure (the session started)",
    "+collection": "collection (with the mapping)",
    "-collection": "the tests",
    "+sessionfinish": "session end",
    "-sessionfinish": "summary",
    "+unconfigure": "unconfigure and exit",
}


def counted(root: Path, command: list[str], env: dict[str, str]) -> list[tuple[str, int]]:
    """Run *command* in *root* under callgrind, dumping at each marker: (marker, instructions
    from it to the next) in order, the first from the process's start ("START")."""
    with tempfile.TemporaryDirectory() as name:
        out = Path(name)
        env = {**env, "PHASE_LABELS": str(out / "labels")}
        done = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--dump-before=binascii_crc_hqx",
                f"--callgrind-out-file={out}/callgrind.%p",
                *command,
            ],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        parts: dict[int, int] = {}
        for dump in out.glob("callgrind.*"):
            text = dump.read_text(errors="replace")
            part = re.search(r"^part: (\d+)", text, re.M)
            total = re.search(r"^totals: (\d+)", text, re.M)
            if part and total:
                parts[int(part.group(1))] = int(total.group(1))
        labels = (out / "labels").read_text().splitlines() if (out / "labels").exists() else []
    if len(parts) != len(labels) + 1:
        failed = done.stderr[-2000:]
        raise SystemExit(f"{' '.join(command)}: the markers were not counted\n{failed}")
    return list(zip(["START", *labels], [parts[n] for n in sorted(parts)], strict=True))


def by_common(phases: list[tuple[str, int]]) -> dict[str, int]:
    """The instructions of each common phase (:data:`COMMON`): the finer ones added up."""
    totals: dict[str, int] = {}
    current = "START"
    for label, instructions in phases:
        current = label if label in COMMON else current
        totals[current] = totals.get(current, 0) + instructions
    return totals


def reset(root: Path) -> None:
    """Delete the store, keep the plan cache (the ``plan cache kept`` row)."""
    state = root / ".plangraph"
    for path in state.iterdir() if state.is_dir() else ():
        if path.is_file() and path.name != ".gitignore":
            path.unlink()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=500)
    parser.add_argument("--python", default=sys.executable, help="the interpreter counted")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed")
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        (tmp / "marker").mkdir()
        (tmp / "marker" / "plangraph_phases.py").write_text(MARKER, encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith("PLANGRAPH_")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.update(
            PYTHONPATH=str(tmp / "marker"),
            PYTHONPYCACHEPREFIX=str(tmp / "pycache"),
            PLANGRAPH_ACTOR="bench",
        )
        root = tmp / "suite"
        root.mkdir()
        bench_plugin.build(root, args.tests)
        base = [args.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
        base += ["-p", "plangraph_phases"]
        runs = {}
        for label, command in (("plain", base), ("--plangraph", [*base, "--plangraph"])):
            shutil.rmtree(root / ".plangraph", ignore_errors=True)
            subprocess.run(command, cwd=root, env=env, capture_output=True, check=False)
            # once more when the folders the first run made are older than the racy window,
            # as a repository's are: what is kept by their times is kept then
            time.sleep(RACY_NS / 1e9)
            subprocess.run(command, cwd=root, env=env, capture_output=True, check=False)
            reset(root)
            runs[label] = counted(root, command, env)
        plain, ours = by_common(runs["plain"]), by_common(runs["--plangraph"])
        print(f"pytest --plangraph against plain pytest, {args.tests} tests, by phase (M):")
        print(f"  {'phase':<40} {'plain':>9} {'--plangraph':>12} {'added':>9}")
        for label in ["START", *COMMON]:
            a, b = plain.get(label, 0), ours.get(label, 0)
            print(f"  {NAMES[label]:<40} {a / 1e6:9.1f} {b / 1e6:12.1f} {(b - a) / 1e6:9.1f}")
        a, b = sum(plain.values()), sum(ours.values())
        print(f"  {'whole run':<40} {a / 1e6:9.1f} {b / 1e6:12.1f} {(b - a) / 1e6:9.1f}")
        print("--plangraph, from each marker to the next (M):")
        for label, instructions in runs["--plangraph"]:
            print(f"  after {label:<36} {instructions / 1e6:9.1f}")


if __name__ == "__main__":
    main()
