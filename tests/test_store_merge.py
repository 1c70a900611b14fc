"""store/exchange.py and merge: reading JSON lines, merging shards (idempotency keys, signatures,
tampered or missing sources) and an empty file named as a store.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from store_helpers import PLAN_A, PLAN_B, PLAN_C, fill, make_event, tamper

from pytest_plangraph.errors import ConflictError, StoreError
from pytest_plangraph.store.exchange import read_jsonl
from pytest_plangraph.store.sqlite import Store


@pytest.fixture(autouse=True)
def _no_env_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PLANGRAPH_SIGNING_KEY", raising=False)


# --- export and merge ----------------------------------------------------------------------


def test_read_jsonl_names_a_bad_line() -> None:
    with pytest.raises(StoreError, match=r"export\.jsonl:2:"):
        good = '{"format": 1, "kind": "claim", "at": "t", "by": "b", "plan_digest": "d"}'
        read_jsonl([good, '{"format": 2}'], "export.jsonl")


def shard(path: Path, plans: list[str], numbers: list[int], **fields: Any) -> None:
    with Store.open(path) as store:
        for plan in plans:
            store.register_plan(plan, "login")
        store.append_many([make_event(n, **fields) for n in numbers])


def test_merge_unions_shards_idempotently(tmp_path: Path) -> None:
    shard(tmp_path / "one.db", [PLAN_B], [1, 2, 3])
    shard(tmp_path / "two.db", [PLAN_C, PLAN_B], [3, 4, 5])
    target = tmp_path / "main.db"
    shard(target, [PLAN_A], [0, 1])
    with Store.open(target) as store:
        result = store.merge([tmp_path / "one.db", tmp_path / "two.db"])
        assert (result.added, result.skipped, result.plans_added) == (4, 2, 2)
        assert sorted(e.payload["n"] for e in store.events()) == [0, 1, 2, 3, 4, 5]
        assert store.verify() == []
        assert [(p.digest, p.version) for p in store.plans()] == [
            (PLAN_A, 1),
            (PLAN_B, 2),
            (PLAN_C, 3),
        ]
        again = store.merge([tmp_path / "two.db", tmp_path / "one.db"])
        assert (again.added, again.plans_added) == (0, 0)
        assert store.count() == 6


@pytest.mark.parametrize("key", [None, b"k"], ids=["no-key", "keyed"])
def test_merge_counts_signatures_it_could_not_check(tmp_path: Path, key: bytes | None) -> None:
    fill(tmp_path / "signed.db", 3, key=b"k")
    shard(tmp_path / "plain.db", [], [7])  # unsigned: nothing to check without a key
    sources = [tmp_path / "signed.db"] if key else [tmp_path / "signed.db", tmp_path / "plain.db"]
    with Store.open(tmp_path / "main.db", signing_key=key) as store:
        result = store.merge(sources)
        merged = store.events()
        assert store.verify() == []
    assert result.added == len(merged) == (3 if key else 4)
    if key is None:  # kept, re-chained here, unsigned: the result says so
        assert result.unchecked_signatures == 3
        assert [e.signature for e in merged] == [None] * len(merged)
    else:  # checked on loading, and signed anew with this store's key
        assert result.unchecked_signatures == 0
        assert all(e.signature for e in merged)


def test_merge_keeps_one_event_per_idempotency_key(tmp_path: Path) -> None:
    with Store.open(tmp_path / "one.db") as store:
        store.append(make_event(1, idempotency_key="k1"))
    with Store.open(tmp_path / "two.db") as store:
        store.append(make_event(4, idempotency_key="k1"))  # the same request, retried there
    with Store.open(tmp_path / "main.db") as store:
        result = store.merge([tmp_path / "one.db", tmp_path / "two.db"])
        assert (result.added, result.skipped) == (1, 1)
        assert [e.payload["n"] for e in store.events()] == [1]


@pytest.mark.parametrize("into_main", [False, True], ids=["between-shards", "with-the-target"])
def test_merge_refuses_a_key_that_names_two_requests(tmp_path: Path, into_main: bool) -> None:
    with Store.open(tmp_path / "one.db") as store:
        store.append(make_event(1, idempotency_key="k1"))  # a claim of step-1
    with Store.open(tmp_path / "two.db") as store:
        store.append(make_event(2, idempotency_key="k1"))  # a claim of step-2, same key
    sources = [tmp_path / "two.db"] if into_main else [tmp_path / "one.db", tmp_path / "two.db"]
    with Store.open(tmp_path / ("one.db" if into_main else "main.db")) as store:
        before = store.count()
        with pytest.raises(ConflictError, match="IDEMPOTENCY_CONFLICT") as refused:
            store.merge(sources)
        assert store.count() == before  # nothing merged, nothing silently dropped
    assert "a claim of step-2" in str(refused.value) and "a claim of step-1" in str(refused.value)


def test_merge_refuses_a_tampered_source_by_name(tmp_path: Path) -> None:
    fill(tmp_path / "good.db", 2)
    fill(tmp_path / "bad.db", 3)
    tamper(tmp_path / "bad.db", "UPDATE events SET by_ = 'mallory' WHERE seq = 2")
    target = tmp_path / "main.db"
    shard(target, [PLAN_A], [7])
    with Store.open(target) as store:
        with pytest.raises(StoreError, match=r"refusing to merge .*bad\.db.*event 2"):
            store.merge([tmp_path / "good.db", tmp_path / "bad.db"])
        assert [e.payload["n"] for e in store.events()] == [7]
        assert store.latest_plan_version() == 1


def test_merge_of_a_missing_source_names_it(tmp_path: Path) -> None:
    with Store.open(tmp_path / "main.db") as store, pytest.raises(StoreError, match=r"nope\.db"):
        store.merge([tmp_path / "nope.db"])


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda path: None, "there is no store file there"),
        (lambda path: path.mkdir(), "there is no store file there"),
        (lambda path: path.write_bytes(b"junk" * 40), "is not an SQLite database"),
        (lambda path: fill(path, 2) and _export(path), "it is an export (JSON Lines)"),
    ],
    ids=["missing", "a-directory", "not-sqlite", "an-export"],
)
def test_a_bad_merge_input_is_named_without_advice_about_the_target(
    tmp_path: Path, make: Any, says: str
) -> None:
    source = tmp_path / "input.db"
    make(source)
    with Store.open(tmp_path / "main.db") as store:
        fill_before = store.count()
        with pytest.raises(StoreError) as refused:
            store.merge([source])
        assert store.count() == fill_before
    message = str(refused.value)
    assert message.startswith(f"cannot merge {source}: ") and says in message
    assert "--store" not in message and "Restore it" not in message


def test_an_empty_file_read_as_a_store_says_there_is_none_yet(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    with pytest.raises(StoreError) as refused:
        Store.open(empty, readonly=True)
    assert str(refused.value) == (
        f"there is no store in {empty} yet (an empty file, never written); pass --store to "
        "name another"
    )
    assert empty.read_bytes() == b""
    with Store.open(tmp_path / "main.db") as store, pytest.raises(StoreError) as merging:
        store.merge([empty])
    assert str(merging.value).startswith(f"cannot merge {empty}: there is no store in {empty}")


def _export(path: Path) -> None:
    """Replace the store at *path* by its JSON Lines export."""
    with Store.open(path) as store:
        out = io.StringIO()
        store.export_jsonl(out)
    path.unlink()
    path.write_text(out.getvalue(), encoding="utf-8")
