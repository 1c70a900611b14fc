"""The environment ``bench/bench_instructions.py`` counts commands in: a module the counted run
imports first is read from bytecode, as in a user's install, and not compiled inside the count
(a private bytecode folder that starts empty made a plan edit, the first command to import the
plan's validation, count the compiling of pydantic and of the package's modules), and the
"plan cache kept" row's run finds the plan cache its untimed runs kept."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))

import bench_coverage
import bench_instructions
import instructions_pytest


def test_the_counted_environment_keeps_no_private_bytecode_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(tmp_path / "private"))
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("PLANGRAPH_ACTOR", "someone")
    env = bench_instructions.environment(tmp_path)
    assert "PYTHONPYCACHEPREFIX" not in env
    assert "PYTHONDONTWRITEBYTECODE" not in env
    assert env["PLANGRAPH_ACTOR"] == "bench"


def test_the_package_is_compiled_before_counting_so_its_first_import_reads_bytecode(
    tmp_path: Path,
) -> None:
    copy = tmp_path / "site" / "pytest_plangraph"
    shutil.copytree(ROOT / "pytest_plangraph", copy, ignore=shutil.ignore_patterns("__pycache__"))
    env = bench_instructions.environment(tmp_path)
    env["PYTHONPATH"] = str(copy.parent)
    assert bench_instructions.precompile(sys.executable, env, tmp_path) == copy
    imported = subprocess.run(
        [sys.executable, "-v", "-c", "import pytest_plangraph.plan.boundary"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = [
        line for line in imported.stderr.splitlines() if line.startswith("# code object from")
    ]
    ours = [line for line in loaded if str(copy) in line]
    assert any("boundary" in line for line in ours)
    compiled = [line for line in ours if not line.endswith(".pyc'")]
    assert compiled == []


def test_a_row_that_keeps_the_plan_cache_counts_a_run_that_finds_it(tmp_path: Path) -> None:
    root = tmp_path / "suite"
    root.mkdir()
    bench_coverage.build(root, 2)  # a project whose first run keeps no plan cache
    env = bench_instructions.environment(tmp_path)
    found: list[list[str]] = []

    def warm(where: Path, command: list[str]) -> None:
        bench_instructions.warm(where, command, env)

    def count(where: Path, command: list[str]) -> int:
        cache = where / ".plangraph" / "cache"
        found.append(sorted(p.name for p in cache.glob("valid-*.json")))
        return 1

    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--plangraph"]
    instructions_pytest.measure(root, command, count, warm, keep_plan_cache=True)
    instructions_pytest.measure(root, command, count, warm)
    assert found[0] != []  # the validated plan is there for the counted run
    assert found[1] == []  # the fresh-.plangraph row: nothing kept
