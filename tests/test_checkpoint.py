"""checkpoint.py: status from a checkpoint of the log and the events after it equals status
from every event, and a checkpoint that no longer holds is never used (real stores)."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import plangraph_main
from state_helpers import RUN
from test_store_migration import _evidence

from pytest_plangraph import checkpoint
from pytest_plangraph.api import PlanGraph
from pytest_plangraph.checkpoint import checkpoint_path, read_fold
from pytest_plangraph.judge.derive import derive
from pytest_plangraph.judge.logfold import LogFold
from pytest_plangraph.judge.states import PlanState
from pytest_plangraph.store.chain import sign
from pytest_plangraph.store.localkey import local_key
from pytest_plangraph.store.sqlite import Store

TOKEN = "step-token-endpoint"
SCHEMA = "step-user-schema"


def _table(state: PlanState) -> list[tuple[object, ...]]:
    return [(n.to_json(), n.claimed, n.failed_claims) for n in state.nodes.values()]


def _from_every_event(plangraph: PlanGraph) -> list[tuple[object, ...]]:
    log = plangraph.store.log()
    return _table(derive(plangraph.graph, log, plangraph.snapshot(log)))


@pytest.fixture
def often(monkeypatch: pytest.MonkeyPatch) -> None:
    """Checkpoints from the first event on, and again after every event."""
    monkeypatch.setattr(checkpoint, "FIRST_AT", 1)
    monkeypatch.setattr(checkpoint, "EVERY", 1)


@pytest.fixture
def jwt(project, often) -> Path:
    root = project("jwt-login")
    with PlanGraph.open(root) as graph:
        graph.verify(by="tester")
        graph.claim(TOKEN, by="agent")
    return root


def _kept_seq(graph: PlanGraph) -> int:
    head = checkpoint_path(graph.store_path).read_text(encoding="utf-8").split("\n", 1)[0]
    return int(json.loads(head)["seq"])


def test_status_from_a_checkpoint_equals_status_from_every_event(jwt: Path) -> None:
    schema = jwt / "src/auth/user_schema.json"
    steps = [
        lambda g: g.approve(TOKEN, "ac-security-review", by="sec"),
        lambda g: g.claim(TOKEN, by="agent"),
        lambda g: schema.write_text(schema.read_text().replace('"minLength": 3', '"minLength": 2')),
        lambda g: g.claim(SCHEMA, by="agent"),
        lambda g: g.verify(by="tester"),
        lambda g: g.revoke(TOKEN, "ac-security-review", by="sec"),
    ]
    for i, step in enumerate(steps):
        with PlanGraph.open(jwt) as graph:
            step(graph)
        with PlanGraph.open(jwt) as graph:
            fold = graph.fold()
            assert fold.events is None, i  # began at the checkpoint
            assert _table(graph.status(fold)) == _from_every_event(graph), i
            assert _kept_seq(graph) == graph.store.count(), i
    assert graph.status().nodes[TOKEN].status != "completed"


def test_a_small_log_is_read_whole_and_no_checkpoint_is_written(project) -> None:
    root = project("jwt-login")
    with PlanGraph.open(root) as graph:
        graph.verify(by="tester")
        assert graph.fold().events is not None
        assert not checkpoint_path(graph.store_path).exists()


def test_events_after_the_checkpoint_are_read_without_writing_it_each_time(
    jwt: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoint, "EVERY", 3)
    with PlanGraph.open(jwt) as graph:
        kept = _kept_seq(graph)
        assert graph.store.count() == kept + 1  # the fixture's claim came after it
        graph.append("retry", SCHEMA, by="lead")
        assert graph.fold().count == graph.store.count()
        assert _kept_seq(graph) == kept  # two events since: not written again
        graph.append("retry", SCHEMA, by="lead")
        assert _table(graph.status()) == _from_every_event(graph)
        assert _kept_seq(graph) == graph.store.count() == kept + 3


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],
        lambda text: "not json\n" + text,
        lambda text: text.replace('"refused": {', '"refused": {"x": 1, ', 1),
        lambda text: text.replace('"version": "', '"version": "0+other', 1),
        lambda text: "[" * 100_000 + "]" * 100_000,
    ],
    ids=["truncated", "garbage", "edited", "other-code", "nested-too-deep"],
)
def test_a_damaged_checkpoint_is_not_used_and_is_written_again(jwt: Path, damage) -> None:
    with PlanGraph.open(jwt) as graph:
        path = checkpoint_path(graph.store_path)
        path.write_text(damage(path.read_text(encoding="utf-8")), encoding="utf-8")
        fold = graph.fold()
        assert fold.events is not None  # every event read
        assert _table(graph.status(fold)) == _from_every_event(graph)
        assert graph.fold().events is None  # a sound checkpoint was written again


def test_a_checkpoint_of_another_store_at_the_same_path_is_not_used(
    project, often, tmp_path: Path
) -> None:
    roots = [project("jwt-login"), tmp_path / "other"]
    shutil.copytree(roots[0], roots[1])
    for root in roots:
        with PlanGraph.open(root) as graph:
            graph.verify(by="tester")
            graph.claim(SCHEMA if root == roots[0] else TOKEN, by="agent")
    theirs = roots[1] / ".plangraph/store.db"
    ours = roots[0] / ".plangraph/store.db"
    ours.unlink()
    shutil.copy(theirs, ours)
    for suffix in ("-wal", "-shm"):
        Path(f"{ours}{suffix}").unlink(missing_ok=True)
    with PlanGraph.open(roots[0]) as graph:
        fold = graph.fold()
        assert fold.events is not None
        assert fold.claimed == {TOKEN}
        assert _table(graph.status(fold)) == _from_every_event(graph)


def test_older_events_merged_after_the_checkpoint_make_a_whole_read(
    project, often, tmp_path: Path
) -> None:
    main = project("jwt-login")
    shard = tmp_path / "shard"
    shutil.copytree(main, shard)
    with PlanGraph.open(shard) as graph:  # recorded first: earlier times
        graph.claim(SCHEMA, by="shard")
    with PlanGraph.open(main) as graph:
        graph.verify(by="tester")
        graph.status()
        kept = _kept_seq(graph)
        graph.store.merge([shard / ".plangraph/store.db"])
        fold = graph.fold()
        assert fold.events is not None  # the shard's claim sorts before the checkpoint
        assert SCHEMA in fold.claimed
        assert _table(graph.status(fold)) == _from_every_event(graph)
        assert _kept_seq(graph) > kept


def test_a_claim_without_a_verdict_after_the_checkpoint_is_replayed(jwt: Path) -> None:
    with PlanGraph.open(jwt) as graph:
        graph.append("claim", SCHEMA, by="agent")  # a bare claim: no verdict recorded
        fold = graph.fold()
        assert fold.unjudged and fold.events is not None
        assert _table(graph.status(fold)) == _from_every_event(graph)


def test_a_repeated_idempotency_key_counts_one_claim(jwt: Path) -> None:
    with PlanGraph.open(jwt) as graph:
        before = graph.status().nodes[TOKEN].failed_claims
        first = graph.claim(TOKEN, by="agent", idempotency_key="k1")
        again = graph.claim(TOKEN, by="agent", idempotency_key="k1")
        assert first.verdict == again.verdict == "FAILED"
        assert graph.status().nodes[TOKEN].failed_claims == before + 1


def test_an_unwritable_cache_folder_costs_only_the_checkpoint(jwt: Path) -> None:
    with PlanGraph.open(jwt) as graph:
        cache = checkpoint_path(graph.store_path).parent
        shutil.rmtree(cache)
        cache.write_text("a file where the folder was", encoding="utf-8")
        fold = read_fold(graph.store, checkpoint_path(graph.store_path))
        assert fold.count == graph.store.count()
        assert _table(graph.status(fold)) == _from_every_event(graph)


def test_a_replayed_claim_is_judged_with_every_record_hashed(project) -> None:
    """A bare claim is judged by replaying the log, against older records too: their
    subjects must be hashed, not only the latest records' ones."""
    root = project("jwt-login")
    (root / "helper.py").write_text("x = 1\n", encoding="utf-8")
    sha = hashlib.sha256((root / "helper.py").read_bytes()).hexdigest()
    with PlanGraph.open(root) as graph:
        graph.verify([SCHEMA], by="tester")

        def record(criterion: str, subjects: dict[str, str]) -> None:
            graph.record(
                [
                    graph.make_evidence(
                        TOKEN, criterion, outcome="passed", reason=None, details={},
                        subjects=subjects, run=RUN, recorded_by="tester",
                    )
                ]
            )  # fmt: skip

        record("ac-http-200", {"helper.py": sha})
        record("ac-invalid-401", {})
        graph.approve(TOKEN, "ac-security-review", by="sec")
        for _ in range(3):
            graph.append("claim", TOKEN, by="agent")  # completed then: not refused
        record("ac-http-200", {})  # the latest record no longer names helper.py
        graph.revoke(TOKEN, "ac-security-review", by="sec")
        state = graph.status()
        assert _table(state) == _from_every_event(graph)
        assert state.nodes[TOKEN].failed_claims == 0


def test_a_record_naming_its_node_in_the_payload_only_keeps_it_in_the_checkpoint(
    tmp_path: Path, often
) -> None:
    path = tmp_path / "d" / "store.db"
    with Store.open(path, create=True) as store:
        store.append_many([_evidence(n) for n in range(4)])
    con = sqlite3.connect(path, isolation_level=None)  # damage one light row by hand
    con.execute("DROP TRIGGER log_no_update")
    con.execute("UPDATE log SET body = 'garbage' WHERE seq = 1")
    con.close()
    with Store.open(path) as store:
        first = read_fold(store, checkpoint_path(path))  # whole events: node in the payload
        kept = read_fold(store, checkpoint_path(path))
        assert first.events is not None and kept.events is None
        assert sorted(kept.evidence) == sorted(first.evidence)
        assert [e.node for e in kept.latest()] == [key[0] for key in first.evidence]


def test_a_bare_claim_stored_by_another_writer_meanwhile_is_replayed(
    jwt: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process stores a claim without a verdict under the same idempotency key
    between this claim's read of the log and its write: the claim answers from every event."""
    with PlanGraph.open(jwt) as graph:
        read = graph.fold

        def read_then_race() -> LogFold:
            fold = read()
            with PlanGraph.open(jwt) as other:
                other.append("claim", TOKEN, by="agent", idempotency_key="k1")
            return fold

        monkeypatch.setattr(graph, "fold", read_then_race)
        decision = graph.claim(TOKEN, by="agent", idempotency_key="k1")
        monkeypatch.undo()
        assert decision.verdict == "FAILED"
        assert decision.status == graph.status().nodes[TOKEN].status


def _forge(path: Path, change: Callable[[dict[str, Any]], None], key: bytes | None = None) -> None:
    """Edit the checkpoint's body and seal it again, as someone who wanted it believed would;
    with *key*, signed with it too (someone who can read this user's key)."""
    head_text, body = path.read_text(encoding="utf-8").split("\n", 1)
    head, data = json.loads(head_text), json.loads(body)
    change(data)
    body = json.dumps(data)
    head["sha256"] = hashlib.sha256(body.encode("utf-8")).hexdigest()
    if key is not None:
        signed = checkpoint._signed(
            head["seq"], head["hash"], head["at"], head["sha256"], head["trust"]
        )
        head["signature"] = sign(key, signed)
    path.write_text(json.dumps(head) + "\n" + body, encoding="utf-8")


def _no_refusals(data: dict[str, Any]) -> None:
    data["refused"] = {node: 0 for node in data["refused"]}


def test_audit_finds_an_edited_checkpoint_and_removes_it(jwt: Path) -> None:
    with PlanGraph.open(jwt) as graph:
        graph.status()
        path = checkpoint_path(graph.store_path)
        assert graph.status().nodes[TOKEN].failed_claims == 1
        _forge(path, _no_refusals, local_key())
        assert graph.status().nodes[TOKEN].failed_claims == 0  # believed by status …
    result = plangraph_main(jwt, "audit", "--format", "json")
    assert result.code == 1
    found = [p for p in result.json()["chain"] if p["code"] == "CHECKPOINT_MISMATCH"]
    assert len(found) == 1 and TOKEN in found[0]["message"]
    assert not path.exists()  # … until audit compares it with the events
    with PlanGraph.open(jwt) as graph:
        assert graph.status().nodes[TOKEN].failed_claims == 1


def test_a_checkpoint_resealed_without_the_users_key_is_not_used(jwt: Path) -> None:
    with PlanGraph.open(jwt) as graph:
        graph.status()
        path = checkpoint_path(graph.store_path)
        assert graph.fold().events is None  # the checkpoint is used
        _forge(path, _no_refusals)  # a new sha256, but no signature made with the key
        fold = graph.fold()
        assert fold.events is not None  # every event read instead
        assert graph.status(fold).nodes[TOKEN].failed_claims == 1


def test_a_checkpoint_head_moved_past_events_is_not_used(jwt: Path) -> None:
    """Moving the head to the last event (what `plangraph head` prints) would skip the events
    in between; the head is signed with the body, so the checkpoint is not used."""
    with PlanGraph.open(jwt) as graph:
        graph.status()
        path = checkpoint_path(graph.store_path)
        graph.append("claim", TOKEN, by="agent", payload={"verdict": "FAILED"})
        head = graph.head()
        head_text, body = path.read_text(encoding="utf-8").split("\n", 1)
        path.write_text(
            json.dumps({**json.loads(head_text), "seq": head.seq, "hash": head.hash}) + "\n" + body,
            encoding="utf-8",
        )
        fold = graph.fold()
        assert fold.events is not None
        assert graph.status(fold).nodes[TOKEN].failed_claims == 2


def test_audit_passes_a_sound_checkpoint(jwt: Path) -> None:
    with PlanGraph.open(jwt) as graph:
        graph.status()
        path = checkpoint_path(graph.store_path)
    result = plangraph_main(jwt, "audit", "--format", "json")
    assert not [p for p in result.json()["chain"] if p["code"] == "CHECKPOINT_MISMATCH"]
    assert path.exists()


def test_with_a_signing_key_only_a_checkpoint_signed_with_it_is_used(
    jwt: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with PlanGraph.open(jwt) as graph:
        graph.status()  # written without a key
        path = checkpoint_path(graph.store_path)
        monkeypatch.setenv("PLANGRAPH_SIGNING_KEY", "k1")
        assert graph.fold().events is not None  # unsigned: every event read, then signed
        assert graph.fold().events is None
        _forge(path, _no_refusals)  # a new sha256, but no signature made with the key
        fold = graph.fold()
        assert fold.events is not None
        assert graph.status(fold).nodes[TOKEN].failed_claims == 1
        monkeypatch.setenv("PLANGRAPH_SIGNING_KEY", "another key")
        assert graph.fold().events is not None


def test_a_fifo_in_place_of_the_checkpoint_is_not_waited_on(jwt: Path) -> None:
    """Reading a FIFO waits for a writer: a status would hang until one came."""
    import os
    import threading

    with PlanGraph.open(jwt) as graph:
        path = checkpoint_path(graph.store_path)
        expected = _from_every_event(graph)
    path.unlink()
    os.mkfifo(path)

    def status() -> None:  # a connection serves the thread that made it
        with PlanGraph.open(jwt) as graph:
            done.append(_table(graph.status(graph.fold())))

    done: list[object] = []
    reader = threading.Thread(target=status, daemon=True)
    reader.start()
    reader.join(timeout=60)
    if not done:  # release the reader, then fail
        with open(path, "w"):
            pass
    assert done == [expected], "fold() waited on the FIFO"


def test_a_fold_of_some_nodes_holds_the_checkpoints_entries_of_those_alone(
    jwt: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with PlanGraph.open(jwt) as graph:
        graph.approve(TOKEN, "ac-security-review", by="sec")
        path = checkpoint_path(graph.store_path)
        whole = read_fold(graph.store, path)
        assert whole.events is None  # began at the checkpoint
        monkeypatch.setattr(checkpoint, "EVERY", 10**6)
        graph.append("retry", SCHEMA, by="lead")  # after the checkpoint: folded whole
        written = path.read_bytes()
        monkeypatch.setattr(checkpoint, "EVERY", 1)
        part = read_fold(graph.store, path, {TOKEN, SCHEMA})
        assert path.read_bytes() == written  # a fold of some nodes is never kept
        whole = read_fold(graph.store, path)
    assert part.evidence and part.evidence.keys() == {
        k for k in whole.evidence if k[0] in (TOKEN, SCHEMA)
    }
    assert part.evidence == {k: e for k, e in whole.evidence.items() if k[0] in (TOKEN, SCHEMA)}
    assert part.approvals == {k: e for k, e in whole.approvals.items() if k[0] in (TOKEN, SCHEMA)}
    assert part.passed == {k for k in whole.passed if k[0] in (TOKEN, SCHEMA)}
    assert part.on_record == {n: e for n, e in whole.on_record.items() if n in (TOKEN, SCHEMA)}
    assert (part.count, part.last_seq, part.claimed) == (
        whole.count,
        whole.last_seq,
        whole.claimed,
    )
