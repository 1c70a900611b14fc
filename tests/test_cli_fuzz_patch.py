"""``plangraph patch`` given a JSON Patch that would blow up the plan (a value copied into
itself again and again doubles it each time): refused with one message before memory runs out,
the plan file untouched, no event recorded."""

from __future__ import annotations

import json
from pathlib import Path

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
