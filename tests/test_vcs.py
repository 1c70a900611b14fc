"""vcs/history.py against real git repositories (changed paths, commits, revisions, faults) and the
hash cache in a real store."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest
from conftest import git

from pytest_plangraph.errors import GitError
from pytest_plangraph.store.sqlite import Store
from pytest_plangraph.vcs.changes import Change
from pytest_plangraph.vcs.history import (
    changed_paths,
    commits_since,
    file_at,
    git_state,
    is_ancestor,
    last_commit_touching,
    last_commits,
    revision_exists,
)
from pytest_plangraph.vcs.workspace import RACY_NS, Workspace


def _repo(path: Path, files: dict[str, str]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    _write(path, files)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def _commit(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return _repo(
        tmp_path / "repo",
        {
            "keep.txt": "keep\n",
            "edit.txt": "one\n",
            "gone.txt": "gone\n",
            "move me.txt": "a file that is renamed\n" * 20,
            "ünï côde/dàta file.json": "{}\n",
        },
    )


def test_changes_between_two_revisions(repo: Path) -> None:
    (repo / "edit.txt").write_text("two\n")
    (repo / "gone.txt").unlink()
    (repo / "new.txt").write_text("new\n")
    git(repo, "mv", "move me.txt", "moved here.txt")
    (repo / "ünï côde/dàta file.json").write_text('{"a": 1}\n')
    _commit(repo, "second")

    assert changed_paths(repo, "HEAD~1", "HEAD") == [
        Change("edit.txt", "modified"),
        Change("gone.txt", "deleted"),
        Change("moved here.txt", "renamed", "move me.txt"),
        Change("new.txt", "added"),
        Change("ünï côde/dàta file.json", "modified"),
    ]


def test_a_mode_change_alone_is_no_change(repo: Path) -> None:
    """Evidence binds content: ``chmod +x`` changes nothing it depends on, in the working tree
    or committed; a mode change with an edit is a change."""
    (repo / "keep.txt").chmod(0o755)
    assert changed_paths(repo, "HEAD") == []
    _commit(repo, "make it executable")
    assert changed_paths(repo, "HEAD~1", "HEAD") == []
    (repo / "edit.txt").chmod(0o755)
    (repo / "edit.txt").write_text("two\n")
    assert changed_paths(repo, "HEAD") == [Change("edit.txt", "modified")]


def test_working_tree_changes_include_untracked_but_not_ignored(repo: Path) -> None:
    (repo / ".gitignore").write_text("*.log\n")
    _commit(repo, "ignore logs")
    (repo / "edit.txt").write_text("unstaged\n")
    (repo / "staged.txt").write_text("staged\n")
    git(repo, "add", "staged.txt")
    (repo / "loose file é.txt").write_text("untracked\n")
    (repo / "debug.log").write_text("ignored\n")

    changes = changed_paths(repo, "HEAD")
    assert changes == [
        Change("edit.txt", "modified"),
        Change("loose file é.txt", "untracked"),
        Change("staged.txt", "added"),
    ]
    assert changed_paths(repo, "HEAD", working_tree=False) == []
    assert Change(".gitignore", "added") in changed_paths(repo, "HEAD~1")


def test_repository_without_commits(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "staged.txt").write_text("s\n")
    git(root, "add", "staged.txt")
    (root / "other.txt").write_text("o\n")

    assert changed_paths(root, "HEAD") == [
        Change("other.txt", "untracked"),
        Change("staged.txt", "added"),
    ]
    assert git_state(root).commit is None
    assert last_commits(root, "HEAD") == {}
    with pytest.raises(GitError, match="no commits yet"):
        changed_paths(root, "main~3")


def test_unknown_revision_and_not_a_repository(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(GitError, match=r"unknown revision 'no-such-branch'"):
        changed_paths(repo, "no-such-branch")
    with pytest.raises(GitError, match="unknown revision"):
        changed_paths(repo, "HEAD", "--output=x")
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(GitError, match="not a git repository"):
        changed_paths(plain, "HEAD")
    assert revision_exists(repo, "HEAD")
    assert not revision_exists(repo, "HEAD~5")


def test_shallow_clone_says_how_to_fetch_history(repo: Path, tmp_path: Path) -> None:
    first = git(repo, "rev-parse", "HEAD").strip()
    (repo / "edit.txt").write_text("two\n")
    _commit(repo, "second")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(clone))

    with pytest.raises(GitError, match="shallow clone") as caught:
        changed_paths(clone, first)
    assert "fetch-depth: 0" in str(caught.value)
    with pytest.raises(GitError, match="shallow clone"):
        changed_paths(clone, "HEAD~1")
    assert changed_paths(clone, "HEAD") == []


def test_worktree(repo: Path, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(tree))
    (tree / "edit.txt").write_text("in the worktree\n")
    _commit(tree, "feature work")
    (tree / "scratch.txt").write_text("untracked\n")

    assert changed_paths(tree, "main") == [
        Change("edit.txt", "modified"),
        Change("scratch.txt", "untracked"),
    ]
    assert changed_paths(repo, "feature", working_tree=True) == [Change("edit.txt", "modified")]


def test_last_commit_touching(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "edit.txt").write_text("two\n")
    first = _commit(repo, "edit once")
    (repo / "keep.txt").write_text("other\n")
    _commit(repo, "other file")
    (repo / "edit.txt").write_text("three\n")
    (repo / "gone.txt").unlink()
    git(repo, "mv", "ünï côde/dàta file.json", "ünï côde/rénamed.json")
    last = _commit(repo, "edit twice")

    assert last_commit_touching(repo, "edit.txt", base) == last
    assert last_commit_touching(repo, "edit.txt", "HEAD~1") == last
    assert last_commit_touching(repo, "edit.txt", first) == last
    assert last_commit_touching(repo, "keep.txt", "HEAD~1") is None
    assert last_commit_touching(repo, "gone.txt", base) == last
    assert last_commits(repo, base)["ünï côde/dàta file.json"] == last
    assert last_commits(repo, base)["ünï côde/rénamed.json"] == last


def test_rebase_drops_the_old_commit_from_history(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "topic")
    (repo / "edit.txt").write_text("topic\n")
    old = _commit(repo, "topic work")
    git(repo, "checkout", "-q", "main")
    (repo / "keep.txt").write_text("main moved on\n")
    _commit(repo, "main work")
    git(repo, "checkout", "-q", "topic")
    git(repo, "rebase", "-q", "main")

    assert revision_exists(repo, old)
    assert not is_ancestor(repo, old)
    assert is_ancestor(repo, "main")
    commits, notes = commits_since(repo, [("edit.txt", old)])
    assert commits == {}
    assert len(notes) == 1 and old[:7] in notes[0] and "rebased" in notes[0]
    fresh, quiet = commits_since(repo, [("keep.txt", "main~1")])
    assert quiet == [] and fresh == {"keep.txt": git(repo, "rev-parse", "main").strip()}


def test_commits_since_outside_git_is_hash_only(tmp_path: Path) -> None:
    commits, notes = commits_since(tmp_path, [("a.txt", "abc1234")])
    assert commits == {}
    assert notes == ["not a git repository: changes are found by file hashes alone"]


def test_hash_cache_skips_unchanged_files_and_rehashes_racy_ones(tmp_path: Path) -> None:
    root = tmp_path / "files"
    _write(root, {"a.txt": "alpha\n", "dir/b é.txt": "beta\n"})
    old = time.time_ns() - 10 * RACY_NS
    os.utime(root / "a.txt", ns=(old, old))
    workspace = Workspace.at(root)
    real = hashlib.sha256(b"alpha\n").hexdigest()

    with Store.open(tmp_path / "store.db") as store:
        first = workspace.hashes(["a.txt", "dir/b é.txt", "missing.txt"], cache=store)
        assert first == {
            "a.txt": real,
            "dir/b é.txt": hashlib.sha256(b"beta\n").hexdigest(),
            "missing.txt": None,
        }
        entry = store.cache_get("a.txt")
        assert entry is not None
        assert (entry.sha256, entry.size, entry.mtime_ns) == (real, 6, old)

        # a record whose stat matches and that is clearly newer than the file is trusted
        changed_ns = (root / "a.txt").stat().st_ctime_ns  # utime set the mtime back, not this
        store.cache_put(entry._replace(sha256="0" * 64, recorded_ns=changed_ns + 2 * RACY_NS))
        assert workspace.hashes(["a.txt"], cache=store)["a.txt"] == "0" * 64
        # racily clean: recorded too soon after the mtime, so the file is read again
        store.cache_put(entry._replace(sha256="0" * 64, recorded_ns=old + RACY_NS // 2))
        assert workspace.hashes(["a.txt"], cache=store)["a.txt"] == real
        assert store.cache_get("a.txt") != entry  # and the fresh record replaces it
        # an old mtime (set back) but a change within the window: the ctime tells, read again
        fresh = store.cache_get("a.txt")
        assert fresh is not None and fresh.mtime_ns == old
        store.cache_put(fresh._replace(sha256="0" * 64, recorded_ns=changed_ns + RACY_NS // 2))
        assert workspace.hashes(["a.txt"], cache=store)["a.txt"] == real

        (root / "a.txt").write_text("alpha, longer\n")
        changed = workspace.hashes(["a.txt"], cache=store)["a.txt"]
        assert changed == hashlib.sha256(b"alpha, longer\n").hexdigest()
        assert workspace.hashes(["a.txt"]) == {"a.txt": changed}


def test_submodule(repo: Path, tmp_path: Path) -> None:
    library = _repo(tmp_path / "library", {"lib.py": "x = 1\n"})
    git(
        repo,
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        f"file://{library}",
        "vendor/lib",
    )
    _commit(repo, "add the submodule")
    sub = repo / "vendor/lib"
    (sub / "lib.py").write_text("x = 2\n")
    (sub / "new file ü.py").write_text("y = 1\n")

    assert changed_paths(sub, "HEAD") == [
        Change("lib.py", "modified"),
        Change("new file ü.py", "untracked"),
    ]
    assert git_state(sub).dirty


def test_file_at_reads_a_file_as_it_was(repo: Path, tmp_path: Path) -> None:
    first = git(repo, "rev-parse", "HEAD").strip()
    (repo / "edit.txt").write_text("two\n")
    _write(repo, {"dir/new é.txt": "new\n"})
    _commit(repo, "edit and add")
    assert file_at(repo, first, "edit.txt") == b"one\n"
    assert file_at(repo, "HEAD", "edit.txt") == b"two\n"
    assert file_at(repo, "HEAD", "dir/new é.txt") == b"new\n"
    assert file_at(repo, first, "dir/new é.txt") is None
    with pytest.raises(GitError, match="unknown revision 'nope'"):
        file_at(repo, "nope", "edit.txt")
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    assert file_at(empty, "HEAD", "edit.txt") is None
