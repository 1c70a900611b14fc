"""Attacks on this round's short ways at the session's start (round fifteen), by an agent
that wants a node completed while a test of its criterion fails, or a store with a tampered
schema accepted: the schema's shape kept between runs in the user's cache, a new store not
checked against its schema made again, the snapshot's own stats telling which files the run
wrote before it started.

Each scenario is a real git repository, real ``pytest --plangraph`` processes and the real
``plangraph`` command; what is answered with the caches kept is compared with what is answered
with every cache deleted."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from calc_helpers import CALC_TESTS, PLAN
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
    keys = root.parent / f"{root.name}-keys"
    keys.mkdir(exist_ok=True)
    made = plangraph_main(keys, "keygen", "--output", str(keys / "ci"))
    assert made.code == 0, made.err
    public = (keys / "ci.pub").read_text().split()[1]
    trusted = keys / "trusted.yaml"
    trusted.write_text(f"format: 1\nkeys: [{{public_key: {public}, roles: [ci]}}]\n")
    return {
        "PLANGRAPH_SIGNING_KEY_FILE": str(keys / "ci"),
        "PLANGRAPH_TRUSTED_KEYS": str(trusted),
        "XDG_CACHE_HOME": str(root.parent / f"{root.name}-user-cache"),
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
    shutil.rmtree(root.parent / f"{root.name}-user-cache")
    fresh = plangraph(root, "status", "--format", "json", env=env)
    assert fresh.code != 0, fresh.out
    assert "planted" in fresh.out + fresh.err, fresh.out + fresh.err


PADDING = 48 * 1024 * 1024
"""A comment before the code long enough that reading the file takes a while."""


def _calc(sign: str) -> str:
    return f"# {'x' * PADDING}\ndef add(a, b):\n    return a {sign} b\n"


RACING_CONFTEST = """
import os, threading, time
from pathlib import Path

import calc  # the bytes on disk now, which pass, are the ones the tests run

TARGET = os.path.realpath(Path(__file__).with_name("calc.py"))


def rewrite_once_read():
    # when the file is opened again (the start's snapshot hashing it), its tail is rewritten
    # in place, before the reader reaches it: the hash is of the new bytes
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for fd in os.listdir("/proc/self/fd"):
            try:
                if os.readlink(f"/proc/self/fd/{fd}") != TARGET:
                    continue
            except OSError:
                continue
            with open(TARGET, "r+b") as handle:
                handle.seek(-len(b"a - b\\n"), 2)
                handle.write(b"a - b\\n")
            return


threading.Thread(target=rewrite_once_read, daemon=True).start()
"""


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd")
def test_a_bound_file_rewritten_while_the_start_hashes_it_voids_the_record(
    pytester: pytest.Pytester,
) -> None:
    """A conftest imports the module, then rewrites its tail in place while the start's
    snapshot is reading it (after the stat the hash stands on, before the reader reaches
    the tail): the snapshot hashes the new bytes, which the run never executed. The file was
    written after the run began loading conftests, so the record is voided
    (``ARTIFACT_CHANGED_DURING_RUN``), and the node is not completed."""
    root = make_project(
        pytester,
        plan=PLAN,
        tests=CALC_TESTS,
        files={"pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = .\n"},
    )
    (root / "tests/test_a.py").rename(root / "tests/test_calc.py")
    (root / "calc.py").write_text(_calc("+"), encoding="utf-8")
    (root / "conftest.py").write_text(RACING_CONFTEST, encoding="utf-8")
    env = {"XDG_CACHE_HOME": str(root.parent / f"{root.name}-user-cache")}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--plangraph", "-q", "-p", "no:cacheprovider"],
        cwd=root,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
    )
    assert (root / "calc.py").read_text(encoding="utf-8") == _calc("-"), proc.stdout
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:plangraph"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert plain.returncode == 1, plain.stdout  # the tests fail on the bytes on disk
    for cache in (True, False):
        if not cache:
            shutil.rmtree(root / ".plangraph" / "cache", ignore_errors=True)
            shutil.rmtree(root.parent / f"{root.name}-user-cache", ignore_errors=True)
        status = plangraph(root, "status", "--format", "json", env=env)
        nodes = {n["id"]: n for n in json.loads(status.out)["nodes"]}
        assert nodes["step-calc"]["status"] != "completed", proc.stdout + status.out


RELINKING_CONFTEST = """
import os
from pathlib import Path

import calc  # through the link as it is: the code that passes

HERE = Path(__file__).parent
os.remove(HERE / "calc.py")
os.symlink("impl/bad.py", HERE / "calc.py")  # a link made anew to a file older than the run
"""


def test_a_bound_link_made_anew_by_a_conftest_voids_the_record(
    pytester: pytest.Pytester,
) -> None:
    """``calc.py`` is a link; a conftest imports it, then links it to another file made
    before the run. The target's ctime is older than the run, the link's is not: the bytes
    hashed are not those the tests ran, so the record is voided and the node not completed
    (with the caches kept and with every cache deleted)."""
    root = make_project(
        pytester,
        plan=PLAN,
        tests=CALC_TESTS,
        files={
            "pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = .\n",
            "impl/good.py": "def add(a, b):\n    return a + b\n",
            "impl/bad.py": "def add(a, b):\n    return a - b\n",
        },
    )
    (root / "tests/test_a.py").rename(root / "tests/test_calc.py")
    os.symlink("impl/good.py", root / "calc.py")
    (root / "conftest.py").write_text(RELINKING_CONFTEST, encoding="utf-8")
    env = {"XDG_CACHE_HOME": str(root.parent / f"{root.name}-user-cache")}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--plangraph", "-q", "-p", "no:cacheprovider"],
        cwd=root,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
    )
    assert os.readlink(root / "calc.py") == "impl/bad.py", proc.stdout + proc.stderr
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:plangraph"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert plain.returncode == 1, plain.stdout  # the tests fail on the file as it is
    for cache in (True, False):
        if not cache:
            shutil.rmtree(root / ".plangraph" / "cache", ignore_errors=True)
            shutil.rmtree(root.parent / f"{root.name}-user-cache", ignore_errors=True)
        status = plangraph(root, "status", "--format", "json", env=env)
        nodes = {n["id"]: n for n in json.loads(status.out)["nodes"]}
        assert nodes["step-calc"]["status"] != "completed", proc.stdout + status.out
