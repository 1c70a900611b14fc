"""The one-module project the attack tests share: ``calc.py`` (``add``), its test file and a
plan whose one node ``step-calc`` is verified by that test file.

``BROKEN`` has the size of ``GOOD``: an attack that keeps a file's size (and sets its mtime
back) must still be seen.
"""

from __future__ import annotations

from pathlib import Path

import pytest
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


def calc_project(pytester: pytest.Pytester, plan: str = PLAN, **files: str) -> Path:
    """A git repository holding :data:`PLAN` (or *plan*), ``calc.py`` as :data:`GOOD`, its
    test file ``tests/test_calc.py`` (renamed after the commit), ``pytest.ini`` and *files*
    (a relative path each)."""
    root = make_project(
        pytester, plan=plan, tests=CALC_TESTS, files={"calc.py": GOOD, "pytest.ini": INI, **files}
    )
    (root / "tests/test_a.py").rename(root / "tests/test_calc.py")
    return root
