"""Which repository modules a Python file imports, read from its text.

A test file may take a criterion's reference or marker from another module (``from marks
import PATTERN``, then ``@pytest.mark.criterion(PATTERN)``): its own text quotes nothing, yet
its test is marked. :mod:`pytest_plangraph.vcs.quotes` counts such a file as quoting what
the modules it imports quote, transitively; this module finds those modules.

:func:`imports_of` lists the import statements of a text: every ``import a.b``, ``from a.b
import c, d``, ``from . import x``, ``from .m import y``, with parenthesised and multi-line
lists, backslash continuations and indented imports (inside a function, a ``try``). A regular
expression reads them; each ``import`` keyword of the text must belong to a statement it read
whole, or the text is also parsed (:mod:`ast`) and both lists are taken (a mention in a comment
or a string may add a module: that only costs staleness). ``ModuleFinder``
(:mod:`.modulefinder`) turns a statement into the repository files it may load: for an absolute
name, from the importing file's folder, each folder above it up to the repository root,
``<root>/src``, and each folder pytest puts on ``sys.path`` to import a file of the walk
(``ModuleFinder.path_folders``), the files ``a/b.py`` and ``a/b/__init__.py``, each parent
package's ``__init__.py``, and for ``from a.b import c`` also ``a/b/c.py`` and
``a/b/c/__init__.py`` (``import *``: every module of the package's folder); a relative name
from the file's package. A name that finds no file (the standard library, an installed package)
adds nothing; a relative import that climbs above the repository root finds nothing; a file
whose real path (links followed) leaves the repository is not read but named in
``ModuleFinder.escaped`` (it may quote anything). Python also loads a module from sourceless
bytecode (``marks.pyc`` beside the tests) or an extension module (``marks.abi3.so``): those are
found too; the caller counts bytecode as a file that may quote anything, and reads an extension
module as a file that is not Python (each reference its bytes mention; the modules it imports
are not followed).

A call that imports a module named by a string literal counts as its import
(``importlib.import_module("marks")``, ``__import__("marks")``,
``pytest.importorskip("marks")``), and so does a string literal naming a Python file
(``runpy.run_path(os.path.join(HERE, "marks.py"))``): the file it names from the importing
file's folder or any folder above it. Not seen: a module imported by a name built or read at
run time (``importlib.import_module(name)``), one found only through a ``sys.path`` entry other
than the folders above and those of a ``pythonpath`` setting
(:mod:`~pytest_plangraph.vcs.pythonpath`) when no file read mentions ``sys.path`` (once one
does, a ``sys.path.insert`` in a conftest: an absolute name is looked for in every folder of
the repository holding a module of that first name, ``ModuleFinder.wide``), ``PYTHONPATH``, a
``.pth`` file, an import hook's finder.
"""

from __future__ import annotations

import ast
import functools
import re
import warnings

__all__ = ["PATH_LEVEL", "Import", "imports_of", "scanned_imports"]

Import = tuple[int, str, tuple[str, ...]]
"""One imported name: the relative level (0: absolute), the dotted module (``""`` for ``from
. import x``) and the names taken from it (``("*",)`` for ``import *``; none for ``import
a.b``)."""

_NAME = r"[^\W\d]\w*"
_SPACE = r"[ \t\f]"
_DOTTED = rf"{_NAME}(?:{_SPACE}*\.{_SPACE}*{_NAME})*"

_KEYWORD = re.compile(r"import(?<!\wimport)(?!\w)")
"""Each ``import`` keyword (``from .import x`` puts a dot right before it). The expressions
start with their word and look behind it after: a look-behind first would be tried at each
character, thirty times slower."""

_FROM = (
    rf"from(?<![\w.]from)(?!\w){_SPACE}*((?:\.{_SPACE}*)*)({_DOTTED})?{_SPACE}*"
    rf"(?<!\w)(import)(?!\w){_SPACE}*(\((?:[^)#]|#[^\n]*)*\)|[^\n;#]*)"
)
"""A ``from`` statement: its dots, its module, its ``import`` keyword and its names (in
parentheses, comments taken whole: one may hold a parenthesis). Compiled (:func:`_lazy`) by
the first text that holds ``from``: the costliest expression here, and a test file that
imports with ``import`` alone needs none."""

_IMPORT = re.compile(rf"(import)(?<![\w.]import)(?!\w){_SPACE}*([^\n;#]*)")
"""An ``import`` statement and its list of names."""

_CALLED = (
    r"(?:import_module|__import__|importorskip)\s*\(\s*[rRuUfF]{0,2}"
    r"([\"'])(\.*)([^\W\d][\w.]*)\1"
)
"""A call that imports a module named by a string literal: ``importlib.import_module("m")``
(``".m"`` relative to the package the call names: taken as the file's), ``__import__("m")``,
``pytest.importorskip("m")``."""

_PATH = r"""(["'])([^"'\n\\]*\.py)\1"""
"""A string literal naming a Python file (``runpy.run_path("marks.py")``,
``spec_from_file_location("m", HERE / "marks.py")``): a module may be loaded by its path."""

PATH_LEVEL = -1
"""The level of an :data:`Import` that is a file path a string literal names, not a module."""

_CONTINUED = r"\\(?:\r\n|\r|\n)"
"""A backslash that joins two lines (compiled by the first text holding a backslash)."""
_COMMENT = r"#[^\n]*"
_ALIASED = re.compile(rf"({_DOTTED})(?:\s+as\s+{_NAME})?")


@functools.cache
def _lazy(pattern: str) -> re.Pattern[str]:
    """*pattern* compiled when first used: the expressions of the rarer forms (a call that
    imports by name, a file named by its path, a list after other text, a ``from`` statement,
    a line joined by a backslash) are compiled only by a run whose files hold one, not by
    every import of this module."""
    return re.compile(pattern)


def imports_of(source: str | bytes) -> tuple[Import, ...] | None:
    """The import statements of the Python *source*, one :data:`Import` per imported module
    (a statement that imports two gives two), in the order found; None when the text holds an
    ``import`` the expression could not read and the module is too deeply nested to parse
    (it may import anything). *source* as bytes is decoded as Python decodes it."""
    text = _decoded(source) if isinstance(source, bytes) else source.removeprefix("\ufeff")
    paths: dict[Import, None] = {}
    if ".py" in text:
        paths.update(((PATH_LEVEL, str(m[2]), ()), None) for m in _lazy(_PATH).finditer(text))
    if "import" not in text:
        return tuple(paths)
    written = text
    if "\\" in text:  # a comment's backslash is joined too: a statement must start its line,
        text = _lazy(_CONTINUED).sub(" ", text)  # or the text is parsed
    found: dict[Import, None] = dict(paths)
    claimed: set[int] = set()
    for match in _lazy(_FROM).finditer(text) if "from" in text else ():
        dots, module, names = match[1], match[2], _names(match[4])
        at = match.start()
        starts = _starts_statement(text, at)
        if not starts and not _after_quote(text, at):
            names = None  # a comment's, or joined to one by a backslash: the text is parsed
        elif names is None and not starts:  # in a string (exec("from m import x")): a mention
            names = _leading(match[4])
        if (dots or module) and names is not None:
            level = dots.count(".")
            found[(level, _dotted(module or ""), names)] = None
            if starts:  # else the text is parsed too: a mention adds, never takes away
                claimed.add(match.start(3))
    for match in _IMPORT.finditer(text):
        at = match.start(1)
        quoted = _after_quote(text, at)
        if at in claimed or not (quoted or _starts_statement(text, at)):
            continue
        modules = _modules(match[2])
        if modules is None and quoted:  # a string's text: exec("import m")
            leading = _leading(match[2])
            modules = list(leading) if leading else None
        if modules is not None:
            found.update(((0, module, ()), None) for module in modules)
            claimed.add(match.start(1))
    if "import_" in text or "importo" in text:
        for match in _lazy(_CALLED).finditer(text):
            found[(len(match[2]), _dotted(match[3]), ())] = None
        found.update(dict.fromkeys(_called_imports(source if isinstance(source, bytes) else text)))
    if all(match.start() in claimed for match in _KEYWORD.finditer(text)):
        return tuple(found)
    parsed = _parsed_imports(source if isinstance(source, bytes) else written)
    if parsed is None:
        return None
    found.update(dict.fromkeys(parsed))
    return tuple(found)


def _decoded(data: bytes) -> str:
    """*data* as Python reads a module: in the encoding its first two lines declare (a
    UTF-7 module may spell ``import`` in base64), else UTF-8."""
    if b"coding" in data[:400] or data.startswith(b"\xef\xbb\xbf"):
        import io
        import tokenize  # only for a module that declares its encoding

        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
            return data.decode(encoding, errors="replace")
        except (SyntaxError, LookupError, UnicodeError):
            pass
    return data.decode("utf-8", errors="replace")


def _names(text: str) -> tuple[str, ...] | None:
    """The names of a ``from`` statement's list (in parentheses or not), or None when the
    text is not such a list."""
    text = text.strip()
    if text.startswith("("):
        if not text.endswith(")"):
            return None
        text = _lazy(_COMMENT).sub("", text[1:-1]).strip()
        if "(" in text or ")" in text:
            return None
        if text.endswith(","):
            text = text[:-1]
    elif text == "*":
        return ("*",)
    pieces = [_ALIASED.fullmatch(piece.strip()) for piece in text.split(",")]
    if not pieces or any(p is None or "." in p[1] for p in pieces):
        return None
    return tuple(_dotted(p[1]) for p in pieces if p is not None)


_LEADING = rf"\(?\s*{_DOTTED}(?:\s+as\s+{_NAME})?(?:\s*,\s*{_DOTTED}(?:\s+as\s+{_NAME})?)*"


def _leading(text: str) -> tuple[str, ...] | None:
    """The names that begin a list followed by other text (``m")`` in ``exec("import m")``):
    a mention may add a module, never take one away."""
    match = _lazy(_LEADING).match(text.strip())
    if match is None:
        return None
    names = [_ALIASED.fullmatch(piece.strip()) for piece in match[0].lstrip("(").split(",")]
    return tuple(_dotted(p[1]) for p in names if p is not None) or None


def _modules(text: str) -> list[str] | None:
    """The dotted modules of an ``import`` statement's list, or None when the text is not
    such a list."""
    pieces = [_ALIASED.fullmatch(piece.strip()) for piece in text.split(",")]
    if any(p is None for p in pieces):
        return None
    return [_dotted(p[1]) for p in pieces if p is not None]


def _dotted(text: str) -> str:
    """A dotted module name as Python reads it: no spaces, identifiers NFKC-normalised."""
    name = "".join(text.split())  # every whitespace character out (what \s matches)
    if name.isascii():
        return name
    import unicodedata

    return unicodedata.normalize("NFKC", name)


def _after_quote(text: str, at: int) -> bool:
    """Whether a quote is the last thing before *at* on its line (``exec("import m")``)."""
    return text[text.rfind("\n", 0, at) + 1 : at].rstrip(" \t\f").endswith(("'", '"'))


def _starts_statement(text: str, at: int) -> bool:
    """Whether the ``import`` or ``from`` at *at* starts a statement: only indentation, or a
    ``;`` or ``:`` (``try: import x``), before it on its line. Otherwise (``from x import``
    that the ``from`` expression could not read, a comment, one that ended with a backslash
    joined to the next line) the text is parsed."""
    before = text[text.rfind("\n", 0, at) + 1 : at].strip(" \t\f")
    return not before or before.endswith((";", ":"))


def _parsed_imports(source: str | bytes) -> list[Import] | None:
    """The imports :mod:`ast` finds in *source*: none when it does not parse (Python cannot
    import it either), None when it is too deeply nested to parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, UnicodeError):
        return []
    except (RecursionError, MemoryError):
        return None
    found: list[Import] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((0, alias.name, ()) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names = tuple(alias.name for alias in node.names)
            found.append((node.level, node.module or "", names))
    return found


_CALLS = ("import_module", "__import__", "importorskip")


def _called_imports(source: str | bytes) -> list[Import]:
    """The modules named by a constant in a call :data:`_CALLED` reads, whatever the form of
    the constant (``f"m"``, ``'''m'''``, ``"ma" "rks"``, ``("m")``, ``name="m"``), as
    :mod:`ast` reads them; none when the text does not parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, UnicodeError, RecursionError, MemoryError):
        return []
    found: list[Import] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if called not in _CALLS:
            continue
        named = [k.value for k in node.keywords if k.arg in ("name", "modname")]
        for arg in [*node.args[:1], *named]:
            value = _constant(arg)
            if value is not None and value.lstrip("."):
                module = value.lstrip(".")
                found.append((len(value) - len(module), _dotted(module), ()))
    return found


def _constant(node: ast.expr) -> str | None:
    """The value of a string constant or an f-string of constants, else None."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        parts = [
            _constant(p.value if isinstance(p, ast.FormattedValue) else p) for p in node.values
        ]
        return None if None in parts else "".join(p for p in parts if p is not None)
    return None


_SCANNED: dict[str, tuple[Import, ...] | None] = {}
"""The imports found in each content read in this process, by its sha256."""


def scanned_imports(data: bytes, sha: str) -> tuple[Import, ...] | None:
    """:func:`imports_of` *data*, whose sha256 is *sha*, each content scanned once."""
    if sha not in _SCANNED:
        if len(_SCANNED) >= 65_536:
            _SCANNED.clear()
        _SCANNED[sha] = imports_of(data)
    return _SCANNED[sha]
