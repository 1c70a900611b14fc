"""Attacks on this round's short ways at the session's start (round fifteen), by an agent
that wants a node completed while a test of its criterion fails, or a store with a tampered
schema accepted: the schema's shape kept between runs in the user's cache, a new store not
checked against its schema made again, the snapshot's own stats telling which files the run
wrote before it started.

Each scenario is a real git repository, real ``pytest --plangraph`` processes and the real
``plangraph`` command; what is answered with the caches kept is compared with what is answered
with every cache deleted."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import plangraph, plangraph_main
from plugin_helpers import make_project

pytest_plugins = ["pytester"]

FORGE = """
import sqlite3, sys
from pytest_plangraph.store import schemacheck
from pytest_plangraph.store.derived import write_tagged
from pytest_plangraph.store.schema import SCHEMA_VERSION

planted = ("table", "planted", "planted", "CREATE TABLE planted (x)")
shapes = {}
for scripts in schemacheck._paths(SCHEMA_VERSION):
    made = schemacheck._made(scripts)
    if made is not None:
        rows = sorted({*made, planted}, key=lambda r: (r[0], r[1], r[2], r[3] or ""))
        shapes[schemacheck._shape_key(scripts)] = [list(r) for r in rows]
path = schemacheck._kept_path()
write_tagged(path, shapes, schemacheck._PERSON)
print(path)
"""
"""What a process of this user (a conftest of an earlier run, a script the agent runs) can
do: the user's key is readable by any of them (docs/trust.md), so it can tag a shape of its
own that holds the table it plants."""


def _signed_env(root: Path) -> dict[str, str]:
    keys = root.parent / "keys"
    keys.mkdir(exist_ok=True)
    made = plangraph_main(keys, "keygen", "--output", str(keys / "ci"))
    assert made.code == 0, made.err
    public = (keys / "ci.pub").read_text().split()[1]
    trusted = keys / "trusted.yaml"
    trusted.write_text(f"format: 1\nkeys: [{{public_key: {public}, roles: [ci]}}]\n")
    return {
        "PLANGRAPH_SIGNING_KEY_FILE": str(keys / "ci"),
        "PLANGRAPH_TRUSTED_KEYS": str(trusted),
        "XDG_CACHE_HOME": str(root.parent / "user-cache"),
    }


def _store(root: Path) -> Path:
    found = [p for p in (root / ".plangraph").rglob("*") if p.is_file() and _is_sqlite(p)]
    assert found, "no store was made"
    return found[0]


def _is_sqlite(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(16) == b"SQLite format 3\x00"


def test_a_kept_shape_tagged_by_the_agent_does_not_pass_a_planted_table_with_keys(
    pytester: pytest.Pytester,
) -> None:
    """With keys configured no cache of this user's stands for a check (any process of the
    user can read the key that tags it): a shape the agent kept, holding the table it planted
    in the store, does not make the store accepted. Without the kept file it is refused."""
    root = make_project(pytester)
    env = _signed_env(root)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--plangraph", "-q", "-p", "no:cacheprovider"],
        cwd=root,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    honest = plangraph(root, "status", "--format", "json", env=env)
    assert honest.code == 0, honest.err
    store = _store(root)
    con = sqlite3.connect(store)
    con.execute("CREATE TABLE planted (x)")
    con.commit()
    con.close()
    forged = subprocess.run(
        [sys.executable, "-c", FORGE],
        cwd=root,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
    )
    assert forged.returncode == 0, forged.stderr
    assert Path(forged.stdout.strip()).is_file()
    for args in (("status", "--format", "json"), ("claim", "step-a", "--by", "agent-7")):
        kept = plangraph(root, *args, env=env)
        assert kept.code != 0, kept.out
        assert "planted" in kept.out + kept.err, kept.out + kept.err
    shutil.rmtree(root.parent / "user-cache")
    fresh = plangraph(root, "status", "--format", "json", env=env)
    assert fresh.code != 0, fresh.out
    assert "planted" in fresh.out + fresh.err, fresh.out + fresh.err
