"""The cached bytecode a ``pytest --plangraph`` run deletes before it starts: none when the
plan file it names is not there (the run stops before any test), so a run started by mistake
in a large folder outside any repository deletes nothing; the tree's bytecode when it is."""

from __future__ import annotations

import importlib.util
import py_compile
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

PLAN = """
plangraph: 1
plan: demo
nodes:
  - id: a
    acceptance:
      - id: ac
        verifier: {type: test, tests: ["tests/test_a.py"]}
"""


def _cached_module(root: Path) -> Path:
    """A module of a folder beside the tests, compiled: its bytecode file."""
    module = root / "other" / "mod.py"
    module.parent.mkdir()
    module.write_text("VALUE = 1\n", encoding="utf-8")
    cached = Path(importlib.util.cache_from_source(str(module)))
    py_compile.compile(str(module), cfile=str(cached), doraise=True)
    return cached


@pytest.mark.parametrize("named", [[], ["--plangraph=missing.yaml"]])
def test_a_run_whose_plan_is_missing_deletes_no_bytecode(
    pytester: pytest.Pytester, named: list[str]
) -> None:
    assert not any((p / ".git").exists() for p in (pytester.path, *pytester.path.parents))
    pytester.makepyfile(test_a="def test_a():\n    assert True\n")
    cached = _cached_module(pytester.path)
    done = pytester.runpytest_subprocess(*(named or ["--plangraph"]), "-p", "no:cacheprovider")
    assert done.ret != 0
    assert "not found" in done.stdout.str() + done.stderr.str()
    assert "1 passed" not in done.stdout.str()  # no test ran
    assert cached.exists()


@pytest.mark.parametrize(
    "following", [[], ["tests/test_a.py"], ["tests/test_a.py::test_a"]], ids=["", "path", "id"]
)
def test_a_run_whose_plan_is_there_deletes_the_trees_bytecode(
    pytester: pytest.Pytester, following: list[str]
) -> None:
    """Also with a test path or id after a bare ``--plangraph`` (the default plan: the value
    pytest's first parse took for the plan is a test)."""
    (pytester.path / "plangraph.yaml").write_text(PLAN, encoding="utf-8")
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests/test_a.py").write_text("def test_a():\n    assert True\n", "utf-8")
    cached = _cached_module(pytester.path)
    done = pytester.runpytest_subprocess("--plangraph", *following, "-p", "no:cacheprovider")
    assert done.ret == 0, done.stdout.str()
    assert not cached.exists()


def test_a_plan_a_conftest_writes_after_the_run_started_stops_the_run(
    pytester: pytest.Pytester,
) -> None:
    """A ``conftest.py`` that writes the plan file while it is read (after the purge was
    skipped for a missing plan) cannot have the run go on over unpurged bytecode: it stops,
    and records nothing."""
    (pytester.path / "plan.txt").write_text(PLAN, encoding="utf-8")
    pytester.makeconftest(
        "import pathlib\n"
        "here = pathlib.Path(__file__).parent\n"
        "(here / 'plangraph.yaml').write_text((here / 'plan.txt').read_text())\n"
    )
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests/test_a.py").write_text("def test_a():\n    assert True\n", "utf-8")
    cached = _cached_module(pytester.path)
    done = pytester.runpytest_subprocess("--plangraph", "-p", "no:cacheprovider")
    assert done.ret != 0
    assert "was not there when the run started" in done.stdout.str() + done.stderr.str()
    assert "evidence recorded" not in done.stdout.str()
    assert cached.exists()
    again = pytester.runpytest_subprocess("--plangraph", "-p", "no:cacheprovider")
    assert again.ret == 0, again.stdout.str()  # run again, as the message says: purged now
    assert "evidence recorded: 1 passed" in again.stdout.str()
    assert not cached.exists()
