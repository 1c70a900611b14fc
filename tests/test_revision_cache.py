"""Both ends of ``impact --since REV`` named from the revision cache (``vcs/revcache.py``) and
the refs read from their files (``vcs/refs.py``): on every form of ref (branches, tags light
and annotated, remote-tracking and symbolic refs, a tag and a branch of one name, packed refs,
a linked working tree, refs moved), cold and warm, the commits are those git names without
the cache; a warm call starts no git process to name them; a damaged file is a miss; replace
refs bypass it; and on every fixture ``impact --since`` answers the same with and without it."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from cache_helpers import as_tester, fixture_projects
from cli_helpers import plangraph_main
from conftest import git
from impact_kept_helpers import edit_history, fresh_impact, run_impact
from repo_helpers import logging_git

from pytest_plangraph.vcs.history import diff_since
from pytest_plangraph.vcs.revcache import LIMIT, RevisionCache

KEY = b"k" * 32


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


def _refs(root: Path) -> list[str]:
    """Refs of every form, made in *root* (history of 8 commits); the revisions to ask."""
    git(root, "branch", "side", "HEAD~3")
    git(root, "tag", "light", "HEAD~2")
    git(root, "tag", "-a", "-m", "annotated", "marked", "HEAD~4")
    git(root, "update-ref", "refs/remotes/origin/main", "HEAD~1")
    git(root, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
    git(root, "branch", "twice", "HEAD~5")
    git(root, "tag", "twice", "HEAD~6")  # refs/tags/twice comes first
    return [
        "HEAD",
        "HEAD~5",
        "HEAD^",
        "HEAD~2^",
        "main~3",
        "side",
        "side~1",
        "light",
        "marked",
        "marked~1",
        "origin/main",
        "origin",
        "origin~1",
        "refs/heads/side",
        "twice",
        "twice~1",
        "heads/side",
    ]


def _named(root: Path, rev: str, cache: RevisionCache | None) -> tuple[str, str | None]:
    diff = diff_since(root, rev, cache)
    return diff.base, diff.head


def _same_with_and_without(root: Path, revs: list[str], cache: RevisionCache) -> None:
    for rev in revs:
        plain = _named(root, rev, None)
        assert plain[0] == git(root, "rev-parse", f"{rev}^{{commit}}").strip()
        assert _named(root, rev, cache) == plain, rev  # cold, or warm from before
        assert _named(root, rev, cache) == plain, rev  # warm


def test_every_form_of_ref_is_named_as_git_names_it(
    project: Callable[[str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project("seed-000")
    edit_history(root, 8)
    revs = _refs(root)
    cache = RevisionCache(tmp_path / "revisions.json", KEY)
    _same_with_and_without(root, revs, cache)
    kept = cache.load()
    assert {entry.partition("\0")[0] for entry in kept} == set(revs)

    env, log = logging_git(tmp_path)
    monkeypatch.setenv("PATH", env["PATH"])
    for rev in revs:
        _named(root, rev, cache)
    assert "cat-file" not in log.read_text()  # warm: both ends named from the files

    git(root, "pack-refs", "--all")  # the same refs, from packed-refs
    _same_with_and_without(root, revs, cache)
    # refs moved: a new commit, a tag moved, a branch reset, a tag shadowing a branch
    edit_history(root, 2)
    git(root, "tag", "-f", "light", "HEAD~7")
    git(root, "branch", "-f", "side", "HEAD~1")
    git(root, "tag", "origin/main", "HEAD~9")  # refs/tags/origin/main comes first now
    _same_with_and_without(root, revs, cache)
    git(root, "tag", "-d", "origin/main")
    git(root, "update-ref", "-d", "refs/tags/twice")  # loose gone, packed left
    _same_with_and_without(root, revs, cache)


def test_a_linked_working_tree_names_its_own_head(
    project: Callable[[str], Path], tmp_path: Path
) -> None:
    root = project("seed-000")
    edit_history(root, 5)
    other = tmp_path / "other"
    git(root, "worktree", "add", "-q", "-b", "elsewhere", str(other), "HEAD~2")
    cache = RevisionCache(tmp_path / "revisions.json", KEY)
    _same_with_and_without(root, ["HEAD~1", "elsewhere"], cache)
    _same_with_and_without(other, ["HEAD~1", "main~1", "HEAD"], cache)
    assert _named(other, "HEAD~1", cache) != _named(root, "HEAD~1", cache)


def test_a_damaged_cache_is_a_miss(project: Callable[[str], Path], tmp_path: Path) -> None:
    root = project("seed-000")
    edit_history(root, 4)
    cache = RevisionCache(tmp_path / "revisions.json", KEY)
    right = _named(root, "HEAD~3", cache)
    assert cache.load()
    raw = cache.path.read_bytes()
    tag, _, body = raw.partition(b"\n")
    data = json.loads(body)
    wrong = git(root, "rev-parse", "HEAD~1").strip()
    data["revisions"] = {k: wrong for k in data["revisions"]}  # other commits, the old tag
    cache.path.write_bytes(tag + b"\n" + json.dumps(data).encode())
    assert cache.load() == {}
    assert _named(root, "HEAD~3", cache) == right
    # right tag, an entry that is not one; another key; no JSON; a FIFO; a folder
    bad = {"version": 1, "revisions": {"HEAD~3\0nothex": wrong}}
    body = json.dumps(bad, separators=(",", ":")).encode()
    cache.path.write_bytes(cache._tag(body).encode() + b"\n" + body)
    assert cache.load() == {}
    assert _named(root, "HEAD~3", cache) == right
    assert RevisionCache(cache.path, b"x" * 32).load() == {}
    cache.path.write_bytes(b"\xff\x00 not json")
    assert _named(root, "HEAD~3", cache) == right
    cache.path.unlink()
    os.mkfifo(cache.path)
    assert cache.load() == {}
    assert _named(root, "HEAD~3", cache) == right
    cache.path.unlink()
    cache.path.mkdir()
    assert _named(root, "HEAD~3", cache) == right


def test_at_most_the_limit_is_kept(project: Callable[[str], Path], tmp_path: Path) -> None:
    root = project("seed-000")
    edit_history(root, 3)
    cache = RevisionCache(tmp_path / "revisions.json", KEY)
    revs = [f"HEAD{'^0' * i}~1" for i in range(LIMIT + 6)]
    for rev in revs:
        assert _named(root, rev, cache) == _named(root, rev, None)
    kept = cache.load()
    assert len(kept) == LIMIT
    assert f"{revs[-1]}\0" in "".join(kept)  # the newest kept, the oldest dropped
    assert not any(entry.startswith(f"{revs[0]}\0") for entry in kept)


def test_a_replace_ref_bypasses_the_cache(project: Callable[[str], Path], tmp_path: Path) -> None:
    root = project("seed-000")
    edit_history(root, 4)
    cache = RevisionCache(tmp_path / "revisions.json", KEY)
    before = _named(root, "HEAD~2", cache)
    _named(root, "HEAD~2", cache)  # warm
    third = git(root, "rev-parse", "HEAD~3").strip()
    # HEAD~1 shown with HEAD~3 as its parent: HEAD~2 names another commit
    tree = git(root, "rev-parse", "HEAD~1^{tree}").strip()
    other = git(root, "commit-tree", tree, "-p", "HEAD~3", "-m", "skips one").strip()
    git(root, "replace", git(root, "rev-parse", "HEAD~1").strip(), other)
    after = _named(root, "HEAD~2", cache)
    assert after == _named(root, "HEAD~2", None) != before
    assert after[0] == third


def test_every_fixture_answers_the_same_with_and_without_the_cache(tmp_path: Path) -> None:
    for name, root, plan in fixture_projects(tmp_path, lint_plans=3):
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "initial")
        plangraph_main(root, "verify", "--plan", str(plan))
        for output in sorted((root / "out").glob("*"))[:2] if (root / "out").is_dir() else ():
            output.write_text("changed\n")
            git(root, "commit", "-q", "-am", f"change {output.name}")
        cache = root / ".plangraph/cache"
        for since in ("HEAD", "HEAD~1", "main~1"):
            if since != "HEAD" and not (root / "out").is_dir():
                continue
            args = ("--plan", str(plan), "--since", since, "--format", "json")
            cold = run_impact(root, *args)
            warm = run_impact(root, *args)
            if (root / ".plangraph/store.db").exists():  # a project using plangraph
                assert (cache / "revisions.json").is_file(), name
            shutil.rmtree(cache, ignore_errors=True)
            without = run_impact(root, *args)
            assert warm == cold == without, (name, since)


def test_a_warm_working_tree_hit_starts_no_git_process(
    project: Callable[[str], Path], tmp_path: Path
) -> None:
    root = project("seed-000")
    assert plangraph_main(root, "verify").code == 0
    (root / "out/t5.txt").write_text("changed\n")
    env, log = logging_git(tmp_path)

    def calls() -> list[str]:
        lines = log.read_text().splitlines() if log.exists() else []
        log.unlink(missing_ok=True)
        return [line.split()[0] for line in lines]

    for _ in range(3):  # the kept answer, and the checkpoint it may write first
        first = run_impact(root, env=env)
    calls()
    assert run_impact(root, env=env) == first
    assert calls() == []  # HEAD's commit from the ref files and the revision cache
    git(root, "commit", "-q", "-am", "commit the change")  # HEAD moved: git names it
    named = run_impact(root, env=env)
    assert calls()[:1] == ["cat-file"]
    assert "commit " in named.out and named != first
    assert named == fresh_impact(root)
