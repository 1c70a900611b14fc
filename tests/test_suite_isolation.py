"""The suite's own isolation: what a test finds does not depend on which tests ran before it in
the same process. ``pytester`` runs pytest in this process and, after each run and at the end
of the test, takes out of ``sys.modules`` every module first imported during it; the
attribute the import set on the module's package stays (:func:`conftest.forget_dropped_submodules`
takes it off after each test).

The case is run as a suite of its own, in a new process (the tests before it in this one
have imported whatever they imported), with this suite's ``conftest`` as a plug-in.
"""

from __future__ import annotations

import pytest
from conftest import ROOT

ORDER = """
import importlib
import sys

from cli_helpers import plangraph_main
from plugin_helpers import make_project

STATE = "pytest_plangraph.cli.state_cmds"


def test_the_command_line_imported_for_the_process(tmp_path):
    plangraph_main(tmp_path, "lint")
    assert "pytest_plangraph.cli" in sys.modules and STATE not in sys.modules


def test_a_status_in_a_pytester_test(pytester):
    plangraph_main(make_project(pytester), "status")
    assert STATE in sys.modules  # taken out again at the end of this test


def test_the_spy_fixture_patches_the_module_the_command_runs(pytester, derived):
    assert plangraph_main(make_project(pytester), "status").code == 0
    assert derived == ["text"]
    from pytest_plangraph.cli import state_cmds

    assert state_cmds is importlib.import_module(STATE)
"""
"""Three tests in this order: the command line imported for the rest of the process (not
``state_cmds``), ``state_cmds`` imported during a pytester test, then a test whose spy fixture
(``derived``) counts the status it runs."""


def test_a_spy_fixture_counts_the_command_whatever_ran_before(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``derived`` found ``state_cmds`` as the attribute of ``pytest_plangraph.cli`` the
    second test's import had left, while the command imported it anew: it counted nothing
    (the two kept-status tests of ``test_plugin_imported_refs`` failed after such tests)."""
    pytester.makepyfile(test_order=ORDER)
    monkeypatch.setenv("PYTHONPATH", str(ROOT / "tests"))
    monkeypatch.setenv("PLANGRAPH_ACTOR", "tester")
    result = pytester.runpytest_subprocess("-p", "pytester", "-p", "conftest", "-p", "no:xdist")
    result.assert_outcomes(passed=3)
