"""The cache of a large plan's facts (digest, criterion digests): used only for the same
bytes and the same package version, recomputed whenever it cannot be trusted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import git

from pytest_plangraph import __version__
from pytest_plangraph.plan.cache import KEEP, cache_dir_of, code_version, keyed, prune, read_keyed
from pytest_plangraph.plan.file import cache_key, load_plan
from pytest_plangraph.plan.model import Plan, plan_criterion_digests, plan_digest, runtime_plan


def _write_plan(path: Path, minimum: int = 3, count: int = 700) -> None:
    nodes = "".join(
        f"  - id: n{i}\n    title: {'x' * 40}\n    acceptance:\n"
        f"      - id: ac\n        assertion: at least {minimum}\n"
        f"        verifier: {{type: artifact, path: out/n{i}.txt, min_bytes: {minimum}}}\n"
        for i in range(count)
    )
    path.write_text(f"plangraph: 1\nplan: big\nnodes:\n{nodes}", encoding="utf-8")


def _fresh(plan: Plan) -> tuple[str, dict[tuple[str, str], str]]:
    """The facts computed from scratch, on a copy that has nothing cached."""
    copy = runtime_plan(plan.to_json(by_alias=True))
    return plan_digest(copy), plan_criterion_digests(copy)


WRONG = {
    "version": code_version(),
    "plan": "big",
    "digest": "0" * 64,
    "criteria": [[f"n{i}", "ac", "0" * 64] for i in range(700)],
}
"""Facts that would be taken if the check let them through."""


def _facts(cache: Path) -> Path:
    [facts] = cache.glob("facts-*.json")
    return facts


def _kept(path: Path) -> Any:
    """The facts kept in the file at *path*, read under its key."""
    return json.loads(read_keyed(path, path.stem.removeprefix("facts-")))


def test_facts_are_kept_and_given_to_the_next_load(tmp_path: Path) -> None:
    plan_file, cache = tmp_path / "plan.yaml", tmp_path / "cache"
    _write_plan(plan_file)
    first = load_plan(plan_file, cache_dir=cache).plan
    kept = _kept(_facts(cache))
    assert kept["version"] == code_version() and kept["digest"] == first.digest
    assert kept["version"].startswith(f"{__version__}+")
    assert len(kept["criteria"]) == 700
    second = load_plan(plan_file, cache_dir=cache).plan
    # given from the cache, before anything computed them
    assert second.__dict__["digest"] == first.digest
    assert (second.digest, second.criterion_digests) == _fresh(second)


def test_a_plan_read_from_the_cache_needs_no_yaml_parser(tmp_path: Path) -> None:
    """PyYAML is imported only when a plan's YAML is parsed: a process that reads a large plan
    kept in the cache does not import it (a fresh process, as a command is)."""
    plan_file, cache = tmp_path / "plan.yaml", tmp_path / "cache"
    _write_plan(plan_file)
    probe = (
        "import sys\n"
        "from pathlib import Path\n"
        "from pytest_plangraph.plan.file import load_plan\n"
        f"plan = load_plan(Path({str(plan_file)!r}), cache_dir=Path({str(cache)!r})).plan\n"
        "print(len(plan.nodes), 'yaml' in sys.modules)\n"
    )

    def loads() -> str:
        done = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    assert loads() == "700 True"  # parsed, then kept
    assert loads() == "700 False"  # read from the cache
    plan_file.write_text(plan_file.read_text(encoding="utf-8") + "title: edited\n")
    assert loads() == "700 True"  # new bytes: parsed again


def test_an_edited_plan_gets_its_own_facts(tmp_path: Path) -> None:
    plan_file, cache = tmp_path / "plan.yaml", tmp_path / "cache"
    _write_plan(plan_file)
    before = load_plan(plan_file, cache_dir=cache).plan
    _write_plan(plan_file, minimum=4)
    after = load_plan(plan_file, cache_dir=cache).plan
    assert (after.digest, after.criterion_digests) == _fresh(after)
    assert after.criterion_digests[("n1", "ac")] != before.criterion_digests[("n1", "ac")]
    assert len(list(cache.glob("facts-*.json"))) == 2


@pytest.mark.parametrize(
    "damage",
    [
        lambda facts: facts.write_text("{not json"),
        lambda facts: facts.write_text(json.dumps({"version": code_version()})),
        lambda facts: facts.write_text(json.dumps({**WRONG, "version": "0.0.0-other"})),
        lambda facts: facts.write_text(json.dumps({**WRONG, "version": __version__})),
        lambda facts: facts.write_text(json.dumps({**WRONG, "plan": "another-plan"})),
    ],
    ids=["unreadable", "incomplete", "another-version", "other-code", "another-plan"],
)
def test_untrusted_facts_are_recomputed_and_rewritten(tmp_path: Path, damage) -> None:
    plan_file, cache = tmp_path / "plan.yaml", tmp_path / "cache"
    _write_plan(plan_file)
    load_plan(plan_file, cache_dir=cache)
    damage(_facts(cache))
    plan = load_plan(plan_file, cache_dir=cache).plan
    assert (plan.digest, plan.criterion_digests) == _fresh(plan)
    assert _kept(_facts(cache))["version"] == code_version()


def test_a_kept_order_that_misses_nodes_is_recomputed(tmp_path: Path) -> None:
    # lint trusts the order as the proof that the plan has no cycle: it must hold every node
    plan_file, cache = tmp_path / "plan.yaml", tmp_path / "cache"
    _write_plan(plan_file)
    load_plan(plan_file, cache_dir=cache)
    facts = _kept(_facts(cache))
    key = _facts(cache).stem.removeprefix("facts-")
    _facts(cache).write_bytes(keyed(key, json.dumps({**facts, "order": ["n0"]}).encode()))
    plan = load_plan(plan_file, cache_dir=cache).plan
    assert plan.topological_order == tuple(f"n{i}" for i in range(700))
    assert len(_kept(_facts(cache))["order"]) == 700


def test_small_plans_keep_only_their_validated_form(tmp_path: Path) -> None:
    plan_file, cache = tmp_path / "plan.yaml", tmp_path / "cache"
    plan_file.write_text("plangraph: 1\nplan: small\nnodes:\n  - id: a\n")
    load_plan(plan_file, cache_dir=cache)
    assert not cache.exists()  # a project that keeps nothing yet: reading makes no folder
    cache.mkdir()
    first = load_plan(plan_file, cache_dir=cache)
    key = cache_key(plan_file.read_bytes())
    assert {p.name for p in cache.iterdir()} == {f"valid-{key}.json", ".gitignore"}
    again = load_plan(plan_file, cache_dir=cache)
    assert again.plan == first.plan and again.plan.digest == first.plan.digest
    assert again.cache_key is None  # parsed data, facts and lint are kept for large plans


def test_the_cache_keeps_the_plans_written_last(tmp_path: Path) -> None:
    plan_file, cache = tmp_path / "plan.yaml", tmp_path / "cache"
    keys = []
    for minimum in range(KEEP + 3):  # a plan edited again and again
        _write_plan(plan_file, minimum, count=110)  # just over the size that is cached
        loaded = load_plan(plan_file, cache_dir=cache)
        # the validated form and the parsed data under the file's bytes, the facts, the
        # validated form again and the canonical text under its content
        assert loaded.cache_key == cache_key(plan_file.read_bytes())
        keys.append((loaded.cache_key, loaded.content_key))
        kinds = (("valid", 0), ("plan", 0), ("facts", 1), ("valid", 1), ("canon", 1))
        for kind, which in kinds:  # oldest first
            os.utime(cache / f"{kind}-{keys[-1][which]}.json", ns=((minimum + 1) * 10**9,) * 2)
    assert {p.name for p in cache.iterdir()} == {
        f"{kind}-{pair[which]}.json" for pair in keys[-KEEP // 2 :] for kind, which in kinds
    } | {
        ".gitignore",
        "blocks.txt",
        "blockitems.txt",
        "items.txt",
        "titles.txt",
        "itemfacts.txt",
    } | {"lastread.txt"}
    assert load_plan(plan_file, cache_dir=cache).plan.plan == "big"  # the last still hits


def test_the_facts_of_json_plans_are_pruned_too(tmp_path: Path) -> None:
    plan_file, cache = tmp_path / "plan.json", tmp_path / "cache"
    for n in range(KEEP + 2):
        nodes = [{"id": f"n{i}", "title": "x" * 200} for i in range(80 + n)]
        plan_file.write_text(json.dumps({"plangraph": 1, "plan": "big", "nodes": nodes}))
        load_plan(plan_file, cache_dir=cache)
    # each plan file's entries are under two keys: its bytes (valid-) and its content (facts-,
    # valid- again)
    assert len(list(cache.glob("facts-*.json"))) == KEEP // 2
    assert len(list(cache.glob("valid-*.json"))) == KEEP
    assert not list(cache.glob("plan-*.json"))  # JSON is not worth a parse cache


def _entry(cache: Path, n: int, kind: str = "plan", suffix: str = "json") -> Path:
    path = cache / f"{kind}-{n:064x}.{suffix}"
    path.write_text("{}")
    return path


def test_prune_touches_only_its_own_entries_and_old_leftovers(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    hour_ago = time.time() - 3600
    old, young = _entry(cache, 1, suffix="123.tmp"), _entry(cache, 2, suffix="456.tmp")
    os.utime(old, (hour_ago, hour_ago))
    checkpoint, left = cache / "log-store.db.json", cache / "log-store.db.json.77.tmp"
    for path in (checkpoint, left):
        path.write_text("{}")
        os.utime(path, (hour_ago, hour_ago))
    foreign = [cache / "plan-2023.json", cache / "facts-notes.json", cache / "build.tmp"]
    for path in foreign:
        path.write_text("theirs")
        os.utime(path, (hour_ago, hour_ago))
    (cache / f"plan-{3:064x}.9.tmp").symlink_to(tmp_path / "gone")  # dangling: skipped
    entries = [_entry(cache, 10 + n) for n in range(KEEP + 2)]
    for n, path in enumerate(entries):
        os.utime(path, (hour_ago + n, hour_ago + n))
    prune(cache, f"{10:064x}")
    assert not old.exists() and young.exists()
    assert not left.exists() and checkpoint.exists()  # a checkpoint is not a plan's entry
    assert all(path.exists() for path in foreign)
    # the current entry stays even though it is the oldest; then the newest KEEP - 1
    assert [p.exists() for p in entries] == [True, False, False] + [True] * (KEEP - 1)


def test_the_entry_just_written_stays_whatever_the_clocks_say(tmp_path: Path) -> None:
    plan_file, cache = tmp_path / "plan.yaml", tmp_path / "cache"
    cache.mkdir()
    future = time.time() + 86400
    for n in range(KEEP):  # copied from a machine whose clock runs ahead
        for kind in ("plan", "facts"):
            os.utime(_entry(cache, n, kind), (future, future))
    _write_plan(plan_file, count=110)
    loaded = load_plan(plan_file, cache_dir=cache)
    key, content = cache_key(plan_file.read_bytes()), loaded.content_key
    assert (cache / f"plan-{key}.json").exists() and (cache / f"facts-{content}.json").exists()
    # the file's key and its content key are two of the KEEP kept
    assert len(list(cache.glob("plan-*.json"))) == KEEP - 1


def test_a_store_outside_plangraph_gets_a_cache_of_its_own(tmp_path: Path) -> None:
    assert cache_dir_of(tmp_path / ".plangraph" / "store.db") == tmp_path / ".plangraph/cache"
    assert cache_dir_of(tmp_path / "evidence.db") == tmp_path / "evidence.db.cache"


def test_a_copy_with_other_content_computes_its_own_facts(tmp_path: Path) -> None:
    plan_file, cache = tmp_path / "plan.yaml", tmp_path / "cache"
    _write_plan(plan_file)
    plan = load_plan(plan_file, cache_dir=cache).plan
    assert plan.topological_order[:2] == ("n0", "n1")
    edges = [{"from": "n1", "to": "n0", "type": "requires"}]
    changed = plan.replace(
        edges=runtime_plan(
            {"plangraph": 1, "plan": "x", "nodes": [{"id": "n0"}, {"id": "n1"}], "edges": edges}
        ).edges
    )
    assert changed.topological_order[0] == "n1" and changed.topological_order[-1] == "n0"
    assert changed.digest != plan.digest
    assert (changed.digest, changed.criterion_digests) == _fresh(changed)
    same = plan.replace()
    assert same.__dict__["digest"] == plan.digest  # nothing changed: kept


def test_git_lists_nothing_kept_in_the_cache(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    plan_file, cache = tmp_path / "plan.yaml", tmp_path / ".plangraph" / "cache"
    _write_plan(plan_file, 0, count=110)
    git(tmp_path, "add", "plan.yaml")
    load_plan(plan_file, cache_dir=cache)
    assert any(cache.glob("facts-*.json"))
    assert git(tmp_path, "status", "--porcelain", "--untracked-files=all").strip() == (
        "A  plan.yaml"
    )


def test_data_parsed_by_other_reading_code_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan_file, cache = tmp_path / "plan.yaml", tmp_path / "cache"
    _write_plan(plan_file, count=110)
    before = load_plan(plan_file, cache_dir=cache).cache_key
    from pytest_plangraph.plan import cache as plancache

    # Other reading code, as after an upgrade, has another fingerprint.
    monkeypatch.setattr(plancache, "code_fingerprint", lambda: f"{__version__}+other-code")
    after = load_plan(plan_file, cache_dir=cache).cache_key
    assert before and after and before != after
    assert (cache / f"plan-{after}.json").exists()


def test_an_entry_that_came_with_the_repository_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_plangraph.plan import cache as plancache

    plan_file, cache = tmp_path / "plan.yaml", tmp_path / "cache"
    _write_plan(plan_file, minimum=3, count=110)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "their-home"))
    plancache.machine_salt.cache_clear()
    theirs = load_plan(plan_file, cache_dir=cache).cache_key
    for kind in ("valid", "plan"):  # committed with a different plan in it
        entry = cache / f"{kind}-{theirs}.json"
        data = json.loads(plancache.read_keyed(entry, theirs))
        data["nodes"] = data["nodes"][:1]
        entry.write_bytes(plancache.keyed(theirs, json.dumps(data).encode()))
    assert len(load_plan(plan_file, cache_dir=cache).plan.nodes) == 1  # their own: trusted

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "my-home"))  # another machine
    plancache.machine_salt.cache_clear()
    try:
        mine = load_plan(plan_file, cache_dir=cache)
        assert mine.cache_key != theirs
        assert len(mine.plan.nodes) == 110
        salt = tmp_path / "my-home" / "plangraph" / "salt"
        assert salt.is_file()
        assert salt.stat().st_mode & 0o077 == 0  # others may not read it
    finally:
        plancache.machine_salt.cache_clear()


def test_without_a_place_for_the_salt_the_cache_serves_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_plangraph.plan import cache as plancache

    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    plancache.machine_salt.cache_clear()
    try:
        first = plancache.machine_salt()
        assert len(first) == 16 and plancache.machine_salt() == first
        plancache.machine_salt.cache_clear()
        assert plancache.machine_salt() != first
    finally:
        plancache.machine_salt.cache_clear()


def test_a_kept_validated_form_that_is_not_a_plan_is_read_again(tmp_path: Path) -> None:
    plan_file, cache = tmp_path / "plan.yaml", tmp_path / "cache"
    plan_file.write_text("plangraph: 1\nplan: small\nnodes:\n  - id: a\n  - id: b\n")
    cache.mkdir()
    first = load_plan(plan_file, cache_dir=cache).plan
    key = cache_key(plan_file.read_bytes())
    entry = cache / f"valid-{key}.json"
    for damaged in ('{"plangraph": 1, "plan": "small", "nodes": 5}', "[1, 2]", '{"nodes": [{}]}'):
        entry.write_bytes(keyed(key, damaged.encode()))  # under its key, yet not a plan
        again = load_plan(plan_file, cache_dir=cache).plan
        assert again == first and again.digest == first.digest
        assert json.loads(read_keyed(entry, key)) == first.to_data()  # kept anew
