"""Attacks on the whole gate (round seventeen), by an agent that wants ``pytest
--plangraph``, ``status`` or ``claim`` to answer a node completed while a test of its criterion
fails on the code as it is.

* An ``-o`` override of one of pytest's strictness switches (``xfail_strict``, its new name
  ``strict_xfail``, ``strict`` …) to false was taken for no change of the suite: a test the
  project's configuration fails (a strict XPASS) ran as an XPASS that ``xfail: allow`` lets
  through, and the run recorded the criterion passed. Only an override to true tightens the
  configuration; any other value makes the run record no pass, as the other loosening
  options do, and so does an override of a setting that decides whether a test fails
  (``doctest_optionflags``, ``markers`` under strict markers, ``empty_parameter_set_mark`` …).
* An ``@file`` of arguments naming another ``@file`` (pytest's parser reads them in turn) was
  read one level deep: any option that narrows or loosens the run (``-o xfail_strict=false``,
  ``--ignore``, ``-W ignore``) passed unseen from the second file on.
* A run started in the tests' folder when that folder holds a configuration file of its own
  (``cd tests && pytest --plangraph=../plangraph.yaml`` with a ``tests/pytest.ini``) takes
  that folder for its rootdir and reads that file alone: the repository root's configuration
  (``xfail_strict = true``) was left out, yet the run recorded passes (docs/trust.md said a
  run started there records none). A run whose configuration file lies below another the
  repository holds, up to the folder holding both it and the plan file, now records no pass
  (a package whose plan lies beside its own configuration still records its passes).
* Broken code under test that raises ``pytest.skip(allow_module_level=True)`` or
  ``unittest.SkipTest`` while it is imported skips the whole test module that imports it:
  under ``skips: allow`` that was an allowed skip (the origin of a skip was looked at for
  tests, not for collectors), and the criterion passed on its other test files. Such a
  collector now counts as a collection error for the criteria it may hold.
* Plug-in autoloading disabled (``--disable-plugin-autoload`` or
  ``PYTEST_DISABLE_PLUGIN_AUTOLOAD``, the plug-in itself loaded with ``-p``) leaves out every
  installed plug-in, as ``-p no:NAME`` of each would (a run that records no pass), yet the
  run recorded passes: an installed plug-in that fails a test of the broken code (warnings
  made errors) was left out. It now records no pass while an installed plug-in that may
  change outcomes is not loaded.

Guarded, not broken: code under test that ends the test process (``os._exit(0)``) records
nothing and completes nothing; under xdist the gate refuses it (in one process the exit
status is the code's: ``docs/trust.md``).

Each scenario is a real git repository, real ``pytest --plangraph`` processes and the real
``plangraph`` command; what ``status`` and ``claim`` answer with the caches kept is compared
with what they answer with every cache deleted (the repository's ``.plangraph/cache`` and the
user's cache folder).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from calc_helpers import (
    INI,
    PLAN,
    XFAIL_PLAN,
    XFAIL_TESTS,
    cache_env,
    calc_project,
    claim_as_without_caches,
    fresh_copy,
    pytest_in,
)
from cli_helpers import plangraph
from conftest import git

pytest_plugins = ["pytester"]


def _run(pytester: pytest.Pytester, root: Path, *args: str) -> pytest.RunResult:
    os.environ["XDG_CACHE_HOME"] = str(root.parent / "user-cache")
    try:
        return pytester.runpytest_subprocess("--plangraph", "-p", "no:cacheprovider", *args)
    finally:
        del os.environ["XDG_CACHE_HOME"]


def _states(out: str) -> dict[str, Any]:
    data = json.loads(out)
    return {node["id"]: node["status"] for node in data["nodes"]}


def _status(root: Path) -> dict[str, Any]:
    """The nodes' states, with the caches kept (twice: the second reads what the first kept)
    and with every cache deleted: the same."""
    kept = [plangraph(root, "status", "--format", "json", env=cache_env(root, "user-cache"))]
    kept.append(plangraph(root, "status", "--format", "json", env=cache_env(root, "user-cache")))
    other = fresh_copy(root)
    fresh = plangraph(other, "status", "--format", "json", env=cache_env(root, "fresh-cache"))
    for done in (*kept, fresh):
        assert "Traceback" not in done.err, done.err
    assert _states(kept[0].out) == _states(fresh.out) == _states(kept[1].out)
    return _states(fresh.out)


@pytest.mark.parametrize(
    ("setting", "override"),
    [
        ("xfail_strict = true", "xfail_strict=false"),
        ("strict_xfail = true", "strict_xfail=0"),
        ("xfail_strict = true", "strict_xfail=no"),
        ("strict = true", "strict=off"),
    ],
)
def test_an_override_of_strict_xfail_to_false_records_no_pass(
    pytester: pytest.Pytester, setting: str, override: str
) -> None:
    """The project's configuration makes an XPASS a failure; ``-o`` turning that off (on the
    command line or in ``PYTEST_ADDOPTS``) makes the run record no pass, and the node is not
    completed (nor claimable), with the caches kept and with every cache deleted."""
    root = calc_project(pytester, XFAIL_PLAN, **{"pytest.ini": f"{INI}{setting}\n"})
    (root / "tests/test_calc.py").write_text(XFAIL_TESTS.lstrip(), encoding="utf-8")
    git(root, "commit", "-qam", "a known bug kept as xfail")
    honest = _run(pytester, root)
    assert honest.ret == 1  # the strict XPASS fails the run and the criterion
    assert _status(root) == {"step-calc": "failed"}
    loosened = _run(pytester, root, "-o", override)
    assert "1 xpassed" in loosened.stdout.str()
    assert "evidence recorded: 1 passed" not in loosened.stdout.str()
    assert "loosens" in loosened.stdout.str() or "override" in loosened.stdout.str()
    assert _status(root) == {"step-calc": "failed"}
    assert claim_as_without_caches(root, "step-calc") != 0
    os.environ["PYTEST_ADDOPTS"] = f"-o {override}"
    try:
        _run(pytester, root)
    finally:
        del os.environ["PYTEST_ADDOPTS"]
    assert _status(root) == {"step-calc": "failed"}
    assert claim_as_without_caches(root, "step-calc") != 0


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_an_override_in_an_argfile_named_by_an_argfile_records_no_pass(
    pytester: pytest.Pytester, depth: int
) -> None:
    """``-o xfail_strict=false`` read from an ``@file`` that an ``@file`` names (and so on):
    the run records no pass, as with the override on the command line."""
    root = calc_project(pytester, XFAIL_PLAN, **{"pytest.ini": f"{INI}xfail_strict = true\n"})
    (root / "tests/test_calc.py").write_text(XFAIL_TESTS.lstrip(), encoding="utf-8")
    git(root, "commit", "-qam", "a known bug kept as xfail")
    files = root.parent / f"args-{depth}"
    files.mkdir()
    (files / "0.txt").write_text("-o\nxfail_strict=false\n", encoding="utf-8")
    for level in range(1, depth):
        (files / f"{level}.txt").write_text(
            f"--tb=short\n@{files}/{level - 1}.txt\n", encoding="utf-8"
        )
    loosened = _run(pytester, root, f"@{files}/{depth - 1}.txt")
    assert "1 xpassed" in loosened.stdout.str()
    assert "evidence recorded: 1 passed" not in loosened.stdout.str()
    assert _status(root) == {"step-calc": "ready"}
    assert claim_as_without_caches(root, "step-calc") != 0


@pytest.mark.parametrize("name", ["pytest.ini", "tox.ini"])
def test_a_run_under_a_configuration_file_below_the_projects_records_no_pass(
    pytester: pytest.Pytester, name: str
) -> None:
    """The tests' folder holds a configuration file of its own; a run started there reads it
    alone and lets the strict XPASS through: it records no pass (the node stays failed),
    with the caches kept and without."""
    root = calc_project(pytester, XFAIL_PLAN, **{"pytest.ini": f"{INI}xfail_strict = true\n"})
    (root / "tests/test_calc.py").write_text(XFAIL_TESTS.lstrip(), encoding="utf-8")
    (root / "tests/pytest.ini").write_text("[pytest]\npythonpath = ..\n", encoding="utf-8")
    (root / "pytest.ini").rename(root / name)  # the repository's configuration
    git(root, "add", "-A")
    git(root, "commit", "-qm", "a known bug kept as xfail, a configuration in the tests' folder")
    assert _run(pytester, root).ret == 1
    assert _status(root) == {"step-calc": "failed"}
    below = pytest_in(root, "tests", "--plangraph=../plangraph.yaml", plugin=())
    assert "1 xpassed" in below.stdout, below.stdout + below.stderr
    assert "evidence recorded: 1 passed" not in below.stdout
    assert _status(root) == {"step-calc": "failed"}
    assert claim_as_without_caches(root, "step-calc") != 0


def test_a_package_with_its_plan_beside_its_configuration_records_its_passes(
    pytester: pytest.Pytester,
) -> None:
    """One package of a larger repository: its plan beside its own configuration file in its
    folder, the repository's configuration at the root. A run started in the package's folder
    is the package's whole suite: it records its pass (no configuration above is searched
    past the folder holding the plan)."""
    plan = PLAN.replace("[calc.py]", "[pkg/calc.py]").replace('"tests/', '"pkg/tests/')
    root = calc_project(pytester, "plan: none\n")
    (root / "pkg/tests").mkdir(parents=True)
    (root / "tests/test_calc.py").rename(root / "pkg/tests/test_calc.py")
    (root / "calc.py").rename(root / "pkg/calc.py")
    (root / "pkg/plangraph.yaml").write_text(plan, encoding="utf-8")
    (root / "pkg/pytest.ini").write_text(INI, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "a package of its own")
    ran = pytest_in(root, "pkg")
    assert "evidence recorded: 1 passed" in ran.stdout, ran.stdout + ran.stderr


SKIP_PLAN = """
plangraph: 1
plan: demo
nodes:
  - id: step-calc
    outputs: [calc.py]
    acceptance:
      - id: ac-add
        verifier:
          type: test
          tests: ["tests/test_calc.py", "tests/test_other.py"]
          skips: allow
"""
OTHER_TESTS = "def test_other():\n    assert True\n"
SKIPPING = {
    "pytest": "import pytest\n\npytest.skip('not today', allow_module_level=True)\n",
    "unittest": "import unittest\n\nraise unittest.SkipTest('not today')\n",
}
"""The head of a broken ``calc.py`` that skips, while it is imported, the test module that
imports it."""


@pytest.mark.parametrize("how", sorted(SKIPPING))
@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_a_test_module_skipped_whole_by_the_code_under_test_is_no_allowed_skip(
    pytester: pytest.Pytester, how: str, workers: list[str]
) -> None:
    """Under ``skips: allow`` a test module skipped whole is an allowed skip; but broken code
    under test that skips the test module importing it (a module-level ``pytest.skip`` or
    ``unittest.SkipTest`` in ``calc.py``) checked nothing: the criterion is not passed by the
    other test file alone, in one process and under xdist, with the caches kept and without.
    The test module's own module-level skip stays an allowed skip."""
    root = calc_project(pytester, SKIP_PLAN, **{"tests/test_other.py": OTHER_TESTS})
    assert _run(pytester, root, *workers).ret == 0
    assert _status(root) == {"step-calc": "completed"}
    calc = root / "calc.py"
    calc.write_text(SKIPPING[how] + calc.read_text().replace("+", "-"), encoding="utf-8")
    git(root, "commit", "-qam", "broken, and skipping its tests")
    result = _run(pytester, root, *workers)
    assert "1 skipped" in result.stdout.str()
    assert "evidence recorded: 1 passed" not in result.stdout.str()
    assert _status(root) == {"step-calc": "failed"}
    assert claim_as_without_caches(root, "step-calc") != 0
    # the tests' own decision: the test module skips itself (calc.py as it was)
    git(root, "checkout", "-q", "HEAD~1", "--", "calc.py")
    tests = root / "tests/test_calc.py"
    tests.write_text(SKIPPING[how] + tests.read_text(), encoding="utf-8")
    git(root, "commit", "-qam", "the tests skip themselves")
    assert _run(pytester, root, *workers).ret == 0
    assert _status(root) == {"step-calc": "completed"}


STRICT_PLUGIN = """
def pytest_configure(config):
    config.addinivalue_line("filterwarnings", "error::DeprecationWarning")
"""
"""An installed plug-in (outside the repository) that makes a deprecation warning fail."""
WARNING_CALC = (
    "import warnings\n\n\ndef add(a, b):\n"
    "    warnings.warn('old', DeprecationWarning)\n    return a + b\n"
)


@pytest.mark.parametrize("how", ["env", "option"])
def test_plugin_autoloading_disabled_leaving_out_a_plugin_records_no_pass(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """The code under test warns, which the installed plug-in makes a failure; a run with
    autoloading disabled (the variable or the option) and this plug-in loaded with ``-p``
    leaves the other plug-in out: it records no pass, and the node stays failed, with the
    caches kept and without."""
    site = pytester.path.parent / f"site-{how}"
    (site / "strictwarn-1.0.dist-info").mkdir(parents=True)
    (site / "strictwarn.py").write_text(STRICT_PLUGIN, encoding="utf-8")
    (site / "strictwarn-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: strictwarn\nVersion: 1.0\n", encoding="utf-8"
    )
    (site / "strictwarn-1.0.dist-info" / "entry_points.txt").write_text(
        "[pytest11]\nstrictwarn = strictwarn\n", encoding="utf-8"
    )
    monkeypatch.setenv("PYTHONPATH", str(site))
    root = calc_project(pytester, **{"calc.py": WARNING_CALC})
    honest = _run(pytester, root)
    assert honest.ret == 1
    assert _status(root) == {"step-calc": "failed"}
    args = ["-p", "pytest_plangraph.plugin"]
    if how == "env":
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    else:
        args.insert(0, "--disable-plugin-autoload")
    loosened = _run(pytester, root, *args)
    assert "1 passed" in loosened.stdout.str()  # the warning is no error without the plug-in
    assert "evidence recorded: 1 passed" not in loosened.stdout.str()
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    assert _status(root) == {"step-calc": "failed"}
    assert claim_as_without_caches(root, "step-calc") != 0


def test_code_that_ends_a_worker_is_refused_by_the_gate(pytester: pytest.Pytester) -> None:
    """Code under test that ends its process with status 0 (``os._exit(0)``): in one process
    the run ends before recording anything (its exit status is the code's, docs/trust.md),
    and nothing is completed; under xdist the worker's end is recorded as an error and
    ``--plangraph-gate`` refuses the node."""
    root = calc_project(pytester)
    (root / "calc.py").write_text("import os\n\n\ndef add(a, b):\n    os._exit(0)\n")
    git(root, "commit", "-qam", "ends the process")
    gate = ["--plangraph-gate", "--plangraph-require", "step-calc"]
    _run(pytester, root, *gate)
    assert _status(root) == {"step-calc": "ready"}
    assert claim_as_without_caches(root, "step-calc") != 0
    assert _run(pytester, root, "-n", "2", *gate).ret == 1
    assert _status(root) == {"step-calc": "failed"}
    assert claim_as_without_caches(root, "step-calc") != 0
