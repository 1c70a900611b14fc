"""``plangraph patch`` when the store refuses the write, through the real command: a store
that is read-only (``chattr +i`` on the file, or on the file and its folder) or locked by
another writer leaves the plan file as it was, no staged file beside it and no event or plan
version recorded. A plan file that cannot be replaced after the events were recorded is one
message naming the plan version recorded and the staged file, which finishes the patch when
moved over the plan."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from cli_helpers import plangraph, plangraph_main
from cli_state_helpers import STORE, statuses

from pytest_plangraph.store import opening
from pytest_plangraph.store.sqlite import Store

PATCH = (
    "plangraph_patch: 1\n"
    "nodes:\n"
    "  add: [{id: step-x, parent: objective-auth,"
    " acceptance: [{id: ac-1, verifier: {type: approval}}]}]\n"
)


def _stored(root: Path) -> tuple[list[str], int | None]:
    """The ids of the store's events and its latest plan version."""
    with Store.open(root / STORE, create=False, readonly=True) as store:
        return [e.id for e in store.events()], store.latest_plan_version()


def _staged(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith(".plangraph.yaml."))


def _patch_refused(root: Path, *, in_process: bool = False) -> str:
    """Run a patch the store refuses; assert nothing changed and return its message."""
    (root / "add.yaml").write_text(PATCH, encoding="utf-8")
    plan, stored = (root / "plangraph.yaml").read_bytes(), _stored(root)
    run = plangraph_main if in_process else plangraph
    result = run(root, "patch", "add.yaml", "--by", "a", "--expected-plan-version", "1")
    assert result.code == 2, (result.out, result.err)
    assert result.err.startswith("plangraph: error: ") and "Traceback" not in result.err
    assert result.err.count("\n") == 1  # one message
    assert (root / "plangraph.yaml").read_bytes() == plan
    assert _staged(root) == []
    assert _stored(root) == stored
    return result.err


@pytest.mark.parametrize("folder", [False, True], ids=["file-only", "file-and-folder"])
def test_a_read_only_store_leaves_the_plan_as_it_was(jwt: Path, make_immutable, folder) -> None:
    make_immutable(*([jwt / STORE, jwt / STORE.parent] if folder else [jwt / STORE]))
    said = _patch_refused(jwt)
    assert "nothing was written" in said or "may not write" in said, said


def test_a_locked_store_leaves_the_plan_as_it_was(
    jwt: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(opening, "BUSY_TIMEOUT_S", 0.5)  # the writer waits this long, in process
    old = time.time() - 60  # files changed a minute ago: their hashes are kept, not racy
    for path in jwt.rglob("*"):
        if ".git" not in path.parts and STORE.parent.name not in path.parts:
            os.utime(path, (old, old))
    assert plangraph_main(jwt, "status").code == 0  # so the patch writes only its events
    holder = sqlite3.connect(jwt / STORE, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")  # another writer, mid-transaction
        said = _patch_refused(jwt, in_process=True)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "locked" in said or "busy" in said, said
    (jwt / "add.yaml").write_text(PATCH, encoding="utf-8")  # once released, the same patch goes
    done = plangraph_main(jwt, "patch", "add.yaml", "--by", "a", "--expected-plan-version", "1")
    assert done.code == 0, done.err
    assert _stored(jwt)[1] == 2 and "id: step-x" in (jwt / "plangraph.yaml").read_text()


def test_a_plan_that_cannot_be_replaced_after_the_events_says_how_to_finish(
    jwt: Path, make_immutable
) -> None:
    (jwt / "add.yaml").write_text(PATCH, encoding="utf-8")
    plan = (jwt / "plangraph.yaml").read_bytes()
    events_before = _stored(jwt)[0]
    make_immutable(jwt / "plangraph.yaml")  # read and staged beside it, never replaced
    result = plangraph(jwt, "patch", "add.yaml", "--by", "a", "--expected-plan-version", "1")
    assert result.code == 2 and "Traceback" not in result.err, result.err
    assert result.err.startswith("plangraph: error: the patch was recorded (plan version 2,")
    events, latest = _stored(jwt)
    assert latest == 2 and len(events) == len(events_before) + 1
    assert events[-1][:12] in result.err
    staged = _staged(jwt)
    assert len(staged) == 1 and staged[0] in result.err
    assert re.search(r"move it over \S*plangraph\.yaml to finish", result.err)
    assert (jwt / "plangraph.yaml").read_bytes() == plan
    kept = (jwt / staged[0]).read_text(encoding="utf-8")
    assert "id: step-x" in kept
    subprocess.run(["chattr", "-i", str(jwt / "plangraph.yaml")], check=True)
    (jwt / staged[0]).replace(jwt / "plangraph.yaml")  # what the message says to do
    shown = plangraph_main(jwt, "status", "--format", "json").json()
    assert shown["plan"]["version"] == 2
    assert "step-x" in statuses(jwt)
