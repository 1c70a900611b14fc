"""The ``schema`` verifier on documents JSON cannot hold, on schemas reached through ``$ref``, and
on ``format``: the same verdict on every machine, never a hang or a crash."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_plangraph.plan.model import Node
from pytest_plangraph.vcs.workspace import Workspace
from pytest_plangraph.verifiers import Registry, VerifierResult
from pytest_plangraph.verifiers.formats import date_time, format_checker

BOMB = "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]\n"
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
)
BOMB = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n' + BOMB  # 9**9 values in 400 bytes


def run(root: Path, schema: Any, artifact: str, text: str) -> VerifierResult:
    (root / "s.json").write_text(json.dumps(schema), encoding="utf-8")
    (root / artifact).write_text(text, encoding="utf-8")
    verifier = {"type": "schema", "schema": "s.json", "artifact": artifact}
    node = Node.from_data({"id": "n", "acceptance": [{"id": "ac", "verifier": verifier}]})
    return Registry.builtin().run_safely(node, node.acceptance[0], Workspace.at(root))


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("bomb.yaml", BOMB, "its aliases expand to more than 1,000,000 values"),
        ("loop.yaml", "a: &a [1, *a]\n", "an alias refers to a value that contains it"),
        ("nan.json", '{"ratio": NaN}', "NaN is not a JSON number"),
        ("inf.json", '{"ratio": -Infinity}', "-Infinity is not a JSON number"),
        ("nan.yaml", "ratio: .nan\n", "$.ratio: nan is not a JSON number"),
        ("int-key.yaml", "1: 5\n", "$: the key 1 is read as int, not text"),
        ("float-key.yaml", "a:\n  1.5: x\n", "$.a: the key 1.5 is read as float, not text"),
    ],
)
def test_what_json_cannot_hold_is_unreadable(
    tmp_path: Path, name: str, text: str, expected: str
) -> None:
    schema = {"type": "object", "additionalProperties": {"type": ["string", "array", "number"]}}
    result = run(tmp_path, schema, name, text)
    assert (result.outcome, result.reason) == ("failed", "ARTIFACT_UNREADABLE")
    assert result.message.startswith(f"{name}: ")
    assert expected in result.message


def test_a_quoted_key_is_text(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"1": {"type": "string"}}}
    result = run(tmp_path, schema, "key.yaml", '"1": 5\n')
    assert (result.outcome, result.reason) == ("failed", "SCHEMA_VIOLATION")


@pytest.mark.parametrize(
    ("referenced", "expected"),
    [
        ({"type": "object", "required": "city"}, "$.required: 'city' is not of type 'array'"),
        ({"maxLength": "5"}, "$.maxLength: '5' is not of type 'integer'"),
        ([1, 2], "a JSON Schema is an object, not list"),
    ],
)
def test_a_schema_reached_through_ref_is_checked_as_a_schema(
    tmp_path: Path, referenced: Any, expected: str
) -> None:
    (tmp_path / "part.json").write_text(json.dumps(referenced), encoding="utf-8")
    schema = {"type": "object", "properties": {"part": {"$ref": "part.json"}}}
    result = run(tmp_path, schema, "a.json", '{"part": {"city": "Oslo"}}')
    assert (result.outcome, result.reason) == ("error", "SCHEMA_INVALID")
    assert result.message.startswith("part.json: ")
    assert expected in result.message


def test_a_ref_resolved_against_an_absolute_id_says_so(tmp_path: Path) -> None:
    (tmp_path / "addr.json").write_text('{"type": "object"}', encoding="utf-8")
    schema = {"$id": "https://example.com/s.json", "properties": {"addr": {"$ref": "addr.json"}}}
    result = run(tmp_path, schema, "a.json", '{"addr": {}}')
    assert (result.outcome, result.reason) == ("error", "SCHEMA_INVALID")
    assert "$ref 'https://example.com/addr.json' is not fetched" in result.message
    assert "resolve against the schema's $id 'https://example.com/s.json'" in result.message


@pytest.mark.parametrize(
    ("value", "outcome"),
    [
        ({"when": "2026-12-01T08:30:00Z"}, "passed"),
        ({"when": "2026-12-01t08:30:00.25+05:30"}, "passed"),
        ({"when": "yesterday"}, "failed"),
        ({"when": "2026-02-30T00:00:00Z"}, "failed"),
        ({"when": "2026-12-01T08:30:00+24:00"}, "failed"),
        ({"day": "yesterday"}, "failed"),
        ({"home": "not a uri"}, "passed"),  # not a checked format: an annotation
        ({"at": "08:30:00Z"}, "passed"),
        ({"at": "definitely not a time"}, "failed"),
        ({"when": "2026-12-01T08:30:00Z\n"}, "failed"),
        ({"when": "\uff12\uff10\uff12\uff16-12-01T08:30:00Z"}, "failed"),  # fullwidth digits
    ],
)
def test_formats_are_checked_the_same_on_every_machine(
    tmp_path: Path, value: dict[str, str], outcome: str
) -> None:
    properties = {
        "when": {"type": "string", "format": "date-time"},
        "day": {"type": "string", "format": "date"},
        "home": {"type": "string", "format": "uri"},
        "at": {"type": "string", "format": "time"},
    }
    result = run(tmp_path, {"properties": properties}, "a.json", json.dumps(value))
    assert result.outcome == outcome, result.message


def test_date_time_allows_a_leap_second_and_ignores_what_is_not_text() -> None:
    assert date_time("2016-12-31T23:59:60Z")
    assert not date_time("2016-12-31T23:59:61Z")
    assert date_time(5)


def test_the_checked_formats_are_the_same_whatever_is_installed() -> None:
    from jsonschema import validators

    # each dialect's own formats that need only the standard library, and plangraph's two
    latest = format_checker(validators.Draft202012Validator).checkers
    assert sorted(latest) == [
        "date",
        "date-time",
        "email",
        "idn-email",
        "ipv4",
        "ipv6",
        "regex",
        "time",
        "uuid",
    ]
    assert sorted(format_checker(validators.Draft7Validator).checkers) == sorted(
        set(latest) - {"uuid"}  # uuid came with 2019-09
    )


def test_a_referenced_file_without_schema_is_of_its_referrers_dialect(tmp_path: Path) -> None:
    draft7 = "http://json-schema.org/draft-07/schema#"
    point = {"type": "array", "items": [{"type": "number"}, {"type": "number"}]}
    point["additionalItems"] = False  # draft-07 tuple form: not valid 2020-12
    (tmp_path / "defs.json").write_text(json.dumps({"definitions": {"point": point}}))
    schema = {"$schema": draft7, "properties": {"p": {"$ref": "defs.json#/definitions/point"}}}
    assert run(tmp_path, schema, "a.json", '{"p": [1, 2]}').outcome == "passed"
    failed = run(tmp_path, schema, "b.json", '{"p": [1, "x", 3]}')
    assert (failed.outcome, failed.reason) == ("failed", "SCHEMA_VIOLATION")


def test_a_file_without_schema_reached_through_another_dialect_is_read_in_one_it_fits(
    tmp_path: Path,
) -> None:
    draft7 = "http://json-schema.org/draft-07/schema#"
    pair = {"type": "array", "items": [{"type": "number"}, {"type": "number"}]}
    pair["additionalItems"] = False
    (tmp_path / "b.json").write_text(json.dumps({"definitions": {"pair": pair}}))
    (tmp_path / "a.json").write_text(
        json.dumps({"$schema": draft7, "$ref": "b.json#/definitions/pair"})
    )
    schema = {"properties": {"pair": {"$ref": "a.json"}}}  # the root: 2020-12
    assert run(tmp_path, schema, "ok.json", '{"pair": [1, 2]}').outcome == "passed"
    bad = run(tmp_path, schema, "bad.json", '{"pair": [1, 2, 3]}')
    assert (bad.outcome, bad.reason) == ("failed", "SCHEMA_VIOLATION")


@pytest.mark.parametrize(
    ("draft", "value", "outcome"),
    [
        ("http://json-schema.org/draft-03/schema#", "08:30:00", "passed"),  # hh:mm:ss
        ("http://json-schema.org/draft-03/schema#", "8h30", "failed"),
        ("http://json-schema.org/draft-04/schema#", "8h30", "passed"),  # defines no time
        ("http://json-schema.org/draft-07/schema#", "08:30:00", "failed"),  # needs an offset
        ("http://json-schema.org/draft-07/schema#", "08:30:00Z", "passed"),
    ],
)
def test_time_is_what_the_dialect_defines(
    tmp_path: Path, draft: str, value: str, outcome: str
) -> None:
    schema = {"$schema": draft, "properties": {"at": {"type": "string", "format": "time"}}}
    assert run(tmp_path, schema, "a.json", json.dumps({"at": value})).outcome == outcome
