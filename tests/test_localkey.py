"""The per-user key that authenticates checkpoints and hash-cache rows: kept outside every
repository, readable by its user only, the same for every process of that user."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pytest_plangraph.store import localkey


def _key_in_fresh_process(cache_home: Path) -> str:
    code = "from pytest_plangraph.store.localkey import local_key; print(local_key().hex())"
    return subprocess.run(
        [sys.executable, "-c", code],
        env={"XDG_CACHE_HOME": str(cache_home), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def test_the_key_is_kept_for_this_user_only(tmp_path: Path) -> None:
    first = _key_in_fresh_process(tmp_path)
    path = tmp_path / "plangraph" / "key"
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o077 == 0
    assert len(bytes.fromhex(first)) == 32
    assert _key_in_fresh_process(tmp_path) == first  # every process of the user: one key
    assert _key_in_fresh_process(tmp_path / "elsewhere") != first


def test_a_key_others_may_read_is_replaced(tmp_path: Path) -> None:
    first = _key_in_fresh_process(tmp_path)
    path = tmp_path / "plangraph" / "key"
    path.chmod(0o644)
    second = _key_in_fresh_process(tmp_path)
    assert second != first
    assert path.stat().st_mode & 0o777 == 0o600


def test_without_a_place_for_the_key_one_serves_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    localkey.local_key.cache_clear()
    try:
        key = localkey.local_key()
        assert len(key) == 32 and localkey.local_key() == key
    finally:
        localkey.local_key.cache_clear()
