"""The bytecode guard's finder places each module it is asked about by the module's
directory, resolved once per directory: its answers are those of resolving every file whole
(symbolic links to files and to directories, in and out of the installed environment,
missing and relative names), and a real session with a package of many modules resolves one
path per directory, not one per module."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import pytest_plangraph.plugin.soundness as soundness
from pytest_plangraph.plugin.soundness import ProjectFinder


def _whole(origin: str, installed: list[Path]) -> bool:
    """The answer of resolving *origin* whole (the finder's answer before it kept
    directories)."""
    resolved = Path(origin).resolve()
    return not any(resolved.is_relative_to(d) for d in installed)


def _tree(tmp_path: Path) -> tuple[list[Path], list[str]]:
    root, elsewhere, venv = tmp_path / "repo", tmp_path / "else", tmp_path / "venv"
    files = [
        root / "a.py",
        root / "src" / "b.py",
        root / "src" / "deep" / "c.py",
        venv / "lib" / "x.py",
        venv / "lib" / "pkg" / "y.py",
        elsewhere / "z.py",
    ]
    for path in files:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    (root / "into_venv.py").symlink_to(venv / "lib" / "x.py")  # a file linked into the venv
    (venv / "lib" / "out.py").symlink_to(root / "a.py")  # a venv file linked out of it
    (root / "venvdir").symlink_to(venv / "lib")  # a directory linked into the venv
    (venv / "lib" / "projdir").symlink_to(root / "src")  # a venv directory linked out
    (root / "dangling.py").symlink_to(venv / "lib" / "nowhere.py")
    names = [str(p) for p in files] + [
        str(root / "into_venv.py"),
        str(venv / "lib" / "out.py"),
        str(root / "venvdir" / "x.py"),
        str(root / "venvdir" / "pkg" / "y.py"),
        str(venv / "lib" / "projdir" / "b.py"),
        str(venv / "lib" / "projdir" / "deep" / "c.py"),
        str(root / "dangling.py"),
        str(root / "missing.py"),
        str(root / "src" / "." / "b.py"),
        str(root / "src" / ".." / "a.py"),
        str(venv / "lib" / ".." / "lib" / "x.py"),
        f"{root}{os.sep}{os.sep}a.py",
        "relative.py",
    ]
    return [venv.resolve() / "lib"], names


def test_the_answers_are_those_of_resolving_each_file(tmp_path: Path) -> None:
    installed, names = _tree(tmp_path)
    finder = ProjectFinder(installed)
    expected = [_whole(name, installed) for name in names]
    assert [finder.in_project(name) for name in names] == expected
    assert [finder.in_project(name) for name in names] == expected  # from the kept ones
    assert expected.count(False) >= 6 and expected.count(True) >= 6  # both answers tried
    assert not expected[names.index(str(tmp_path / "repo" / "into_venv.py"))]
    assert expected[names.index(str(tmp_path / "venv" / "lib" / "out.py"))]


def test_each_directory_is_resolved_once(tmp_path: Path) -> None:
    package = tmp_path / "repo" / "pkg"
    package.mkdir(parents=True)
    names = []
    for n in range(50):
        (package / f"m{n}.py").write_text("x = 1\n")
        names.append(str(package / f"m{n}.py"))
    finder = ProjectFinder([tmp_path / "venv"])
    assert all(finder.in_project(name) for name in names)
    assert finder.resolutions == 1
    (package / "link.py").symlink_to(package / "m0.py")  # a link is resolved whole, each time
    assert finder.in_project(str(package / "link.py"))
    assert finder.in_project(str(package / "link.py"))
    assert finder.resolutions == 3


def test_a_session_resolves_each_directory_once(pytester: pytest.Pytester) -> None:
    """A test importing a package of 40 modules: the finder is asked about each of them
    (and whatever else the run imports late) and resolves one path per directory."""
    made: list[ProjectFinder] = []
    asked: list[str] = []

    class Counted(ProjectFinder):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            made.append(self)

        def in_project(self, origin: str) -> bool:
            asked.append(origin)
            return super().in_project(origin)

    pytester.makefile(".yaml", plangraph="plangraph: 1\nplan: p\nnodes:\n  - id: a\n")
    pytester.mkpydir("pkg")
    for n in range(40):
        pytester.path.joinpath("pkg", f"m{n}.py").write_text(f"X = {n}\n")
    imports = "\n".join(f"import pkg.m{n}" for n in range(40))
    pytester.makepyfile(test_a=f"{imports}\n\ndef test_a():\n    assert pkg.m39.X == 39\n")
    pytester.run("git", "init", "-q")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(soundness, "ProjectFinder", Counted)
        result = pytester.inline_run("--plangraph", "-q", "-p", "no:cacheprovider")
    assert result.ret == 0
    finder = made[0]
    package = [o for o in asked if Path(o).parent.name == "pkg"]
    assert len(package) >= 40  # every module of the package went through the finder
    directories = {os.path.dirname(o) for o in asked}
    assert finder.resolutions == len(directories) < len(asked) / 3
