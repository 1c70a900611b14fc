"""How ``impact --since`` asks git: plain ``git`` processes (no GitPython on that path), as few
as answer the question — four when the commit cache is warm and the refs have moved (both ends
named by one ``cat-file --batch-check``, the diff, the untracked files, the commits of the
range), three when the revision cache names both ends, two when the answer kept for the same
diff stands too — counted through a logging ``git`` on PATH; and the answers are those of the
separate questions."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import plangraph
from conftest import git
from repo_helpers import logging_git

from pytest_plangraph.errors import GitError
from pytest_plangraph.vcs.commitcache import CommitCache
from pytest_plangraph.vcs.history import (
    changed_paths,
    changes_since,
    file_at,
    is_ancestor,
    last_commits,
)
from pytest_plangraph.vcs.run import EMPTY_TREE, Repo, _common_dir


def _calls(log: Path) -> list[str]:
    """The git commands logged since the last call (their first word), the log emptied."""
    lines = log.read_text().splitlines() if log.exists() else []
    log.unlink(missing_ok=True)
    return [line.split()[0] for line in lines]


def _history(root: Path, commits: int) -> None:
    for i in range(commits):
        target = root / f"out/t{i % 12 + 1}.txt"
        target.write_text(f"{target.read_text()}edit {i}\n")
        git(root, "commit", "-q", "-am", f"edit {i}")


def test_a_warm_impact_since_runs_three_git_processes(
    project: Callable[[str], Path], tmp_path: Path
) -> None:
    root = project("seed-000")
    env, log = logging_git(tmp_path)
    assert plangraph(root, "verify").code == 0  # a store: the commit cache is kept
    _history(root, 30)
    (root / "new.txt").write_text("untracked\n")
    cold = plangraph(root, "impact", "--since", "HEAD~30", "--format", "json", env=env)
    assert cold.code == 0, cold.err
    assert _calls(log) == ["cat-file", "diff", "ls-files", "rev-list", "log"]  # log: by id

    kept = plangraph(root, "impact", "--since", "HEAD~30", "--format", "json", env=env)
    assert kept.out == cold.out
    assert _calls(log) == ["diff", "ls-files"]  # the kept answer stands, the ends kept
    (root / ".plangraph/cache/impact-since-json.json").unlink()
    warm = plangraph(root, "impact", "--since", "HEAD~30", "--format", "json", env=env)
    assert warm.out == cold.out
    assert _calls(log) == ["diff", "ls-files", "rev-list"]
    bare = plangraph(root, "impact", "--since", "HEAD~30", "--no-commits", env=env)
    assert bare.code == 0, bare.err
    assert _calls(log) == ["diff", "ls-files"]
    (root / ".plangraph/cache/revisions.json").unlink()  # both ends named by git again
    again = plangraph(root, "impact", "--since", "HEAD~30", "--format", "json", env=env)
    assert again.out == cold.out
    assert _calls(log)[:3] == ["cat-file", "diff", "ls-files"]

    # a plan edit in the range (HEAD moved: both ends named by git), the plan at the start
    # is one more process
    plan = root / "plangraph.yaml"
    plan.write_text(plan.read_text().replace("title:", "title: edited", 1))
    git(root, "commit", "-q", "-am", "edit the plan")
    edited = plangraph(root, "impact", "--since", "HEAD~31", "--format", "json", env=env)
    assert edited.code == 0, edited.err
    assert _calls(log) == ["cat-file", "diff", "ls-files", "rev-list", "log", "cat-file"]
    assert '"path": "plangraph.yaml"' in edited.out


def test_one_read_gives_what_the_separate_questions_give(
    project: Callable[[str], Path], tmp_path: Path
) -> None:
    root = project("seed-000")
    _history(root, 6)
    git(root, "checkout", "-q", "-b", "side", "HEAD~2")
    (root / "side.txt").write_text("side\n")
    git(root, "add", "side.txt")
    git(root, "commit", "-q", "-m", "side")
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--no-ff", "-m", "merge", "side")
    (root / "out/t3.txt").write_text("in the working tree\n")
    (root / "loose.txt").write_text("untracked\n")
    cache = CommitCache(tmp_path / "commits.json", b"k" * 32)
    for since in ("HEAD~6", "HEAD~1", "side", "HEAD", EMPTY_TREE, "main~2"):
        changes = changed_paths(root, since)
        named = last_commits(root, since, [c.path for c in changes])
        assert changes_since(root, since, commits=False) == (changes, {})
        assert changes_since(root, since, cache=cache) == (changes, named)  # cold, then warm
        assert changes_since(root, since, cache=cache) == (changes, named)
    for bad in ("no-such-branch", "--output=x", "HEAD~40", "a\nb"):
        with pytest.raises(GitError) as separate:
            changed_paths(root, bad)
        with pytest.raises(GitError) as together:
            changes_since(root, bad)
        assert str(together.value) == str(separate.value)


def test_unborn_head_and_files_at_a_revision(
    project: Callable[[str], Path], tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q", "-b", "main")
    (empty / "a.txt").write_text("a\n")
    changes, named = changes_since(empty, "HEAD")
    assert [(c.path, c.change) for c in changes] == [("a.txt", "untracked")]
    assert named == {}
    assert file_at(empty, "HEAD", "a.txt") is None

    root = project("seed-000")
    first = git(root, "rev-parse", "HEAD").strip()
    before = (root / "out/t1.txt").read_bytes()
    _history(root, 2)
    assert file_at(root, first, "out/t1.txt") == before != (root / "out/t1.txt").read_bytes()
    assert file_at(root, "HEAD~2", "no/such.txt") is None
    with pytest.raises(GitError, match="is a tree, not a file"):
        file_at(root, "HEAD", "out")
    with pytest.raises(GitError, match="unknown revision"):
        file_at(root, "nowhere", "out/t1.txt")
    assert is_ancestor(root, first)
    assert not is_ancestor(root, "HEAD", first)
    assert not is_ancestor(root, "no-such-commit")
    assert not is_ancestor(root, "--help")


def test_a_linked_working_tree_keeps_the_commit_cache(
    project: Callable[[str], Path], tmp_path: Path
) -> None:
    root = project("seed-000")
    _history(root, 3)
    linked = tmp_path / "linked"
    git(root, "worktree", "add", "-q", str(linked), "HEAD")
    shared = Path(git(linked, "rev-parse", "--git-common-dir").strip())
    assert Path(Repo(str(linked)).common_dir).resolve() == (linked / shared).resolve()
    assert Path(Repo(str(root)).common_dir).resolve() == (root / ".git").resolve()
    cache = CommitCache(tmp_path / "commits.json", b"k" * 32)
    assert last_commits(linked, "HEAD~3", cache=cache) == last_commits(root, "HEAD~3")
    assert cache.path.is_file()  # not taken for a shallow clone: the cache was kept


def test_a_git_file_that_is_no_file_is_not_read(tmp_path: Path) -> None:
    """The common git directory is read from ``.git`` only when it is a folder or a regular
    file: a FIFO in its place would block the read, and git is asked instead."""
    fifo = tmp_path / "fifo"
    fifo.mkdir()
    os.mkfifo(fifo / ".git")
    assert _common_dir(fifo) is None
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / ".git").write_text("not a gitdir line\n")
    assert _common_dir(odd) is None
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / ".git").write_text("gitdir: ../elsewhere/.git\n")
    assert _common_dir(linked) == linked / "../elsewhere/.git"
