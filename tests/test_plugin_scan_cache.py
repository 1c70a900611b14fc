"""The plug-ins' entry points kept between runs (:mod:`pytest_plangraph.hooks.entrypoints`): a
second process finds them without scanning the installed distributions, and the kept answer
follows every install, removal and edit of a distribution on the path, as a scan would."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_plangraph import usercache
from pytest_plangraph.errors import VerifierError
from pytest_plangraph.hooks import entrypoints
from pytest_plangraph.hooks import manager as plugins

LINECOUNT = Path(__file__).resolve().parents[1] / "fixtures" / "plangraph-linecount"
HOUR_AGO = time.time() - 3600


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """A per-user cache of this test's own, plug-ins loaded, the shared manager rebuilt; a
    file's stat is trusted as soon as it is written (a test that writes a file and reads it
    again at once would otherwise never see an answer kept: the racy window is tested alone)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    monkeypatch.setattr(usercache, "RACY_NS", 0)
    monkeypatch.delenv(plugins.AUTOLOAD_OFF, raising=False)
    plugins.clear_cache()
    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(LINECOUNT / "plangraph_linecount.py", site)
    monkeypatch.syspath_prepend(str(site))
    yield site
    plugins.clear_cache()
    sys.modules.pop("plangraph_linecount", None)


def install(site: Path, name: str, entries: str, *, old: bool = True) -> Path:
    """A distribution's metadata folder on *site*; *old*: its files dated an hour ago."""
    info = site / f"{name.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[plangraph]\n{entries}\n")
    if old:
        for path in (info / "METADATA", info / "entry_points.txt"):
            os.utime(path, (HOUR_AGO, HOUR_AGO))
    return info


def registry_types() -> list[str]:
    """The verifier types of a freshly built manager, as a new process builds it."""
    plugins.clear_cache()
    return plugins.get_registry().names()


def ours(entries: list[entrypoints.Entry]) -> list[tuple[str, str, str]]:
    return [(e.path, e.name, e.value) for e in entries]


def test_a_second_run_scans_nothing_and_the_kept_answer_follows_the_path(fresh: Path) -> None:
    install(fresh, "plangraph-linecount", "linecount = plangraph_linecount")
    before = entrypoints.scans
    assert "linecount" in registry_types()
    assert entrypoints.scans == before + 1
    assert "linecount" in registry_types()  # kept: no scan
    assert "linecount" in registry_types()
    assert entrypoints.scans == before + 1
    assert ours(entrypoints.entry_points()) == ours(entrypoints.scan())

    shutil.rmtree(fresh / "plangraph_linecount-0.1.0.dist-info")  # uninstalled
    assert "linecount" not in registry_types()
    assert entrypoints.scans == before + 3  # the scan just above, and this one
    assert ours(entrypoints.entry_points()) == ours(entrypoints.scan()) == []

    install(fresh, "linecount-renamed", "counting = plangraph_linecount")  # another install
    assert plugins.get_plugin_manager().has_plugin("counting") is False  # built before it
    assert "linecount" in registry_types()
    assert plugins.get_plugin_manager().has_plugin("counting")
    assert ours(entrypoints.entry_points()) == ours(entrypoints.scan())


def test_an_entry_points_file_edited_in_place_is_read_again(fresh: Path) -> None:
    info = install(fresh, "plangraph-linecount", "linecount = plangraph_linecount")
    registry_types()
    scanned = entrypoints.scans
    registry_types()
    assert entrypoints.scans == scanned  # kept
    entry_file = info / "entry_points.txt"
    time.sleep(0.05)  # a change time on another tick of the file system's clock
    entry_file.write_text("[plangraph]\nrenamed = plangraph_linecount\n")
    os.utime(entry_file, (HOUR_AGO, HOUR_AGO))  # the same modification time as before
    registry_types()
    assert entrypoints.scans == scanned + 1
    assert plugins.get_plugin_manager().has_plugin("renamed")
    assert not plugins.get_plugin_manager().has_plugin("linecount")


def test_a_fresh_install_is_not_kept_until_its_files_are_settled(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(usercache, "RACY_NS", 2_000_000_000)
    install(fresh, "plangraph-linecount", "linecount = plangraph_linecount")
    before = entrypoints.scans
    registry_types()
    registry_types()
    assert entrypoints.scans == before + 2  # a file written just now: its stat is not trusted
    cache = usercache.path_of(entrypoints.KIND)
    assert cache is not None and not Path(cache).exists()


def test_deleting_or_breaking_the_kept_file_changes_no_answer(fresh: Path) -> None:
    install(fresh, "plangraph-linecount", "linecount = plangraph_linecount")
    answer = ours(entrypoints.entry_points())
    cache = usercache.path_of(entrypoints.KIND)
    assert cache is not None and Path(cache).is_file()
    Path(cache).unlink()
    assert ours(entrypoints.entry_points()) == answer
    for junk in ("not json", '{"format": 1, "answers": {"x": 1}}', "[]", '{"format": 2}'):
        Path(cache).write_text(junk)
        assert ours(entrypoints.entry_points()) == answer
    kept = json.loads(Path(cache).read_text())
    for key in kept["answers"]:  # a broken entry for this very signature: scanned again
        kept["answers"][key] = [["only", "two"]]
    Path(cache).write_text(json.dumps(kept))
    assert ours(entrypoints.entry_points()) == answer


def test_a_broken_plugin_is_told_the_same_from_the_kept_answer(fresh: Path) -> None:
    install(fresh, "plangraph-broken", "gone = no_such_plangraph_module")
    messages = []
    for _ in range(2):  # scanned, then kept
        plugins.clear_cache()
        with pytest.raises(VerifierError) as caught:
            plugins.get_plugin_manager()
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
    assert (
        "the plangraph plugin 'gone' = 'no_such_plangraph_module' of plangraph-broken"
        in (messages[1])
    )
    assert "0.1.0" in messages[1]


def test_a_new_process_follows_an_install_on_its_path(fresh: Path, tmp_path: Path) -> None:
    """Across processes, as a user runs the command: one scan, then none, then one again
    after an install."""
    probe = (
        "import sys\n"
        "from pytest_plangraph.hooks import entrypoints, manager\n"
        "names = manager.get_registry().names()\n"
        "print(entrypoints.scans, 'linecount' in names, 'importlib.metadata' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(fresh), "XDG_CACHE_HOME": str(tmp_path / "other")}

    def run() -> str:
        done = subprocess.run(
            [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    assert run() == "1 False True"
    assert run() == "0 False False"  # nothing scanned, importlib.metadata not even imported
    install(fresh, "plangraph-linecount", "linecount = plangraph_linecount")
    time.sleep(2.1)  # a new process trusts a stat older than usercache.RACY_NS (2 s)
    assert run() == "1 True True"
    assert run() == "0 True False"
