"""What the project's own configuration leaves out of its suite (DESIGN §7).

The ini file's ``addopts`` is part of the project: a ``-m "not stress"``, a ``-k`` or a
``--deselect`` written there defines which tests the suite has, so a test it deselects is no
part of any criterion's test set (it is not ``DESELECTED``, which would keep the criterion from
ever passing). A ``-m``, ``-k`` or ``--deselect`` added on the command line or in
``PYTEST_ADDOPTS`` narrows the suite instead: the tests it alone leaves out keep their criteria
unverified in that run. ``--ignore`` and ``--ignore-glob`` need nothing here: what the ini
ignores is never collected, and :func:`~.config.partial_args` treats the command line's.

A test counts as left out by the project when the ini's own ``-m`` or ``-k`` expression is
false for it, or its node id starts with one of the ini's ``--deselect`` prefixes — whatever
the command line did to it. pytest's expression matchers are not public API: when they cannot
be used, no test counts as left out by the project (the run stays conservative).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from ..values import dataclass
from .config import short_option


@dataclass(frozen=True)
class ProjectSelection:
    """The ``-m``, ``-k`` and ``--deselect`` of the project's ini ``addopts``."""

    markexpr: str = ""
    keyword: str = ""
    deselect: tuple[str, ...] = ()

    @classmethod
    def of(cls, config: pytest.Config) -> ProjectSelection:
        """The selection written in *config*'s ini file (empty without one)."""
        try:
            args = [str(arg) for arg in config.getini("addopts")]
        except (ValueError, TypeError):
            args = []
        return ini_selection(args)

    def leaves_out(self, item: pytest.Item) -> bool:
        """True when the project's own configuration deselects *item*."""
        if self.deselect and item.nodeid.startswith(self.deselect):
            return True
        try:
            from _pytest.mark import KeywordMatcher, MarkMatcher
            from _pytest.mark.expression import Expression

            if self.keyword and not Expression.compile(self.keyword).evaluate(
                KeywordMatcher.from_item(item)
            ):
                return True
            if self.markexpr:
                matcher: Any = MarkMatcher.from_markers(item.iter_markers())
                return not Expression.compile(self.markexpr).evaluate(matcher)
        except (ImportError, AttributeError, TypeError, SyntaxError, pytest.UsageError):
            return False  # unknown to this pytest: the command line's narrowing, as before
        return False


def ini_selection(args: Sequence[str]) -> ProjectSelection:
    """The selection options in *args* (an ini ``addopts``): the last ``-m`` and ``-k`` (as
    argparse keeps them) and every ``--deselect``."""
    found: dict[str, str] = {}
    deselect: list[str] = []
    for option, value in _options(args):
        if option == "deselect":
            deselect.append(value)
        else:
            found[option] = value
    return ProjectSelection(
        markexpr=found.get("m", "").strip(),
        keyword=found.get("k", "").strip(),
        deselect=tuple(d for d in deselect if d),
    )


def _options(args: Sequence[str]) -> Iterator[tuple[str, str]]:
    """(``m``, ``k`` or ``deselect``, value) for each such option in *args*."""
    given = iter(args)
    for arg in given:
        if arg == "--":
            return
        name = arg.split("=", 1)[0]
        if name == "--deselect":
            yield "deselect", arg.split("=", 1)[1] if "=" in arg else next(given, "")
        elif arg.startswith("-") and not arg.startswith("--"):
            letter, value = short_option(arg, given)
            if letter in ("m", "k"):  # "-m=expr": "expr", as argparse reads it
                yield letter, value
