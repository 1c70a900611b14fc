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

from pytest_plangraph.plugin.coverage import (
    RepositoryFiles,
    excluded_dirs,
    repository_file,
    within_resolved,
)


def _tree(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    root, elsewhere = tmp_path / "repo", tmp_path / "else"
    venv = root / ".venv"
    files = [
        root / "a.py",
        root / "src" / "b.py",
        root / "src" / "deep" / "c.py",
        venv / "lib" / "x.py",
        venv / "lib" / "sub" / "v.py",
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
    (venv / "lib" / "linked").symlink_to(root / "src")  # the environment's folder linked in
    (venv / "lib" / "sub" / "deeper").symlink_to(root / "src" / "deep")
    names = [str(p) for p in files] + [
        str(root / "link.py"),
        str(elsewhere / "in.py"),
        str(root / "linkdir" / "w.py"),
        str(elsewhere / "indir" / "b.py"),
        str(elsewhere / "indir" / "deep" / "c.py"),
        str(root / "venvlink" / "x.py"),
        str(venv / "lib" / "linked" / "b.py"),
        str(venv / "lib" / "linked" / "deep" / "c.py"),
        str(venv / "lib" / "sub" / "deeper" / "c.py"),
        str(venv / "lib" / ".." / "lib" / "x.py"),
        f"{venv}{os.sep}lib{os.sep}{os.sep}x.py",
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
    # a folder of the environment linked into the repository: its files are the repository's
    assert expected[names.index(str(root / ".venv/lib/sub/deeper/c.py"))] == "src/deep/c.py"
    assert expected[names.index(str(root / ".venv/lib/sub/v.py"))] is None


def test_a_folder_within_a_resolved_one_through_no_link(tmp_path: Path) -> None:
    base = (tmp_path / "base").resolve()
    (base / "a" / "b").mkdir(parents=True)
    (base / "link").symlink_to(base / "a")
    (base / "a" / "inner").symlink_to(tmp_path)
    assert within_resolved(str(base), [base])
    assert within_resolved(str(base / "a" / "b"), [tmp_path / "other", base])
    assert within_resolved(str(base / "a" / "missing"), [base]) is False  # resolved instead
    assert within_resolved(str(base / "link"), [base]) is False
    assert within_resolved(str(base / "link" / "b"), [base]) is False
    assert within_resolved(str(base / "a" / "inner"), [base]) is False
    assert within_resolved(f"{base}{os.sep}a{os.sep}..{os.sep}a", [base]) is False
    assert within_resolved(f"{base}{os.sep}a{os.sep}{os.sep}b", [base]) is False
    assert within_resolved(f"{base}x", [base]) is False  # a sibling whose name starts so
    assert within_resolved(str(tmp_path), [base]) is False


def test_every_module_loaded_is_placed_as_repository_file_places_it() -> None:
    """The modules of this process (the standard library, site-packages, this package, the
    tests), against the environment's folders as the guard takes them."""
    root = Path(__file__).resolve().parent.parent
    excluded = excluded_dirs(root)
    names = [
        f for m in list(sys.modules.values()) if isinstance(f := getattr(m, "__file__", None), str)
    ]
    files = RepositoryFiles(root, excluded)
    assert len(names) > 100
    assert [files(name) for name in names] == [repository_file(n, root, excluded) for n in names]
    assert files.resolutions < len(names) / 3


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


def test_the_guard_places_modules_as_resolving_them_does(tmp_path: Path) -> None:
    """:class:`ProjectFinder` takes a module for the project's unless its file resolves into
    the installation: a folder of the environment linked into the repository included."""
    from pytest_plangraph.plugin.soundness import ProjectFinder

    _, venv, names = _tree(tmp_path)
    finder = ProjectFinder([venv])
    absolute = [n for n in names if os.path.isabs(n) and "\0" not in n]
    expected = [not Path(n).resolve().is_relative_to(venv) for n in absolute]
    assert [finder.in_project(n) for n in absolute] == expected
    assert finder.in_project(str(venv / "lib" / "linked" / "b.py"))
    assert not finder.in_project(str(venv / "lib" / "sub" / "v.py"))


def test_the_installation_is_left_out_unless_it_holds_the_repository(tmp_path: Path) -> None:
    """The installation's folders are found once a process; which of them are left out is
    still each repository's own answer."""
    import sysconfig

    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    outside = excluded_dirs(tmp_path.resolve())
    assert stdlib in outside
    assert Path(sys.prefix).resolve() in outside
    inside = excluded_dirs(stdlib / "json")  # a repository inside the standard library
    assert stdlib not in inside
    assert [d for d in outside if not (stdlib / "json").is_relative_to(d)] == inside
    inside.clear()  # each caller has its own list
    assert excluded_dirs(tmp_path.resolve()) == outside
