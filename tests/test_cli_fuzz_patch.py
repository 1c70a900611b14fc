"""``plangraph patch`` given a JSON Patch that would blow up the plan (a value copied into
itself again and again doubles it each time): refused with one message before memory runs out,
the plan file untouched, no event recorded. So is a patch file over 4 MiB, and a JSON Patch
written in YAML that holds a date, bytes, NaN or an infinity (which the event recording it
could not hold, or not read back: a NaN recorded made the audit call the event tampered)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import plangraph
from cli_state_helpers import STORE

from pytest_plangraph.store.sqlite import Store


def _events(root: Path) -> int:
    with Store.open(root / STORE, create=False, readonly=True) as store:
        return store.count()


def test_a_json_patch_that_doubles_the_plan_again_and_again_is_refused(jwt: Path) -> None:
    doubling = [{"op": "copy", "from": "/nodes", "path": "/nodes/-"}] * 60  # 2**60 nodes
    (jwt / "grow.json").write_text(json.dumps(doubling), encoding="utf-8")
    plan = (jwt / "plangraph.yaml").read_bytes()
    before = _events(jwt)
    result = plangraph(jwt, "patch", "grow.json", "--by", "agent", "--expected-plan-version", "1")
    assert result.code == 2, result.err
    assert result.err.startswith("plangraph: error: grow.json: op ")
    assert "more than 100,000 values" in result.err and "nothing was changed" in result.err
    assert "Traceback" not in result.err
    assert (jwt / "plangraph.yaml").read_bytes() == plan
    assert _events(jwt) == before


def test_a_json_patch_that_copies_within_the_limit_is_applied(jwt: Path) -> None:
    copy = [{"op": "copy", "from": "/nodes/2/constraints", "path": "/nodes/1/constraints"}]
    (jwt / "copy.json").write_text(json.dumps(copy), encoding="utf-8")
    result = plangraph(jwt, "patch", "copy.json", "--by", "agent", "--expected-plan-version", "1")
    assert result.code == 0, result.err
    assert _events(jwt) > 1
    assert (
        "constraints: [no-rbac, no-oauth]"
        in (jwt / "plangraph.yaml").read_text().split("id: step-token-endpoint")[0]
    )


def test_a_patch_file_over_the_limit_is_refused_without_a_made_up_size(jwt: Path) -> None:
    (jwt / "big.yaml").write_text("#" * 5_000_000 + "\n", encoding="utf-8")
    plan = (jwt / "plangraph.yaml").read_bytes()
    before = _events(jwt)
    result = plangraph(jwt, "patch", "big.yaml", "--by", "agent", "--expected-plan-version", "1")
    assert result.code == 2 and "Traceback" not in result.err, result.err
    assert result.err == (
        "plangraph: error: big.yaml: the patch is larger than 4,194,304 bytes (4 MiB); split it\n"
    )
    assert (jwt / "plangraph.yaml").read_bytes() == plan
    assert _events(jwt) == before


@pytest.mark.parametrize(
    ("member", "written", "says"),
    [
        ("value", "2001-01-01", "'value' holds date"),
        ("note", "2001-01-01T10:00:00Z", "'note' holds datetime"),
        ("extra", "{deep: [!!binary aGk=]}", "'extra.deep[0]' holds bytes"),
        ("when", ".nan", "'when' holds float nan"),
        ("when", "[-.inf]", "'when[0]' holds float -inf"),
    ],
    ids=["value-date", "ignored-member-datetime", "nested-bytes", "nan", "infinity"],
)
def test_a_json_patch_in_yaml_holding_a_value_json_has_no_form_for_is_refused(
    jwt: Path, member: str, written: str, says: str
) -> None:
    # op 0 changes the title; op 1 holds the odd value (in a member the RFC ignores too: the
    # event records every member, and the plan was written before recording it failed)
    value = written if member == "value" else f"a, {member}: {written}"
    odd = f"{{op: add, path: /nodes/0/x-note, value: {value}}}"
    text = f"- {{op: replace, path: /nodes/0/title, value: changed}}\n- {odd}\n"
    text += "- {op: remove, path: /nodes/0/x-note}\n"
    (jwt / "odd.yaml").write_text(text, encoding="utf-8")
    plan = (jwt / "plangraph.yaml").read_bytes()
    before = _events(jwt)
    result = plangraph(jwt, "patch", "odd.yaml", "--by", "agent", "--expected-plan-version", "1")
    assert result.code == 2 and "Traceback" not in result.err, result.err[-600:]
    assert "odd.yaml: op 1 (add /nodes/0/x-note): " + says in result.err, result.err
    assert "put it in quotes" in result.err and "nothing was changed" in result.err
    assert (jwt / "plangraph.yaml").read_bytes() == plan
    assert _events(jwt) == before
