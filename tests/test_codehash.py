"""The fingerprint of the package's code that every cache key mixes in: it follows the content
of the whole package, so renaming, moving, adding or editing a module changes it, and a file
that cannot be read never weakens it to the bare version."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import pytest_plangraph
from pytest_plangraph import __version__
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


def test_an_unreadable_module_gives_a_fingerprint_no_other_process_shares(package: Path) -> None:
    (package / "gone.py").symlink_to(package / "no-such-file.py")
    first, second = fingerprint_of(package), fingerprint_of(package)
    assert first != second
    assert __version__ not in (first, second)
    assert fingerprint_of(package / "missing") != fingerprint_of(package / "missing")
