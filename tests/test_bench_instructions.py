"""The environment ``bench/bench_instructions.py`` counts commands in: a module the counted run
imports first is read from bytecode, as in a user's install, and not compiled inside the count
(a private bytecode folder that starts empty made a plan edit, the first command to import the
plan's validation, count the compiling of pydantic and of the package's modules)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))

import bench_instructions


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
