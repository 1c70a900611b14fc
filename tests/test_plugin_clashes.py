"""Plugins that clash or render: one verifier name from two plugins, one module named by two entry
points, report formats a plugin provides, and a parser built without loading any plugin.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import plangraph_main
from conftest import FIXTURES
from plugin_helpers import PLAN, latest, make_project
from robustness_helpers import (
    IGNORED,
    Probe,
    Provides,
    make_repo,
    node,
    warnings_of,
)

from pytest_plangraph.cli import build_parser
from pytest_plangraph.hooks import manager as plugins
from pytest_plangraph.hooks.specs import hookimpl

# --- one verifier name, two plugins ---------------------------------------------------------


def test_a_name_clash_refuses_only_the_criteria_that_use_it(tmp_path: Path, manager: Any) -> None:
    manager.register(Provides(Probe("twin")), name="twin-one")
    manager.register(Provides(Probe("twin")), name="twin-two")
    clean = make_repo(tmp_path / "clean")
    for command in ("lint", "status", "audit"):
        assert plangraph_main(clean, command).code == 0, command

    root = make_repo(tmp_path / "uses", node("step-t", "{type: twin}"))
    clash = "verifier type 'twin' is registered by several plugins (twin-one, twin-two)"
    linted = plangraph_main(root, "lint")
    assert linted.code == 1
    assert [line for line in linted.out.splitlines() if "VERIFIER_CONFIG" in line] == [
        f"plangraph.yaml:11:20: error VERIFIER_CONFIG [step-t]: step-t/ac-0: {clash};"
        " uninstall or block all but one"
    ]
    status = plangraph_main(root, "status")
    assert status.code == 0
    assert clash in status.err
    assert plangraph_main(root, "verify", "step-b").code == 0
    assert latest(root)["step-b/ac-b"].outcome == "passed"
    whole = plangraph_main(root, "verify")  # the clashing criterion is an error, not a stop
    assert whole.code == 1, whole.err
    refused = latest(root)["step-t/ac-0"]
    assert (refused.outcome, refused.reason) == ("error", "UNKNOWN_VERIFIER")
    assert clash in refused.details["message"]


def test_a_plugin_settings_problem_stops_commands_as_any_plan_error(
    tmp_path: Path, manager: Any
) -> None:
    # a misspelt setting is the plan's mistake: judging past it would pass a check of nothing
    manager.register(Provides(Probe()), name="probe-plugin")
    root = make_repo(tmp_path, node("step-p", '{type: probe, answer: ["max_line: unknown"]}'))
    for command in ("status", "verify", "audit"):
        refused = plangraph_main(root, command)
        assert refused.code == 2, command
        assert "VERIFIER_CONFIG: step-p/ac-0: max_line: unknown" in refused.err
    assert plangraph_main(root, "lint").code == 1


def test_under_pytest_a_name_clash_is_an_error_of_its_criterion_only(
    pytester: pytest.Pytester, manager: Any
) -> None:
    manager.register(Provides(Probe("twin")), name="twin-one")
    manager.register(Provides(Probe("twin")), name="twin-two")
    plan = PLAN.replace("{type: artifact, path: out/b.txt}", "{type: twin}")
    root = make_project(pytester, plan=plan)
    result = pytester.runpytest("--plangraph")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the clashing item fails, no stop
    result.assert_outcomes(passed=3, failed=1)
    records = latest(root)
    assert (records["step-b/ac-exists"].outcome, records["step-b/ac-exists"].reason) == (
        "error",
        "UNKNOWN_VERIFIER",
    )
    assert records["step-a/ac-pattern"].outcome == "passed"


def test_one_module_named_by_two_entry_points_is_registered_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for dist, entry in (("plangraph-linecount", "linecount"), ("linecount-again", "again")):
        info = tmp_path / f"{dist.replace('-', '_')}-0.1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1.0\n")
        (info / "entry_points.txt").write_text(f"[plangraph]\n{entry} = plangraph_linecount\n")
    shutil.copy(FIXTURES / "plangraph-linecount" / "plangraph_linecount.py", tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv(plugins.AUTOLOAD_OFF, raising=False)
    plugins.clear_cache()
    try:
        assert plugins.get_registry().get("linecount").name == "linecount"
    finally:
        plugins.clear_cache()
        sys.modules.pop("plangraph_linecount", None)


# --- report formats -------------------------------------------------------------------------


class Formats:
    @hookimpl
    def plangraph_report_formats(self) -> dict[str, Any]:
        return {
            "yaml": lambda r: (
                f"format {r['format']}: "
                + ", ".join(f"{n['id']}={n['status']}" for n in r["nodes"])
            ),
            "json": lambda r: "hijacked",
            "boom": lambda r: 1 / 0,
        }


class BrokenFormats:
    @hookimpl
    def plangraph_report_formats(self) -> dict[str, Any]:
        raise LookupError("no formats")


def test_status_renders_plugin_report_formats(tmp_path: Path, manager: Any) -> None:
    manager.register(Formats(), name="formats")
    manager.register(BrokenFormats(), name="broken-formats")
    root = make_repo(tmp_path)

    result = plangraph_main(root, "status", "--format", "yaml")
    assert (result.code, result.out) == (0, "format 1: step-b=ready\n")
    assert warnings_of(result.err) == [
        "plangraph: warning: the plugin 'broken-formats' failed in plangraph_report_formats:"
        f" LookupError: no formats{IGNORED}"
    ]
    assert json.loads(plangraph_main(root, "status", "--format", "json").out)["format"] == 1

    unknown = plangraph_main(root, "status", "--format", "toml")
    assert unknown.code == 2
    assert (
        "invalid choice: 'toml' (choose from 'text', 'json', 'markdown', 'boom', 'yaml')"
        in unknown.err
    )
    # the broken plugin may be the one meant to offer it: the refusal says it failed
    assert "'broken-formats' failed in plangraph_report_formats" in unknown.err
    boom = plangraph_main(root, "status", "--format", "boom")
    assert boom.code == 2
    assert "plangraph: error: the report format 'boom' of the plugin 'formats' failed:" in boom.err
    assert "ZeroDivisionError" in boom.err
    assert plangraph_main(root, "verify", "--format", "yaml").code == 2  # status only


def test_building_the_parser_loads_no_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    info = tmp_path / "plangraph_lazy-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plangraph-lazy\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[plangraph]\nlazy = plangraph_lazy_formats\n")
    (tmp_path / "plangraph_lazy_formats.py").write_text(
        "import pluggy\n"
        "@pluggy.HookimplMarker('plangraph')\n"
        "def plangraph_report_formats():\n"
        "    return {'csv': lambda report: 'id,status'}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv(plugins.AUTOLOAD_OFF, raising=False)
    plugins.clear_cache()
    try:
        parser = build_parser()
        with pytest.raises(SystemExit):
            parser.parse_args(["--help"])
        parser.parse_args(["status", "--format", "json"])
        assert "plangraph_lazy_formats" not in sys.modules
        assert parser.parse_args(["status", "--format", "csv"]).format == "csv"
        assert "plangraph_lazy_formats" in sys.modules
        assert plugins.get_plugin_manager().has_plugin("lazy")
    finally:
        capsys.readouterr()
        plugins.clear_cache()
        sys.modules.pop("plangraph_lazy_formats", None)
