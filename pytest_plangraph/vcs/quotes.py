"""Which collected test modules quote a criterion's reference, and the value now of every
subject that stands for a walk of what a run could collect.

A :func:`~pytest_plangraph.vcs.testglob.collect_key` subject binds the *names* of the files a
run could collect under a folder: a failing test with ``@pytest.mark.criterion("n/c")`` added
to a test file that was there already, none of whose tests verified ``n/c`` (so no record of
``n/c`` binds its bytes), changes no name. So each record of a ``test`` criterion also binds
a :func:`quotes_key` per walk of its run: the walk's key with ``"quotes": "n/c"`` in its
settings (a key without it keeps its digest), whose value is the digest
(:func:`~pytest_plangraph.vcs.testglob.collect_digest`) of the sorted paths of the Python
files the walk lists whose text holds the reference in quotes (``"n/c"`` or ``'n/c'``), or
a string literal whose value it is however written (``"n\\x2fc"``, ``"n/" "c"``, a declared
encoding: :func:`quoted_refs`, the test
:func:`~pytest_plangraph.plugin.mapping.collection_suspects` makes of a failed collector). A
file that is not Python (one a ``conftest.py`` collector reads) counts for each reference its
text mentions, quoted or not (:func:`mentioned_refs`). A
file that cannot be read, or is too deeply nested to parse, may quote any reference: it is in
every list, as ``path`` and a NUL byte (no name holds one). A Python file also quotes what
each repository module it imports quotes, transitively (``from marks import PATTERN``, then
``@pytest.mark.criterion(PATTERN)``): :mod:`~pytest_plangraph.vcs.imports` finds the modules
from its text; a module that cannot be read, leaves the repository or is sourceless bytecode
may quote any reference, as an unreadable file. Not seen: a reference built at run time
(``"n" + "/c"``), a marker a hook adds (a ``conftest.py`` binds by its bytes anyway), a module
imported by a name built at run time or found through a ``sys.path`` folder neither the file's
place, ``src``, the run's test folders nor a ``pythonpath`` setting names.

:class:`CollectValues` gives the value of such keys: each folder walked once, each file read
once (its quoted references kept), however many criteria ask; it keeps the sha256 of the
bytes it read (:attr:`CollectValues.read`: the imported modules too, and each place a module
was looked for in vain), so a kept answer watches the very bytes the quotes were found in.
"""

from __future__ import annotations

import ast
import functools
import itertools
import os
import re
import warnings
from collections.abc import Iterable, Mapping

from ..canonical import json_loads
from ..hashes import sha256_hex
from ..plan.paths import COLLECT, normalize
from .imports import Import, scanned_imports
from .modulefinder import ModuleFinder
from .pythonpath import PythonPath
from .testglob import GlobFiles, collect_digest, collect_files, collect_folder, collect_key

__all__ = [
    "QUOTES",
    "UNREADABLE",
    "CollectValues",
    "collected_now",
    "literal_refs",
    "mentioned_refs",
    "needs_parse",
    "quoted_reference",
    "quoted_refs",
    "quoted_subjects",
    "quotes_key",
]

QUOTES = "quotes"
"""The setting of a :func:`quotes_key` that names the criterion's reference."""

UNREADABLE = "unreadable"
"""What :attr:`CollectValues.read` holds for a file that could not be read."""

_QUOTED = re.compile(r"""(["'])([A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*)(?=\1)""")
"""A ``node/criterion`` reference (both ids as the plan allows them) between two quotes of one
kind; the closing quote is looked at, not taken, so it may open the next one."""


_REF = r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*"
"""A whole string literal's value that is a ``node/criterion`` reference (compiled by the
first file whose literals are parsed)."""


def quoted_refs(source: str | bytes) -> frozenset[str]:
    """Every ``node/criterion`` reference *source* holds in quotes: each ``ref`` for which
    ``f'"{ref}"' in text or f"'{ref}'" in text`` (the ids hold no quote, so the segment
    between a quote and the next one of its kind decides), and, when *source* is Python that
    parses, each string literal whose value is a reference however it is written (escapes such
    as ``"n\\x2fc"``, implicit concatenation ``"n/" "c"``, a backslash-newline, an f-string of
    constants, a file in another encoding it declares: :func:`literal_refs`). *source* as bytes
    is decoded as Python decodes it for the literals, as UTF-8 for the quotes."""
    text = source.decode("utf-8", errors="replace") if isinstance(source, bytes) else source
    found = {match[2] for match in _QUOTED.finditer(text)}
    if not needs_parse(text):  # every literal's value is its text: the quotes found it
        return frozenset(found)
    return frozenset(found | literal_refs(source))


_ESCAPE = r"\\(?:[xuUN0-7]|\r?\n|\r)"
"""An escape that gives an id character or ``/`` (``\\x2f``, ``\\u002f``, ``\\N{SOLIDUS}``,
``\\057``), or a backslash-newline inside a literal: the other escapes give characters no
reference holds (compiled by the first text holding a backslash)."""

_FSTRING = re.compile(r"(?<![A-Za-z0-9_])(?:[fF][rR]?|[rR][fF])[\"']")
"""The opening of an f-string, whose value is made of its parts."""

_JOINED = re.compile(
    r"[\"'][A-Za-z0-9._/-]*[\"'](?:[ \t\f\r\n\\]|#[^\n]*)*(?:[rRuUbBfF]{1,2})?[\"']"
    r"[A-Za-z0-9._/-]*[\"']"
)
"""Two literals side by side (spaces, line ends, comments or a backslash between), each of id
characters and ``/`` alone: the first two pieces of any implicit concatenation whose value is a
reference (a triple-quoted piece shows such a pair at its quotes too)."""

_CODING = r"^[ \t\f]*#.*?coding[:=]"
"""A PEP 263 encoding declaration (looked for in the first two lines; compiled by the first
text whose head holds ``coding``)."""


def needs_parse(text: str) -> bool:
    """Whether a string literal of the Python *text* may have a value other than the text
    between its quotes that is a reference: an escape that gives an id character or ``/``, a
    backslash-newline, an f-string, two literals side by side, or an encoding declaration.
    Without one, :data:`_QUOTED` finds every literal whose value is a reference, and the parse
    (about seventy times the cost of the text match) is left out."""
    head = "\n".join(text.split("\n", 2)[:2])
    return bool(
        ("\\" in text and re.search(_ESCAPE, text))
        or _FSTRING.search(text)
        or _JOINED.search(text)
        or ("coding" in head and re.search(_CODING, head, re.MULTILINE))
    )


_WORD = r"[A-Za-z0-9._-]+(?:/[A-Za-z0-9._-]+)+"
_ID = r"[A-Za-z0-9][A-Za-z0-9._-]*"


def mentioned_refs(data: bytes) -> frozenset[str]:
    """Every ``node/criterion`` reference a file that is not Python mentions, quoted or not
    (``criterion: n/c`` in a test file a ``conftest.py`` collector reads its markers from): each
    two ids next to each other in a run of ids joined by ``/`` (``a/n/c`` mentions ``a/n`` and
    ``n/c``)."""
    found: set[str] = set()
    words, ids = re.compile(_WORD), re.compile(_ID)  # compiled by the first such file alone
    for word in words.finditer(data.decode("utf-8", errors="replace")):
        parts = word[0].split("/")
        for first, second in itertools.pairwise(parts):
            if ids.fullmatch(first) and ids.fullmatch(second):
                found.add(f"{first}/{second}")
    return frozenset(found)


def literal_refs(source: str | bytes) -> set[str]:
    """The value of each string literal of the Python *source* that is a whole
    ``node/criterion`` reference (an f-string counts when each of its parts is a constant);
    none when *source* does not parse (it cannot be imported, so it marks no test). A source
    too deep for the parser raises :class:`RecursionError` or :class:`MemoryError`: the caller
    takes it for a file that may quote any reference."""
    try:
        with warnings.catch_warnings():  # "\\d" warns; a warning taken as an error must not hide
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, UnicodeError):
        return set()
    found: set[str] = set()
    reference = re.compile(_REF)
    for node in ast.walk(tree):
        value = _literal(node)
        if value is not None and reference.fullmatch(value):
            found.add(value)
    return found


def _literal(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if not isinstance(node, ast.JoinedStr):
        return None
    parts: list[str] = []
    for part in node.values:
        if isinstance(part, ast.FormattedValue):
            if part.conversion != -1 or part.format_spec is not None:
                return None
            part = part.value
        value = _literal(part) if isinstance(part, ast.Constant) else None
        if value is None:
            return None
        parts.append(value)
    return "".join(parts)


_MEMBER = re.compile(rf'"{QUOTES}":"({_REF})"')
"""The member of a :func:`quotes_key`'s settings that names its reference (compact JSON: no
JSON string holds an unescaped quote, so this text is the member itself)."""


def quotes_key(key: str, ref: str) -> str:
    """The subject for which files of the walk *key* quote the reference *ref*: *key* with
    ``"quotes": ref`` among its settings (the text :func:`collect_key` makes of them; the
    settings are encoded once per walk, whatever the number of criteria)."""
    if _MEMBER.fullmatch(f'"{QUOTES}":"{ref}"') is None:  # no reference the plan allows
        folder, _, text = key.partition(COLLECT)
        return collect_key(folder, {**json_loads(text), QUOTES: ref})
    head, tail = _around_quotes(key)
    return f'{head}"{ref}"{tail}'


@functools.lru_cache(maxsize=16)
def _around_quotes(key: str) -> tuple[str, str]:
    """The text of the :func:`quotes_key` of the walk *key* before and after its reference's
    JSON string."""
    folder, _, text = key.partition(COLLECT)
    hole = f'"{QUOTES}":"{_HOLE}"'
    made = collect_key(folder, {**json_loads(text), QUOTES: _HOLE})
    head, _, tail = made.partition(hole)
    return f'{head}"{QUOTES}":', tail


_HOLE = "a/b"
"""A reference :func:`_around_quotes` encodes to find where a walk's reference goes."""


def quoted_reference(key: str) -> tuple[str, str] | None:
    """The walk's key and the reference of a :func:`quotes_key` subject; None for any other
    path (a plain walk's key, a file, a key that cannot be read). Read from the key's text
    (the member taken out, with a comma beside it), not decoded: each record holds one."""
    folder, marker, text = key.partition(COLLECT)
    if not marker or f'"{QUOTES}":' not in text:
        return None
    member = _MEMBER.search(text)
    if member is not None:
        start, end = member.span()
        if text[end : end + 1] == ",":
            end += 1
        elif text[start - 1 : start] == ",":
            start -= 1
        return f"{folder}{COLLECT}{text[:start]}{text[end:]}", member[1]
    try:  # a reference no plan allows
        spec = json_loads(text)
        ref = spec.pop(QUOTES)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return (collect_key(folder, spec), ref) if isinstance(ref, str) else None


def quoted_subjects(
    ref: str, subjects: Iterable[str], values: Mapping[str, str | None]
) -> dict[str, str | None]:
    """For each walk among *subjects* (a record's), its :func:`quotes_key` subject for the
    criterion *ref* with its value in *values* (what the run found); one per walk and
    criterion, none that the run did not find."""
    found: dict[str, str | None] = {}
    for path in subjects:
        if COLLECT in path:
            key = quotes_key(path, ref)
            if key in values:
                found[key] = values[key]
    return found


class CollectValues:
    """The value now of walk subjects under *root*: each walk made once, each Python file it
    lists read once (see the module docstring)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.read: dict[str, str | None] = {}
        """Each file read for its quotes → the sha256 of the bytes read (:data:`UNREADABLE`
        when it could not be); each place a module imported was looked for in vain → None
        (a kept answer watches them: a module made there is read)."""
        self.listed: set[str] = set()
        """The folders the walks listed."""
        self._walks: dict[str, GlobFiles | None] = {}
        self._quoted: dict[tuple[str, frozenset[str], bool], frozenset[str] | None] = {}
        self._own: dict[str, tuple[frozenset[str], tuple[Import, ...]] | None] = {}
        self._finder = ModuleFinder(root)
        self._widening: set[str] = set()
        """The files read that mention ``sys.path`` (:attr:`ModuleFinder.wide`)."""
        self._configured = PythonPath(root)
        self._by_ref: dict[str, tuple[dict[str, list[str]], list[str]]] = {}
        self._digests: dict[tuple[str, ...], str] = {}
        """The value of each list of quoting files, hashed once (most criteria of one test
        file are quoted by that file alone)."""

    def value(self, key: str) -> str:
        """The value of the walk subject *key* now: a plain walk's digest, or a
        :func:`quotes_key`'s."""
        quoted = quoted_reference(key)
        if quoted is None:
            return collect_digest(self._walk(key))
        return self.quoted_value(*quoted)

    def quoted_value(self, base: str, ref: str) -> str:
        """The value now of the :func:`quotes_key` subject of the walk *base* and the
        reference *ref* (what :meth:`value` gives for that key, without reading the key's
        text back: a run asks it for every criterion)."""
        found = self._walk(base)
        if found is None:
            return collect_digest(None)
        by_ref, unreadable = self._index(base, found)
        files = tuple(sorted([*by_ref.get(ref, ()), *unreadable]))
        value = self._digests.get(files)
        if value is None:  # the criteria quoted by the same files share their value
            value = self._digests[files] = collect_digest(GlobFiles(files))
        return value

    def _walk(self, key: str) -> GlobFiles | None:
        if key not in self._walks:
            found = self._walks[key] = collect_files(self.root, key)
            if found is not None:
                self.listed.update(found.listed)
        return self._walks[key]

    def _index(self, base: str, found: GlobFiles) -> tuple[dict[str, list[str]], list[str]]:
        """Reference → the files of the walk *base* that quote it, and the files that could
        not be read (each file read once, whichever walks list it)."""
        if base not in self._by_ref:
            by_ref: dict[str, list[str]] = {}
            unreadable: list[str] = []
            start = normalize(collect_folder(base))  # a pythonpath setting's folders too
            folders = self._finder.path_folders(found.files) | self._configured.folders(
                "" if start == "." else start
            )
            self._finder.wide = False
            for _ in range(2):  # again, wide, when a file read mentions sys.path
                wide = self._finder.wide
                by_ref.clear()
                unreadable.clear()
                shared = self._conftest_refs(base, found.files, folders)
                for path in found.files:  # once per file a walk lists: kept flat
                    refs = None if shared is None else self._refs(path, folders)
                    if shared is None or refs is None:
                        unreadable.append(f"{path}\0")
                        continue
                    for ref in refs:
                        by_ref.setdefault(ref, []).append(path)
                    for ref in shared - refs:  # it may read what a conftest put: its bytes
                        by_ref.setdefault(ref, []).append(f"{path}\0{self.read.get(path)}")
                if self._finder.wide == wide:
                    break
            self._by_ref[base] = (by_ref, unreadable)
            for missing in self._finder.missing:  # where a module imported may appear
                self.read.setdefault(missing, None)
            for config, sha in self._configured.read.items():
                self.read.setdefault(config, sha)
        return self._by_ref[base]

    def _conftest_refs(
        self, base: str, files: Iterable[str], folders: frozenset[str]
    ) -> frozenset[str] | None:
        """What the ``conftest.py`` files pytest loads for the walk *base* quote, with the
        modules they import (None: one may quote anything): each one the walk lists and each
        one in the walk's folder and above it. pytest loads them before the test modules, and
        one may put a reference where any test module reads it without an import
        (``pytest.PATTERN = "n/c"``, ``builtins.PATTERN``)."""
        conftests = [path for path in files if path.rpartition("/")[2] == "conftest.py"]
        folder = base.partition(COLLECT)[0].strip("/").removeprefix(".")
        while True:
            above = f"{folder}/conftest.py" if folder else "conftest.py"
            if os.path.isfile(os.path.join(self.root, above)):
                conftests.append(above)
            else:
                self.read.setdefault(above, None)  # one made there is read
            if not folder:
                break
            folder = folder.rpartition("/")[0]
        found: set[str] = set()
        for path in dict.fromkeys(conftests):
            refs = self._refs(path, folders)
            if refs is None:
                return None
            found |= refs
        return frozenset(found)

    def _refs(self, path: str, folders: frozenset[str]) -> frozenset[str] | None:
        """What the file *path* quotes, with what each repository module it imports quotes,
        transitively, the modules looked for in the ``sys.path`` *folders* of its walk too
        (None: it, or one of them, may quote anything)."""
        key = (path, folders, self._finder.wide)
        if key not in self._quoted:
            self._quoted[key] = self._closure(path, folders)
        return self._quoted[key]

    def _closure(self, path: str, folders: frozenset[str]) -> frozenset[str] | None:
        """What *path* quotes with what each module reached from it quotes; None when one
        of them may quote anything. Cycles end at a module seen already."""
        own = self._read(path)
        if own is None or not own[1]:  # most test files import no repository module
            return None if own is None else own[0]
        found, seen = set(own[0]), {path}
        todo = self._finder.modules(path, own[1], folders)
        while todo:  # each module is read once per walk, however many files import it
            module = todo.pop()
            if module in seen:
                continue
            seen.add(module)
            more = self._read(module)
            if more is None:
                return None
            found.update(more[0])
            if more[1]:
                todo.extend(self._finder.modules(module, more[1], folders))
        return frozenset(found)

    def _read(self, path: str) -> tuple[frozenset[str], tuple[Import, ...]] | None:
        """What the text of *path* quotes and its imports (a Python file); None when it
        cannot be read, leaves the repository, is sourceless bytecode, or is too deeply
        nested to parse."""
        if path not in self._own:
            python = path.endswith(".py")
            try:
                if path in self._finder.escaped or path.endswith(".pyc"):
                    raise OSError(path)  # it leaves the repository, or is bytecode: not read
                with open(os.path.join(self.root, path), "rb") as handle:
                    data = handle.read()
            except OSError:
                self.read[path] = UNREADABLE
                self._own[path] = None
                return None
            sha = self.read[path] = sha256_hex(data)
            if b"sys.path" in data:  # it may put any folder on the path
                self._widening.add(path)
            refs = _refs_of(data, sha, python)
            imports = scanned_imports(data, sha) if python else ()
            self._own[path] = None if refs is None or imports is None else (refs, imports)
        self._finder.wide |= path in self._widening
        return self._own[path]


_FOUND: dict[tuple[str, bool], frozenset[str] | None] = {}
"""The references found in each content read in this process, by its sha256 and whether it
was read as Python: a run reads its test files once after collection and again at its end,
and hashing the bytes costs a fraction of scanning them."""


def _refs_of(data: bytes, sha: str, python: bool) -> frozenset[str] | None:
    """:func:`quoted_refs` (Python) or :func:`mentioned_refs` of *data*, whose sha256 is *sha*;
    None for a module too deep to parse, which may quote any reference."""
    key = (sha, python)
    if key not in _FOUND:
        if len(_FOUND) >= 65_536:  # a process that read that many contents starts again
            _FOUND.clear()
        try:
            _FOUND[key] = quoted_refs(data) if python else mentioned_refs(data)
        except (RecursionError, MemoryError):
            _FOUND[key] = None
    return _FOUND[key]


def collected_now(
    root: str, paths: set[str], listed: set[str], read: dict[str, str | None] | None = None
) -> dict[str, str]:
    """Take the walk subjects (:func:`~pytest_plangraph.vcs.testglob.collect_key`,
    :func:`quotes_key`) out of *paths* (no file is hashed for them) and give each its value
    now; the folders walked go into *listed* (a file added to one changes its mtime: the kept
    answer watches them), the files read for their quotes, with the sha256 of the bytes read,
    into *read* (the kept answer watches them). Each folder is walked once, each file read
    once."""
    keys = [path for path in paths if COLLECT in path]
    values = CollectValues(root)
    found: dict[str, str] = {}
    for key in keys:
        paths.discard(key)
        found[key] = values.value(key)
    listed.update(values.listed)
    if read is not None:
        read.update(values.read)
    return found
