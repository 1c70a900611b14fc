"""``plangraph status`` after one node's title was edited: the text answer kept for the plan
before the edit stands (no plan read, nothing derived) when everything else it depends on is
as kept, and is kept under the new bytes (``pytest_plangraph/derived/retitled.py``). Every
other edit, every other change beside the title, every damaged or foreign kept file, is the
answer of a run with every cache deleted."""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cache_helpers import as_tester
from cli_helpers import Result, plangraph_main
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_fuzz_retitle import STYLES, TITLE_TEXT, _title_lines
from test_kept_status_meaning import _PERSON, CACHE, _comment, _fresh, _project, _status, _steady
from test_kept_status_meaning import calls as calls  # the fixture

from pytest_plangraph.derived import retitled
from pytest_plangraph.plan import retitle
from pytest_plangraph.store.derived import read_tagged, write_tagged

TITLE = f"  title: {'x' * 40}\n"
"""Every node's title line in the project's plan."""


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


@pytest.fixture
def kept(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """One True for each status answered from the answer kept before a title edit."""
    found: list[bool] = []
    real = retitled.kept_retitled

    def spying(*args: Any) -> Any:
        found.append(True)
        return real(*args)

    monkeypatch.setattr(retitled, "kept_retitled", spying)
    return found


def _edit(root: Path, old: str, new: str) -> None:
    plan = root / "plangraph.yaml"
    text = plan.read_text()
    assert old in text
    plan.write_text(text.replace(old, new, 1))


def _plans(root: Path) -> list[tuple[Any, ...]]:
    """The plan versions registered in the store."""
    with sqlite3.connect(root / ".plangraph/store.db") as con:
        return list(con.execute("SELECT * FROM plans ORDER BY version"))


def _state(root: Path) -> tuple[Result, list[tuple[Any, ...]]]:
    return _status(root, "--check"), _plans(root)


def _fresh_state(root: Path) -> tuple[Result, list[tuple[Any, ...]]]:
    return _fresh(root, "--check"), _plans(root)


def test_a_title_edit_is_answered_from_the_answer_kept_before_it(
    tmp_path: Path, calls: dict[str, int], kept: list[bool]
) -> None:
    root = _project(tmp_path)
    _comment(root)  # the plan read by blocks: its head kept with the answer
    first = _steady(root, "--check")
    before = dict(calls)
    _edit(root, f"- id: n100\n{TITLE}", '- id: n100\n  title: "a \\"q\\" ü ✓"\n')
    edited = _status(root, "--check")
    assert kept == [True] and calls == before  # the plan is not read
    assert edited == first
    again = _status(root, "--check")  # kept under the new bytes: a hit
    assert again == first and kept == [True]
    _edit(root, f"- id: n7\n{TITLE}", "- id: n7\n  title: >\n    a\n    b\n")  # one more
    assert _status(root, "--check") == first and kept == [True, True] and calls == before
    plans = _plans(root)
    assert _fresh_state(root) == (first, plans)  # nothing registered either way


def test_a_title_edit_without_a_kept_head_reads_the_plan_and_keeps_one(
    tmp_path: Path, calls: dict[str, int], kept: list[bool]
) -> None:
    root = _project(tmp_path)
    first = _steady(root, "--check")
    path = root / CACHE / "status-text.json"
    record = read_tagged(path, _PERSON)
    assert isinstance(record, dict)
    record["title"] = None  # as kept by a process that read the plan by its bytes
    write_tagged(path, record, _PERSON)
    before = calls["read"]
    _edit(root, f"- id: n100\n{TITLE}", "- id: n100\n  title: y\n")
    assert _status(root, "--check") == first and kept == []
    assert calls["read"] == before + 1  # read, patched in the one node, and kept with a head
    retitle.LAST_HEAD.clear()  # the next process knows nothing but what was kept
    _edit(root, "- id: n100\n  title: y\n", "- id: n100\n  title: z\n")
    assert _status(root, "--check") == first and kept == [True]
    assert calls["read"] == before + 1
    assert _fresh(root, "--check") == first


def _event(root: Path) -> None:
    assert plangraph_main(root, "claim", "n5", "--by", "someone").code in (0, 1)


EDITS: list[tuple[str, Callable[[Path, pytest.MonkeyPatch], None]]] = [
    (
        "a title and a file",
        lambda root, _: (
            _edit(root, f"- id: n100\n{TITLE}", "- id: n100\n  title: y\n"),
            (root / "out/n100.txt").write_text("changed\n"),
        ),
    ),
    (
        "a title and an event",
        lambda root, _: (
            _edit(root, f"- id: n100\n{TITLE}", "- id: n100\n  title: y\n"),
            _event(root),
        ),
    ),
    (
        "a title and a setting",
        lambda root, monkeypatch: (
            _edit(root, f"- id: n100\n{TITLE}", "- id: n100\n  title: y\n"),
            monkeypatch.setenv("PLANGRAPH_SOME_SETTING", "on"),
        ),
    ),
    (
        "a title and a criterion's file beside it",
        lambda root, _: _edit(
            root,
            f"- id: n100\n{TITLE}  outputs: [out/n100.txt]\n  acceptance:\n"
            "  - id: ac\n    verifier: {type: artifact, path: out/n100.txt}",
            "- id: n100\n  title: y\n  outputs: [out/n100.txt]\n  acceptance:\n"
            "  - id: ac\n    verifier: {type: artifact, path: out/missing.txt}",
        ),
    ),
    (
        "a criterion's title",
        lambda root, _: _edit(
            root,
            "  - id: ac\n    verifier: {type: artifact, path: out/n100.txt}",
            "  - id: ac\n    title: y\n    verifier: {type: artifact, path: out/n100.txt}",
        ),
    ),
    (
        "a title line that is a key of the criterion",
        lambda root, _: _edit(
            root,
            "    verifier: {type: artifact, path: out/n100.txt}\n",
            "    verifier: {type: artifact, path: out/n100.txt}\n    title: y\n",
        ),
    ),
    (
        "a title made a number",
        lambda root, _: _edit(root, f"- id: n100\n{TITLE}", "- id: n100\n  title: 12\n"),
    ),
    ("a title removed", lambda root, _: _edit(root, f"- id: n100\n{TITLE}", "- id: n100\n")),
    (
        "two titles",
        lambda root, _: (
            _edit(root, f"- id: n100\n{TITLE}", "- id: n100\n  title: y\n"),
            _edit(root, f"- id: n101\n{TITLE}", "- id: n101\n  title: y\n"),
        ),
    ),
    (
        "a title and an id",
        lambda root, _: _edit(root, f"- id: n100\n{TITLE}", "- id: n100b\n  title: y\n"),
    ),
    (
        "a title and a kind",
        lambda root, _: _edit(
            root, f"- id: n100\n{TITLE}", "- id: n100\n  title: y\n  kind: milestone\n"
        ),
    ),
    (
        "a title that ends the node list",
        lambda root, _: _edit(root, f"- id: n100\n{TITLE}", "- id: n100\n  title: y\nedges: []\n"),
    ),
    ("the plan's title", lambda root, _: _edit(root, "plan: big\n", "plan: big\ntitle: y\n")),
]


@pytest.mark.parametrize("edit", [e for _, e in EDITS], ids=[name for name, _ in EDITS])
def test_every_other_change_is_answered_as_without_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kept: list[bool], edit: Any
) -> None:
    root = _project(tmp_path)
    _comment(root)
    _steady(root, "--check")
    edit(root, monkeypatch)
    edited = _state(root)
    assert True not in kept  # the kept answer did not stand for it
    assert edited == _fresh_state(root)


def _byte_changed(root: Path) -> None:
    path = root / CACHE / "lastread.txt"
    body = bytearray(path.read_bytes())
    body[len(body) // 2] ^= 1
    path.write_bytes(bytes(body))


def _forged_head(root: Path) -> None:
    path = root / CACHE / "status-text.json"
    body = path.read_bytes()
    assert b'"indent":0' in body
    path.write_bytes(body.replace(b'"indent":0', b'"indent":2'))


def _record_head_moved(root: Path) -> None:
    """The kept record's head, written with this user's key, says the list starts elsewhere
    (a head no process made for these bytes)."""
    path = root / CACHE / "status-text.json"
    record = read_tagged(path, _PERSON)
    assert isinstance(record, dict) and isinstance(record["title"], dict)
    record["title"] = {**record["title"], "first": 0}
    write_tagged(path, record, _PERSON)


def _not_a_file(root: Path) -> None:
    path = root / CACHE / "lastread.txt"
    path.unlink()
    path.mkdir()


DAMAGE: list[tuple[str, Callable[[Path], None]]] = [
    ("a byte of lastread.txt", _byte_changed),
    ("lastread.txt deleted", lambda root: (root / CACHE / "lastread.txt").unlink()),
    ("lastread.txt a folder", _not_a_file),
    ("the kept answer's head forged", _forged_head),
    ("the kept answer's head moved", _record_head_moved),
]


@pytest.mark.parametrize("damage", [d for _, d in DAMAGE], ids=[name for name, _ in DAMAGE])
def test_a_damaged_kept_file_is_answered_as_without_the_cache(
    tmp_path: Path, kept: list[bool], damage: Callable[[Path], None]
) -> None:
    root = _project(tmp_path)
    _comment(root)
    _steady(root, "--check")
    damage(root)
    retitle.LAST_HEAD.clear()
    _edit(root, f"- id: n100\n{TITLE}", "- id: n100\n  title: y\n")
    edited = _state(root)
    assert True not in kept
    assert edited == _fresh_state(root)


def test_the_bytes_of_another_plan_are_not_compared_with(tmp_path: Path, kept: list[bool]) -> None:
    root = _project(tmp_path)
    _comment(root)
    first = _steady(root, "--check")
    path = root / CACHE / "lastread.txt"
    saved = path.read_bytes()
    _edit(root, f"- id: n3\n{TITLE}", "- id: n3\n  title: other\n")
    _steady(root, "--check")
    path.write_bytes(saved)  # the bytes read before the edit, which the answer is not for
    _edit(root, f"- id: n100\n{TITLE}", "- id: n100\n  title: y\n")
    kept.clear()
    edited = _state(root)
    assert kept == []
    assert edited == _fresh_state(root) and edited[0] == first


@pytest.mark.parametrize("fmt", ["json", "markdown"])
def test_other_formats_read_the_plan(
    tmp_path: Path, calls: dict[str, int], kept: list[bool], fmt: str
) -> None:
    root = _project(tmp_path)
    _comment(root)
    _steady(root, "--format", fmt, "--check")
    before = calls["read"]
    _edit(root, f"- id: n100\n{TITLE}", "- id: n100\n  title: y\n")
    edited = _status(root, "--format", fmt, "--check")
    assert calls["read"] == before + 1 and kept == []
    assert edited == _fresh(root, "--format", fmt, "--check")


def test_an_answer_that_printed_warnings_does_not_stand_for_a_title_edit(
    tmp_path: Path, kept: list[bool]
) -> None:
    root = _project(tmp_path)
    _comment(root)
    _steady(root, "--check")
    path = root / CACHE / "status-text.json"
    record = read_tagged(path, _PERSON)
    assert isinstance(record, dict)
    record["answer"][1] = ["plangraph: warning: plangraph.yaml:3:1: a warning"]
    write_tagged(path, record, _PERSON)
    _edit(root, f"- id: n100\n{TITLE}", "- id: n100\n  title: y\n")
    answer = _status(root, "--check")
    assert kept == [] and "a warning" not in answer.err
    assert answer == _fresh(root, "--check")


def _alone(root: Path, *args: str) -> Result:
    """``status`` as a process of its own runs it: nothing remembered from an earlier call."""
    retitle.LAST_HEAD.clear()
    return _status(root, *args)


def test_a_title_edit_after_a_plan_known_by_its_bytes_is_answered_from_the_kept_answer(
    tmp_path: Path, calls: dict[str, int], kept: list[bool]
) -> None:
    root = _project(tmp_path)
    first = [_alone(root, "--check") for _ in range(3)][-1]
    before = dict(calls)
    _edit(root, f"- id: n100\n{TITLE}", "- id: n100\n  title: y\n")
    assert _alone(root, "--check") == first
    assert kept == [True] and calls == before  # the head of lastread.txt, under its seal
    assert _fresh(root, "--check") == first


def test_a_head_of_lastread_without_its_seal_is_not_taken(
    tmp_path: Path, calls: dict[str, int], kept: list[bool]
) -> None:
    root = _project(tmp_path)
    path = root / CACHE / "lastread.txt"
    key, _, body = path.read_bytes().partition(b"\n")
    line, _, raw = body.partition(b"\n")
    head = json.loads(line)
    head["indent"] = 2  # another list's items, under a check that holds: no seal of ours
    body = json.dumps(head).encode() + b"\n" + raw
    path.write_bytes(key.split(b" ")[0] + f" {zlib.crc32(body):08x}\n".encode() + body)
    first = [_alone(root, "--check") for _ in range(3)][-1]
    record = read_tagged(root / CACHE / "status-text.json", _PERSON)
    assert isinstance(record, dict) and record["title"] is None
    before = calls["read"]
    _edit(root, f"- id: n100\n{TITLE}", "- id: n100\n  title: y\n")
    edited = _alone(root, "--check")
    assert kept == [] and calls["read"] == before + 1
    assert edited == first == _fresh(root, "--check")


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_an_anchored_title_another_node_refers_to_is_answered_as_without_the_cache(
    tmp_path: Path, kept: list[bool], fmt: str
) -> None:
    root = _project(tmp_path)
    _edit(root, f"- id: n100\n{TITLE}", "- id: n100\n  title: &shared out/n100.txt\n")
    _edit(
        root,
        "  - id: ac\n    verifier: {type: artifact, path: out/n101.txt}",
        "  - id: ac\n    verifier: {type: artifact, path: *shared}",
    )
    _comment(root)
    _steady(root, "--format", fmt, "--check")
    _edit(root, "title: &shared out/n100.txt\n", "title: &shared out/missing.txt\n")
    edited = _status(root, "--format", fmt, "--check")
    assert True not in kept  # another node's criterion changed with the title
    assert edited == _fresh(root, "--format", fmt, "--check")


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(title=TITLE_TEXT, style=st.sampled_from(STYLES))
def test_any_title_is_answered_as_without_the_cache(
    tmp_path_factory: pytest.TempPathFactory, title: str, style: str
) -> None:
    """Any text written in any style as n100's title (some of it not YAML, some a number or
    another key): the status printed is the one of a run with every cache deleted."""
    root = _project(tmp_path_factory.mktemp("title"))
    _comment(root)
    _steady(root, "--check")
    _edit(root, f"- id: n100\n{TITLE}", "- id: n100\n" + _title_lines(title, style, "  "))
    assert _state(root) == _fresh_state(root)
