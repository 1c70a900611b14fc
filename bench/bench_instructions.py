"""Benchmark: instruction counts (valgrind's callgrind) of the commands the speed targets of
docs/performance.md name, each beside its baseline measured in the same run.

* ``plangraph status`` on a generated plan (``--nodes``, ten events per node, as
  ``bench_status.py`` builds it): with the derived-state cache and the kept status deleted
  (the derivation as without a cache), on an unchanged repository (the kept status's hit),
  after one artifact changed, after the plan file was edited (a comment added: its bytes
  are new), and after the output of the last node changed (a node nothing depends on: a miss
  derives it alone again);
* how ``plangraph status`` grows with the plan (``--only grow``, at ``--grow-sizes`` nodes,
  ten events per node): unchanged (the kept answer's hit), one artifact changed, and with the
  kept answer and the derived state deleted; each with its instructions per node (Python's
  start taken off) and the growth from one size to the next beside the size ratio;
* ``--only miss``: ``plangraph status`` after one artifact changed alone, without the other
  ``status`` rows: the leaf's output (one node judged again), then ``out/n7.txt`` (upstream of
  nearly every node), each after a status that kept its answer (``--only leaf``: the leaf's
  row alone);
* ``--only edit``: ``plangraph status`` after a comment is added to the plan and after one
  node's title is changed, without the other ``status`` rows;
* the plan part of a command on the same plan (``--only plan``: open the plan and check it, as
  every command does first), unchanged, after a comment is added, after one node is changed,
  and with the plan cache deleted;
* ``plangraph claim`` on the JWT-login fixture, after ``plangraph verify`` (a known plan), with
  the import costs it is made of, a claim with the per-user kept answers deleted (the plug-ins'
  entry points scanned, the package's code hashed) and a claim after the plan file was edited
  (its bytes new: read as YAML and validated by pydantic);
* ``plangraph impact --since`` over ``--commits`` commits (each rewriting two outputs of a plan
  of 1,000 nodes): the kept answer's hit, its miss with the commit cache warm, ``--no-commits``
  and both caches deleted, against ``git diff --name-only`` over the same range; with
  ``--impact-phases`` also where the miss made from the kept basis goes, phase by phase;
* ``plangraph impact`` (the store's evidence against the files now) on a plan of
  ``--impact-nodes`` nodes, each output verified at the first commit and ten changed in the
  working tree since: the kept answer's hit, its miss (the kept derived state standing), and
  both deleted;
* ``pytest --plangraph`` against plain pytest on ``--tests`` trivial tests (``bench_plugin.py``'s
  suite; the marginal and fixed cost of the plug-in from the two smallest sizes), the peers
  pytest-randomly and pytest-json-report beside them when installed (the ``bench`` extra);
* ``--only pytest-imports``: importing pytest with and without the module a ``--plangraph``
  run starts from (how much of the plug-in's fixed cost is imports);
* ``pytest --plangraph --plangraph-coverage`` against ``pytest --cov=src --cov-context=test``
  (``bench_coverage.py``'s suite);
* the baseline of every command: ``python -c pass`` with the same interpreter (Python's start).

The ``pytest`` and ``coverage`` parts are in ``instructions_pytest.py``, the ``impact`` parts in
``instructions_impact.py``.

Every count is one run of a fresh process, children included (``--trace-children=yes``: the
git processes a command starts are counted with it, each writing its count to a log of its
own), with the bytecode a user's install has: the interpreter's own and its packages' as
installed (``pip`` compiles a wheel's modules when it installs them), the package's compiled
before counting (:func:`precompile`), and one untimed run of each command first. A module
first imported by the counted run is read from its bytecode, not compiled in it. Counts do
not depend on what else the machine runs, which is why they are the figures to trust here
(docs/performance.md).

With ``--wheel`` the package is counted as a user installs it: a wheel is built from the
checkout and installed into a private virtual environment (the rest of the environment's
packages on its path), so no editable install's finder runs at start.

Run: ``.venv/bin/python bench/bench_instructions.py [--wheel [--peers]] [--no-peers]
[--nodes 5000] [--commits 1000] [--impact-nodes 10000] [--impact-hits-only]
[--impact-first-misses] [--impact-phases]
[--tests 2000,4000,20000] [--grow-sizes 5000,10000,20000,50000] [--grow-phases hit,changed,derive]
[--only status,miss,leaf,edit,grow,plan,claim,impact,impact-now,pytest,pytest-imports,coverage]
[--keep-profiles DIR]``
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import bench_status
import instructions_impact
import instructions_pytest

from pytest_plangraph.usercache import RACY_NS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PYTHON = sys.executable  # the interpreter counted; --wheel points it at a private environment
PLANGRAPH = str(Path(PYTHON).parent / "plangraph")
TARGETS = {  # instructions, from issue 18
    "status unchanged": 0.5e9,
    "status, one artifact changed": 1.5e9,
    "status, plan edited": 3.0e9,
    "claim (JWT-login)": 0.4e9,
}
KEEP_PROFILES: Path | None = None
"""With ``--keep-profiles``: the folder where each count leaves callgrind's output, one file a
process (``NN-<command>.<pid>``, NN the count's number in the run), to read with
``callgrind_annotate``; else the output is not written."""


COUNTED = 0
"""How many counts this run made (numbers the kept profiles)."""


def count(root: Path, command: Sequence[str], env: dict[str, str]) -> int:
    """Instructions of *command* run in *root*, its child processes included.

    Each process writes its own log (``--log-file`` with the process id): a child whose
    stderr its parent captures (the git processes ``plangraph`` starts read through pipes)
    would otherwise write its count into that pipe, where it is never added."""
    global COUNTED
    out = "/dev/null"
    if KEEP_PROFILES is not None:
        COUNTED += 1
        out = f"{KEEP_PROFILES}/{COUNTED:02d}-{Path(command[0]).name}.%p"
    with tempfile.TemporaryDirectory() as logs:
        done = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--trace-children=yes",
                f"--callgrind-out-file={out}",
                f"--log-file={logs}/valgrind.%p",
                *command,
            ],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        reports = [log.read_text(errors="replace") for log in Path(logs).iterdir()]
    found = [int(n) for text in reports for n in re.findall(r"Collected : (\d+)", text)]
    if done.returncode >= 2:  # bad input, a usage error (an option of a plug-in not installed)
        raise SystemExit(
            f"{' '.join(command)} exited {done.returncode}: not counted\n"
            f"{done.stdout[-1000:]}{done.stderr[-1000:]}"
        )
    if not found:
        failed = "\n".join(reports)[-2000:] or done.stderr[-2000:]
        raise SystemExit(f"{' '.join(command)} failed under valgrind:\n{failed}")
    return sum(found)


def warm(root: Path, command: Sequence[str], env: dict[str, str]) -> None:
    """One untimed run (fills the bytecode cache, the plan cache, the checkpoint)."""
    subprocess.run(command, cwd=root, env=env, capture_output=True, check=False)


PEER_PACKAGES = ["pytest-randomly", "pytest-json-report", "pytest-metadata", "pytest-testmon"]
"""The peers ``--wheel --peers`` installs into the private environment (pytest-cov and
coverage.py come from this one); not into the development environment, where
pytest-randomly would reorder every test run."""


def install_wheel(tmp: Path, *, peers: bool = False) -> str:
    """Build a wheel of this checkout and install it into a private virtual environment whose
    path ends with this environment's packages (its ``.pth`` files, the editable finder among
    them, are not run), with *peers* the peers of ``--only pytest`` too; the environment's
    interpreter."""
    source = Path(__file__).resolve().parents[1]
    wheels = tmp / "wheel"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "-w", str(wheels), str(source)], check=True)
    venv = tmp / "wheel-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin/python"
    wheel = next(wheels.glob("*.whl"))
    subprocess.run([*pip, "--python", str(python), "install", "--no-deps", str(wheel)], check=True)
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    ours = subprocess.run([python, "-c", purelib], capture_output=True, text=True, check=True)
    theirs = subprocess.run([sys.executable, "-c", purelib], capture_output=True, text=True)
    Path(ours.stdout.strip(), "zz-environment.pth").write_text(theirs.stdout.strip() + "\n")
    if peers:  # the peers of `--only pytest` (the bench extra), beside the package only
        installed = [*pip, "--python", str(python), "install", "--no-deps", *PEER_PACKAGES]
        subprocess.run(installed, check=True)
    return str(python)


def environment(tmp: Path) -> dict[str, str]:
    """The environment of the counted commands: this one's without ``PLANGRAPH_`` settings,
    with the bytecode caches beside the sources (no private ``PYTHONPYCACHEPREFIX``, which
    starts empty: a module the untimed runs did not import, say pydantic when only a plan
    edit validates a node, was then compiled inside the counted run, 1.2 G of a title edit at
    1,000 nodes), bytecode written where it is missing."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANGRAPH_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPYCACHEPREFIX", None)
    env["PLANGRAPH_ACTOR"] = "bench"
    return env


def precompile(python: str, env: dict[str, str], tmp: Path) -> Path:
    """Compile the modules of the package *python* imports (the checkout, or the wheel's copy)
    into their bytecode caches, as installing a wheel does, so that no counted run compiles a
    module of the package it imports first; the package's folder. Asked from *tmp*, where no
    checkout comes first on the path."""
    where = "import os, pytest_plangraph; print(os.path.dirname(pytest_plangraph.__file__))"
    found = subprocess.run(
        [python, "-c", where], cwd=tmp, env=env, capture_output=True, text=True, check=True
    )
    folder = Path(found.stdout.strip())
    subprocess.run([python, "-m", "compileall", "-q", str(folder)], env=env, check=True)
    return folder


def row(name: str, instructions: int, baseline: int, target: float | None = None) -> None:
    verdict = ""
    if target is not None:
        met = instructions <= target
        verdict = f"  target <= {target / 1e9:.1f} G: {'met' if met else 'NOT met'}"
    print(
        f"  {name:<44} {instructions / 1e9:7.3f} G  ({instructions / baseline:5.1f}x "
        f"python start){verdict}"
    )


def bench_status_command(tmp: Path, nodes: int, env: dict[str, str], start: int) -> None:
    root = tmp / "status"
    root.mkdir()
    bench_status.build(root, nodes)
    status = [PLANGRAPH, "status"]
    cache = root / ".plangraph/cache"
    print(f"plangraph status, {nodes} nodes, {nodes * 10} events:")
    warm(root, status, env)
    for kept in (cache / "derived.json", cache / "status-text.json"):
        kept.unlink(missing_ok=True)
    off = count(root, status, env)
    row("derived state and kept status deleted (derive)", off, start)
    warm(root, status, env)
    hit = count(root, status, env)
    row("status unchanged", hit, start, TARGETS["status unchanged"])
    (root / "out/n7.txt").write_text("changed\n")
    changed = count(root, status, env)
    row("status, one artifact changed", changed, start, TARGETS["status, one artifact changed"])
    plan = root / "plangraph.yaml"
    plan.write_text(plan.read_text() + "# edited\n")
    edited = count(root, status, env)
    row("status, plan edited", edited, start, TARGETS["status, plan edited"])
    bench_status_leaf(root, nodes, env, start)
    print(f"  unchanged / cache deleted: {hit / off:.2f}")


def bench_status_leaf(root: Path, nodes: int, env: dict[str, str], start: int) -> None:
    """``status`` after the output of the last node changed: a node no other depends on, so
    a miss derives it alone again (out/n7.txt, above, is upstream of nearly every node)."""
    (root / f"out/n{nodes - 1}.txt").write_text("changed\n")
    leaf = count(root, [PLANGRAPH, "status"], env)
    row("status, one leaf artifact changed", leaf, start, TARGETS["status, one artifact changed"])


def bench_status_miss(
    tmp: Path, nodes: int, env: dict[str, str], start: int, *, leaf_only: bool = False
) -> None:
    """``--only miss``: ``plangraph status`` after one artifact changed (the ``changed`` rows
    of ``--only status`` without the others): the last node's output (nothing depends on it),
    then ``out/n7.txt`` (upstream of nearly every node), each after a status that kept its
    answer for the repository as it was; with *leaf_only* (``--only leaf``) the first
    alone."""
    root = tmp / "status-miss"
    root.mkdir()
    bench_status.build(root, nodes)
    status = [PLANGRAPH, "status"]
    print(f"plangraph status after one artifact changed, {nodes} nodes, {nodes * 10} events:")
    warm(root, status, env)  # the checkpoint
    warm(root, status, env)  # the derived state and the kept answer
    # the answer is kept by a run that follows the checkpoint's write (and the plan's) by
    # less than the racy window when the runs are quick: it keeps them as too young to trust
    # by their stat. A later look that finds them older trusts them from then on; the third
    # run, a hit, looks after the window, as a status run a few seconds later does, so that
    # what is counted does not depend on how quick the untimed runs were (a look that
    # trusts neither hashes the 4 MB checkpoint again: 0.11 G of the leaf miss)
    time.sleep(RACY_NS / 1e9)
    warm(root, status, env)
    bench_status_leaf(root, nodes, env, start)
    if leaf_only:
        return
    warm(root, status, env)
    (root / "out/n7.txt").write_text("changed\n")
    changed = count(root, status, env)
    row("status, one artifact changed", changed, start, TARGETS["status, one artifact changed"])
    # the floor of the n7 change: judging (nearly) every node again, counted alone as the
    # difference of one process that reads the plan, the log and the files, and derives
    # every node's state, and the same process without the derivation
    read = count(root, [PYTHON, "-c", FLOOR, "read"], env)
    derived = count(root, [PYTHON, "-c", FLOOR, "derive"], env)
    row("n7's floor: the plan, log and files read", read, start)
    row("n7's floor: those and every node derived", derived, start)
    row("n7's floor: the derivation alone (the difference)", derived - read, start)


FLOOR = """
import sys
from pytest_plangraph.api import PlanGraph
from pytest_plangraph.judge.rederive import derive_observed
with PlanGraph.open(".") as graph:
    fold = graph.fold()
    snapshot = graph.snapshot(fold)
    if sys.argv[1] == "derive":
        derive_observed(graph.graph, fold, snapshot)
"""
"""The two processes of the floor of ``status`` after ``out/n7.txt`` changed (``--only
miss``): the derivation of every node (as the miss judges 4,991 of 5,000 nodes again, and
records what each read) counted as the difference of the two."""


def bench_status_edit(tmp: Path, nodes: int, env: dict[str, str], start: int) -> None:
    """``--only edit``: ``plangraph status`` after plan edits alone (the ``plan edited`` row of
    ``--only status`` without the others): a comment added (other bytes, the same meaning),
    then one node's title changed (a new meaning), each after a status that kept its answer."""
    root = tmp / "status-edit"
    root.mkdir()
    bench_status.build(root, nodes)
    status = [PLANGRAPH, "status"]
    plan = root / "plangraph.yaml"
    print(f"plangraph status after a plan edit, {nodes} nodes, {nodes * 10} events:")
    for _ in range(3):  # the checkpoint, the derived state, the kept answer
        warm(root, status, env)
    plan.write_text(plan.read_text() + "# edited\n")
    row(
        "status, plan edited (a comment added)",
        count(root, status, env),
        start,
        TARGETS["status, plan edited"],
    )
    middle = f"- id: n{nodes // 2}\n"
    plan.write_text(plan.read_text().replace(middle, f"{middle}  title: edited\n", 1))
    row(
        "status, plan edited (one node's title)",
        count(root, status, env),
        start,
        TARGETS["status, plan edited"],
    )


GROW_PHASES = {
    "hit": "status unchanged (the kept answer's hit)",
    "changed": "status, one artifact changed",
    "derive": "status, kept answer and derived state deleted",
}
"""The phases of ``--only grow`` (``--grow-phases`` names some), counted in this order."""


def bench_status_growth(
    tmp: Path, sizes: Sequence[int], phases: Sequence[str], env: dict[str, str], start: int
) -> None:
    """``plangraph status`` at each of *sizes* nodes, in each of *phases* (of
    :data:`GROW_PHASES`), each repository built, counted and removed in turn; then each
    phase's growth from size to size."""
    print(f"plangraph status growth, {', '.join(f'{n:,}' for n in sizes)} nodes, ten events each:")
    found: dict[str, list[int]] = {phase: [] for phase in GROW_PHASES if phase in phases}
    for nodes in sizes:
        root = tmp / f"grow-{nodes}"
        root.mkdir()
        began = time.perf_counter()
        bench_status.build(root, nodes)
        built = time.perf_counter() - began
        status = [PLANGRAPH, "status"]
        warm(root, status, env)  # the log's checkpoint, the derived state, the kept answer
        warm(root, status, env)
        print(f"  {nodes:,} nodes, {nodes * 10:,} events (built in {built:.0f} s):", flush=True)
        for phase in found:
            if phase == "changed":
                (root / f"out/n{nodes // 2}.txt").write_text(f"changed at {nodes}\n")
            elif phase == "derive":
                for kept in ("derived.json", "status-text.json"):
                    (root / ".plangraph/cache" / kept).unlink(missing_ok=True)
            instructions = count(root, status, env)
            found[phase].append(instructions)
            per_node = (instructions - start) / nodes
            print(
                f"    {GROW_PHASES[phase]:<46} {instructions / 1e9:8.3f} G  "
                f"({instructions / start:6.1f}x python start; {per_node / 1e3:7.1f} K a node)",
                flush=True,
            )
        shutil.rmtree(root)
    print("  growth of (instructions - python start) from size to size (linear = the size ratio):")
    for phase, counts in found.items():
        steps = [
            f"{sizes[i]:,}->{sizes[i + 1]:,}: {(counts[i + 1] - start) / (counts[i] - start):.2f}"
            f" (size {sizes[i + 1] / sizes[i]:.2f})"
            for i in range(len(sizes) - 1)
        ]
        print(f"    {GROW_PHASES[phase]:<46} {'; '.join(steps) or 'one size only'}")


PLAN_CHECK = (
    "from pytest_plangraph.api import PlanGraph\n"
    "with PlanGraph.open('.') as graph:\n"
    "    graph.check_plan()\n"
)
"""Open the repository's plan and check it, as every command does first: read (parse, or take
from the plan cache), validate, the facts (digest, criterion digests, order) and lint."""


def bench_plan_edit(tmp: Path, nodes: int, env: dict[str, str], start: int) -> None:
    """The plan part of ``status`` after an edit of the plan, in isolation (:data:`PLAN_CHECK`
    in a fresh process): unchanged, after a comment is added (new bytes, same meaning), after
    one node's title is changed (new meaning), and with the plan cache deleted."""
    root = tmp / "plan-edit"
    root.mkdir()
    bench_status.build(root, nodes)
    check = [PYTHON, "-c", PLAN_CHECK]
    plan = root / "plangraph.yaml"
    print(f"open and check the plan, {nodes} nodes:")
    warm(root, check, env)
    row("plan unchanged", count(root, check, env), start)
    plan.write_text(plan.read_text() + "# edited\n")
    row("plan edited: a comment added", count(root, check, env), start)
    text = plan.read_text()
    middle = f"- id: n{nodes // 2}\n"
    plan.write_text(text.replace(middle, f"{middle}  title: edited\n", 1))
    row("plan edited: one node changed", count(root, check, env), start)
    shutil.rmtree(root / ".plangraph/cache")
    row("plan cache deleted (every block read)", count(root, check, env), start)


def bench_claim(tmp: Path, env: dict[str, str], start: int) -> None:
    root = tmp / "jwt"
    shutil.copytree(FIXTURES / "jwt-login", root)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    env = {**env, "XDG_CACHE_HOME": str(tmp / "user-cache")}  # the per-user cache: its own
    warm(root, [PLANGRAPH, "verify"], env)
    claim = [PLANGRAPH, "claim", "step-user-schema", "--by", "bench"]
    warm(root, claim, env)
    print("plangraph claim on the JWT-login fixture:")
    row("claim (JWT-login)", count(root, claim, env), start, TARGETS["claim (JWT-login)"])
    print("  where it goes (each part alone, in a fresh process):")
    for name, modules in (
        ("import the CLI and the API", "pytest_plangraph.cli, pytest_plangraph.api"),
        ("import the claim's command module alone", "pytest_plangraph.cli.state_cmds"),
        ("import the runtime plan classes", "pytest_plangraph.plan.model"),
        ("import pydantic and the boundary models", "pytest_plangraph.plan.boundary"),
    ):
        code = [PYTHON, "-c", f"import {modules}"]
        warm(root, code, env)
        row(f"  {name}", count(root, code, env), start)
    kept = tmp / "user-cache/plangraph"
    for name in ("plugins.json", "code.json"):  # what every command kept for this user
        (kept / name).unlink(missing_ok=True)
    row("  claim, plug-in scan and code hash not kept", count(root, claim, env), start)
    plan = root / "plangraph.yaml"
    plan.write_text(plan.read_text() + "# edited\n")  # new bytes: YAML and pydantic again
    row("  claim after the plan file was edited", count(root, claim, env), start)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--impact-nodes", type=int, default=10_000)
    parser.add_argument("--tests", default="2000,4000,20000")
    parser.add_argument(
        "--grow-sizes",
        default="5000,10000,20000,50000",
        help="the plan sizes of --only grow, in nodes (default %(default)s)",
    )
    parser.add_argument(
        "--grow-phases",
        default=",".join(GROW_PHASES),
        help="the phases of --only grow: hit, changed, derive (default %(default)s)",
    )
    parser.add_argument("--only", default="status,plan,claim,impact,impact-now,pytest,coverage")
    parser.add_argument("--wheel", action="store_true", help="count the package wheel-installed")
    parser.add_argument(
        "--peers",
        action="store_true",
        help="with --wheel: install the peers of --only pytest into the private environment",
    )
    parser.add_argument(
        "--impact-hits-only",
        action="store_true",
        help="--only impact,impact-now: count the kept answers' hits alone (not the misses)",
    )
    parser.add_argument(
        "--impact-first-misses",
        action="store_true",
        help="--only impact: of the misses made from the plan, the first alone",
    )
    parser.add_argument(
        "--impact-phases",
        action="store_true",
        help="--only impact: where the miss made from the kept basis goes, phase by phase",
    )
    parser.add_argument(
        "--keep-profiles",
        type=Path,
        help="keep callgrind's output of every count in this folder (for callgrind_annotate)",
    )
    instructions_pytest.add_arguments(parser)
    args = parser.parse_args(argv)
    parts = set(args.only.split(","))
    grow_sizes = [int(n) for n in args.grow_sizes.split(",") if n.strip().isdigit()]
    if len(grow_sizes) != len(args.grow_sizes.split(",")) or 0 in grow_sizes:
        parser.error(f"--grow-sizes: whole numbers of nodes above 0, not {args.grow_sizes!r}")
    grow_phases = args.grow_phases.split(",")
    if unknown := set(grow_phases) - set(GROW_PHASES):
        parser.error(f"--grow-phases: no phase {', '.join(sorted(unknown))}")
    global PYTHON, PLANGRAPH, KEEP_PROFILES
    if args.keep_profiles is not None:
        args.keep_profiles.mkdir(parents=True, exist_ok=True)
        KEEP_PROFILES = args.keep_profiles.resolve()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        env = environment(tmp)
        if args.wheel:
            PYTHON = install_wheel(tmp, peers=args.peers)
            PLANGRAPH = str(Path(PYTHON).parent / "plangraph")
            instructions_pytest.use_python(PYTHON)
            instructions_impact.use_python(PYTHON)
            print("the package installed from a wheel (no editable finder)")
        precompile(PYTHON, env, tmp)
        warm(tmp, [PYTHON, "-c", "pass"], env)
        start = count(tmp, [PYTHON, "-c", "pass"], env)
        print(f"python -c pass (baseline): {start / 1e9:.3f} G instructions")
        if "status" in parts:
            bench_status_command(tmp, args.nodes, env, start)
        if "miss" in parts or "leaf" in parts:
            bench_status_miss(tmp, args.nodes, env, start, leaf_only="miss" not in parts)
        if "edit" in parts:
            bench_status_edit(tmp, args.nodes, env, start)
        if "grow" in parts:
            bench_status_growth(tmp, grow_sizes, grow_phases, env, start)
        if "plan" in parts:
            bench_plan_edit(tmp, args.nodes, env, start)
        if "claim" in parts:
            bench_claim(tmp, env, start)

        def counted(root: Path, command: list[str]) -> int:
            return count(root, command, env)

        def warmed(root: Path, command: list[str]) -> None:
            warm(root, command, env)

        misses = not args.impact_hits_only
        if "impact" in parts:
            instructions_impact.bench_impact_command(
                tmp,
                args.commits,
                counted,
                warmed,
                row,
                start,
                misses=misses,
                all_misses=not args.impact_first_misses,
                phases=args.impact_phases,
            )
        if "impact-now" in parts:
            instructions_impact.bench_impact_now(
                tmp, args.impact_nodes, env, counted, warmed, row, start, misses=misses
            )
        if parts & {"pytest", "pytest-imports", "coverage"}:
            if "pytest" in parts:
                sizes = [int(n) for n in args.tests.split(",")]
                rows = instructions_pytest.chosen_rows(parser, args.rows)
                instructions_pytest.bench_pytest(
                    tmp, sizes, counted, warmed, start, with_peers=not args.no_peers, rows=rows
                )
            if "pytest-imports" in parts:
                print("the imports of pytest --plangraph:")
                instructions_pytest.bench_pytest_imports(tmp, counted, warmed, start)
            if "coverage" in parts:
                rows = instructions_pytest.chosen_rows(parser, args.rows)
                instructions_pytest.bench_coverage_runs(
                    tmp, counted, warmed, start, args.coverage_tests, rows, pair=args.coverage_pair
                )


if __name__ == "__main__":
    main()
