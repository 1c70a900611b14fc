"""Attacks on the kept answer's new trust rule (round fifteen), by an agent that wants
``status`` to answer a node completed while the file its evidence was bound to changed: a
kept ``status`` answer whose plan file, checkpoint or watched files were too young to trust
by their ``lstat`` trusts them once a later look hashed them again, found the kept bytes and
found them older than the racy window (``derived/look.py``'s ``settle``).

Each scenario is a real git repository, a real ``pytest --plangraph`` run and the real
``plangraph`` command; what ``status`` answers with the caches kept is compared with what it
answers with every cache deleted (the repository's ``.plangraph/cache`` and the user's cache
folder). A change made *during* a look — between the moment a file is hashed and the moment
its ``lstat`` is taken for the record — stands for another process working at the same time:
it is made from inside the hashing (the project's own :func:`~pytest_plangraph.vcs.watch.
sha256_of`, wrapped), right after the file's bytes were read.

The racy window is the real rule's (``max(mtime, ctime) + window < the look's start``), set
wide for the statuses that keep the answer, so that the files are too young to trust, then to
a short one that the test waits out, so that the look under attack trusts what it may."""

from __future__ import annotations

import mmap
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import test_kept_settle as settle_tests
from cache_helpers import as_tester
from calc_helpers import BROKEN, GOOD, calc_project
from cli_helpers import Result, plangraph, plangraph_main
from plugin_helpers import settle

from pytest_plangraph.derived import kept as kept_module
from pytest_plangraph.derived.kept import STATUS_PERSON
from pytest_plangraph.store.derived import read_tagged
from pytest_plangraph.vcs import watch

pytest_plugins = ["pytester"]

ANSWER = Path(".plangraph/cache/status-text.json")
WIDE = 5_000_000_000  # the plan file and the source too young, the folders (set back 10 s) not
SHORT = 300_000_000  # what the look under attack waits out (well above a coarse clock's step)


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


def _env(root: Path, name: str = "user-cache") -> dict[str, str]:
    return {"XDG_CACHE_HOME": str(root.parent / name)}


def _status(root: Path, *args: str) -> Result:
    return plangraph_main(root, "status", *args, env=_env(root))


def _without_caches(root: Path, *args: str) -> Result:
    """``plangraph status`` with every cache deleted, in a copy of *root* beside it."""
    other = root.parent / "fresh"
    shutil.rmtree(other, ignore_errors=True)
    shutil.copytree(root, other, symlinks=True)
    shutil.rmtree(other / ".plangraph" / "cache")
    shutil.rmtree(root.parent / "fresh-cache", ignore_errors=True)
    return plangraph_main(other, "status", *args, env=_env(root, "fresh-cache"))


def _record(root: Path) -> dict[str, Any]:
    record = read_tagged(root / ANSWER, STATUS_PERSON)
    assert isinstance(record, dict)
    return record


def _entry(root: Path, rel: str) -> list[Any]:
    return next(e for e in _record(root)["watch"]["files"] if e[0] == rel)


def _passed(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The project, its test passed in a real ``pytest --plangraph`` run, its answer kept by
    statuses for which every file is too young to trust (the plan file, ``calc.py``)."""
    root = calc_project(pytester)
    os.environ["XDG_CACHE_HOME"] = str(root.parent / "user-cache")
    try:
        assert pytester.runpytest_subprocess("--plangraph", "-p", "no:cacheprovider").ret == 0
    finally:
        del os.environ["XDG_CACHE_HOME"]
    settle(root)  # the folders older than any window (their listings are watched by mtime)
    for young in ("plangraph.yaml", "calc.py"):
        os.utime(root / young)  # written just now, as far as their stat tells
    monkeypatch.setattr(watch, "RACY_NS", WIDE)
    for _ in range(3):  # the derived state, then the kept answer
        done = _status(root, "--check")
        assert done.code == 0, done.err
    assert "completed" in done.out
    assert _record(root)["plan"][2] is False and _entry(root, "calc.py")[3] is False
    monkeypatch.setattr(watch, "RACY_NS", SHORT)
    time.sleep(SHORT / 1e9 + 0.1)  # every file older than the window now
    return root


@pytest.fixture
def during_hash(
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Callable[[str, Callable[[], None]], None]]:
    """``during_hash(name, act)``: *act* runs once, right after the next look hashed the file
    whose path ends with *name* (another process at work between that hash and the lstat
    the look takes of it)."""
    original = watch.sha256_of
    pending: dict[str, Callable[[], None]] = {}

    def hashing(path: str) -> str | None:
        sha = original(path)
        for name in list(pending):
            if path.endswith(os.sep + name):
                pending.pop(name)()
        return sha

    monkeypatch.setattr(watch, "sha256_of", hashing)
    yield pending.__setitem__
    assert not pending, "the look hashed no such file"


def _in_place(path: Path, text: str) -> Callable[[], None]:
    """Write *text* into *path* in place (the same inode), its mtime set back as it was."""

    def act() -> None:
        info = path.stat()
        with open(path, "r+", encoding="utf-8") as handle:
            handle.write(text)
        os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))

    return act


def _assert_as_without_caches(root: Path) -> Result:
    """``status`` (twice: the second reads what the first kept) and ``status --check`` answer
    as they do with every cache deleted."""
    for args in ((), (), ("--check",)):
        kept, fresh = _status(root, *args), _without_caches(root, *args)
        assert (kept.code, kept.out) == (fresh.code, fresh.out), (kept, fresh)
    return kept


def test_a_source_changed_in_place_between_the_hash_and_the_lstat_is_not_trusted(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    during_hash: Callable[[str, Callable[[], None]], None],
) -> None:
    root = _passed(pytester, monkeypatch)
    kept = _entry(root, "calc.py")
    # the same size, the same inode, the mtime set back: only the ctime tells
    during_hash("calc.py", _in_place(root / "calc.py", BROKEN))
    assert "completed" in _status(root).out  # what the look hashed: the bytes as kept
    entry = _entry(root, "calc.py")
    assert entry[3] is False or entry[1] == kept[1]  # never the new stat for the old bytes
    done = _assert_as_without_caches(root)
    assert done.code == 1 and "completed" not in done.out


def test_an_older_file_renamed_over_the_source_between_the_hash_and_the_lstat_is_not_trusted(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    during_hash: Callable[[str, Callable[[], None]], None],
) -> None:
    root = _passed(pytester, monkeypatch)
    kept = _entry(root, "calc.py")
    # the broken file, its mtime the source's, older than the window: only the rename is new
    prepared = root.parent / "calc-new.py"
    prepared.write_text(BROKEN)
    info = (root / "calc.py").stat()
    os.utime(prepared, ns=(info.st_atime_ns, info.st_mtime_ns))
    time.sleep(SHORT / 1e9 + 0.1)
    during_hash("calc.py", lambda: os.replace(prepared, root / "calc.py"))
    assert "completed" in _status(root).out
    entry = _entry(root, "calc.py")
    assert entry[3] is False or entry[1] == kept[1]
    done = _assert_as_without_caches(root)
    assert done.code == 1 and "completed" not in done.out


def test_an_older_file_linked_in_place_of_the_source_between_the_hash_and_the_lstat(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    during_hash: Callable[[str, Callable[[], None]], None],
) -> None:
    prepared = pytester.path.parent / "broken.py"
    prepared.write_text(BROKEN)
    root = _passed(pytester, monkeypatch)

    def link() -> None:
        (root / "calc.py").unlink()
        os.link(prepared, root / "calc.py")

    during_hash("calc.py", link)
    assert "completed" in _status(root).out
    done = _assert_as_without_caches(root)
    assert done.code == 1 and "completed" not in done.out


def test_the_plan_edited_while_a_look_runs_is_not_trusted_for_the_kept_bytes(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    during_hash: Callable[[str, Callable[[], None]], None],
) -> None:
    root = _passed(pytester, monkeypatch)
    plan = root / "plangraph.yaml"
    kept = _record(root)["plan"]
    # the same size: the criterion now names a test file that records nothing
    edited = plan.read_text().replace("tests/test_calc.py", "tests/test_calx.py")
    during_hash("plangraph.yaml", _in_place(plan, edited))
    assert "completed" in _status(root).out
    now = _record(root)["plan"]
    assert now[2] is False or now[0] == kept[0]
    done = _assert_as_without_caches(root)
    assert "completed" not in done.out


def test_an_older_answer_written_over_a_newer_one_by_a_look_running_meanwhile(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two statuses at once: the first looks, trusts the source as it found it, and writes
    its answer again after a second status, run after the source broke, kept its own."""
    root = _passed(pytester, monkeypatch)
    original = kept_module.settle
    others: list[Result] = []

    def meanwhile(*args: Any) -> bool:
        trusted = original(*args)
        _in_place(root / "calc.py", BROKEN)()
        others.append(plangraph(root, "status", env=_env(root)))  # another process
        return trusted

    monkeypatch.setattr(kept_module, "settle", meanwhile)
    assert "completed" in _status(root).out
    monkeypatch.setattr(kept_module, "settle", original)
    assert [o.code for o in others] == [0] and "stale" in others[0].out
    assert "completed" in _record(root)["answer"][0]  # the first one's answer, written last
    done = _assert_as_without_caches(root)
    assert done.code == 1 and "stale" in done.out


@pytest.mark.parametrize("when", [10**18 * 3, 10**9], ids=["future", "far-past"])
def test_a_source_trusted_then_changed_with_its_mtime_far_off_is_a_miss(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, when: int
) -> None:
    root = _passed(pytester, monkeypatch)
    _status(root)  # the look that trusts the plan and the source
    assert _entry(root, "calc.py")[3] is True
    path = root / "calc.py"
    path.write_text(BROKEN)
    os.utime(path, ns=(when, when))
    time.sleep(SHORT / 1e9 + 0.1)
    done = _assert_as_without_caches(root)
    assert done.code == 1 and "stale" in done.out
    # and a source dated in the future or the far past, its bytes as kept, is judged as kept
    path.write_text(GOOD)
    os.utime(path, ns=(when, when))
    time.sleep(SHORT / 1e9 + 0.1)
    done = _assert_as_without_caches(root)
    assert done.code == 0 and "completed" in done.out


def test_an_answer_copied_back_from_before_the_source_broke_is_a_miss(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _passed(pytester, monkeypatch)
    _status(root)  # the source trusted by its stat from now on
    assert _entry(root, "calc.py")[3] is True
    saved = (root / ANSWER).read_bytes()
    info = (root / "calc.py").stat()
    _in_place(root / "calc.py", BROKEN)()
    assert "stale" in _status(root).out
    (root / ANSWER).write_bytes(saved)  # the answer that trusted the good source
    assert (root / "calc.py").stat().st_mtime_ns == info.st_mtime_ns
    done = _assert_as_without_caches(root)
    assert done.code == 1 and "stale" in done.out


def test_the_checkpoint_rewritten_between_the_hash_and_the_lstat_is_not_trusted(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    during_hash: Callable[[str, Callable[[], None]], None],
) -> None:
    """Another process rewrites the log's checkpoint (in place, the same size, its mtime set
    back) while a look hashes it: the kept answer does not trust the new stat for the old
    bytes, and the next status reads the log as a status without caches does."""
    root = settle_tests._kept_young(tmp_path, monkeypatch)
    kept = _record(root)["checkpoint"]
    checkpoint = Path(kept[0]) / kept[1]
    monkeypatch.setattr(watch, "RACY_NS", SHORT)
    time.sleep(SHORT / 1e9 + 0.1)
    garbage = "{" + " " * (checkpoint.stat().st_size - 2) + "}"
    during_hash(checkpoint.name, _in_place(checkpoint, garbage))
    hit = plangraph_main(root, "status")
    assert hit.code == 0
    entry = _record(root)["checkpoint"]
    assert entry is None or entry[4] is False or entry[2] == kept[2]
    after = plangraph_main(root, "status")
    assert after == settle_tests._without_caches(root)
    assert after.out == hit.out


@pytest.mark.parametrize("how", ["rename", "link"])
def test_a_trusted_source_replaced_by_an_older_file_between_looks_is_a_miss(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    prepared = pytester.path.parent / "broken.py"
    prepared.write_text(BROKEN)
    root = _passed(pytester, monkeypatch)
    _status(root)  # the look that trusts the source by its stat
    assert _entry(root, "calc.py")[3] is True
    info = (root / "calc.py").stat()
    os.utime(prepared, ns=(info.st_atime_ns, info.st_mtime_ns))
    if how == "rename":
        os.replace(prepared, root / "calc.py")
    else:
        (root / "calc.py").unlink()
        os.link(prepared, root / "calc.py")
    done = _assert_as_without_caches(root)
    assert done.code == 1 and "stale" in done.out


def test_with_keys_configured_a_write_through_a_memory_map_is_read(
    pytester: pytest.Pytester,
) -> None:
    """A source broken through a shared memory map whose page was already dirty keeps its
    times until the kernel writes the page back, so a cache that trusts a file by its stat
    could take the old bytes (``docs/trust.md``: without keys a run is the runner's word).
    With keys configured no local cache counts: ``status --check`` and ``claim`` read the
    source and answer stale and FAILED."""
    root = calc_project(pytester)
    keyed = {**_env(root), "PLANGRAPH_SIGNING_KEY": "ci-secret"}
    os.environ.update(keyed)
    try:
        assert pytester.runpytest_subprocess("--plangraph", "-p", "no:cacheprovider").ret == 0
    finally:
        for name in keyed:
            del os.environ[name]
    settle(root)
    with open(root / "calc.py", "r+b") as handle, mmap.mmap(handle.fileno(), 0) as mapped:
        mapped[0:1] = mapped[0:1]  # the page dirty, the file's times as of now
        time.sleep(2.5)  # the racy window (2 s) passed: a cache would trust the stat
        for _ in range(2):
            assert plangraph(root, "status", "--check", env=keyed).code == 0
        at = mapped.find(b"+")
        mapped[at : at + 1] = b"-"
        assert (root / "calc.py").read_text() == BROKEN
        checked = plangraph(root, "status", "--check", env=keyed)
        assert checked.code == 1 and "stale" in checked.out, checked
        claimed = plangraph(root, "claim", "step-calc", "--by", "agent", env=keyed)
        assert claimed.code == 1 and "FAILED" in claimed.out, claimed
