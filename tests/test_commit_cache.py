"""The commits behind each change named from a cache kept by commit id: a warm
``plangraph impact --since`` reads only the commits it has not seen (git's own invocations
counted through a logging ``git`` on PATH), and the cache never changes an answer."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from cli_helpers import Result, plangraph
from conftest import git
from repo_helpers import logging_git

from pytest_plangraph.vcs.commitcache import CommitCache
from pytest_plangraph.vcs.history import last_commits

CACHE = Path(".plangraph/cache/commits.json")


def _history(root: Path, commits: int) -> None:
    """*commits* commits changing the outputs in turn, and a merge of a side branch."""
    for i in range(commits):
        target = root / f"out/t{i % 12 + 1}.txt"
        target.write_text(f"{target.read_text()}edit {i}\n")
        git(root, "commit", "-q", "-am", f"edit {i}")
    git(root, "checkout", "-q", "-b", "side", "HEAD~3")
    (root / "side.txt").write_text("from the side branch\n")
    git(root, "add", "side.txt")
    git(root, "commit", "-q", "-m", "side edit")
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--no-ff", "-m", "merge side", "side")


def _impact(root: Path, env: dict[str, str], since: str) -> Result:
    result = plangraph(root, "impact", "--since", since, "--format", "json", env=env)
    assert result.code in (0, 1), result.err
    return result


def _named(out: str) -> list[str]:
    """The commits a text report names, in order."""
    return [line.rpartition("(commit ")[2] for line in out.splitlines() if "(commit " in line]


def _forget_kept_answers(root: Path) -> None:
    """Delete the kept answers of ``impact`` (each call then makes its report)."""
    for kept in (root / CACHE.parent).glob("impact-*.json"):
        kept.unlink()


def _calls(log: Path) -> list[str]:
    lines = log.read_text().splitlines() if log.exists() else []
    log.unlink(missing_ok=True)
    return lines


def _range_logs(calls: list[str]) -> list[str]:
    return [c for c in calls if c.startswith("log ") and "--no-walk" not in c]


def test_a_warm_impact_walks_only_commits_it_has_not_seen(
    project: Callable[[str], Path], tmp_path: Path
) -> None:
    root = project("seed-000")
    env, log = logging_git(tmp_path)
    assert plangraph(root, "verify", env=env).code == 0  # the store: the project uses plangraph
    first = git(root, "rev-parse", "HEAD").strip()
    _history(root, 40)
    _calls(log)

    cold = _impact(root, env, first)
    calls = _calls(log)
    assert len(_range_logs(calls)) == 0  # every commit unseen: read by id, once
    [by_id] = [c for c in calls if "--no-walk" in c]
    assert len(by_id.split()) > 40
    assert (root / CACHE).is_file()

    _forget_kept_answers(root)  # the commit cache alone, not the kept answer of the report
    warm = _impact(root, env, first)
    calls = _calls(log)
    assert warm.out == cold.out
    assert [c for c in calls if c.startswith("log ")] == []  # nothing read but the list
    assert sum(c.startswith("rev-list ") for c in calls) == 1

    (root / "out/t7.txt").write_text("one more\n")
    git(root, "commit", "-q", "-am", "one more")
    newest = git(root, "rev-parse", "HEAD").strip()
    after = _impact(root, env, first)
    [one] = [c for c in _calls(log) if c.startswith("log ")]
    assert one.split()[-2:] == ["--no-walk=unsorted", newest]  # only the new commit is read
    assert f'"commit": "{newest[:7]}' in after.out or newest[:7] in after.out

    (root / CACHE).unlink()  # deleting the cache changes no answer
    assert _impact(root, env, first).out == after.out
    assert json.loads(after.out)["changed"]


def test_the_cache_gives_the_answer_git_log_gives(
    project: Callable[[str], Path], tmp_path: Path
) -> None:
    root = project("seed-000")
    _history(root, 25)
    cache = CommitCache(tmp_path / "commits.json", b"k" * 32)
    for since in ("HEAD~25", "HEAD~5", "HEAD~1", "side", "HEAD"):
        plain = last_commits(root, since)
        assert last_commits(root, since, cache=cache) == plain  # cold for part of the range
        assert last_commits(root, since, cache=cache) == plain  # warm
        paths = ["out/t2.txt", "side.txt", "missing.txt"]
        assert last_commits(root, since, paths, cache=cache) == last_commits(root, since, paths)
    side = git(root, "rev-parse", "side").strip()
    assert last_commits(root, "HEAD~25")["side.txt"] == side  # a merge names no paths itself


def test_a_cache_written_by_anything_else_is_a_miss(
    project: Callable[[str], Path], tmp_path: Path
) -> None:
    root = project("seed-000")
    _history(root, 5)
    cache = CommitCache(tmp_path / "commits.json", b"k" * 32)
    right = last_commits(root, "HEAD~5", cache=cache)
    kept = cache.load()
    assert set(kept) == set(git(root, "rev-list", "HEAD~5..HEAD").split())

    # another commit's paths swapped in, with the tag left as it was: not believed
    raw = cache.path.read_bytes()
    tag, _, body = raw.partition(b"\n")
    data = json.loads(body)
    shas = sorted(data["commits"])
    data["commits"][shas[0]], data["commits"][shas[1]] = [], ["out/t1.txt", "elsewhere.txt"]
    cache.path.write_bytes(tag + b"\n" + json.dumps(data).encode())
    assert cache.load() == {}
    assert last_commits(root, "HEAD~5", cache=cache) == right
    # a cache tagged with another key, and a file that is no cache at all
    assert CommitCache(cache.path, b"x" * 32).load() == {}
    cache.path.write_bytes(b"\xff\x00 not json")
    assert cache.load() == {}
    assert last_commits(root, "HEAD~5", cache=cache) == right
    assert cache.load() == kept


def test_a_preview_without_a_store_or_with_keys_writes_no_cache(
    project: Callable[[str], Path], tmp_path: Path
) -> None:
    root = project("seed-000")
    _history(root, 3)
    preview = plangraph(root, "impact", "--since", "HEAD~3")
    assert preview.code == 0, preview.err
    assert "(commit " in preview.out
    assert not (root / ".plangraph").exists()
    assert plangraph(root, "verify").code == 0
    keyed = {"PLANGRAPH_SIGNING_KEY": "a shared secret"}
    keyed_run = plangraph(root, "impact", "--since", "HEAD~3", env=keyed)
    assert keyed_run.code == 0, keyed_run.err
    assert "(commit " in keyed_run.out
    assert not (root / CACHE).exists()
    unkeyed = plangraph(root, "impact", "--since", "HEAD~3").out
    assert _named(unkeyed) == _named(keyed_run.out) == _named(preview.out)
    assert (root / CACHE).is_file()


def test_a_shallow_clone_keeps_no_commits_that_change_when_history_is_fetched(
    project: Callable[[str], Path], tmp_path: Path
) -> None:
    origin = project("seed-000")
    _history(origin, 8)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "3", f"file://{origin}", str(clone))
    cache = CommitCache(tmp_path / "commits.json", b"k" * 32)
    shallow = last_commits(clone, "HEAD~2", cache=cache)
    assert shallow == last_commits(clone, "HEAD~2")
    assert not cache.path.exists()  # the boundary commit's paths are not its own for good
    git(clone, "fetch", "-q", "--unshallow")
    assert last_commits(clone, "HEAD~5", cache=cache) == last_commits(clone, "HEAD~5")
    assert cache.path.exists()


def test_a_fifo_in_place_of_the_cache_is_a_miss_not_a_wait(
    project: Callable[[str], Path], tmp_path: Path
) -> None:
    root = project("seed-000")
    _history(root, 3)
    path = tmp_path / "commits.json"
    os.mkfifo(path)
    cache = CommitCache(path, b"k" * 32)
    assert cache.load() == {}
    assert last_commits(root, "HEAD~3", cache=cache) == last_commits(root, "HEAD~3")
