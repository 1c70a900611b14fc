"""``plangraph status`` after an edit of what some nodes of a large plan hold alone: the kept
derived state is reused, with those nodes judged again (and, when their digests and states
come out as kept, nothing around them); every answer is the one with every cache deleted,
whether the edit changes a title, a criterion, an output, an edge, adds or removes a node or an
edge, or moves a run of nodes, alone or with a changed file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cache_helpers import as_tester
from test_kept_status_meaning import _fresh, _project, _status, _steady

from pytest_plangraph.judge import rederive
from pytest_plangraph.plan import itemcache, retitle

ARGS = ("--format", "json", "--check")
TITLE = f"  title: {'x' * 40}\n"
"""Every node's title line in the project's plan."""


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


@pytest.fixture
def judged(monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """For each kept derived state reused, how many nodes were judged again (None: it could
    not be reused, and the state was derived in full)."""
    counts: list[int | None] = []
    real = rederive.rederive

    def counting(*args: Any, **kwargs: Any) -> Any:
        found = real(*args, **kwargs)
        counts.append(None if found is None else found.judged)
        return found

    monkeypatch.setattr(rederive, "rederive", counting)
    return counts


def _edit(root: Path, old: str, new: str) -> None:
    plan = root / "plangraph.yaml"
    text = plan.read_text()
    assert old in text
    plan.write_text(text.replace(old, new, 1))


def _cut(root: Path, start: str, end: str) -> None:
    """The plan without the text from *start* to *end* (a node), and without its edges."""
    plan = root / "plangraph.yaml"
    text = plan.read_text()
    node = text[text.index(start) : text.index(end)]
    name = start.removeprefix("- id: ").strip()
    lines = text.replace(node, "", 1).splitlines(keepends=True)
    plan.write_text("".join(line for line in lines if f" {name}," not in line))


def _move(root: Path, start: str, end: str) -> None:
    """The plan with the nodes from *start* to *end* moved to the end of the node list (a run
    of blocks moved: the same plan in another order)."""
    plan = root / "plangraph.yaml"
    text = plan.read_text()
    run = text[text.index(start) : text.index(end)]
    rest = text.replace(run, "", 1)
    at = rest.index("edges:\n")
    plan.write_text(rest[:at] + run + rest[at:])


def _statuses(answer: Any) -> dict[str, str]:
    return {n["id"]: n["status"] for n in json.loads(answer.out)["nodes"]}


def test_a_title_edit_judges_that_node_alone(
    tmp_path: Path,
    judged: list[int | None],
    patched: list[bool],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = _project(tmp_path)
    first = _steady(root, *ARGS)
    judged.clear()
    patched.clear()
    validated: list[Any] = []
    real = itemcache._validated
    monkeypatch.setattr(itemcache, "_validated", lambda *a: validated.append(a) or real(*a))
    _edit(root, "- id: n100\n  title: x", "- id: n100\n  title: y")
    edited = _status(root, *ARGS)
    assert patched == [True]  # the plan read before, patched in the one node
    assert validated == []  # the node's form is the kept one's with its title: no pydantic
    assert judged == [1]  # n100 alone: its digest and state came out as kept
    assert edited == _fresh(root, *ARGS)
    assert _statuses(edited) == _statuses(first)
    assert json.loads(edited.out)["plan"]["digest"] != json.loads(first.out)["plan"]["digest"]


EDITS: list[tuple[str, Callable[[Path], None]]] = [
    (
        "a criterion's file",
        lambda root: _edit(root, "path: out/n100.txt}", "path: out/n101.txt}"),
    ),
    (
        "a criterion that fails",
        lambda root: _edit(root, "path: out/n100.txt}", "path: out/missing.txt}"),
    ),
    ("an output", lambda root: _edit(root, "outputs: [out/n50.txt]", "outputs: [out/n51.txt]")),
    (
        "an edge",
        lambda root: _edit(root, "edges:\n", "edges:\n- {from: n3, to: n90, type: requires}\n"),
    ),
    (
        "a node",
        lambda root: _edit(
            root,
            "edges:\n",
            "- id: extra\n  acceptance:\n  - id: ac\n    verifier: {type: approval}\nedges:\n",
        ),
    ),
    (
        "an edge changed",
        lambda root: _edit(
            root, "- {from: n7, to: n8, type: requires}", "- {from: n7, to: n8, type: related}"
        ),
    ),
    ("an edge removed", lambda root: _edit(root, "- {from: n7, to: n8, type: requires}\n", "")),
    ("a node removed", lambda root: _cut(root, "- id: n60\n", "- id: n61\n")),
    ("a block moved", lambda root: _move(root, "- id: n40\n", "- id: n80\n")),
    ("a kind", lambda root: _edit(root, "- id: n150\n", "- id: n150\n  kind: milestone\n")),
    ("cancelled", lambda root: _edit(root, "- id: n120\n", "- id: n120\n  cancelled: true\n")),
    (
        "a title with quotes and unicode",
        lambda root: _edit(root, f"- id: n100\n{TITLE}", '- id: n100\n  title: "a \\"q\\" ü ✓"\n'),
    ),
    (
        "a title folded",
        lambda root: _edit(root, f"- id: n7\n{TITLE}", "- id: n7\n  title: >\n    a\n    b\n"),
    ),
    ("a title removed", lambda root: _edit(root, f"- id: n7\n{TITLE}", "- id: n7\n")),
    (
        "a title and a file",
        lambda root: (
            _edit(root, "- id: n100\n  title: x", "- id: n100\n  title: y"),
            (root / "out/n30.txt").write_text("changed\n"),
        ),
    ),
]


@pytest.mark.parametrize("edit", [e for _, e in EDITS], ids=[name for name, _ in EDITS])
def test_every_edit_is_answered_as_without_the_cache(
    tmp_path: Path, judged: list[int | None], edit: Callable[[Path], None]
) -> None:
    root = _project(tmp_path)
    _steady(root, *ARGS)
    edit(root)
    edited = _status(root, *ARGS)
    fresh = _fresh(root, *ARGS)
    assert edited == fresh
    assert json.loads(edited.out)["nodes"]  # an answer, not an error


def test_a_failing_criterion_edit_judges_the_nodes_around_it(
    tmp_path: Path, judged: list[int | None]
) -> None:
    root = _project(tmp_path)
    before = _statuses(_steady(root, *ARGS))
    judged.clear()
    _edit(root, "path: out/n100.txt}", "path: out/missing.txt}")
    after = _statuses(_status(root, *ARGS))
    assert judged and judged[0] is not None and judged[0] > 1  # reused, the cone judged
    assert before["n100"] != after["n100"] and before["n150"] != after["n150"]
    assert after == _statuses(_fresh(root, *ARGS))


def test_a_title_edited_to_equal_the_others_is_answered_as_without_the_cache(
    tmp_path: Path, patched: list[bool]
) -> None:
    root = _project(tmp_path)
    first = _steady(root, *ARGS)
    patched.clear()
    _edit(root, f"- id: n100\n{TITLE}", "- id: n100\n  title: another\n")
    assert _status(root, *ARGS) == _fresh(root, *ARGS)
    _steady(root, *ARGS)
    patched.clear()
    _edit(root, "- id: n100\n  title: another\n", f"- id: n100\n{TITLE}")  # as every node's
    edited = _status(root, *ARGS)
    assert patched == [True]
    assert edited == _fresh(root, *ARGS) and _statuses(edited) == _statuses(first)
    assert json.loads(edited.out)["plan"]["digest"] == json.loads(first.out)["plan"]["digest"]


def _swap_canonical(cache: Path, saved: dict[str, bytes]) -> None:
    """Each canonical file written since *saved* holds the bytes of one saved before."""
    old = next(iter(body for name, body in saved.items() if name.startswith("canon-")))
    for path in cache.glob("canon-*.json"):
        if path.name not in saved:
            path.write_bytes(old)


SWAPS: list[tuple[str, Callable[[Path, dict[str, bytes]], None]]] = [
    ("canonical text", _swap_canonical),
    (
        "last plan read",
        lambda cache, saved: (cache / retitle.LAST).write_bytes(saved[retitle.LAST]),
    ),
    (
        "facts",
        lambda cache, saved: [
            path.write_bytes(next(b for n, b in saved.items() if n.startswith("facts-")))
            for path in cache.glob("facts-*.json")
            if path.name not in saved
        ],
    ),
]


@pytest.mark.parametrize("swap", [s for _, s in SWAPS], ids=[n for n, _ in SWAPS])
def test_a_title_edit_with_a_swapped_cache_file_is_answered_as_without_the_cache(
    tmp_path: Path, swap: Callable[[Path, dict[str, bytes]], None]
) -> None:
    root = _project(tmp_path)
    _steady(root, *ARGS)
    cache = root / ".plangraph/cache"
    saved = {path.name: path.read_bytes() for path in cache.iterdir() if path.is_file()}
    _edit(root, "- id: n100\n  title: x", "- id: n100\n  title: y")
    _steady(root, *ARGS)
    swap(cache, saved)
    _edit(root, "- id: n10\n  title: x", "- id: n10\n  title: z")
    edited = _status(root, *ARGS)
    assert edited == _fresh(root, *ARGS)
    assert edited.code == 0 and json.loads(edited.out)["nodes"]
