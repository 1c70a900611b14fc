"""The answers kept for idempotency keys (the HTTP API's replays), in a real store file: the first
answer stays, a row edited by hand answers nothing usable, and the store still opens and audits
clean with them."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import plangraph_main
from repo_helpers import edit_store

from pytest_plangraph.store.answers import KeptAnswer
from pytest_plangraph.store.sqlite import Store


def test_the_first_answer_stays_and_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    with Store.open(path) as store:
        assert store.kept_answer("k") is None
        first = KeptAnswer("request-a", 200, {"verdict": "FAILED", "text": "ünïcode"})
        assert store.keep_answer("k", first) == first
        second = KeptAnswer("request-b", 200, {"verdict": "PASSED"})
        assert store.keep_answer("k", second) == first  # a key keeps its first answer
    with Store.open(path) as store:
        assert store.kept_answer("k") == first
        assert store.kept_answer("other") is None
        assert store.verify() == []


def test_an_answer_edited_by_hand_is_no_usable_answer(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    with Store.open(path) as store:
        store.keep_answer("k", KeptAnswer("request-a", 200, {"verdict": "FAILED"}))
    edit_store(path, "UPDATE meta SET value = 'not json' WHERE key = 'answer:k'")
    with Store.open(path) as store:
        assert store.kept_answer("k") == KeptAnswer("", 0, None)  # matches no request


def test_a_store_with_kept_answers_audits_clean(jwt: Path) -> None:
    store = jwt / ".plangraph/store.db"
    with Store.open(store) as opened:
        opened.keep_answer("k", KeptAnswer("request", 200, {"verdict": "PASSED"}))
    audit = plangraph_main(jwt, "audit", "--format", "json")
    assert audit.code == 0, audit.out + audit.err
