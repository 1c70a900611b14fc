"""The text table of the commands (:mod:`pytest_plangraph.cli.tables`): a table patched by
the lines of its changed rows is the table of the new rows, or None."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_plangraph.cli.tables import patched, table

HEADER = ["node", "kind", "status", "criteria", "reasons"]
CELL = st.text(alphabet="ab …", min_size=0, max_size=6).map(lambda s: s.strip() or "x")
ROW = st.lists(CELL, min_size=5, max_size=5)


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(ROW, min_size=1, max_size=8),
    changes=st.dictionaries(st.integers(0, 7), ROW, max_size=3),
)
def test_a_patched_table_is_the_table_of_the_new_rows_or_none(
    rows: list[list[str]], changes: dict[int, list[str]]
) -> None:
    changes = {i: row for i, row in changes.items() if i < len(rows)}
    new = [changes.get(i, row) for i, row in enumerate(rows)]
    got = patched(table(rows, HEADER), HEADER, {i: (rows[i], row) for i, row in changes.items()})
    assert got is None or got == table(new, HEADER)


def test_cells_of_the_same_widths_are_patched_and_other_widths_refused() -> None:
    rows = [["n1", "step", "blocked", "1/2", "why"], ["n22", "step", "completed", "2/2", ""]]
    text = table(rows, HEADER)
    same = ["n1", "step", "stale__", "0/2", "a longer reason than before"]
    assert patched(text, HEADER, {0: (rows[0], same)}) == table([same, rows[1]], HEADER)
    wider = ["n1", "step", "completed!", "1/2", ""]  # wider than its column
    assert patched(text, HEADER, {0: (rows[0], wider)}) is None
    narrower = ["n22", "step", "stale", "2/2", ""]  # the column's widest cell narrower
    assert patched(text, HEADER, {1: (rows[1], narrower)}) is None
    assert patched(text, HEADER, {0: (rows[1], same)}) is None  # not the line's row
    assert patched(text.replace("kind", "type"), HEADER, {0: (rows[0], same)}) is None
