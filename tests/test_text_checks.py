"""The text checks that replace patterns compiled at import (a kept answer's hit compiles
none of its own): ``plan.paths.is_drive`` and ``vcs.run.is_commit_id`` tell what the
regular expressions they replace told, on every kind of text around their edges."""

from __future__ import annotations

import re

import pytest

from pytest_plangraph.plan.paths import is_drive, path_problem
from pytest_plangraph.vcs.run import is_commit_id

TEXTS = [
    "",
    "C",
    "C:",
    "c:/x",
    "Z:\\x",
    "1:",
    ":C",
    "é:",
    "Ä:x",
    "ab:",
    " C:",
    "_:",
    "abc",
    "abcd",
    "ABCDEF12",
    "abcg",
    "0" * 39,
    "0" * 40,
    "0" * 41,
    "f" * 64,
    "12 34",
    "1234\n",
    "١٢٣٤",  # Arabic-Indic digits: not hex
    "ａｂｃｄ",  # full-width letters: not hex
]


@pytest.mark.parametrize("text", TEXTS)
def test_the_checks_tell_what_the_patterns_told(text: str) -> None:
    assert is_drive(text) == (re.match(r"^[A-Za-z]:", text) is not None)
    assert is_commit_id(text) == (re.fullmatch(r"[0-9a-fA-F]{4,40}", text) is not None)


def test_a_drive_in_a_plan_path_is_still_refused() -> None:
    problem = path_problem("C:/outside.txt")
    assert problem is not None and "drive on Windows" in problem
    assert "drive" not in (path_problem("out/c:file.txt") or "")
