"""A cache file grown to an absurd size (planted, or a disk error) is a miss that is not read:
``status`` answers as with the cache deleted, without reading gigabytes into memory. Through
the real ``plangraph`` command on the JWT sample."""

from __future__ import annotations

import os
import shutil
import tracemalloc
from pathlib import Path

import pytest
from cli_helpers import plangraph_main

from pytest_plangraph.plan.cache import MAX_CACHE_BYTES

LIMIT = 64 * 1024 * 1024  # far below the planted size, far above what status needs


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Caches count only without keys."""
    for name in ("PLANGRAPH_SIGNING_KEY", "PLANGRAPH_TRUSTED_KEYS", "PLANGRAPH_STORE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def jwt(project) -> Path:
    return project("jwt-login")


@pytest.mark.parametrize("name", ["status-text.json", "derived.json"])
def test_a_huge_cache_file_is_a_miss_not_read_whole(jwt: Path, name: str) -> None:
    cache = jwt / ".plangraph" / "cache"
    assert plangraph_main(jwt, "verify", "step-user-schema").code == 0  # makes the store
    for _ in range(3):  # derive, read the checkpoint written just now, keep
        assert plangraph_main(jwt, "status").code == 0
    planted = cache / name
    assert planted.is_file()
    with open(planted, "r+b") as handle:  # sparse: no disk space taken
        os.truncate(handle.fileno(), MAX_CACHE_BYTES + 1)
    if name == "derived.json":  # so that status derives and reads it
        (cache / "status-text.json").unlink()
    tracemalloc.start()
    try:
        answer = plangraph_main(jwt, "status")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < LIMIT, f"status allocated {peak} bytes for a planted {name}"
    shutil.rmtree(cache)
    fresh = plangraph_main(jwt, "status")
    assert (answer.code, answer.out) == (fresh.code, fresh.out)
    assert "step-user-schema" in answer.out
