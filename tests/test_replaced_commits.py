"""``git replace`` shows other content under a commit's id: the commit cache and ``impact``'s
kept answers, keyed by commit ids, must not answer what the id showed before. A repository
with a replace ref (or grafts, or a shallow history) reads its commits from git each time, and
every answer is the one git gives now (real repositories, real ``git replace``, the real
``plangraph`` command)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import Result, plangraph
from conftest import git

from pytest_plangraph.vcs.commitcache import CommitCache
from pytest_plangraph.vcs.history import last_commits
from pytest_plangraph.vcs.run import open_repo, rewritable

CACHE = Path(".plangraph/cache")


def _two_commits(root: Path) -> tuple[str, str, str]:
    """The base, then a commit editing ``out/t1.txt`` and one editing ``out/t2.txt``."""
    base = git(root, "rev-parse", "HEAD").strip()
    shas = []
    for name in ("t1", "t2"):
        target = root / f"out/{name}.txt"
        target.write_text(f"{target.read_text()}edited\n")
        git(root, "commit", "-q", "-am", f"edit {name}")
        shas.append(git(root, "rev-parse", "HEAD").strip())
    return base, shas[0], shas[1]


def _replace_first(root: Path, base: str, first: str, second: str) -> None:
    """Show *first* as a commit with *second*'s tree: it then changes both files, and
    *second* changes none."""
    tree = git(root, "rev-parse", f"{second}^{{tree}}").strip()
    other = git(root, "commit-tree", tree, "-p", base, "-m", "both at once").strip()
    git(root, "replace", first, other)


def test_the_commit_cache_answers_what_git_shows_under_a_replace_ref(
    project: Callable[[str], Path], tmp_path: Path
) -> None:
    root = project("seed-000")
    base, first, second = _two_commits(root)
    cache = CommitCache(tmp_path / "commits.json", b"k" * 32)
    before = last_commits(root, base, cache=cache)
    assert before == {"out/t1.txt": first, "out/t2.txt": second}
    assert set(cache.load()) == {first, second}  # warm

    _replace_first(root, base, first, second)
    now = last_commits(root, base)
    assert now == {"out/t1.txt": first, "out/t2.txt": first}  # what git shows now
    assert last_commits(root, base, cache=cache) == now
    assert last_commits(root, base, ["out/t2.txt"], cache=cache) == {"out/t2.txt": first}

    git(root, "replace", "-d", first)  # gone again: the kept paths hold again
    assert last_commits(root, base, cache=cache) == before


def test_a_packed_replace_ref_is_seen(project: Callable[[str], Path]) -> None:
    root = project("seed-000")
    base, first, second = _two_commits(root)
    with open_repo(root) as repo:
        assert not rewritable(repo)
        _replace_first(root, base, first, second)
        assert rewritable(repo)
        git(root, "pack-refs", "--all")
        assert not [p for p in (root / ".git/refs/replace").rglob("*") if p.is_file()]
        assert rewritable(repo)  # read from packed-refs
        git(root, "replace", "-d", first)
        assert not rewritable(repo)


def _impact(root: Path, *args: str) -> Result:
    result = plangraph(root, "impact", *args)
    assert result.code == 0, result.err
    assert "Traceback" not in result.err
    return result


def _fresh(root: Path, *args: str) -> Result:
    """The answer with every cache deleted."""
    shutil.rmtree(root / CACHE, ignore_errors=True)
    return _impact(root, *args)


@pytest.mark.parametrize("since", [True, False], ids=["since", "working-tree"])
def test_impact_answers_what_git_shows_under_a_replace_ref(
    project: Callable[[str], Path], since: bool
) -> None:
    root = project("seed-000")
    assert plangraph(root, "verify").code == 0  # a store: the caches are kept
    base, first, second = _two_commits(root)
    args = ("--since", base) if since else ()
    kept = _impact(root, *args)
    assert _impact(root, *args) == kept  # the kept answer, with the commit cache warm
    assert f"out/t2.txt (commit {second[:7]})" in kept.out

    _replace_first(root, base, first, second)
    replaced = _impact(root, *args)
    assert f"out/t2.txt (commit {first[:7]})" in replaced.out
    assert _impact(root, *args) == replaced
    assert _fresh(root, *args) == replaced

    git(root, "replace", "-d", first)
    assert _impact(root, *args) == kept
