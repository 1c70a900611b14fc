"""Fuzzed plan files never break a reader of plans: ``plangraph lint``, ``plangraph status``
and the pytest plugin's plan loading answer every file with a documented exit code and, for a
bad one, one message — no traceback, no hang. The suite draws the same 150 files on every
run (derandomized); ``bench/reliability.py`` draws 2,000 random ones."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from harness_fuzz import fuzz, make_root

SUITE_EXAMPLES = 150


@pytest.fixture
def clean_environment() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        for name in ("PLANGRAPH_SIGNING_KEY", "PLANGRAPH_STORE", "PLANGRAPH_ACTOR"):
            patch.delenv(name, raising=False)
        yield


@pytest.mark.usefixtures("clean_environment")
def test_fuzzed_plan_files_get_an_answer_never_a_traceback(tmp_path: Path) -> None:
    figures = fuzz(make_root(tmp_path), SUITE_EXAMPLES, suite=True)
    assert figures.findings == []
    # the fuzzer reached every reader with files of every kind, good and bad
    assert figures.files >= SUITE_EXAMPLES // 2
    assert set(figures.made) == {"plausible", "edited", "bytes"}
    for seen in ("lint 0", "lint 1", "lint 2", "status 0", "status 2", "plugin loaded"):
        assert figures.exits[seen] > 0, (seen, figures.exits)
