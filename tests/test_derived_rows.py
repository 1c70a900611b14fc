"""The derived state's file kept with its rows one a line
(:func:`pytest_plangraph.store.derived.write_state`): the same value for every reader, and a
reader that decodes only the rows it asks for (the ``status`` miss without the plan)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_plangraph.store.derived import (
    KeptRow,
    read_state_rows,
    read_tagged,
    write_state,
    write_tagged,
)

TEXT = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=8)
ROW = st.tuples(st.from_regex(r"n[0-9]{1,3}", fullmatch=True), TEXT, st.lists(TEXT, max_size=3))


def _record(rows: list[list[Any]]) -> dict[str, Any]:
    return {
        "key": "k",
        "observed": {"files": [["a\nb", None]], "reads": {"n1": ["]}}\n"]}},
        "data": {"nodes": rows, "input_digests": {r[0]: "d" for r in rows}},
    }


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(ROW.map(list), max_size=6))
def test_a_state_kept_one_row_a_line_reads_as_the_value_it_keeps(
    tmp_path_factory: pytest.TempPathFactory, rows: list[list[Any]]
) -> None:
    path = tmp_path_factory.mktemp("state") / "derived.json"
    record = _record(rows)
    write_state(path, record)
    whole = read_tagged(path)  # every reader of the whole value: the same value
    assert whole["data"].pop("order") == [r[0] for r in rows]
    assert whole == record
    assert path.read_bytes().count(b"\n") == max(len(rows), 1) + 2  # tag, value, each row
    tag, value, kept = read_state_rows(path)
    assert value["data"]["nodes"] == [] and kept.order == [r[0] for r in rows]
    assert [kept.row(i) for i in range(len(rows))] == rows
    assert kept.all_rows() == rows  # in one go: the same rows
    assert value["observed"] == record["observed"] and len(tag) == 32


def test_a_state_kept_on_one_line_reads_whole_and_a_damaged_one_not(tmp_path: Path) -> None:
    path = tmp_path / "derived.json"
    rows = [["n1", "x", []], ["n2", "y", ["z"]]]
    write_tagged(path, _record(rows))
    assert path.read_bytes().count(b"\n") == 1
    _, value, kept = read_state_rows(path)
    assert value["data"]["nodes"] == [] and kept.order == ["n1", "n2"] and kept.row(1) == rows[1]
    write_state(path, _record(rows))
    raw = path.read_bytes()
    path.write_bytes(raw.replace(b'["n2"', b'["n3"'))  # not what the tag was made for
    assert read_state_rows(path) is None and read_tagged(path) is None
    path.write_bytes(raw)
    assert read_state_rows(path) is not None


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(ROW.map(list), max_size=6), again=st.sets(st.integers(0, 5)))
def test_rows_written_again_as_read_give_the_same_bytes(
    tmp_path_factory: pytest.TempPathFactory, rows: list[list[Any]], again: set[int]
) -> None:
    folder = tmp_path_factory.mktemp("state")
    first, second = folder / "first.json", folder / "second.json"
    write_state(first, _record(rows))
    _, _, kept = read_state_rows(first)
    mixed: list[Any] = [
        row if n in again else KeptRow(row[0], kept.text(n) or "") for n, row in enumerate(rows)
    ]
    write_state(second, {**_record(rows), "data": {**_record(rows)["data"], "nodes": mixed}})
    assert second.read_bytes() == first.read_bytes()  # the kept texts, byte for byte
    assert read_tagged(second)["data"]["nodes"] == rows


def test_rows_that_are_not_their_nodes_are_refused_in_one_go(tmp_path: Path) -> None:
    path = tmp_path / "derived.json"
    rows = [["n1", "x", []], ["n2", "y", ["z"]]]
    write_state(path, _record(rows))
    _, _, kept = read_state_rows(path)
    kept.order.reverse()  # the rows are not those of the nodes named
    with pytest.raises(ValueError):
        kept.all_rows()
