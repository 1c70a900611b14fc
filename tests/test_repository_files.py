""":class:`RepositoryFiles` places each directory once and a file with one ``lstat``: its
answers are :func:`repository_file`'s for every kind of path (symbolic links to files and to
directories, inside and outside the repository, an excluded environment, missing files,
names that are no path), and the bytecode guard of a real session resolves each directory
of the modules loaded before it once, however many modules a directory holds."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from pytest_plangraph.plugin.coverage import RepositoryFiles, repository_file


def _tree(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    root, elsewhere = tmp_path / "repo", tmp_path / "else"
    venv = root / ".venv"
    files = [
        root / "a.py",
        root / "src" / "b.py",
        root / "src" / "deep" / "c.py",
        venv / "lib" / "x.py",
        root / "vendor" / "site-packages" / "y.py",
        elsewhere / "z.py",
        elsewhere / "inner" / "w.py",
    ]
    for path in files:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    (root / "link.py").symlink_to(elsewhere / "z.py")  # a file linked out
    (elsewhere / "in.py").symlink_to(root / "src" / "b.py")  # a file linked in
    (root / "linkdir").symlink_to(elsewhere / "inner")  # a directory linked out
    (elsewhere / "indir").symlink_to(root / "src")  # a directory linked in
    (root / "venvlink").symlink_to(venv / "lib")  # into the excluded environment
    (root / "dangling.py").symlink_to(root / "nowhere.py")
    names = [str(p) for p in files] + [
        str(root / "link.py"),
        str(elsewhere / "in.py"),
        str(root / "linkdir" / "w.py"),
        str(elsewhere / "indir" / "b.py"),
        str(elsewhere / "indir" / "deep" / "c.py"),
        str(root / "venvlink" / "x.py"),
        str(root / "dangling.py"),
        str(root / "missing.py"),
        str(root / "src"),  # a directory
        str(root / "src" / "." / "b.py"),
        str(root / "src" / ".." / "a.py"),
        f"{root}{os.sep}{os.sep}a.py",
        "<string>",
        "relative.py",
        "",
        str(root / "nul\0.py"),
        os.sep,
    ]
    return root.resolve(), venv.resolve(), names


def test_the_answers_are_repository_files(tmp_path: Path) -> None:
    root, venv, names = _tree(tmp_path)
    files = RepositoryFiles(root, [venv])
    expected = [repository_file(name, root, [venv]) for name in names]
    assert [files(name) for name in names] == expected
    assert [files(name) for name in names] == expected  # and again, from the kept directories
    assert "src/b.py" in expected and "src/deep/c.py" in expected  # linked in: counts
    assert expected[names.index(str(root / "link.py"))] is None  # linked out: does not


def test_each_directory_is_resolved_once(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    names = []
    for n in range(50):
        (root / "pkg" / f"m{n}.py").write_text("x = 1\n")
        names.append(str(root / "pkg" / f"m{n}.py"))
    files = RepositoryFiles(root.resolve())
    assert [files(name) for name in names] == [f"pkg/m{n}.py" for n in range(50)]
    assert files.resolutions == 1


def test_the_guard_resolves_each_directory_once(pytester: pytest.Pytester) -> None:
    """The modules loaded before the guard (pytest, pluggy, the standard library...) are
    placed by their directories: far fewer resolutions than modules."""
    import pytest_plangraph.plugin.coverage as coverage

    made: list[RepositoryFiles] = []

    class Counted(RepositoryFiles):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            made.append(self)

    pytester.makefile(".yaml", plangraph="plangraph: 1\nplan: p\nnodes:\n  - id: a\n")
    pytester.makepyfile(test_a="def test_a():\n    assert True\n")
    pytester.run("git", "init", "-q")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(coverage, "RepositoryFiles", Counted)
        result = pytester.inline_run("--plangraph", "-q", "-p", "no:cacheprovider")
    assert result.ret == 0
    modules = sum(1 for m in list(sys.modules.values()) if getattr(m, "__file__", None))
    guard = made[0]  # the guard's check of the modules imported before it
    assert 0 < guard.resolutions < modules / 3
    assert guard.resolutions == len(guard._directories)
