"""The one-module project the attack tests share: ``calc.py`` (``add``), its test file and a
plan whose one node ``step-calc`` is verified by that test file.

``BROKEN`` has the size of ``GOOD``: an attack that keeps a file's size (and sets its mtime
back) must still be seen.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from cli_helpers import plangraph
from plugin_helpers import make_project

PLAN = """
plangraph: 1
plan: demo
nodes:
  - id: step-calc
    outputs: [calc.py]
    acceptance:
      - id: ac-add
        verifier: {type: test, tests: ["tests/test_calc.py"]}
"""

CALC_TESTS = """
from calc import add


def test_add():
    assert add(2, 2) == 4
"""

GOOD = "def add(a, b):\n    return a + b\n"
BROKEN = "def add(a, b):\n    return a - b\n"
INI = "[pytest]\ntestpaths = tests\npythonpath = .\n"

assert len(GOOD) == len(BROKEN)

XFAIL_PLAN = PLAN.replace(
    'tests: ["tests/test_calc.py"]}', 'tests: ["tests/test_calc.py"], xfail: allow}'
)
XFAIL_TESTS = """
import pytest
from calc import add


def test_add():
    assert add(2, 2) == 4


@pytest.mark.xfail(reason="negative numbers, known")
def test_negative():
    assert add(-1, -1) == -2
"""
"""``test_negative`` passes: under ``xfail_strict = true`` its XPASS is a failure."""


def calc_project(pytester: pytest.Pytester, plan: str = PLAN, **files: str) -> Path:
    """A git repository holding :data:`PLAN` (or *plan*), ``calc.py`` as :data:`GOOD`, its
    test file ``tests/test_calc.py`` (renamed after the commit), ``pytest.ini`` and *files*
    (a relative path each)."""
    root = make_project(
        pytester, plan=plan, tests=CALC_TESTS, files={"calc.py": GOOD, "pytest.ini": INI, **files}
    )
    (root / "tests/test_a.py").rename(root / "tests/test_calc.py")
    return root


def fresh_copy(root: Path) -> Path:
    """A copy of the project at *root* beside it (``fresh``) with its ``.plangraph/cache``
    deleted, and the user cache folder ``fresh-cache`` beside it emptied: every cache gone."""
    other = root.parent / "fresh"
    shutil.rmtree(other, ignore_errors=True)
    shutil.copytree(root, other, symlinks=True)
    shutil.rmtree(other / ".plangraph" / "cache", ignore_errors=True)
    shutil.rmtree(root.parent / "fresh-cache", ignore_errors=True)
    return other


def cache_env(root: Path, name: str) -> dict[str, str]:
    """The environment of a command whose user cache is the folder *name* beside *root*."""
    return {"XDG_CACHE_HOME": str(root.parent / name)}


def claim_as_without_caches(root: Path, node: str) -> int:
    """The exit status of ``plangraph claim`` of *node* with the caches kept, asserted the
    same as in a :func:`fresh_copy` with every cache deleted."""
    kept = plangraph(root, "claim", node, "--by", "agent", env=cache_env(root, "user-cache"))
    other = fresh_copy(root)
    fresh = plangraph(other, "claim", node, "--by", "agent", env=cache_env(root, "fresh-cache"))
    assert kept.code == fresh.code, (kept.out, fresh.out)
    return kept.code


def pytest_in(
    root: Path,
    folder: str = ".",
    *args: str,
    plugin: Sequence[str] = ("--plangraph",),
    pass_fds: tuple[int, ...] = (),
) -> subprocess.CompletedProcess[str]:
    """``python -m pytest PLUGIN -p no:cacheprovider ARGS`` run in *folder* of the project at
    *root* (within 60 s), its user cache the folder ``user-cache`` beside *root* and
    ``PYTEST_ADDOPTS`` unset."""
    env = {**os.environ, **cache_env(root, "user-cache")}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", *plugin, "-p", "no:cacheprovider", *args],
        cwd=root / folder,
        env=env,
        pass_fds=pass_fds,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
