"""Attacks on the caches of ``.plangraph/cache`` (round twelve), by an agent that wants a
node completed while a test of its criterion fails, or the evidence behind it lost.

``plangraph status`` writes the kept derived state (``.plangraph/cache/derived.json``) through
a temporary file named after the process (``derived.json.<pid>.tmp``), then renamed over the
kept file. That temporary name was opened as it stood: a link planted there beforehand (the
pid of a process in a container is easy to guess, and a cache folder can come with a
repository) made the trusted user's own command write the kept state through it — over the
store, say, whose evidence was then lost. Each write of the repository's caches now creates
its temporary file anew, never through a link. Run through a real ``pytest --plangraph``
process and the real ``plangraph`` command on a real git repository."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from calc_helpers import calc_project
from cli_helpers import plangraph, plangraph_main
from plugin_helpers import latest

pytest_plugins = ["pytester"]

STORE = ".plangraph/store.db"
KEPT = ".plangraph/cache/derived.json"


def _project(pytester: pytest.Pytester, **files: str) -> Path:
    return calc_project(pytester, **files)


def _is_a_store(path: Path) -> bool:
    return path.read_bytes()[:16] == b"SQLite format 3\x00"


def test_a_link_at_the_kept_states_temporary_name_is_not_written_through(
    pytester: pytest.Pytester,
) -> None:
    """A ``plangraph status`` keeping the state it derived with a link to the store at the
    temporary name it writes: the store keeps its evidence, and the kept state is written
    beside it."""
    root = _project(pytester)
    result = pytester.runpytest_subprocess("--plangraph", "-p", "no:cacheprovider")
    assert result.ret == 0
    assert latest(root)["step-calc/ac-add"].outcome == "passed"
    # the status command, in this process: its pid is known beforehand
    (root / KEPT).parent.mkdir(parents=True, exist_ok=True)
    (root / KEPT).unlink(missing_ok=True)
    (root / f"{KEPT}.{os.getpid()}.tmp").symlink_to("../store.db")
    done = plangraph_main(root, "status", "--format", "json")
    assert done.code in (0, 1), done.err
    assert _is_a_store(root / STORE)
    assert latest(root)["step-calc/ac-add"].outcome == "passed"
    assert (root / KEPT).is_file() and not (root / KEPT).is_symlink()
    again = plangraph(root, "status", "--format", "json")
    assert "Traceback" not in again.err and again.out == done.out
