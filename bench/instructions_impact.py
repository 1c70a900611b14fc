"""The ``impact`` parts of ``bench_instructions.py``: ``plangraph impact --since`` over
``--commits`` commits of a plan of 1,000 nodes (each commit rewriting two outputs), against
``git diff --name-only`` over the same range (its misses: one commit later, made from the
kept basis; then from the plan, every kept ``impact`` file deleted), and ``plangraph
impact`` over the working tree on a plan of ``--impact-nodes`` nodes (each output verified at
the first commit, ten changed in the working tree since), each a fresh process beside
Python's start counted in the same run: the kept answer's hit, and unless
``--impact-hits-only`` its misses."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import bench_impact

from pytest_plangraph.plan.cache import make_cache_dir
from pytest_plangraph.usercache import RACY_NS

PYTHON = sys.executable  # the interpreter counted; --wheel points it at a private environment
PLANGRAPH = str(Path(PYTHON).parent / "plangraph")
TARGETS = {"impact, working tree": 0.5e9}  # instructions, from issue 18

Count = Callable[[Path, list[str]], int]
Warm = Callable[[Path, list[str]], None]
Row = Callable[..., None]
"""``row(name, instructions, baseline, target=None)`` of ``bench_instructions.py``."""


def use_python(python: str) -> None:
    """Count the commands with *python* and its ``plangraph`` (``bench_instructions.py
    --wheel``)."""
    global PYTHON, PLANGRAPH
    PYTHON = python
    PLANGRAPH = str(Path(python).parent / "plangraph")


def bench_impact_command(
    tmp: Path,
    commits: int,
    count: Count,
    warm: Warm,
    row: Row,
    start: int,
    *,
    misses: bool = True,
    all_misses: bool = True,
    phases: bool = False,
) -> None:
    """``impact --since`` over *commits* commits: the kept answer's hit, its miss with the
    commit cache warm (what a run on a new commit pays beside the commits it has not seen),
    ``--no-commits`` (a miss) and both caches deleted, against ``git diff --name-only``;
    without *all_misses* the first two misses alone; with *phases* where the miss made from
    the kept basis goes (:func:`bench_basis_phases`)."""
    root = tmp / "impact"
    bench_impact.fast_import(root, bench_impact.history(1000, commits + 1))
    cache = root / ".plangraph/cache"
    make_cache_dir(cache)  # a project that uses plangraph has one
    rev = f"HEAD~{commits}"
    since = [PLANGRAPH, "impact", "--since", rev]

    def forget() -> None:
        for kept in cache.glob("impact-*"):  # the records and the printed answers
            kept.unlink()

    # past git's racy-clean interval before anything is kept, the index refreshed as a
    # user's git does: the hit counted is the steady one (files and an index written just
    # now are otherwise hashed again on every run, by chance of timing)
    time.sleep(RACY_NS / 1e9 + 0.5)
    warm(root, ["git", "status", "--porcelain"])
    warm(root, since)
    print(f"plangraph impact --since over {commits} commits, plan of 1000 nodes:")
    diff = count(root, ["git", "diff", "--name-only", rev])
    row("git diff --name-only (baseline)", diff, start)
    hit = count(root, since)
    row("impact --since, the kept answer (hit)", hit, start)
    miss = 0
    if misses:
        kept = tmp / "impact-cache-before-the-miss"
        shutil.copytree(cache, kept)
        miss = bench_impact_basis(root, since, count, row, start)
        if phases:
            bench_basis_phases(root, rev, cache, kept, count, warm, row, start)
        bench_impact_misses(root, since, count, row, start, forget, every=all_misses)
    print("  where the hit goes (each part alone, in a fresh process):")
    hit_imports = (
        "import pytest_plangraph.cli, pytest_plangraph.cli.impact_kept, "
        "pytest_plangraph.derived.kept, pytest_plangraph.vcs.history"
    )
    fingerprint = "; from pytest_plangraph.codehash import code_fingerprint; code_fingerprint()"
    for name, code in (
        ("  import what a hit imports", hit_imports),
        ("  ... and the code's fingerprint", hit_imports + fingerprint),
    ):
        command = [PYTHON, "-c", code]
        warm(root, command)
        row(name, count(root, command), start)
    floor = diff + start
    for name, figure in (("hit", hit), ("miss, basis kept", miss))[: 2 if misses else 1]:
        print(
            f"  {name} / (git diff + python start): {figure / floor:.2f} "
            f"(target <= 3: {'met' if figure <= 3 * floor else 'NOT met'})"
        )


def bench_impact_basis(root: Path, since: list[str], count: Count, row: Row, start: int) -> int:
    """The miss of ``impact --since`` after one more commit rewriting two outputs, as each
    commit of the history does (the range is another, its newest commit not in the commit
    cache), made from the kept basis; its count."""
    for output in ("out/n1.txt", "out/n2.txt"):
        (root / output).write_text("one more commit\n")
    who = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid"}
    who |= {"GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}
    commit = ["git", "commit", "-q", "-am", "one more"]
    subprocess.run(commit, cwd=root, env={**os.environ, **who}, check=True)
    miss = count(root, since)
    row("impact --since, one commit later (miss, basis)", miss, start)
    return miss


PHASES = (
    (
        "import what the command imports first",
        "import pytest_plangraph.cli\n"
        "from pytest_plangraph.cli.impact_kept import kept_key, kept_shape\n",
        "",
    ),
    (
        "... the diff read for the key (3 git processes)",
        "",
        "key = kept_key(None, None, None, SINCE, True, 'text')",
    ),
    (
        "... the kept answer looked for (a miss)",
        "from pytest_plangraph.derived.kept import kept_answer\n",
        "assert kept_shape(kept_answer(None, None, None, key.name, key.extra)) is None",
    ),
    (
        "... the kept basis read and checked",
        "from pytest_plangraph.cli.impact_basis import kept_basis\n",
        "warned, basis = kept_basis(None, None, None)",
    ),
    (
        "... the commits named (rev-list, one log)",
        "from pytest_plangraph.store.localkey import local_key\n"
        "from pytest_plangraph.vcs.commitcache import CommitCache\n"
        "from pytest_plangraph.vcs.history import changes_since\n",
        "commits = CommitCache(key.cache / 'commits.json', local_key())\n"
        "listed, named = changes_since(key.diff.root, SINCE, cache=commits, diff=key.diff)",
    ),
    ("... the report made", "", "report = basis.report(listed, commits=named)"),
    (
        "... its text made",
        "from pytest_plangraph.cli.impact_text import printed\n",
        "text = printed(report, 'text')",
    ),
    ("... and printed (the whole miss, without main)", "", "print(text)"),
)
"""Each phase of a miss made from the kept basis (``cli/impact_basis.py``): its name, what it
imports and what it runs, after the phases before it (:func:`bench_basis_phases`)."""


def bench_basis_phases(
    root: Path,
    rev: str,
    cache: Path,
    kept: Path,
    count: Count,
    warm: Warm,
    row: Row,
    start: int,
) -> None:
    """Where the miss made from the kept basis goes: each of :data:`PHASES` run after the ones
    before it in a fresh process, the cache folder put back as it was before the miss each
    time (the commit cache without the new commit, the basis, no answer for this range);
    then as the miss left it."""
    print("  where the miss made from the basis goes (each phase with the ones before it):")
    after = kept.with_name("impact-cache-after-the-miss")
    shutil.copytree(cache, after)
    imported, ran = "", f"SINCE = {rev!r}\n"
    for name, imports, code in PHASES:
        imported, ran = imported + imports, ran + code + "\n"
        command = [PYTHON, "-c", imported + ran]
        for action in (warm, count):
            shutil.rmtree(cache)
            shutil.copytree(kept, cache)
            if action is warm:
                warm(root, command)
            else:
                row(f"  {name}", count(root, command), start)
    shutil.rmtree(cache)
    shutil.copytree(after, cache)  # as the miss left it, for the rows after


def bench_impact_misses(
    root: Path,
    since: list[str],
    count: Count,
    row: Row,
    start: int,
    forget: Callable[[], None],
    *,
    every: bool = True,
) -> int:
    """The misses of ``impact --since`` made from the plan (every kept ``impact`` file deleted:
    the kept answers and the basis; ``--no-commits``; the commit cache deleted too); the
    first."""
    forget()
    miss = count(root, since)
    row("impact --since, kept answer and basis deleted", miss, start)
    if not every:
        return miss
    forget()
    bare = count(root, [*since, "--no-commits"])
    row("impact --since --no-commits (miss)", bare, start)
    forget()
    (root / ".plangraph/cache/commits.json").unlink()
    cold = count(root, since)
    row("impact --since, both caches deleted", cold, start)
    return miss


def bench_impact_now(
    tmp: Path,
    nodes: int,
    env: dict[str, str],
    count: Count,
    warm: Warm,
    row: Row,
    start: int,
    *,
    misses: bool = True,
) -> None:
    """``impact`` over the working tree: the kept answer's hit, its miss (the kept derived
    state standing), and both deleted (derives)."""
    root = tmp / "impact-now"
    bench_impact.fast_import(root, [bench_impact.first_commit(nodes)])
    for command in (["verify"], ["status"]):  # evidence of every output, the log's checkpoint
        subprocess.run([PLANGRAPH, *command], cwd=root, env=env, capture_output=True, check=True)
    changed = range(0, nodes, max(nodes // 10, 1))
    for i in changed:
        (root / f"out/n{i}.txt").write_text("changed in the working tree\n")
    impact = [PLANGRAPH, "impact"]
    cache = root / ".plangraph/cache"
    warm(root, impact)
    warm(root, impact)  # the first may have written the log's checkpoint: kept now
    print(f"plangraph impact, {nodes} nodes, {len(changed)} outputs changed in the working tree:")
    hit = count(root, impact)
    row("impact, the kept answer (hit)", hit, start, TARGETS["impact, working tree"])
    if not misses:
        return
    for kept in cache.glob("impact-*"):
        kept.unlink()
    miss = count(root, impact)
    row("impact, kept answer deleted (miss)", miss, start, TARGETS["impact, working tree"])
    for kept in [*cache.glob("impact-*"), cache / "derived.json"]:
        kept.unlink()
    row("impact, kept answer and derived state deleted", count(root, impact), start)
