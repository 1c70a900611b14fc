"""The fingerprint of the package's code that every cache key mixes in: it follows the content
of the whole package, so renaming, moving, adding or editing a module changes it, and a file
that cannot be read never weakens it to the bare version."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import pytest_plangraph
from pytest_plangraph import __version__, codehash, usercache
from pytest_plangraph.codehash import code_fingerprint, fingerprint_of
from pytest_plangraph.plan import graph
from pytest_plangraph.plan.cache import code_version, lint_version


@pytest.fixture
def package(tmp_path: Path) -> Path:
    """A copy of the installed package's files, without compiled ones."""
    source = Path(pytest_plangraph.__file__).resolve().parent
    copy = tmp_path / "pytest_plangraph"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_the_installed_package_and_a_copy_have_the_same_fingerprint(package: Path) -> None:
    assert fingerprint_of(package) == code_fingerprint()
    assert code_fingerprint().startswith(f"{__version__}+")
    assert code_version() == lint_version() == code_fingerprint()


def _module_file(package: Path) -> Path:
    """Where the copy *package* has the graph module (found from the module, not by name, so
    that the test holds wherever the module lives)."""
    installed = Path(pytest_plangraph.__file__).resolve().parent
    return package / Path(graph.__file__).resolve().relative_to(installed)


def _rename(package: Path) -> None:
    module = _module_file(package)
    module.rename(module.with_name(f"renamed_{module.name}"))


def _move(package: Path) -> None:
    (package / "moved").mkdir()
    module = _module_file(package)
    module.rename(package / "moved" / module.name)


def _add(package: Path) -> None:
    (package / "new_module.py").write_text('"""A module added by an upgrade."""\n')


def _edit(package: Path) -> None:
    with _module_file(package).open("a", encoding="utf-8") as file:
        file.write("\n# A changed comment is changed code.\n")


def _add_to_subpackage(package: Path) -> None:
    (package / "verifiers" / "linecount.py").write_text("")


@pytest.mark.parametrize("change", [_rename, _move, _add, _edit, _add_to_subpackage])
def test_any_change_to_the_modules_changes_the_fingerprint(
    package: Path, change: Callable[[Path], None]
) -> None:
    before = fingerprint_of(package)
    change(package)
    after = fingerprint_of(package)
    assert after != before
    assert after.startswith(f"{__version__}+") and after != __version__


def test_compiled_files_and_other_files_do_not_count(package: Path) -> None:
    before = fingerprint_of(package)
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "module.cpython-311.pyc").write_bytes(b"\0compiled")
    (package / "notes.txt").write_text("not code")
    assert fingerprint_of(package) == before


def test_the_modules_listed_are_the_ones_os_walk_finds(package: Path, tmp_path: Path) -> None:
    """The fingerprint's walk (text paths, no ``Path`` a module) lists what ``os.walk`` does:
    nested folders entered, ``__pycache__`` and a folder behind a symbolic link not, a link
    to a module and a dangling ``.py`` link listed, other files left out."""
    (package / "judge" / "deeper" / "deepest").mkdir(parents=True)
    (package / "judge" / "deeper" / "deepest" / "leaf.py").write_text("x = 1\n")
    (package / "judge" / "__pycache__").mkdir(exist_ok=True)
    (package / "judge" / "__pycache__" / "hidden.py").write_text("")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "elsewhere.py").write_text("")
    (package / "linked").symlink_to(outside, target_is_directory=True)
    (package / "alias.py").symlink_to(package / "api.py")
    (package / "dangling.py").symlink_to(tmp_path / "missing.py")
    (package / "data.json").write_text("{}")
    walked = []
    for folder, subfolders, names in os.walk(package):
        subfolders[:] = [d for d in subfolders if d != "__pycache__"]
        base = Path(folder).relative_to(package)
        walked.extend((base / n).as_posix() for n in names if n.endswith(".py"))
    listed = codehash._python_files(package)
    assert listed == sorted(walked)
    assert "judge/deeper/deepest/leaf.py" in listed and "alias.py" in listed
    assert "dangling.py" in listed
    assert not any(n.startswith("linked/") or "__pycache__" in n for n in listed)


def test_an_unreadable_module_gives_a_fingerprint_no_other_process_shares(package: Path) -> None:
    (package / "gone.py").symlink_to(package / "no-such-file.py")
    first, second = fingerprint_of(package), fingerprint_of(package)
    assert first != second
    assert __version__ not in (first, second)
    assert fingerprint_of(package / "missing") != fingerprint_of(package / "missing")


def test_a_fifo_named_like_a_module_is_not_waited_on(package: Path) -> None:
    """A FIFO named like a module (nothing ever writes to it) is not a file to hash: it is not
    opened for a read that waits without end, and the fingerprint is one of this call only.
    Run in a process of its own, so a wait fails the test by its timeout."""
    os.mkfifo(package / "pipe.py")
    code = "import sys, pathlib; from pytest_plangraph.codehash import fingerprint_of as f; "
    code += "print(f(pathlib.Path(sys.argv[1])))"
    done = subprocess.run(
        [sys.executable, "-c", code, str(package)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,  # before the fix: blocked in open() until this timeout
    )
    assert f"{__version__}+unreadable-" in done.stdout


def _settle(package: Path) -> None:
    """Every module of *package* written an hour ago: old enough for its stat to be trusted."""
    old = time.time() - 3600
    for module in package.rglob("*.py"):
        os.utime(module, (old, old))


@pytest.fixture
def kept_calls(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[Path]:
    """A per-user cache of the test's own; the folders the fingerprint is hashed for."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    monkeypatch.setattr(usercache, "RACY_NS", 0)  # a stat is trusted once written (see below)
    calls: list[Path] = []
    hashed = codehash.fingerprint_of

    def counted(package_dir: Path) -> str:
        calls.append(package_dir)
        return hashed(package_dir)

    monkeypatch.setattr(codehash, "fingerprint_of", counted)
    return calls


@pytest.mark.parametrize("change", [_rename, _move, _add, _edit, _add_to_subpackage])
def test_the_fingerprint_is_kept_between_runs_and_hashed_again_on_a_change(
    package: Path, kept_calls: list[Path], change: Callable[[Path], None]
) -> None:
    first = codehash.kept_fingerprint(package)
    assert first == fingerprint_of(package)
    assert codehash.kept_fingerprint(package) == first  # kept: not hashed again
    assert len(kept_calls) == 1
    time.sleep(0.05)  # a change time on another tick of the file system's clock
    change(package)
    now = codehash.kept_fingerprint(package)
    assert now == fingerprint_of(package) != first
    assert len(kept_calls) == 2
    assert codehash.kept_fingerprint(package) == now
    assert len(kept_calls) == 2


def test_a_fingerprint_of_modules_written_just_now_is_not_kept(
    package: Path, kept_calls: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(usercache, "RACY_NS", 2_000_000_000)
    _settle(package)
    _edit(package)  # written now: the same size and time could come back after another write
    assert codehash.kept_fingerprint(package) == codehash.kept_fingerprint(package)
    assert len(kept_calls) == 2


def test_an_edit_that_keeps_size_and_times_is_still_seen(
    package: Path, kept_calls: list[Path]
) -> None:
    before = codehash.kept_fingerprint(package)
    time.sleep(0.05)  # a change time on another tick of the file system's clock
    module = _module_file(package)
    info = module.stat()
    text = module.read_bytes()
    module.write_bytes(text.replace(b"def ", b"def_", 1))  # same size
    os.utime(module, ns=(info.st_atime_ns, info.st_mtime_ns))  # same modification time
    assert module.stat().st_size == info.st_size
    after = codehash.kept_fingerprint(package)  # its change time moved: hashed again
    assert after == fingerprint_of(package) != before


def test_deleting_the_kept_fingerprints_changes_nothing(
    package: Path, kept_calls: list[Path]
) -> None:
    kept = codehash.kept_fingerprint(package)
    path = usercache.path_of(codehash.KIND)
    assert path is not None and Path(path).is_file()
    Path(path).unlink()
    assert codehash.kept_fingerprint(package) == kept
    Path(path).write_text("{not json")
    assert codehash.kept_fingerprint(package) == kept
