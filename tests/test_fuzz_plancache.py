"""Differential fuzzing of the plan cache after a plan edit (``plan/itemcache.py``,
``plan/blockitems.py``, ``titles.txt``): generated plans (titles of every kind, criteria of
several verifier types, edges of every type, plan-level fields) go through sequences of edits,
and after each the plan read with the cache (its digest, criterion digests, validated form, or
its error) is the plan read without it; then each cache file is damaged in turn (truncated,
bytes flipped, two lines' values swapped, lines duplicated, replaced by a directory, a symlink
or a FIFO, made huge) and the answer is still the one without a cache. The command's answers
are compared the same way in ``test_fuzz_plancache_cli.py``."""

from __future__ import annotations

import copy
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_plangraph.errors import PlanError
from pytest_plangraph.plan.file import load_plan

FILLER = 110
"""Nodes every generated plan holds besides the generated ones: enough text for the plan
cache to be used (plans under 16 KB are not cached by item)."""
EDGE_TYPES = ["requires", "consumes", "validates", "conflicts", "related", "contains"]

YAML_SPECIAL = ["yes", "no", "null", "~", "1e3", "0x1F", "- a", "a: b", "#x", "'q'", '"d"',
                "*ref", "&a", "!tag", "|", ">", "2020-01-01", "", " ", "...", "---",
                "a\nb"]  # fmt: skip
TITLE = st.one_of(
    st.none(),  # no title key
    st.sampled_from(YAML_SPECIAL),
    st.text(max_size=30),
    st.text(alphabet="ab\u00e9\u4e2d\U0001f600", min_size=300, max_size=2000),  # very long
    st.sampled_from([7, 1.5, ["x"], {"a": 1}, True]),  # a title that is not text
    st.just("__null__"),  # title: null
)
VERIFIER = st.sampled_from(
    [
        {"type": "artifact", "path": "out/a.txt"},
        {"type": "artifact", "path": "out/b.txt", "min_bytes": 1},
        {"type": "approval"},
        {"type": "approval", "role": "lead"},
        {"type": "test", "tests": ["tests/test_x.py::t"]},
        {"type": "command", "run": ["true"]},
        {"type": "schema", "schema": "s.json", "artifact": "out/a.json"},
        {"type": "myplugin", "title": "a plugin setting named title"},
    ]
)


def _node(index: int, title: Any, kind: str | None, verifiers: list[dict[str, Any]]) -> Any:
    node: dict[str, Any] = {"id": f"g{index}"}
    if kind is not None:
        node["kind"] = kind
    if title is not None:
        node["title"] = None if title == "__null__" else title
    node["acceptance"] = [{"id": f"c{n}", "verifier": v} for n, v in enumerate(verifiers)]
    return node


NODE_PARTS = st.tuples(
    TITLE,
    st.sampled_from([None, "step", "milestone", "objective"]),
    st.lists(VERIFIER, max_size=3),
)
PLAN_PARTS = st.fixed_dictionaries(
    {
        "nodes": st.lists(NODE_PARTS, min_size=2, max_size=6),
        "edges": st.lists(
            st.tuples(st.integers(0, 5), st.integers(0, 5), st.sampled_from(EDGE_TYPES)),
            max_size=5,
        ),
        "title": TITLE,
        "description": st.sampled_from([None, "", "d", "x" * 500]),
    }
)


def _plan(parts: dict[str, Any]) -> dict[str, Any]:
    """A plan of the generated *parts* and the filler nodes."""
    generated = [_node(i, *node) for i, node in enumerate(parts["nodes"])]
    count = len(generated)
    filler = [
        {"id": f"n{i}", "title": f"filler {i}", "outputs": [f"out/n{i}-{'o' * 60}.txt"],
         "acceptance": [{"id": "ac", "verifier": {"type": "artifact", "path": f"out/n{i}.txt"}}]}
        for i in range(FILLER)
    ]  # fmt: skip
    edges = [
        {"from": f"g{a % count}", "to": f"g{b % count}", "type": kind}
        for a, b, kind in parts["edges"]
        if a % count < b % count
    ]
    edges += [{"from": f"n{i}", "to": f"n{i + 1}", "type": "requires"} for i in range(FILLER - 1)]
    plan: dict[str, Any] = {"plangraph": 1, "plan": "fuzz"}
    if parts["title"] is not None:
        plan["title"] = None if parts["title"] == "__null__" else parts["title"]
    if parts["description"] is not None:
        plan["description"] = parts["description"]
    plan["nodes"] = generated[:2] + filler + generated[2:]
    plan["edges"] = edges
    return plan


def _text(plan: dict[str, Any]) -> str:
    return yaml.safe_dump(plan, sort_keys=False, allow_unicode=True, width=10_000)


# --- the edits, each a function of the plan's data (an index picks what it applies to) ---


def _generated(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [n for n in plan["nodes"] if n["id"].startswith("g")]


def _set_title(plan: dict[str, Any], at: int, title: Any) -> None:
    node = _generated(plan)[at % len(_generated(plan))]
    node.pop("title", None)
    if title is not None:
        # where a title is written: after the id (as read), or last
        items = list(node.items())
        node.clear()
        node.update([items[0], ("title", None if title == "__null__" else title), *items[1:]])


def _twin(plan: dict[str, Any], at: int, title: Any) -> None:
    """A node that differs from a generated one by its title (and id) alone... and one by
    its title alone (its id taken by the original, which is then renamed)."""
    nodes = _generated(plan)
    node = copy.deepcopy(nodes[at % len(nodes)])
    original = node["id"]
    for other in plan["nodes"]:
        if other["id"] == original:
            other["id"] = f"{original}x"
    for edge in plan["edges"]:
        for end in ("from", "to"):
            if edge[end] == original:
                edge[end] = f"{original}x"
    node.pop("title", None)
    if title is not None:
        node["title"] = None if title == "__null__" else title
    plan["nodes"].append(node)


def _move(plan: dict[str, Any], at: int, _: Any) -> None:
    node = plan["nodes"].pop(at % len(plan["nodes"]))
    plan["nodes"].insert((at * 37) % len(plan["nodes"]), node)


def _swap(plan: dict[str, Any], at: int, _: Any) -> None:
    nodes = plan["nodes"]
    a, b = at % len(nodes), (at * 7 + 3) % len(nodes)
    nodes[a], nodes[b] = nodes[b], nodes[a]


def _plan_field(plan: dict[str, Any], at: int, title: Any) -> None:
    choice = at % 4
    if choice == 0:
        plan.pop("title", None)
    elif choice == 1:
        rest = {k: v for k, v in plan.items() if k not in ("nodes", "edges")}
        rest["title"] = None if title == "__null__" else title
        lists = {k: plan[k] for k in ("nodes", "edges")}
        plan.clear()
        plan.update({**rest, **lists})
    elif choice == 2:
        plan["max_replan_rounds"] = at % 3
    else:
        plan["defaults"] = {"test": {"skips": "allow"}}


def _invalid(plan: dict[str, Any], at: int, _: Any) -> None:
    node = _generated(plan)[at % len(_generated(plan))]
    node["max_retry"] = -1 if "max_retry" not in node else 2
    if node["max_retry"] == 2:
        del node["max_retry"]  # valid again


def _stray_title(plan: dict[str, Any], at: int, title: Any) -> None:
    """A ``title`` key in a criterion or an edge (not a field of either: an error)."""
    target = plan["edges"][at % len(plan["edges"])] if at % 2 else plan["nodes"][0]
    if at % 2 == 0 and target["acceptance"]:
        target = target["acceptance"][0]
    if "title" in target:
        del target["title"]
    else:
        target["title"] = "" if title is None else title


EDITS: dict[str, Callable[[dict[str, Any], int, Any], None]] = {
    "title": _set_title,
    "twin": _twin,
    "move": _move,
    "swap": _swap,
    "plan field": _plan_field,
    "invalid": _invalid,
    "stray title": _stray_title,
}
EDIT = st.tuples(st.sampled_from(sorted(EDITS)), st.integers(0, 10_000), TITLE)


def _answer(plan: Path, cache: Path | None) -> Any:
    """What reading *plan* gives: its digest, criterion digests and validated form, or its
    error's message."""
    try:
        loaded = load_plan(plan, cache_dir=cache)
    except PlanError as exc:
        return ["error", str(exc)]
    data = loaded.plan.to_data()
    return [loaded.plan.digest, loaded.plan.criterion_digests, json.dumps(data)]


def _compare(plan: Path, cache: Path) -> None:
    fresh = _answer(plan, None)
    assert _answer(plan, cache) == fresh
    assert _answer(plan, cache) == fresh  # and as the cache then keeps it


def _write(path: Path, text: str, comment: int) -> None:
    if comment % 3 == 0:  # a comment line between two items of the node list
        lines = text.split("\n")
        at = next(i for i, line in enumerate(lines) if line.startswith("- id: n5"))
        lines.insert(at, f"# comment {comment}")
        text = "\n".join(lines)
    path.write_text(text, encoding="utf-8")


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(parts=PLAN_PARTS, edits=st.lists(EDIT, min_size=1, max_size=5))
def test_every_edit_reads_as_without_the_cache(
    tmp_path_factory: pytest.TempPathFactory, parts: dict[str, Any], edits: list[Any]
) -> None:
    root = tmp_path_factory.mktemp("edits")
    plan_file, cache = root / "plangraph.yaml", root / "cache"
    plan = _plan(parts)
    _write(plan_file, _text(plan), 1)
    _compare(plan_file, cache)
    for n, (name, at, title) in enumerate(edits):
        EDITS[name](plan, at, title)
        _write(plan_file, _text(plan), n)
        _compare(plan_file, cache)


# --- damaged cache files ---


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")


def _rotate_values(path: Path) -> None:
    """Each line's value (after its tab) given to the line before it."""
    rows = [row.split(b"\t", 1) for row in _lines(path) if row]
    if not all(len(row) == 2 for row in rows):  # not a line file: its halves swapped
        body = path.read_bytes()
        path.write_bytes(body[len(body) // 2 :] + body[: len(body) // 2])
        return
    values = [row[1] for row in rows]
    values = values[1:] + values[:1]
    lines = (row[0] + b"\t" + value + b"\n" for row, value in zip(rows, values, strict=True))
    path.write_bytes(b"".join(lines))


def _flip(path: Path) -> None:
    body = bytearray(path.read_bytes())
    for at in range(len(body) // 3, len(body), max(1, len(body) // 7)):
        body[at] ^= 0x55
    path.write_bytes(bytes(body))


def _replace_by(kind: str) -> Callable[[Path], None]:
    def replace(path: Path) -> None:
        path.unlink()
        if kind == "dir":
            path.mkdir()
        elif kind == "fifo":
            os.mkfifo(path)
        else:  # a symlink to another cache file, or to nowhere
            others = sorted(p for p in path.parent.iterdir() if p.is_file() and p != path)
            path.symlink_to(others[0] if others else path.parent / "nowhere")

    return replace


def _swap_with_sibling(path: Path) -> None:
    """The contents of *path* and of another cache file of its kind (``valid-…``) swapped."""
    kind = path.name.split("-", 1)[0]
    others = sorted(p for p in path.parent.glob(f"{kind}-*") if p != path)
    if "-" not in path.name or not others:
        return
    mine, theirs = path.read_bytes(), others[0].read_bytes()
    path.write_bytes(theirs)
    others[0].write_bytes(mine)


DAMAGE: dict[str, Callable[[Path], None]] = {
    "swapped with its kind": _swap_with_sibling,
    "truncated": lambda path: path.write_bytes(path.read_bytes()[: path.stat().st_size // 2]),
    "empty": lambda path: path.write_bytes(b""),
    "flipped": _flip,
    "values swapped": _rotate_values,
    "lines duplicated": lambda path: path.write_bytes(path.read_bytes() * 2),
    "not utf-8": lambda path: path.write_bytes(b"\xff\xfe" + path.read_bytes()),
    "huge": lambda path: path.write_bytes(path.read_bytes() + b"x" * (40 * 1024 * 1024)),
    "directory": _replace_by("dir"),
    "fifo": _replace_by("fifo"),
    "symlink": _replace_by("link"),
}


def _damaged_copies(cache: Path, scratch: Path, damage: str) -> list[tuple[str, Path]]:
    """A copy of *cache* for each file in it, that file damaged by *damage*."""
    copies = []
    for n, name in enumerate(sorted(p.name for p in cache.iterdir() if p.is_file())):
        if name == ".gitignore":
            continue
        copy = scratch / f"c{n}"
        shutil.copytree(cache, copy, symlinks=True)
        DAMAGE[damage](copy / name)
        copies.append((name, copy))
    return copies


class _Hang(BaseException):
    """A read that did not end (not an OSError, which the cache's readers take as a miss)."""


def _within(seconds: int, call: Callable[[], Any]) -> Any:
    """*call*'s result; a TimeoutError when it waits longer than *seconds* (a hang)."""
    import signal

    def expired(*_: Any) -> None:
        raise _Hang(f"no answer within {seconds} s: a read hangs")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        return call()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


FIXED = {
    "nodes": [
        ("first", None, [{"type": "approval"}]),
        (None, "milestone", [{"type": "artifact", "path": "out/a.txt"}]),
        ("third", "objective", [{"type": "test", "tests": ["t.py"]}, {"type": "approval"}]),
        ("fourth", None, [{"type": "command", "run": ["true"]}]),
    ],
    "edges": [(0, 1, "requires"), (1, 2, "related"), (0, 3, "contains")],
    "title": "the plan",
    "description": "d",
}
"""A plan with titled and untitled nodes, related edges and plan-level fields."""
AFTER = [("title", 0, "first again"), ("title", 2, None), ("twin", 3, "a twin"),
         ("plan field", 1, "renamed"), ("title", 3, "fourth again")]  # fmt: skip
"""The edits made after a cache file is damaged: a title changed, removed, a node differing
from another by its title alone, a plan-level field, a title changed a second time."""


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_cache_file_reads_as_without_the_cache(tmp_path: Path, damage: str) -> None:
    plan_file, cache = tmp_path / "plangraph.yaml", tmp_path / "cache"
    plan = _plan(FIXED)
    _write(plan_file, _text(plan), 1)
    _answer(plan_file, cache)
    for name, at, title in [("title", 0, "one"), ("title", 2, "three"), ("title", 3, "four")]:
        EDITS[name](plan, at, title)  # every kind of entry kept: titles.txt too
        _write(plan_file, _text(plan), 1)
        _answer(plan_file, cache)
    texts, fresh = [], []  # the plan after each edit, and its answer without a cache
    edited = json.loads(json.dumps(plan))
    for step in [None, *AFTER]:
        if step is not None:
            EDITS[step[0]](edited, step[1], step[2])
        _write(plan_file, _text(edited), 1)
        texts.append(plan_file.read_text(encoding="utf-8"))
        fresh.append(_answer(plan_file, None))
    for name, kept in _damaged_copies(cache, tmp_path / "copies", damage):
        for step, text, expected in zip([None, *AFTER], texts, fresh, strict=True):
            plan_file.write_text(text, encoding="utf-8")
            found = _within(20, lambda kept=kept: _answer(plan_file, kept))  # type: ignore[misc]
            assert found == expected, f"{name} {damage}, after {step}"


def _swap_values(path: Path, one: str, other: str) -> None:
    """Swap the values of the lines of *path* keyed *one* and *other*."""
    rows = dict(row.split("\t", 1) for row in path.read_text().splitlines())
    rows[one], rows[other] = rows[other], rows[one]
    path.write_text("".join(f"{key}\t{value}\n" for key, value in rows.items()))


def test_swapped_title_entries_cost_a_recomputation(tmp_path: Path) -> None:
    """Two nodes retitled once, the values of their lines in ``titles.txt`` swapped, then
    retitled again: each must not take the other's validated form."""
    from pytest_plangraph.plan.itemcache import TITLES_NAME, _key_of

    plan_file, cache = tmp_path / "plangraph.yaml", tmp_path / "cache"
    plan = _plan(FIXED)
    _write(plan_file, _text(plan), 1)
    _answer(plan_file, cache)
    bare = []
    for at in (0, 2):
        node = _generated(plan)[at]
        bare.append(_key_of("nodes", {k: v for k, v in node.items() if k != "title"}))
    _swap_values(cache / TITLES_NAME, *bare)
    for at in (0, 2):
        EDITS["title"](plan, at, f"retitled {at}")
    _write(plan_file, _text(plan), 1)
    assert _answer(plan_file, cache) == _answer(plan_file, None)


def test_a_flipped_byte_in_the_block_cache_costs_a_recomputation(tmp_path: Path) -> None:
    """A byte of a kept block's data changed in ``blocks.txt`` (a node's title, still
    valid), ``blockitems.txt`` gone: the block is parsed again, its kept data is not
    taken."""
    plan_file, cache = tmp_path / "plangraph.yaml", tmp_path / "cache"
    plan = _plan(FIXED)
    _write(plan_file, _text(plan), 1)
    _answer(plan_file, cache)
    blocks = cache / "blocks.txt"
    body = blocks.read_text()
    assert '"filler 50"' in body
    blocks.write_text(body.replace('"filler 50"', '"filler 5O"', 1))
    (cache / "blockitems.txt").unlink()  # the items' keys hashed from the blocks' data
    EDITS["title"](plan, 0, "another")  # the plan read by block again
    _write(plan_file, _text(plan), 1)
    assert _answer(plan_file, cache) == _answer(plan_file, None)
