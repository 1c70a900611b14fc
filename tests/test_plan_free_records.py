"""``plangraph status`` after files changed, answered without opening the plan
(:mod:`pytest_plangraph.derived.planfree`) on records real ``pytest --plangraph`` runs made:
each binds what its run could collect (``tests/::collect{…}`` subjects) and the kept answer
watches the folders walked to list it. While those folders are found unchanged, the path
runs and gives the answer a status with every cache deleted gives; a test file or a
``conftest.py`` added in a walked folder is a miss of the folder, answered in full (stale).

Each case runs real pytest sessions (``pytester``) in a real git repository, and the real
``plangraph`` command."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cache_helpers import as_tester
from cli_helpers import Result, plangraph_main
from plugin_helpers import make_project

CACHE = Path(".plangraph/cache")
LEAVES = 4

PLAN = (
    """
plangraph: 1
plan: demo
nodes:
  - id: step-a
    outputs: [src/a.py]
    acceptance:
      - id: ac-marked
        verifier: {type: test}
      - id: ac-glob
        verifier: {type: test, tests: ["tests/test_*.py::test_pattern*"]}
"""
    + "".join(
        f"""  - id: leaf-{i}
    outputs: [out/c{i}.txt]
    acceptance:
      - id: ac-exists
        verifier: {{type: artifact, path: out/c{i}.txt}}
"""
        for i in range(LEAVES)
    )
    + "edges:\n"
    + "".join(f"  - {{from: step-a, to: leaf-{i}, type: requires}}\n" for i in range(LEAVES))
)

FILES = {f"out/c{i}.txt": f"c{i}\n" for i in range(LEAVES)}


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


def _recorded(pytester: pytest.Pytester) -> Path:
    """A project whose tests ran under ``pytest --plangraph``, every leaf's artifact verified,
    its status kept (the derived state and the kept answer written)."""
    root = make_project(pytester, plan=PLAN, files=FILES)
    assert pytester.runpytest("--plangraph").ret == 0  # the leaves' artifacts checked too
    for _ in range(3):
        plangraph_main(root, "status")
    return root


def _fresh(root: Path, tmp_path: Path) -> Result:
    """The answer with every cache deleted, in a copy (the caches here stay)."""
    other = tmp_path / "fresh"
    shutil.rmtree(other, ignore_errors=True)
    shutil.copytree(root, other, symlinks=True)
    shutil.rmtree(other / CACHE)
    return plangraph_main(other, "status", "--check")


@pytest.mark.parametrize("leaf", [False, True])
def test_a_walked_folder_whose_mtime_was_set_back_is_still_a_change(
    pytester: pytest.Pytester, tmp_path: Path, leaf: bool
) -> None:
    import os

    root = _recorded(pytester)
    folder = os.stat(root / "tests")
    (root / "tests/test_new.py").write_text("def test_pattern_new():\n    assert True\n")
    os.utime(root / "tests", ns=(folder.st_atime_ns, folder.st_mtime_ns))  # the listing hidden
    if leaf:
        (root / "out/c3.txt").write_text("changed\n")
    answer = plangraph_main(root, "status", "--check")
    assert answer == _fresh(root, tmp_path)
    [row] = [line for line in answer.out.splitlines() if line.startswith("step-a ")]
    assert " stale " in row
