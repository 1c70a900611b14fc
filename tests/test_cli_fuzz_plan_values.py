"""Plan files whose YAML holds values JSON has no form for (a date, a time, bytes) in a plug-in
verifier's settings, through the real ``plangraph`` command: one plan error naming the setting
and how to write it, exit 2, never a traceback; the store keeps its events. NaN and the
infinities, which JSON has no form for either, are refused the same way."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import plangraph
from cli_state_helpers import STORE

from pytest_plangraph.store.sqlite import Store

APPROVAL = "verifier: {type: approval, role: security}"


def _events(root: Path) -> int:
    with Store.open(root / STORE, create=False, readonly=True) as store:
        return store.count()


@pytest.mark.parametrize(
    ("written", "got"),
    [
        ("2001-12-14", "date"),
        ("2001-12-14T21:59:43.10-05:00", "datetime"),
        ("!!binary aGVsbG8=", "bytes"),
        ("{deep: [1, 2001-12-14]}", "date"),
    ],
    ids=["date", "datetime", "binary", "nested-date"],
)
@pytest.mark.parametrize("command", ["lint", "status", "report"])
def test_a_plugin_setting_json_cannot_hold_is_a_plan_error(
    jwt: Path, written: str, got: str, command: str
) -> None:
    plan = jwt / "plangraph.yaml"
    setting = f"verifier: {{type: myplug, setting: {written}}}"
    plan.write_text(plan.read_text().replace(APPROVAL, setting), encoding="utf-8")
    before = _events(jwt)
    result = plangraph(jwt, command)
    assert result.code == 2, result.err
    assert "Traceback" not in result.err, result.err
    assert result.err.startswith("plangraph: error: plangraph.yaml:30:"), result.err
    assert "nodes[2].acceptance[2].verifier.setting" in result.err, result.err
    assert f"got {got} " in result.err and "put it in quotes" in result.err, result.err
    assert result.err.count("\n") == 1, result.err
    assert _events(jwt) == before


@pytest.mark.parametrize("written", [".nan", "{a: [-.inf]}"], ids=["nan", "infinity"])
def test_a_plugin_setting_that_is_not_a_finite_number_is_a_plan_error(
    jwt: Path, written: str
) -> None:
    plan = jwt / "plangraph.yaml"
    setting = f"verifier: {{type: myplug, setting: {written}}}"
    plan.write_text(plan.read_text().replace(APPROVAL, setting), encoding="utf-8")
    result = plangraph(jwt, "lint")
    assert result.code == 2 and "Traceback" not in result.err, result.err
    assert "nodes[2].acceptance[2].verifier.setting" in result.err, result.err
    assert "expected a finite number (JSON has no NaN or infinity), got float " in result.err


def test_saga_shows_a_compensate_with_control_characters_escaped(jwt: Path) -> None:
    plan = jwt / "plangraph.yaml"
    undo = r'"undo-schema\x1b[8m hidden\x1b[0m\nsecond line\r"'
    title = "    title: User record schema\n"
    plan.write_text(
        plan.read_text().replace(title, f"{title}    effect: write\n    compensate: {undo}\n"),
        encoding="utf-8",
    )
    assert plangraph(jwt, "verify", "step-user-schema").code == 0
    for form in ("text", "markdown"):
        result = plangraph(jwt, "saga", "--format", form)
        assert result.code == 0 and "Traceback" not in result.err, result.err
        assert "\x1b" not in result.out and "\r" not in result.out, repr(result.out)
        assert r"undo-schema\x1b[8m hidden\x1b[0m\nsecond line\r" in result.out, result.out
    rows = plangraph(jwt, "saga").out.splitlines()
    assert len(rows) == 3 and rows[2].startswith("1  step-user-schema  completed  write"), rows
    assert plangraph(jwt, "saga", "--format", "json").json()["steps"][0]["compensate"] == (
        "undo-schema\x1b[8m hidden\x1b[0m\nsecond line\r"
    )
