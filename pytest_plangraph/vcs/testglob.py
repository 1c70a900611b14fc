"""The files a ``tests:`` glob of the plan could find tests in, listed from the disk.

A criterion whose ``tests:`` name a glob (``tests/test_auth_*.py::*``) is verified by the tests
the glob matched in the run that recorded its evidence. A test file added later where the glob
matches was not run by that evidence, so the evidence binds every file the glob could find
tests in (:func:`pytest_plangraph.plan.patterns.glob_files_of`) and the gate asks the disk again:
a file found now that the evidence did not bind stales it (``ARTIFACT_CHANGED``, old
``absent``).

:func:`glob_files` walks from the directory the glob's literal start names, enters only the
directories some id under which the glob could match, and lists the Python files (``*.py``:
what pytest collects tests from) a glob could match a test of, and the doctest text files
pytest collects by default (``test*.txt``) whose test the glob matches. It leaves out only
what no run of pytest enters (``.git``, ``__pycache__``, a virtual environment): the folders
a project's ``norecursedirs`` leaves out are entered, since the gate does not read that
setting. As pytest does, it follows a link to a directory (the files under it are named by
the link's path; a link back to a folder above is not entered again). A name that is not
UTF-8 where the glob could find tests is refused: no record can bind it. The recording run
and the gate list with the same function, so what one binds the other finds.

A file no glob names can also hold tests of a criterion (a ``criterion`` marker, a
``--doctest-glob`` of the run) or hooks that see every test (a ``conftest.py`` in a folder made
since). :func:`collect_files` lists what pytest could collect under a folder of a run's paths
with the run's own settings, named by a :func:`collect_key` subject whose value is the digest
of the list: the run binds it, and the gate walks again
(:func:`~pytest_plangraph.vcs.quotes.collected_now`). Which of those files quote a criterion's
reference is :mod:`pytest_plangraph.vcs.quotes`.
"""

from __future__ import annotations

import glob
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from fnmatch import fnmatchcase, translate
from typing import Any, NamedTuple

from ..canonical import json_loads
from ..errors import UsageError
from ..hashes import sha256_hex
from ..plan.paths import COLLECT, UTF8_HINT, is_glob, normalize, not_utf8, path_problem
from ..plan.patterns import prefix_matcher, test_globs

__all__ = [
    "COLLECT",
    "DOCTEST_TEXT",
    "NOT_COLLECTED",
    "NOT_ENTERED",
    "GlobFiles",
    "collect_digest",
    "collect_files",
    "collect_folder",
    "collect_key",
    "expand_testpaths",
    "glob_files",
    "globs_files",
    "is_collect_key",
]

NOT_ENTERED = (".git", "__pycache__")
"""The folders the walk never enters: git's, and the bytecode caches. pytest's
``norecursedirs`` (by default ``.*``, ``build``, ``dist``, ``venv`` …) is a setting of the
project that the gate does not read, so the walk enters those folders too, as pytest does
under a custom ``norecursedirs``; it leaves out what pytest leaves out whatever that setting
says: a virtual environment (a folder holding ``pyvenv.cfg``)."""

DOCTEST_TEXT = "test*.txt"
"""pytest's default ``--doctest-glob``: text files it collects doctests from."""


class GlobFiles(NamedTuple):
    """What :func:`glob_files` found for one glob."""

    files: tuple[str, ...]
    """The files it could find tests in (sorted)."""
    listed: tuple[str, ...] = ()
    """The directories listed to find them (sorted): a file added to one of those changes
    the directory's mtime."""
    named: tuple[str, ...] = ()
    """The file a glob whose file part is a plain path names (``tests/test_a.py::test_x*``),
    there or not: nothing is listed for it, the snapshot hashes it (missing: none). Such a
    glob matches only the tests of that file (:class:`~pytest_plangraph.plan.patterns.PatternIndex`
    is given each test's file)."""


def glob_files(root: str, pattern: str) -> GlobFiles:
    """The files under *root* the ``tests:`` glob *pattern* could find tests in, and the
    directories listed (see the module docstring). A glob whose literal start leaves the
    repository finds nothing."""
    head, sep, _ = pattern.partition("::")
    if sep and not is_glob(head):  # the glob is in the test's name: one file, not listed
        if path_problem(head) or normalize(head).startswith(".."):
            return GlobFiles(())
        found = os.path.isfile(os.path.join(root, head)) and head.endswith(".py")
        return GlobFiles((head,) if found else (), (), (head,))
    literal = _literal_directory(pattern)
    if literal is None:
        return GlobFiles(())
    # glob_may_name_file and glob_may_enter, compiled once
    quick = re.compile(translate(pattern.partition("::")[0])).match
    starts = prefix_matcher(pattern)
    files: list[str] = []
    listed: list[str] = []

    def enter(path: str, entry: os.DirEntry[str]) -> bool:
        if starts(path + "/") is None or _not_entered(entry.name, entry.path):
            return False
        _require_utf8(pattern, path)
        return True

    for rel, prefix, entries in _folders(root, literal, enter):
        listed.append(rel)
        for entry in entries:
            name = entry.name
            path = prefix + name
            if entry.is_dir():
                continue
            if name.endswith(".py"):
                if (quick(path) or starts(path + "::")) and entry.is_file():
                    _require_utf8(pattern, path)
                    files.append(path)  # a link to a file counts: pytest collects it
            elif entry.is_file() and _doctest_text(pattern, path, name):
                _require_utf8(pattern, path)
                files.append(path)
    return GlobFiles(tuple(sorted(files)), tuple(sorted(listed)))


def _folders(
    root: str, top: str, enter: Callable[[str, os.DirEntry[str]], bool]
) -> Iterator[tuple[str, str, list[os.DirEntry[str]]]]:
    """Each folder a walk from *top* (``""``: the root) lists: its path, the prefix of its
    entries' paths and its entries (none when it is not there or not a folder: it is listed
    all the same, so its appearing is seen). A folder is entered when *enter* says so for its
    path and entry; a link to a folder is followed (pytest does), but not back to a folder on
    the way down to it (a cycle)."""
    start = os.path.realpath(os.path.join(root, top) if top else root)
    pending: list[tuple[str, str, frozenset[str]]] = [(top, start, frozenset({start}))]
    while pending:  # once per folder entered: kept flat
        rel, here, above = pending.pop()
        prefix = "" if rel == "" else f"{rel}/"
        try:
            with os.scandir(os.path.join(root, rel) if rel else root) as listing:
                entries = list(listing)
        except OSError:
            entries = []
        yield rel, prefix, entries
        for entry in entries:
            if entry.is_dir() and enter(prefix + entry.name, entry):  # a link to a folder too
                linked = entry.is_symlink()
                real = os.path.realpath(entry.path) if linked else f"{here}/{entry.name}"
                if real not in above:
                    pending.append((prefix + entry.name, real, above | {real}))


def _doctest_text(pattern: str, path: str, name: str) -> bool:
    """A doctest text file pytest collects by default (``test*.txt``: its one test is
    ``path::name``) whose test the glob matches."""
    return fnmatchcase(name, DOCTEST_TEXT) and fnmatchcase(f"{path}::{name}", pattern)


def globs_files(root: str, patterns: Iterable[str]) -> dict[str, GlobFiles]:
    """:func:`glob_files` of every glob among *patterns* (each once)."""
    return {glob: glob_files(root, glob) for glob in test_globs(patterns)}


def _literal_directory(pattern: str) -> str | None:
    """The directory (``""``: the root) every file a glob could match lies under; None when
    it is not a clean path inside the repository."""
    head = pattern.split("::", 1)[0]
    cut = min((head.find(c) for c in "*?[" if c in head), default=len(head))
    directory = head[:cut].rpartition("/")[0]
    if not directory:
        return ""
    if path_problem(directory):
        return None
    clean = normalize(directory)
    return None if clean.startswith("..") else ("" if clean == "." else clean)


def _not_entered(name: str, folder: str) -> bool:
    """True for a folder the walk does not enter (:data:`NOT_ENTERED`, a virtual
    environment); *folder* is its path on disk."""
    return name in NOT_ENTERED or os.path.isfile(os.path.join(folder, "pyvenv.cfg"))


def _require_utf8(pattern: str, path: str) -> None:
    """Refuse a file or folder the glob could find tests in whose name is not UTF-8: paths are
    kept as UTF-8 text, so no evidence can bind it, and pytest still collects it."""
    shown = not_utf8(path)
    if shown is not None:
        raise UsageError(
            f"the tests: glob {pattern!r} finds a path whose name is not UTF-8: {shown!r}; "
            + UTF8_HINT
        )


# --- what a run of pytest could collect under its paths ----------------------------------------


NOT_COLLECTED = "__pycache__"
"""The one folder name pytest never enters whatever ``norecursedirs`` says (its
``pytest_ignore_collect``); a project whose ``norecursedirs`` leaves out no dot name lets it
into ``.git``, ``.pytest_cache`` and ``.plangraph`` too, so :func:`collect_files` enters them
then (a kept answer that watches them is a miss after a command that writes there: the price
of such a setting)."""


def collect_key(folder: str, spec: Mapping[str, Any]) -> str:
    """The subject path that stands for what pytest could collect under *folder* (``""``: the
    repository root) with the settings *spec* (``python_files``, ``norecursedirs``,
    ``doctest_glob``, ``doctest_modules``, ``venv``; ``any_file`` when a collector of the
    run's own may collect any file; and ``testpaths``, the entries pytest
    expands from *folder*, its rootdir, when the key stands for them): the folder,
    :data:`COLLECT` and the settings as compact JSON. Its value is :func:`collect_digest` of
    :func:`collect_files`."""
    settings = json.dumps(dict(spec), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return f"{folder or '.'}{COLLECT}{settings}"


def is_collect_key(path: str) -> bool:
    """True for a subject path :func:`collect_key` made."""
    return COLLECT in path


def collect_folder(key: str) -> str:
    """The folder (``"."``: the root) a :func:`collect_key` walks from."""
    return key.partition(COLLECT)[0]


def collect_digest(found: GlobFiles | None) -> str:
    """The value of a :func:`collect_key` subject: the sha256 of the sorted paths *found*
    (a key that cannot be read: a value no walk gives, so the subject is changed).

    The paths are joined by newlines; a name may hold a newline, though, and then the same
    text would stand for other files (``a`` and ``b``, or a file ``b`` in a folder named
    ``a<newline>``…): such a list is hashed as a NUL byte (which no name holds) and its JSON
    instead, so that no two lists give the same bytes and a list without one keeps the digest
    it always had."""
    if found is None:
        return "unreadable"
    if any("\n" in path for path in found.files):
        listed = json.dumps(list(found.files), ensure_ascii=False)
        text = b"\0" + listed.encode("utf-8", "surrogateescape")
    else:
        text = "\n".join(found.files).encode("utf-8", "surrogateescape")
    return sha256_hex(text)


def collect_files(root: str, key: str) -> GlobFiles | None:
    """The files under the folder of *key* (:func:`collect_key`) that pytest could collect with
    its settings, and the folders listed to find them; None when *key* is not one.

    The walk enters every folder pytest enters (not those ``norecursedirs`` leaves out, nor
    :data:`NOT_COLLECTED`, nor a virtual environment unless ``--collect-in-virtualenv``; a
    dot folder, ``.git`` included, when ``norecursedirs`` does not leave it out; a link to a
    folder is followed, once) and lists each ``conftest.py`` (pytest loads it when it
    collects the folder), each ``__init__.py`` and each file ``python_files`` matches (a
    test module; every ``*.py`` under ``--doctest-modules``), and each file a
    ``--doctest-glob`` matches. A file found here that was not when the evidence was recorded
    holds tests, or hooks, the evidence did not run. A key with ``testpaths`` walks from what
    those entries find (:func:`expand_testpaths`) instead of from its folder: each folder
    found is walked (entered whatever ``norecursedirs`` says, as pytest does with a path it
    is given), and each file found is listed. A key with ``"any_file": true`` (a plug-in or
    conftest of the run collects files of its own) lists every file of the folders entered;
    one with ``"any_folder": true`` (a conftest of the run implements ``pytest_ignore_collect``
    or ``pytest_collect_directory``, which may let pytest into any folder) enters the folders
    ``norecursedirs`` leaves out too, but for dot folders (``.git``, ``.plangraph``, written
    by the tools themselves: walking them would stale every record at once)."""
    folder, _, text = key.partition(COLLECT)
    try:
        spec = json_loads(text)
        python_files = [str(p) for p in spec["python_files"]]
        skipped = [str(p) for p in spec["norecursedirs"]]
        doctests = [str(p) for p in spec["doctest_glob"]]
        modules, venv = bool(spec["doctest_modules"]), bool(spec["venv"])
        any_file = bool(spec.get("any_file", False))
        any_folder = bool(spec.get("any_folder", False))
        testpaths = spec.get("testpaths")
        entries = None if testpaths is None else [str(p) for p in testpaths]
    except (ValueError, KeyError, TypeError):
        return None
    if path_problem(folder) or normalize(folder).startswith(".."):
        return None
    top = "" if normalize(folder) == "." else normalize(folder)
    files: list[str] = []
    listed: list[str] = []
    tops = [top]
    if entries is not None:  # the folder is the rootdir the entries are expanded from
        matched = expand_testpaths(root, top, entries)
        tops = [p for p in matched.files if os.path.isdir(os.path.join(root, p))]
        files.extend(p for p in matched.files if p not in tops)  # pytest collects a file named
        listed.extend(matched.listed)
    absolute = os.path.abspath(root)

    def enter(path: str, entry: os.DirEntry[str]) -> bool:
        name = entry.name
        return not (
            name == NOT_COLLECTED
            or any(fnmatchcase(name, p) for p in skipped if not any_folder or name[:1] == ".")
            or (not venv and os.path.isfile(os.path.join(entry.path, "pyvenv.cfg")))
        )

    def collected(path: str, name: str) -> bool:
        return any_file or _collected(path, name, python_files, doctests, modules, absolute)

    for start in tops:
        for rel, prefix, found in _folders(root, start, enter):
            listed.append(rel)
            for entry in found:
                name = entry.name
                if not entry.is_dir() and entry.is_file() and collected(prefix + name, name):
                    files.append(prefix + name)
    return GlobFiles(tuple(sorted(set(files))), tuple(sorted(set(listed))))


def _collected(
    path: str,
    name: str,
    python_files: list[str],
    doctests: list[str],
    modules: bool,
    root: str,
) -> bool:
    """Whether pytest could collect the file *path* (named *name*, under the absolute *root*)
    or load it as a conftest."""
    if name.endswith(".py"):
        if modules or name in ("conftest.py", "__init__.py"):
            return True
        return any(_matches(p, path, name, root) for p in python_files)
    return any(_matches(p, path, name, root) for p in doctests)


def _matches(pattern: str, path: str, name: str, root: str) -> bool:
    """pytest's ``fnmatch_ex``: a pattern without a ``/`` matches the file's name, one with a
    ``/`` its absolute path (under *root*), a relative pattern as the end of it (so
    ``*/tests/*_check.py`` matches ``tests/a_check.py`` of the repository, whose absolute path
    has a folder above ``tests``); the path within the repository is matched too."""
    if "/" not in pattern:
        return fnmatchcase(name, pattern)
    full = f"{root.rstrip('/')}/{path}"
    if fnmatchcase(full, pattern if pattern.startswith("/") else f"*/{pattern}"):
        return True
    return fnmatchcase(path, pattern) or fnmatchcase(path, f"*/{pattern}")


# --- the folders a testpaths glob finds ---------------------------------------------------------


def expand_testpaths(root: str, folder: str, entries: Iterable[str]) -> GlobFiles:
    """What pytest finds for the ``testpaths`` *entries* when a run starts in *folder* (its
    rootdir; ``""``: the repository root): each entry expanded as pytest does, with
    ``glob.glob(entry, recursive=True)`` (Python's glob: ``*`` and ``**`` pass over names
    that start with a dot, ``norecursedirs`` plays no part), as repository paths; and the
    folders listed to find them. An absolute entry, or a match that leaves the repository,
    finds nothing here."""
    base = os.path.join(root, folder) if folder else root
    found: dict[str, None] = {}
    listed: dict[str, None] = {}

    def inside(match: str) -> str | None:
        joined = normalize(f"{folder}/{match}" if folder else match)
        return None if joined.startswith("..") else ("" if joined == "." else joined)

    for entry in entries:
        if not entry or "\0" in entry or os.path.isabs(entry):
            continue  # an absolute entry: what no repository path can name
        for match in glob.glob(entry, root_dir=base, recursive=True):
            if (path := inside(match)) is not None:
                found[path] = None
        for place in _glob_listed(base, entry):
            if (path := inside(place)) is not None:
                listed[path] = None
    return GlobFiles(tuple(sorted(found)), tuple(sorted(listed)))


def _glob_listed(base: str, entry: str) -> list[str]:
    """The folders (relative to *base*) to watch for what *entry* finds: those its part before
    each name finds (where that name is listed, or looked up: a folder made there later is
    found), and under a ``**`` every folder Python's glob enters."""
    pieces = entry.split("/")
    listed: list[str] = []
    for at, piece in enumerate(pieces):
        prefix = "/".join(pieces[:at])
        parents = glob.glob(prefix, root_dir=base, recursive=True) if prefix else ["."]
        parents = [p for p in parents if os.path.isdir(os.path.join(base, p))]
        listed.extend(parents)
        if piece == "**":
            for parent in parents:
                below = glob.glob(os.path.join(parent, "**/"), root_dir=base, recursive=True)
                listed.extend(p.rstrip("/") for p in below)
    return listed
