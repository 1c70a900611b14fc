"""The text check that lets :func:`~pytest_plangraph.vcs.quotes.quoted_refs` skip parsing a test
module: it never skips a module one of whose literals has a reference as its value that its
text does not show between quotes (checked by parsing every generated module)."""

from __future__ import annotations

import ast

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_plangraph.vcs.quotes import literal_refs, needs_parse, quoted_refs

REFS = st.from_regex(r"\A[a-z][a-z0-9_-]{0,6}/[a-z][a-z0-9._-]{0,6}\Z")
QUOTES = ['"', "'", '"""', "'''"]
GAPS = ["", " ", "\n    ", "  # why\n    ", " \\\n    ", "\t"]
PREFIXES = ["", "r", "u", "R", "U"]
SLASHES = ["/", "\\x2f", "\\057", "\\u002f", "\\N{SOLIDUS}"]


@st.composite
def written(draw: st.DrawFn) -> tuple[str, str]:
    """A module whose one literal has a reference as its value, written in pieces, escapes and
    quotes of every kind; and the reference."""
    ref = draw(REFS)
    node, criterion = ref.split("/")
    slash = draw(st.sampled_from(SLASHES))
    text = f"{node}{slash}{criterion}"
    cuts = sorted(draw(st.sets(st.integers(1, len(text) - 1), max_size=2)))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    parts = []
    for piece in pieces:
        quote = draw(st.sampled_from(QUOTES))
        prefix = "" if "\\" in piece else draw(st.sampled_from(PREFIXES))
        parts.append(f"{prefix}{quote}{piece}{quote}")
        parts.append(draw(st.sampled_from(GAPS)))
    return f"import pytest\n\nMARK = pytest.mark.criterion(\n    {''.join(parts)}\n)\n", ref


@settings(max_examples=300, deadline=None)
@given(written())
def test_a_module_whose_literal_is_a_reference_is_never_left_unparsed(case) -> None:
    source, ref = case
    try:
        ast.parse(source)
    except SyntaxError:  # a piece cut inside an escape: no module, no marker
        return
    if ref in literal_refs(source):
        assert ref in quoted_refs(source), source


def test_a_plain_test_module_is_read_by_its_text_alone() -> None:
    source = (
        '"""Tests of the login."""\n\nimport pytest\n\n\n'
        '@pytest.mark.criterion("step-a/ac-login")\n'
        "def test_login(client):\n"
        '    assert client.post("/login", json={"user": "a", "x": ""}).status_code == 200\n'
        '    assert "\\n".join(["a", "b"]) == "a\\nb"\n'
    )
    assert not needs_parse(source)
    assert quoted_refs(source) == {"step-a/ac-login"}


def test_each_form_that_hides_a_reference_from_the_text_is_parsed() -> None:
    forms = [
        '"step-a\\x2fac"',
        '"step-a/" "ac"',
        '("step-a/"\n  "ac")',
        "f\"{'step-a'}/ac\"",
        '"step-a/\\\nac"',
        "# -*- coding: utf-8 -*-\nx = 1",
    ]
    for form in forms:
        assert needs_parse(f"X = {form}\n" if "coding" not in form else form), form
