"""plan/jsonpatch.py, pure: RFC 6902 operations and RFC 6901 pointers over plain data and over
the ruamel.yaml round-trip structure of a plan, the nodes each operation touches, and one clear
message (operation index and pointer) for each thing that does not fit."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from ruamel.yaml import YAML

from pytest_plangraph.errors import UsageError
from pytest_plangraph.plan.jsonpatch import apply_ops, read_json_patch
from pytest_plangraph.plan.patch import edit_plan_text

DOC: dict[str, Any] = {
    "plangraph": 1,
    "plan": "p",
    "nodes": [
        {"id": "a", "outputs": ["a.txt"]},
        {"id": "b", "acceptance": [{"id": "c1", "verifier": {"type": "approval"}}]},
        {"id": "x/y~z", "acceptance": []},
    ],
    "edges": [{"from": "a", "to": "b", "type": "requires"}],
}


def run(ops: list[Any]) -> tuple[dict[str, Any], list[str]]:
    document = copy.deepcopy(DOC)
    touched = apply_ops(document, read_json_patch(ops, "p.json"), "plan.yaml")
    return document, touched


@pytest.mark.parametrize(
    ("ops", "check", "touched"),
    [
        ([{"op": "add", "path": "/nodes/-", "value": {"id": "n"}}],
         lambda d: d["nodes"][-1] == {"id": "n"}, ["n"]),
        ([{"op": "add", "path": "/nodes/0", "value": {"id": "n"}}],
         lambda d: [n["id"] for n in d["nodes"]] == ["n", "a", "b", "x/y~z"], ["n"]),
        ([{"op": "remove", "path": "/nodes/1"}],
         lambda d: [n["id"] for n in d["nodes"]] == ["a", "x/y~z"], ["b"]),
        ([{"op": "replace", "path": "/nodes/1/id", "value": "bb"}],
         lambda d: d["nodes"][1]["id"] == "bb", ["b", "bb"]),
        ([{"op": "add", "path": "/nodes/1/acceptance/0/note", "value": "n"}],
         lambda d: d["nodes"][1]["acceptance"][0]["note"] == "n", ["b"]),
        ([{"op": "move", "from": "/nodes/0/outputs", "path": "/nodes/1/outputs"}],
         lambda d: "outputs" not in d["nodes"][0] and d["nodes"][1]["outputs"] == ["a.txt"],
         ["a", "b"]),
        ([{"op": "copy", "from": "/nodes/0/outputs", "path": "/nodes/2/outputs"}],
         lambda d: d["nodes"][0]["outputs"] == d["nodes"][2]["outputs"] == ["a.txt"],
         ["x/y~z"]),
        ([{"op": "copy", "from": "/plan", "path": "/nodes/0/title"}],  # copied from anywhere
         lambda d: d["nodes"][0]["title"] == "p", ["a"]),
        ([{"op": "replace", "path": "/edges/0/type", "value": "validates"}],
         lambda d: d["edges"][0]["type"] == "validates", ["b"]),
        ([{"op": "replace", "path": "/edges/0/to", "value": "a"}],
         lambda d: d["edges"][0]["to"] == "a", ["b", "a"]),
        ([{"op": "test", "path": "/nodes/2/id", "value": "x/y~z"},  # escapes: ~1 is /, ~0 is ~
          {"op": "add", "path": "/nodes/2/title", "value": "t"}],
         lambda d: d["nodes"][2]["title"] == "t", ["x/y~z"]),
        ([{"op": "test", "path": "/nodes/0/outputs", "value": ["a.txt"], "extra": 1},
          {"op": "remove", "path": "/edges"}],
         lambda d: "edges" not in d, ["b"]),
    ],
)  # fmt: skip
def test_operations(ops: list[Any], check: Any, touched: list[str]) -> None:
    document, found = run(ops)
    assert check(document)
    assert found == touched


@pytest.mark.parametrize(
    ("ops", "message"),
    [
        ([{"op": "remove", "path": "/nodes/3"}], "op 0 (remove /nodes/3) on plan.yaml: "
         "/nodes/3 does not exist: /nodes has 3 item(s)"),
        ([{"op": "add", "path": "/nodes/4", "value": {}}], "/nodes/4 does not exist"),
        ([{"op": "remove", "path": "/nodes/01"}], "'01' is not an index of the list /nodes"),
        ([{"op": "remove", "path": "/nodes/-"}], "'-' is not an index"),
        ([{"op": "replace", "path": "/nodes/0/title", "value": "t"}],
         "/nodes/0/title does not exist: /nodes/0 has no 'title'"),
        ([{"op": "add", "path": "/nodes/0/id/x", "value": 1}], "/nodes/0/id is text"),
        ([{"op": "test", "path": "/nodes/0/id", "value": "b"}],
         'op 0 (test /nodes/0/id) on plan.yaml: the value there is "a", not "b"'),
        ([{"op": "test", "path": "/plangraph", "value": True}], "the value there is 1, not true"),
        ([{"op": "add", "path": "/nodes/-", "value": {"id": "n"}},
          {"op": "test", "path": "/nodes/3/id", "value": "m"}], "op 1 (test /nodes/3/id)"),
        ([{"op": "move", "from": "/nodes/9", "path": "/nodes/0"}], "/nodes/9 does not exist"),
    ],
)  # fmt: skip
def test_what_does_not_fit_names_the_operation_and_changes_nothing_it_reports(
    ops: list[Any], message: str
) -> None:
    with pytest.raises(UsageError) as caught:
        run(ops)
    assert message in str(caught.value)
    assert str(caught.value).startswith("p.json: op ")
    assert "nothing was changed" in str(caught.value)


@pytest.mark.parametrize(
    ("ops", "message"),
    [
        ([3], "op 0: expected an object with 'op' and 'path', got a number"),
        ([{"path": "/nodes/0"}], "op 0: 'op' must be one of add, remove"),
        ([{"op": "remove"}], "op 0 (remove): 'path' must be a JSON Pointer (text), not null"),
        ([{"op": "remove", "path": "nodes/0"}], "'nodes/0' is not a JSON Pointer"),
        ([{"op": "remove", "path": "/nodes/a~2b"}], "'~' must be written ~0"),
        ([{"op": "add", "path": "/nodes/-"}], "'add' needs a 'value'"),
        ([{"op": "copy", "path": "/nodes/-"}], "'from' must be a JSON Pointer"),
        ([{"op": "replace", "path": "/max_replan_rounds", "value": 9}],
         "op 0 (replace /max_replan_rounds): a patch changes nodes, criteria and edges only"),
        ([{"op": "replace", "path": "", "value": {}}], "(replace (the whole plan))"),
        ([{"op": "move", "from": "/plan", "path": "/nodes/0/title"}], "edges only"),
        ([{"op": "move", "from": "/nodes/0", "path": "/nodes/0/x"}],
         "cannot move a value into one of its own children"),
    ],
)  # fmt: skip
def test_malformed_operations_are_refused_when_read(ops: list[Any], message: str) -> None:
    with pytest.raises(UsageError) as caught:
        read_json_patch(ops, "p.json")
    assert message in str(caught.value)


def test_every_malformed_operation_is_listed_at_once() -> None:
    with pytest.raises(UsageError) as caught:
        read_json_patch([{"op": "x", "path": "/nodes"}, {"op": "remove", "path": "/plan"}], "p")
    lines = str(caught.value).splitlines()[1:]
    assert [line.split(":")[1].strip() for line in lines] == ["op 0", "op 1 (remove /plan)"]


def test_a_patch_of_only_tests_changes_nothing() -> None:
    assert read_json_patch([{"op": "test", "path": "/plan", "value": "p"}], "p").is_empty()
    assert read_json_patch([], "p").is_empty()
    assert not read_json_patch([{"op": "remove", "path": "/edges/0"}], "p").is_empty()


PLAN_TEXT = """\
plangraph: 1   # the format
nodes:
  # the steps
  - id: a      # first
    outputs: [a.txt]
  - id: b
    acceptance:
      - {id: c1, verifier: {type: approval}}
"""


def test_a_yaml_plan_keeps_its_comments_and_layout() -> None:
    ops = [
        {"op": "add", "path": "/nodes/1/acceptance/-",
         "value": {"id": "c2", "verifier": {"type": "test"}}},
        {"op": "replace", "path": "/nodes/0/outputs/0", "value": "b.txt"},
    ]  # fmt: skip
    text = edit_plan_text(PLAN_TEXT, read_json_patch(ops, "p"), "plan.yaml", json_file=False)
    assert text == PLAN_TEXT.replace("a.txt", "b.txt") + (
        "      - id: c2\n        verifier: {type: test}\n"
    )
    document = YAML(typ="rt").load(PLAN_TEXT)
    assert apply_ops(document, read_json_patch(ops, "p"), "plan.yaml") == ["b", "a"]
