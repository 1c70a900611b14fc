"""The import statements :func:`pytest_plangraph.vcs.imports.imports_of` reads from a text.

A test file counts as quoting what the modules it imports quote: an import the scanner missed
would let a marker taken from another module go unseen. Every form Python accepts is read
(checked against :mod:`ast` on generated modules); a mention in a comment or a string may add
a module, never take one away.
"""

from __future__ import annotations

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_plangraph.vcs.imports import Import, imports_of

FORMS: list[tuple[str, set[Import]]] = [
    ("import a.b, c as d\n", {(0, "a.b", ()), (0, "c", ())}),
    ("from a.b import c, d as e\n", {(0, "a.b", ("c", "d"))}),
    ("from . import x\n", {(1, "", ("x",))}),
    ("from .m import y\n", {(1, "m", ("y",))}),
    (
        "from ...p.q import (\n    r,  # a comment (with parentheses)\n    s,\n)\n",
        {(3, "p.q", ("r", "s"))},
    ),
    ("from.import x\n", {(1, "", ("x",))}),
    ("from . a import b\\\n, c\n", {(1, "a", ("b", "c"))}),
    ("import a . b\n", {(0, "a.b", ())}),
    ("import\\\n  marks\n", {(0, "marks", ())}),
    ("def f():\n    try: import marks\n    except ImportError: pass\n", {(0, "marks", ())}),
    ("x = 1; import marks; from m import (n)\n", {(0, "marks", ()), (0, "m", ("n",))}),
    ("from m import *\n", {(0, "m", ("*",))}),
    ("from e\u0301tude import x\n", {(0, "\u00e9tude", ("x",))}),  # read as Python reads it
    ("import pytest\r\n\r\ndef test():\r\n    pass\r\n", {(0, "pytest", ())}),
    ("import os\rfrom marks import P\r", {(0, "os", ()), (0, "marks", ("P",))}),
    ("\ufeff\fimport marks\n", {(0, "marks", ())}),
    ("# from helpers \\\nimport marks\n", {(0, "marks", ())}),  # a comment's backslash
    ("x = 1  # see \\\nfrom . import marks\n", {(1, "", ("marks",))}),
]


@pytest.mark.parametrize(("text", "expected"), FORMS)
def test_each_form_of_import_is_read(text: str, expected: set[Import]) -> None:
    assert _flat(_ast_imports(text.encode())) == _flat(expected)  # as Python reads the file
    assert set(imports_of(text) or ()) == expected


def test_a_call_that_imports_a_module_named_by_a_literal_counts() -> None:
    text = (
        "import importlib, pytest\n"
        "m = importlib.import_module('pkg.marks')\n"
        'n = importlib.import_module(".refs", __package__)\n'
        'o = builtins.__import__("other")\n'
        "p = pytest.importorskip(\n    f'optional'\n)\n"
        "q = importlib.import_module(name)  # not seen: built at run time\n"
    )
    found = set(imports_of(text) or ())
    assert found == {
        (0, "importlib", ()),
        (0, "pytest", ()),
        (0, "pkg.marks", ()),
        (1, "refs", ()),
        (0, "other", ()),
        (0, "optional", ()),
    }


def test_a_module_in_a_declared_encoding_is_read_as_python_reads_it() -> None:
    hidden = b"# coding: utf-7\n+AGkAbQBwAG8AcgB0- marks\n"  # `import` in base64
    assert b"import" not in hidden[16:]
    assert _flat(_ast_imports(hidden)) == {(0, "marks", "")}
    assert imports_of(hidden) == ((0, "marks", ()),)
    assert imports_of(b"\xef\xbb\xbfimport marks\n") == ((0, "marks", ()),)


def test_a_mention_in_a_comment_or_a_string_adds_at_most() -> None:
    text = "# we import nothing here\n'''from marks import X'''\nimport real\n"
    found = set(imports_of(text) or ())
    assert (0, "real", ()) in found
    assert found <= {(0, "real", ()), (0, "marks", ("X",))}
    assert imports_of("def f(:\n    import marks\n") == ((0, "marks", ()),)  # no parse
    assert imports_of("x = 1\n") == ()


def test_a_module_too_deep_to_parse_may_import_anything() -> None:
    text = "# do not import\nx = 1" + " + 1" * 100_000 + "\n"
    assert imports_of(text) is None


# --- every form, generated --------------------------------------------------------------------

_names = st.sampled_from(["a", "marks", "pkg", "x1", "_p", "\u00e9t", "imports", "from_"])
_space = st.sampled_from([" ", "  ", "\t", " \\\n  "])


@st.composite
def _dotted(draw: st.DrawFn) -> str:
    parts = draw(st.lists(_names, min_size=1, max_size=3))
    dot = draw(st.sampled_from([".", " . ", ".\\\n"]))
    return dot.join(parts)


@st.composite
def _aliased(draw: st.DrawFn, name: st.SearchStrategy[str]) -> str:
    text = draw(name)
    if draw(st.booleans()):
        text += f"{draw(_space)}as{draw(_space)}{draw(_names)}"
    return text


@st.composite
def _statement(draw: st.DrawFn, top: bool) -> str:
    space = draw(_space)
    if draw(st.booleans()):
        names = draw(st.lists(_aliased(_dotted()), min_size=1, max_size=3))
        return f"import{space}{', '.join(names)}"
    level = draw(st.integers(0, 3))
    module = draw(_dotted()) if level == 0 or draw(st.booleans()) else ""
    head = f"from{space if module or not level else draw(st.sampled_from(['', ' ']))}"
    head += "." * level + (draw(st.sampled_from(["", " "])) if level and module else "")
    head += f"{module}{draw(_space) if module else draw(st.sampled_from(['', ' ']))}import"
    if top and draw(st.integers(0, 5)) == 0:
        return f"{head} *"
    names = draw(st.lists(_aliased(_names), min_size=1, max_size=3))
    if draw(st.booleans()):
        comment = draw(st.sampled_from(["", "  # why (not) here", "  # )"]))
        inner = f",{comment}\n    ".join(names) + draw(st.sampled_from(["", ","]))
        return f"{head} (\n    {inner}\n)"
    return f"{head}{space}{', '.join(names)}"


@st.composite
def _module(draw: st.DrawFn) -> str:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        places = ["top", "def", "try", "if", "semicolon", "noise", "comment"]
        place = draw(st.sampled_from(places))
        statement = draw(_statement(place in ("top", "semicolon")))
        if place == "top":
            lines.append(statement)
        elif place == "def":
            lines.append("def f():\n    " + statement.replace("\n", "\n    ") + "\n    return 1")
        elif place == "try":
            lines.append(
                f"try:\n    {statement.replace(chr(10), chr(10) + '    ')}\n"
                "except ImportError:\n    pass"
            )
        elif place == "if":
            lines.append(f"if True: {statement}")
        elif place == "semicolon":
            lines.append(f"x = 1; {statement}")
        elif place == "comment":  # a comment's backslash continues nothing
            lines.append(f"# {statement.splitlines()[0]} from x \\\n{statement}")
        else:
            lines.append(f'# to import: from x import y\n"""import the {statement!r}"""')
    return "\n".join(lines) + "\n"


@settings(max_examples=300, deadline=None)
@given(_module())
def test_no_import_python_reads_is_missed(text: str) -> None:
    expected = _ast_imports(text)  # each generated module is Python
    found = imports_of(text)
    assert found is not None
    assert _flat(expected) <= _flat(found)


def _ast_imports(source: str | bytes) -> set[Import]:
    found: set[Import] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update((0, alias.name, ()) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names = tuple(alias.name for alias in node.names)
            found.add((node.level, node.module or "", names))
    return found


def _flat(imports: set[Import] | tuple[Import, ...]) -> set[tuple[int, str, str]]:
    """Each (level, module, name) imported, the module's name as Python normalises it."""
    return {(level, m, name) for level, m, names in imports for name in (names or ("",))}
