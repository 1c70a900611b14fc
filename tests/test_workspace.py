"""Workspace: expanding outputs and hashing files safely (real files in tmp_path)."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from pytest_plangraph.plan.paths import glob_match
from pytest_plangraph.vcs.reading import read_text
from pytest_plangraph.vcs.workspace import Workspace, remembered_escapes


def test_a_recursive_glob_expands_to_the_files_below(tmp_path: Path) -> None:
    (tmp_path / "out/sub").mkdir(parents=True)
    (tmp_path / "out/a.txt").write_text("a")
    (tmp_path / "out/sub/b.txt").write_text("b")
    workspace = Workspace.at(tmp_path)
    assert workspace.expand(["out/**"]) == ["out/a.txt", "out/sub/b.txt"]
    assert workspace.expand(["out/**/*.txt"]) == ["out/a.txt", "out/sub/b.txt"]


def test_the_store_is_never_an_output(tmp_path: Path) -> None:
    (tmp_path / ".plangraph").mkdir()
    (tmp_path / ".plangraph/store.db").write_text("x")
    (tmp_path / "artifacts").mkdir()
    (tmp_path / "artifacts/x.db").write_text("x")
    (tmp_path / "artifacts/x.db-wal").write_text("x")
    (tmp_path / "artifacts/report.txt").write_text("r")
    workspace = Workspace.at(tmp_path, ["artifacts/x.db", "artifacts/x.db-wal"])
    assert workspace.expand(["."]) == ["artifacts/report.txt"]


def test_a_symlink_loop_is_refused_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "loop1").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop1")
    workspace = Workspace.at(tmp_path)
    assert workspace.escapes("loop1")
    assert workspace.hash_file("loop1") is None
    assert workspace.hashes(["loop1/x"]) == {"loop1/x": None}


def test_a_symlink_out_escapes_however_its_path_is_written(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "file.txt").write_text("secret")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "linkdir").symlink_to(outside / "dir")
    (repo / "linkfile").symlink_to(outside / "file.txt")
    workspace = Workspace.at(repo)
    for written in ("linkdir", "linkdir/", "linkdir/.", "./linkdir", "linkfile", "linkfile/"):
        assert workspace.escapes(written), written
    (repo / "inside.txt").write_text("x")
    (repo / "linkin").symlink_to(repo / "inside.txt")
    assert not workspace.escapes("linkin/")


def test_dot_dot_after_a_symlink_climbs_from_its_target(tmp_path: Path) -> None:
    # `linkdir/../secret.txt` reads outside/secret.txt, not repo/secret.txt
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "secret.txt").write_text("secret")
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    (repo / "linkdir").symlink_to(outside / "dir")
    (repo / "secret.txt").write_text("mine")
    workspace = Workspace.at(repo)
    assert workspace.escapes("linkdir/../secret.txt")
    assert workspace.hash_file("linkdir/../secret.txt") is None
    with pytest.raises(PermissionError):
        read_text(workspace, "linkdir/../secret.txt")
    # without a symlink on the way, `..` stays inside
    assert not workspace.escapes("sub/../secret.txt")
    assert workspace.hash_file("sub/../secret.txt") == workspace.hash_file("secret.txt")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_fifo_is_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    workspace = Workspace.at(tmp_path)
    assert workspace.hash_file("pipe") is None
    assert workspace.hashes(["pipe"]) == {"pipe": None}


def test_a_directory_swapped_for_a_symlink_out_is_seen_by_the_next_batch(
    tmp_path: Path,
) -> None:
    root, outside = tmp_path / "repo", tmp_path / "outside"
    (root / "out").mkdir(parents=True)
    outside.mkdir()
    (root / "out/f.txt").write_text("inside")
    (outside / "f.txt").write_text("secret")
    workspace = Workspace.at(root)
    digest = hashlib.sha256(b"inside").hexdigest()
    assert workspace.hashes(["out/f.txt"]) == {"out/f.txt": digest}
    (root / "out/f.txt").unlink()
    (root / "out").rmdir()
    (root / "out").symlink_to(outside)
    assert workspace.hashes(["out/f.txt"]) == {"out/f.txt": None}


def test_walking_a_directory_keeps_links_inside_and_drops_links_out(tmp_path: Path) -> None:
    root, outside = tmp_path / "repo", tmp_path / "outside"
    (root / "out/deep").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    (root / "data.txt").write_text("d")
    (root / "out/deep/a.txt").write_text("a")
    (root / "out/in-link.txt").symlink_to(root / "data.txt")
    (root / "out/out-link.txt").symlink_to(outside / "secret.txt")
    (root / "out/dir-link").symlink_to(outside)
    workspace = Workspace.at(root)
    assert workspace.expand(["out"]) == ["out/deep/a.txt", "out/in-link.txt"]
    assert workspace.expand(["."]) == ["data.txt", "out/deep/a.txt", "out/in-link.txt"]


def test_stats_taken_while_expanding_serve_the_hash_cache(tmp_path: Path) -> None:
    from pytest_plangraph.store.sqlite import Store
    from pytest_plangraph.vcs.workspace import RACY_NS

    (tmp_path / "out/sub").mkdir(parents=True)
    for rel in ("out/a.txt", "out/sub/b.txt", "out/c.txt"):
        (tmp_path / rel).write_text(rel)
    old = os.stat(tmp_path / "out/a.txt").st_mtime_ns - 10 * RACY_NS
    for rel in ("out/a.txt", "out/sub/b.txt", "out/c.txt"):
        os.utime(tmp_path / rel, ns=(old, old))
    workspace = Workspace.at(tmp_path)
    plain = workspace.hashes(["out/a.txt", "out/sub/b.txt", "out/c.txt"])

    with Store.open(tmp_path / ".plangraph/store.db") as store:
        stats: dict[str, os.stat_result] = {}
        files = workspace.expand(["out"], stats)
        assert sorted(stats) == files == ["out/a.txt", "out/c.txt", "out/sub/b.txt"]
        assert workspace.hashes(files, cache=store, stats=stats) == plain
        # same size, same mtime: only the ctime tells the cache the content is new
        (tmp_path / "out/a.txt").write_text("out/a.TXT")
        os.utime(tmp_path / "out/a.txt", ns=(old, old))
        (tmp_path / "out/c.txt").unlink()
        stats = {}
        files = workspace.expand(["out"], stats)
        again = workspace.hashes([*files, "out/c.txt"], cache=store, stats=stats)
        assert again["out/a.txt"] == hashlib.sha256(b"out/a.TXT").hexdigest()
        assert again["out/c.txt"] is None
        assert again["out/sub/b.txt"] == plain["out/sub/b.txt"]


def test_a_file_deleted_after_expanding_hashes_as_missing(tmp_path: Path) -> None:
    from pytest_plangraph.store.sqlite import Store

    (tmp_path / "out").mkdir()
    (tmp_path / "out/a.txt").write_text("a")
    workspace = Workspace.at(tmp_path)
    stats: dict[str, os.stat_result] = {}
    assert workspace.expand(["out"], stats) == ["out/a.txt"]
    (tmp_path / "out/a.txt").unlink()
    with Store.open(tmp_path / ".plangraph/store.db") as store:
        assert workspace.hashes(["out/a.txt"], cache=store, stats=stats) == {"out/a.txt": None}
        assert store.cache_get("out/a.txt") is None


def test_escapes_are_remembered_within_a_block_only(tmp_path: Path) -> None:
    root, outside = tmp_path / "repo", tmp_path / "elsewhere"
    root.mkdir()
    outside.mkdir()
    (root / "out.txt").write_text("x", encoding="utf-8")
    workspace = Workspace.at(root)
    with remembered_escapes():
        assert workspace.escapes("out.txt") is False
        (root / "out.txt").unlink()
        (root / "out.txt").symlink_to(outside / "secret.txt")  # now a link out of the root
        assert workspace.escapes("out.txt") is False  # the answer taken in this block
    assert workspace.escapes("out.txt") is True  # outside the block: looked at again


def test_a_folder_swapped_for_a_symlink_out_is_seen_by_the_next_block_and_workspace(
    tmp_path: Path,
) -> None:
    """What one block or workspace found of a folder is not taken by the next (a long-lived
    object's next lint, a later command of the same process): ``out/`` made a link out of
    the root in between, ``out/f.txt`` escapes."""
    root, outside = tmp_path / "repo", tmp_path / "elsewhere"
    (root / "out").mkdir(parents=True)
    outside.mkdir()
    (outside / "f.txt").write_text("x", encoding="utf-8")

    def swap(link: bool) -> None:
        if link:
            shutil.rmtree(root / "out")
            (root / "out").symlink_to(outside)
        else:
            (root / "out").unlink()
            (root / "out").mkdir()
        (root / "out/f.txt").write_text("x", encoding="utf-8")

    (root / "out/f.txt").write_text("x", encoding="utf-8")
    workspace = Workspace.at(root)
    with remembered_escapes():
        assert workspace.escapes("out/f.txt") is False
    swap(True)
    with remembered_escapes():
        assert workspace.escapes("out/f.txt") is True
    swap(False)
    assert Workspace.at(root).escapes("out/f.txt") is False
    swap(True)
    assert Workspace.at(root).escapes("out/f.txt") is True


def test_escaping_answers_a_crowded_directory_as_escapes_answers_each_path(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "secret.txt").write_text("secret")
    repo = tmp_path / "repo"
    (repo / "out").mkdir(parents=True)
    (repo / "few").mkdir()
    for i in range(40):  # enough for one listing of out/ instead of a look at each path
        (repo / "out" / f"f{i}.txt").write_text(str(i))
    (repo / "out/link-out").symlink_to(outside / "secret.txt")
    (repo / "out/link-in").symlink_to(repo / "out/f0.txt")
    (repo / "out/dir-out").symlink_to(outside / "dir")
    (repo / "few/link-out").symlink_to(outside / "secret.txt")
    (repo / "parent-out").symlink_to(outside)
    asked = [
        *(f"out/f{i}.txt" for i in range(40)),
        *(f"out/missing{i}.txt" for i in range(5)),
        "out/link-out",
        "out/link-out/",
        "out/./link-out",
        "out/link-in",
        "out/dir-out",
        "out/dir-out/x.txt",
        "out/../out/link-out",
        "out/*.txt",
        "few/link-out",
        "few/f.txt",
        "parent-out/secret.txt",
        *(f"parent-out/n{i}.txt" for i in range(40)),
        "/etc/passwd",
        "../outside/secret.txt",
    ]
    workspace = Workspace.at(repo)
    expected = {path for path in asked if workspace.escapes(path)}
    assert {"out/link-out", "out/dir-out/x.txt", "few/link-out", "/etc/passwd"} <= expected
    assert "out/link-in" not in expected and "out/f3.txt" not in expected
    assert workspace.escaping(asked) == expected
    with remembered_escapes():  # and the answers are remembered for escapes
        assert workspace.escaping(asked) == expected
        (repo / "out/f1.txt").unlink()
        (repo / "out/f1.txt").symlink_to(outside / "secret.txt")
        assert workspace.escapes("out/f1.txt") is False
    assert workspace.escaping(asked) == expected | {"out/f1.txt"}


@pytest.mark.parametrize(
    "pattern",
    [
        "**/*.py",
        "pkg/**/*.py",
        "gen/*.txt",
        "gen/*",
        "./gen/*.txt",
        "gen/../gen/*.txt",
        "gen/[ab].txt",
        "*",
        ".",
        "**/" * 100 + "x.txt",  # endless for a search that tries every split of each `**`
        "*/" * 300 + "x.txt",  # deeper than the recursion of a selector per name
        "*/" * 11 + "x.txt",
        "**/d/" * 6 + "**/x.txt",
    ],
)
def test_glob_match_names_exactly_the_files_expand_finds(tmp_path: Path, pattern: str) -> None:
    """impact matches a diff's paths against the plan's globs as text; it must name the files
    that expanding the same glob on disk finds (status's view)."""
    deep = "d/" * 11 + "x.txt"
    files = ["top.py", "pkg/p.py", "pkg/sub/q.py", "gen/a.txt", "gen/b.txt", "gen/sub/x.txt", deep]
    if "*/" * 300 in pattern:
        files.append("d/" * 300 + "x.txt")
    for rel in files:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(rel)
    expanded = set(Workspace(tmp_path).expand([pattern]))
    assert expanded  # every pattern here names something
    assert {rel for rel in files if glob_match(pattern, rel)} == expanded
