"""How a ``tests:`` pattern of the plan matches pytest test ids (pure).

A pattern matches a test id when it is the id itself, a prefix of it ending at ``::`` or at the
parameter brackets (``tests/test_a.py`` and ``tests/test_a.py::test_x`` match
``tests/test_a.py::test_x[1]``), or an :func:`fnmatch.fnmatchcase` pattern such as
``tests/test_login.py::*``.

* :class:`PatternIndex` — the criteria whose patterns match a collected test.
* :func:`may_hold` — whether a collector that never gave its tests (it failed, or was skipped
  whole) could hold a test a pattern matches.
* :func:`covers` — whether an ``exclude:`` pattern takes out every test another pattern (or a
  collector) matches.
* :func:`unmatched_text` — a pattern that matched no test, with the pattern it likely meant
  when it is a glob of files only (``tests/test_*.py``, which matches no test id).
* :func:`glob_may_name_file`, :func:`glob_may_enter`, :func:`prefix_matcher` and
  :func:`glob_files_of` — which files a ``tests:`` glob could find tests in: the files its
  evidence binds, so that a test file added where the glob matches stales the evidence (the
  walk is :mod:`pytest_plangraph.vcs.testglob`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Mapping
from fnmatch import fnmatchcase, translate
from functools import lru_cache

from .paths import is_glob


class PatternIndex:
    """Finds the criteria whose ``tests:`` patterns match a test id, without trying every
    pattern on every test: exact ids and prefixes are dictionary lookups, and each glob is
    compiled once and tried only on the test ids below the directory its literal start names
    (``tests/unit/test_*.py`` only on ids under ``tests/unit/``). :attr:`tried` counts the
    globs tried, so the work per test can be checked."""

    def __init__(self, patterns: dict[str, list[str]]) -> None:
        self.exact: dict[str, list[tuple[str, str]]] = {}
        self.globs: dict[str, list[tuple[int, str, str, Callable[[str], object]]]] = {}
        """Directory (``""`` or ending in ``/``) → ``(position, ref, pattern, matcher)``."""
        self.tried = 0
        self._count = 0
        self._heads: dict[str, str] = {}
        """A glob whose part before ``::`` is a plain path → that path: with the test's file
        given, it matches only that file's tests (the gate binds that file alone)."""
        for ref, refs_patterns in patterns.items():
            for pattern in refs_patterns:
                self.exact.setdefault(pattern, []).append((ref, pattern))
                if is_glob(pattern):
                    self._count += 1
                    matcher = re.compile(translate(pattern)).match
                    head, sep, _ = pattern.partition("::")
                    if sep and not is_glob(head):
                        self._heads[pattern] = head
                    self.globs.setdefault(_glob_directory(pattern), []).append(
                        (self._count, ref, pattern, matcher)
                    )

    def match(self, test_id: str, file_id: str | None = None) -> list[tuple[str, str]]:
        """``(ref, pattern)`` pairs matching *test_id*. With *file_id* (the id of the file
        that holds the test, which *test_id* starts with), a prefix matches only from the
        file on: a folder named ``test_a.py::x`` or ``test_a.py[x]`` beside ``test_a.py``
        holds no test of the pattern ``tests/test_a.py``, nor of ``tests/test_a.py::test_*``."""
        if not self.exact:  # every pattern is in it (globs too): a plan of markers only
            return []
        if file_id is not None and test_id.startswith(file_id):
            keys = _prefixes_past(test_id, file_id)
        else:
            keys = _prefixes(test_id)
        hits = [hit for key in keys for hit in self.exact.get(key, ())]
        if self.globs:
            found = []
            for directory in _directories(test_id):
                for position, ref, pattern, matcher in self.globs.get(directory, ()):
                    self.tried += 1
                    if matcher(test_id) and (
                        file_id is None or self._heads.get(pattern, file_id) == file_id
                    ):
                        found.append((position, ref, pattern))
            hits.extend((ref, pattern) for _, ref, pattern in sorted(found))  # plan order
        return list(dict.fromkeys(hits))


def _glob_directory(pattern: str) -> str:
    """The directory a glob's literal start names: every id it matches begins with it."""
    literal = re.split(r"[*?\[]", pattern, maxsplit=1)[0]
    return literal[: literal.rfind("/") + 1]


def _directories(test_id: str) -> list[str]:
    """``""`` and every prefix of *test_id* that ends at a ``/``."""
    found = [""]
    at = test_id.find("/")
    while at >= 0:
        found.append(test_id[: at + 1])
        at = test_id.find("/", at + 1)
    return found


def _prefixes(test_id: str) -> list[str]:
    keys = [test_id]
    base = test_id.split("[", 1)[0]
    if base != test_id:
        keys.append(base)
    parts = base.split("::")
    keys.extend("::".join(parts[:i]) for i in range(1, len(parts)))
    return keys


def _prefixes_past(test_id: str, file_id: str) -> list[str]:
    """:func:`_prefixes` of *test_id* that end at its file (*file_id*) or after it."""
    rest = test_id[len(file_id) :]
    keys = [test_id]
    base = rest.split("[", 1)[0]
    if base != rest:
        keys.append(file_id + base)
    parts = base.split("::")
    keys.extend(file_id + "::".join(parts[:i]) for i in range(1, len(parts)))
    return keys


def may_hold(pattern: str, collector: str) -> bool:
    """True when *pattern* could match a test inside *collector* (a file, class or directory
    id): the pattern names it or a node above it, or some id under it fits the pattern."""
    if (collector + "::").startswith(pattern + "::"):
        return True
    return any(_could_start(pattern, collector + sep) for sep in ("::", "/"))


def _could_start(pattern: str, prefix: str) -> bool:
    """True when some string that starts with *prefix* matches the fnmatch *pattern*."""
    tokens = _glob_tokens(pattern)
    states = _past_stars({0}, tokens)
    for char in prefix:
        states = _past_stars(
            {
                i if tokens[i] == "*" else i + 1
                for i in states
                if i < len(tokens) and (tokens[i] == "*" or fnmatchcase(char, tokens[i]))
            },
            tokens,
        )
        if not states:
            return False
    return True  # every token left can take some character


def _past_stars(states: set[int], tokens: list[str]) -> set[int]:
    """*states* plus the states a ``*`` matching nothing leads to."""
    found, todo = set(states), list(states)
    while todo:
        i = todo.pop()
        if i < len(tokens) and tokens[i] == "*" and i + 1 not in found:
            found.add(i + 1)
            todo.append(i + 1)
    return found


def _glob_tokens(pattern: str) -> list[str]:
    """*pattern* cut into ``*`` and single-character patterns (``?``, ``[...]``, a character),
    reading brackets as :func:`fnmatch.translate` does (an unclosed ``[`` is a character)."""
    tokens: list[str] = []
    i = 0
    while i < len(pattern):
        end = i + 1
        if pattern[i] == "[":
            start = i + 1 + (pattern[i + 1 : i + 2] == "!")
            start += pattern[start : start + 1] == "]"
            close = pattern.find("]", start)
            end = close + 1 if close != -1 else end
        tokens.append(pattern[i:end])
        i = end
    return tokens


def covers(exclude: str, pattern: str) -> bool:
    """True when every test id *pattern* matches, *exclude* matches too (as far as can be
    told from the two patterns: a glob *pattern* is covered only by itself)."""
    if exclude == pattern or pattern.startswith((exclude + "::", exclude + "[")):
        return True
    if is_glob(pattern):
        return False
    if exclude.endswith("*") and fnmatchcase(pattern, exclude):
        return True  # a trailing star takes every id that extends the pattern too
    # "file.py::*" takes every test of a file or directory pattern, not the pattern itself
    return exclude.endswith("::*") and "::" not in pattern and fnmatchcase(pattern + "::", exclude)


def glob_may_name_file(pattern: str, path: str) -> bool:
    """True when the glob *pattern* could match a test of the file *path* (an id
    ``path::...``), or, without ``::``, names *path* itself. What follows the file's ``::`` is
    not known before the file is collected, and the part of a glob before its own ``::`` may
    match past the file's (``tests/test_auth*Login::*`` matches
    ``tests/test_auth.py::TestLogin::test_a``; a parametrized test's id may hold ``::`` in its
    brackets), so the whole glob is tried on every id that starts with ``path::`` (the part
    before ``::`` matching *path* is the quick case of it)."""
    return fnmatchcase(path, pattern.partition("::")[0]) or (
        prefix_matcher(pattern)(path + "::") is not None
    )


def glob_may_enter(pattern: str, directory: str) -> bool:
    """True when the glob *pattern* could match a test of some file under *directory* (a
    folder whose name holds ``::`` included: ``tests/test_a.py::x/test_b.py::test_c``
    matches ``tests/test_a.py::*``)."""
    return prefix_matcher(pattern)(directory + "/") is not None


@lru_cache(maxsize=1024)
def prefix_matcher(pattern: str) -> Callable[[str], object]:
    """A compiled :func:`_could_start` of *pattern*: its match (not None) of a string that
    some match of the pattern starts with. Such a string is matched whole by the tokens up to
    some ``*`` (which takes the rest of any match) followed by the first few of the
    single-character tokens after it (or by the first few tokens, before any ``*``)."""
    tokens = _glob_tokens(pattern)
    alternatives = []
    for star in [-1, *(i for i, token in enumerate(tokens) if token == "*")]:
        head = translate("".join(tokens[: star + 1]))[:-2] if star >= 0 else ""
        run = list(itertools.takewhile(lambda token: token != "*", tokens[star + 1 :]))
        nest = ""
        for token in reversed(run):
            nest = f"(?:{translate(token)[:-2]}{nest})?"
        alternatives.append(head + nest)
    return re.compile("(?:" + "|".join(alternatives) + r")\Z").match


def test_globs(patterns: Iterable[str]) -> list[str]:
    """The globs among ``tests:`` *patterns*, in order, each once."""
    return list(dict.fromkeys(p for p in patterns if is_glob(p)))


def glob_files_of(
    tests: Iterable[str], exclude: Iterable[str], found: Mapping[str, Iterable[str]]
) -> list[str]:
    """The files the globs among *tests* find (*found*: glob → the files it could find tests
    in, as :func:`pytest_plangraph.vcs.testglob.glob_files` lists them), less those an
    ``exclude:`` pattern takes out whole; sorted."""
    excluded = list(exclude)
    files = {f for glob in test_globs(tests) for f in found.get(glob, ())}
    return sorted(f for f in files if not any(covers(e, f) for e in excluded))


def files_only_glob(pattern: str) -> bool:
    """True for a ``tests:`` glob that names files only (``tests/test_*.py``): a glob is
    matched against whole test ids, which go on past their file (``file.py::test``), so it
    matches no test; ``tests/test_*.py::*`` matches the tests in those files."""
    return "::" not in pattern and pattern.endswith(".py") and is_glob(pattern)


def unmatched_text(pattern: str) -> str:
    """*pattern*, which matched no collected test, with what to write instead when it is a
    glob of files only (:func:`files_only_glob`)."""
    if not files_only_glob(pattern):
        return pattern
    return f"{pattern} (a glob matches whole test ids: {pattern}::* matches the tests in its files)"
