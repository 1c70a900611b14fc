"""A third-party verifier, installed once, works in `pytest --plangraph` and `plangraph verify`."""

from __future__ import annotations

import shutil

import pytest
from cli_helpers import plangraph
from conftest import FIXTURES
from plugin_helpers import PLAN, latest, make_project

LINECOUNT_PLAN = PLAN.replace(
    "{type: artifact, path: out/b.txt}", '{type: linecount, path: out/b.txt, regex: "^b$"}'
)


def test_an_installed_verifier_runs_under_pytest_and_the_cli(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = pytester.path / "site"
    info = site / "plangraph_linecount-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: plangraph-linecount\nVersion: 0.1.0\n"
    )
    (info / "entry_points.txt").write_text("[plangraph]\nlinecount = plangraph_linecount\n")
    shutil.copy(FIXTURES / "plangraph-linecount" / "plangraph_linecount.py", site)
    monkeypatch.setenv("PYTHONPATH", str(site))
    root = make_project(pytester, plan=LINECOUNT_PLAN)

    result = pytester.runpytest_subprocess("--plangraph", "-v")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["plangraph.yaml::step-b/ac-exists PASSED*"])
    from_pytest = latest(root)["step-b/ac-exists"]
    assert (from_pytest.verifier, from_pytest.outcome) == ("linecount", "passed")

    assert plangraph(root, "verify", "step-b", env={"PYTHONPATH": str(site)}).code == 0
    from_cli = latest(root)["step-b/ac-exists"]
    assert from_cli.id != from_pytest.id
    assert (from_cli.outcome, from_cli.details, from_cli.subjects) == (
        from_pytest.outcome,
        from_pytest.details,
        from_pytest.subjects,
    )
