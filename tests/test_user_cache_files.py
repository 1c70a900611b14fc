"""The per-user cache folder damaged: a FIFO, a directory, a huge or binary file in place of
the key (``key``) or of a kept answer (``code.json``, ``plugins.json``) is not waited for and
not believed — every command answers as with a fresh cache folder, through the real
``plangraph`` command in its own process (the key is read once per process)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import PLANGRAPH

COMMANDS = (("status", "--check"), ("impact",), ("impact", "--since", "HEAD"))


def _run(root: Path, cache_home: Path, *args: str) -> tuple[int, str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("PLANGRAPH_") or name == "PLANGRAPH_ACTOR"
    }
    env.update(XDG_CACHE_HOME=str(cache_home), PLANGRAPH_ACTOR="tester")
    proc = subprocess.run(
        [str(PLANGRAPH), *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=30,  # a FIFO waited for would hang here
    )
    assert "Traceback" not in proc.stderr
    return proc.returncode, proc.stdout, proc.stderr


def _answers(root: Path, cache_home: Path) -> list[tuple[int, str]]:
    return [_run(root, cache_home, *args)[:2] for args in COMMANDS]


def _damage(path: Path, how: str) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    if how == "fifo":
        os.mkfifo(path)
    elif how == "directory":
        path.mkdir()
    elif how == "binary":
        path.write_bytes(bytes(range(256)) * 64)
    elif how == "huge":
        with path.open("wb") as handle:  # sparse: 64 MiB that cost no disk
            handle.truncate(64 * 1024 * 1024)


@pytest.mark.parametrize("name", ["key", "code.json", "plugins.json"])
@pytest.mark.parametrize("how", ["fifo", "directory", "binary", "huge"])
def test_a_damaged_user_cache_file_is_not_waited_for_nor_believed(
    project: Callable[[str], Path], tmp_path: Path, name: str, how: str
) -> None:
    root = project("jwt-login")
    fresh = tmp_path / "fresh-cache"
    assert _run(root, fresh, "verify")[0] == 0
    expected = _answers(root, fresh)
    assert expected[0][0] == 0 and "completed" in expected[0][1]
    damaged = tmp_path / "damaged-cache"
    _run(root, damaged, "status")  # the folder made, with the key and the kept answers
    path = damaged / "plangraph" / name
    assert path.exists()
    shutil.rmtree(root / ".plangraph" / "cache")  # what this folder's key vouched for
    _damage(path, how)
    assert _answers(root, damaged) == expected
    assert _run(root, damaged, *COMMANDS[0])[:2] == expected[0]  # again, from what it kept
