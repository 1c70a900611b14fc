"""The floors ``bench/floor_status_miss.py`` and ``bench/floor_impact_miss.py`` count are
answers the product gives: on the benches' repositories (real stores, real git, the real
``plangraph`` command), the floor's printed table or report is byte for byte the command's,
its new input digests and rows are those of the derived state the command keeps, and its
``--check`` failures those ``status --check`` prints. ``bench/phases_status_miss.py`` stops
the real command where each phase ends: no phase but the last prints, and every phase is
reached on a leaf miss (a stop that never came would print the answer)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import _environment, plangraph
from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))

import bench_impact
import bench_status
import floor_impact_miss
import floor_status_miss
import phases_status_miss

from pytest_plangraph.store.derived import FREE, FREE_PERSON, read_tagged
from pytest_plangraph.usercache import RACY_NS


def python(root: Path, program: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run *program* (``python -c``) in *root* with this interpreter."""
    return subprocess.run(
        [sys.executable, "-c", program, *args],
        cwd=root,
        env=_environment(None),
        capture_output=True,
        text=True,
        check=False,
    )


def kept_status(root: Path) -> None:
    """Statuses that keep the answer (and, after the racy window, trust its files)."""
    for _ in range(2):
        assert plangraph(root, "status").code in (0, 1)
    time.sleep(RACY_NS / 1e9)
    assert plangraph(root, "status").code in (0, 1)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("floor") / "repo"
    root.mkdir()
    bench_status.build(root, 60)
    return root


@pytest.mark.parametrize("change", ["upstream", "leaf", "deleted"])
def test_the_status_floor_answers_as_status_does(built: Path, tmp_path: Path, change: str) -> None:
    root = tmp_path / "repo"
    subprocess.run(["cp", "-a", str(built), str(root)], check=True)
    kept_status(root)
    assert python(root, floor_status_miss.PREPARE).returncode == 0
    target = (
        root / {"upstream": "out/n7.txt", "leaf": "out/n59.txt", "deleted": "out/n30.txt"}[change]
    )
    if change == "deleted":
        target.unlink()
    else:
        target.write_text("changed\n")
    dumped = tmp_path / "floor.json"
    full = python(root, floor_status_miss.FLOOR, "9", "patched,check", str(dumped))
    assert full.returncode == 0, full.stderr
    check = json.loads((root / ".plangraph/cache/floor-check.json").read_text())
    lean = python(root, floor_status_miss.FLOOR, "9", "lean,tags,check")
    assert lean.returncode == 0, lean.stderr
    lean_check = json.loads((root / ".plangraph/cache/floor-check.json").read_text())
    made = json.loads(dumped.read_text())
    assert made["digests"]  # the change reached a node
    status = plangraph(root, "status", "--check")
    assert full.stdout == lean.stdout == status.out
    failing = {}
    for line in status.err.splitlines():
        node, _, why = line.removeprefix("status --check: ").partition(" ")
        failing[node] = why
    for found in (check, lean_check):
        assert {n: why for n, why in found} == {n: failing[n] for n in made["digests"]}
    state = read_tagged(root / ".plangraph/cache/derived.json")["data"]
    rows = {row[0]: row for row in state["nodes"]}
    free = read_tagged(root / ".plangraph/cache" / FREE, FREE_PERSON)  # a miss without the plan
    if free is not None:
        state["input_digests"].update(free["digests"])
        rows.update(free["rows"])
    assert made["digests"] == {n: state["input_digests"][n] for n in made["digests"]}
    assert made["rows"] == {n: rows[n] for n in made["rows"]}
    assert set(made["rows"]) == set(made["digests"])


def test_the_status_floor_stops_at_each_part_without_printing(built: Path, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    subprocess.run(["cp", "-a", str(built), str(root)], check=True)
    kept_status(root)
    assert python(root, floor_status_miss.PREPARE).returncode == 0
    (root / "out/n7.txt").write_text("changed\n")
    for upto in range(1, len(floor_status_miss.PARTS)):
        done = python(root, floor_status_miss.FLOOR, str(upto), "-")
        assert done.returncode == 0, done.stderr
        assert (done.stdout != "") == (upto >= 7)  # the table is printed by part 7
    unchanged = python(root, floor_status_miss.FLOOR, "1", "-")
    assert unchanged.returncode == 0  # the floor keeps nothing the product's look reads


def test_the_impact_floor_prints_the_report_impact_prints(tmp_path: Path) -> None:
    root = tmp_path / "impact"
    bench_impact.fast_import(root, [bench_impact.first_commit(120)])
    for command in (["verify"], ["status"], ["impact"], ["impact"]):
        assert plangraph(root, *command).code in (0, 1)
    assert python(root, floor_status_miss.PREPARE).returncode == 0
    for i in range(0, 120, 12):
        (root / f"out/n{i}.txt").write_text("changed in the working tree\n")
    floor = python(root, floor_impact_miss.IMPACT, str(len(floor_impact_miss.PARTS)))
    assert floor.returncode == 0, floor.stderr
    assert "invalidated: 120 node(s)" in floor.stdout
    assert floor.stdout == plangraph(root, "impact").out


def test_each_phase_of_the_leaf_miss_ends_where_its_function_does(
    built: Path, tmp_path: Path
) -> None:
    root = tmp_path / "repo"
    subprocess.run(["cp", "-a", str(built), str(root)], check=True)
    kept_status(root)
    (root / "out/n59.txt").write_text("changed\n")
    cache = root / ".plangraph/cache"
    before = (cache / "status-text.json").read_bytes()
    for module, name, when, _ in phases_status_miss.MILESTONES[:-1]:
        stopped = python(root, phases_status_miss.RUN, module, name, when)
        assert stopped.returncode == 0, stopped.stderr
        assert stopped.stdout == ""  # stopped before the answer: each phase is reached
        if (name, when) != ("FreeMiss.keep", "after"):
            assert (cache / "status-text.json").read_bytes() == before  # nothing kept yet
        else:  # the miss kept its answer: put the kept state back for the whole command
            (cache / "status-text.json").write_bytes(before)
            (cache / "derived-free.json").unlink()
    whole = python(root, phases_status_miss.RUN, "-", "-", "-")
    assert whole.returncode == 0 and "n59" in whole.stdout
