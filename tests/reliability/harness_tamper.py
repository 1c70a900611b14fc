"""Tampering with the evidence store by hand, and whether ``plangraph audit`` catches it or the
gate refuses it: the measured cases of the reliability figures.

Each case starts from the JWT sample project with one recorded evidence event whose outcome is
*failed* (the sample user was edited so that the schema criterion fails) and one claim, then
changes the store the way someone with the ``sqlite3`` shell and no signing key could, and runs
the real command. A case is *caught* when audit exits 1 naming the expected finding or when the
gate refuses a claim of the node whose record was changed; both are measured and reported.

A store holding SQL that plangraph did not make (a view replaced, a trigger planted) is refused
by every command, audit included, with ``STORE_TAMPERED`` (exit 2): such a refusal naming the
expected code counts as caught by audit. Cases with Ed25519 keys make them with
``plangraph keygen`` and judge with a trusted-keys file.

``PENDING`` lists the tamperings of the trust list (DESIGN §5 "Trust") not measured yet; the
figures say so.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from cli_helpers import plangraph_main
from repo_helpers import edit_store, git

from pytest_plangraph import checkpoint
from pytest_plangraph.canonical import canonical_json
from pytest_plangraph.store.chain import chain_hash, event_id, sign
from pytest_plangraph.store.localkey import local_key
from pytest_plangraph.store.opening import now
from pytest_plangraph.store.sqlite import Store

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "jwt-login"
STORE = Path(".plangraph/store.db")
SCHEMA = "step-user-schema"
KEY = {"PLANGRAPH_SIGNING_KEY": "sesame"}
PENDING = (
    "a whole chain rewritten consistently in an unsigned store (caught by comparing with a "
    "published head, as a store rolled back is)",
    "approvals recorded through an agent-facing surface",
)
"""Tamperings of the trust list not measured yet."""


class Tampered(NamedTuple):
    """What a tampering tells the commands that judge it: the environment of the machine that
    judges (its trusted-keys file) and the arguments audit is given (a published head)."""

    env: dict[str, str]
    audit: tuple[str, ...] = ()


@dataclass(frozen=True)
class TamperCase:
    """One way of tampering and the finding that must catch it."""

    name: str
    what: str
    expect: str
    """The audit finding code that must be reported."""
    tamper: Callable[[Path], Tampered | None]
    signed: bool = False
    flips: bool = False
    """The tampering turns the failed record into a pass: an attempt to fool the gate (the
    others damage the log without making anything look done)."""


@dataclass(frozen=True)
class TamperResult:
    """What the real commands said about one tampered store."""

    case: TamperCase
    audited: bool
    """``plangraph audit`` exited 1 naming the expected finding."""
    refused: bool
    """The gate refused a claim of the tampered node."""
    findings: list[str]

    @property
    def caught(self) -> bool:
        """Caught by audit or refused by the gate."""
        return self.audited or self.refused


def _lifted(root: Path, *statements: str) -> None:
    """Run *statements* on the store with the append-only triggers lifted, then put them back."""
    edit_store(root / STORE, *statements)


def _second_outcome_key(root: Path) -> None:
    _lifted(
        root,
        'UPDATE events SET payload = \'{"outcome":"passed",\' || substr(payload, 2) WHERE seq = 1',
        "UPDATE log SET body = (SELECT body FROM log_source WHERE seq = 1) WHERE seq = 1",
    )


def _unreadable_payload(root: Path) -> None:
    _lifted(root, "UPDATE events SET payload = 'not json' WHERE seq = 2")


def _deleted_event(root: Path) -> None:
    _lifted(root, "DELETE FROM events WHERE seq = 1", "DELETE FROM log WHERE seq = 1")


def _triggers_dropped(root: Path) -> None:
    with sqlite3.connect(root / STORE) as con:
        con.execute("DROP TRIGGER events_no_delete")
    con.close()


def _log_says_passed(root: Path) -> None:
    _lifted(root, "UPDATE log SET body = replace(body, '\"failed\"', '\"passed\"') WHERE seq = 1")


def _resealed_without_key(root: Path) -> None:
    """The failed record made a pass, its id and chain hash recomputed; no key to sign it."""
    with Store.open(root / STORE, signing_key=b"unknown") as store:
        [event] = store.events(seqs=[1])
    forged = event.replace(**{"payload": {**event.payload, "outcome": "passed"}})
    new_id = event_id(forged)
    payload = canonical_json(forged.payload).replace("'", "''")
    _lifted(
        root,
        f"UPDATE events SET payload = '{payload}', id = '{new_id}', "
        f"hash = '{chain_hash(event.prev, new_id)}' WHERE seq = 1",
        "UPDATE log SET body = (SELECT body FROM log_source WHERE seq = 1), "
        f"id = '{new_id}' WHERE seq = 1",
    )


def _signature_stripped(root: Path) -> None:
    _lifted(root, "UPDATE events SET signature = NULL WHERE seq = 1")


def _checkpoint_says_passed(root: Path) -> None:
    """The log's checkpoint rewritten (with a matching body digest) and signed again with this
    user's key, as a process of this user could: the failure is a pass."""
    path = root / ".plangraph" / "cache" / "log-store.db.json"
    head_text, body_text = path.read_text(encoding="utf-8").split("\n", 1)
    data = json.loads(body_text)
    for entry in data["evidence"]:
        entry[9] = {**entry[9], "outcome": "passed"}
    body = json.dumps(data, ensure_ascii=False)
    head = {**json.loads(head_text), "sha256": hashlib.sha256(body.encode()).hexdigest()}
    signed = checkpoint._signed(
        head["seq"], head["hash"], head["at"], head["sha256"], head["trust"]
    )
    head["signature"] = sign(local_key(), signed)
    path.write_text(json.dumps(head) + "\n" + body, encoding="utf-8")


def _view_swapped(root: Path) -> None:
    """The failed record's log row made a pass and the view ``log_source`` replaced by one that
    returns the log as it is: the log's check would compare the forgery with itself."""
    _lifted(
        root,
        "UPDATE log SET body = json_set(body, '$[0]', 'passed', '$[1]', json('null')) "
        "WHERE seq = 1",
        "DROP VIEW log_source",
        "CREATE VIEW log_source AS SELECT * FROM log",
    )


def _trigger_planted(root: Path) -> None:
    """A trigger that silently drops failed evidence, then CI recording the failure again."""
    with sqlite3.connect(root / STORE) as con:
        con.execute(
            "CREATE TRIGGER zz BEFORE INSERT ON events WHEN NEW.kind = 'evidence' AND "
            "json_extract(NEW.payload, '$.outcome') <> 'passed' BEGIN SELECT RAISE(IGNORE); END"
        )
    con.close()
    plangraph_main(root, "verify", env=KEY)  # refused: nothing is written into such a store


def _index_swapped(root: Path) -> None:
    """``events_kind`` rebuilt on another column with its SQL text put back by hand."""
    with sqlite3.connect(root / STORE, isolation_level=None) as con:
        con.execute("DROP INDEX events_kind")
        con.execute("CREATE INDEX events_kind ON events (by_)")
        con.execute("PRAGMA writable_schema = ON")
        con.execute(
            "UPDATE sqlite_master SET sql = 'CREATE INDEX events_kind ON events (kind)' "
            "WHERE name = 'events_kind'"
        )
    con.close()


def _rolled_back(root: Path) -> Tampered:
    """A retry grant recorded and its head published, then the store put back as it was."""
    saved = root.parent / f"{root.name}-copy.db"
    shutil.copy(root / STORE, saved)
    assert plangraph_main(root, "retry", SCHEMA, "--by", "lead").code == 0
    head = plangraph_main(root, "head").out.strip()
    shutil.copy(saved, root / STORE)
    for leftover in ("-wal", "-shm"):
        Path(f"{root / STORE}{leftover}").unlink(missing_ok=True)
    return Tampered({}, ("--expect-head", head))


def _ci_trusted(root: Path) -> dict[str, str]:
    """CI's key pair (``plangraph keygen``) and a trusted-keys file trusting it for ``ci``:
    the environment of the machine that judges."""
    name = root.parent / f"{root.name}-ci"
    assert plangraph_main(root.parent, "keygen", "--output", str(name)).code == 0
    public = Path(f"{name}.pub").read_text(encoding="utf-8").split()[1]
    trusted = root.parent / f"{root.name}-trusted.yaml"
    trusted.write_text(f"format: 1\nkeys:\n  - {{public_key: '{public}', roles: [ci]}}\n")
    return {"PLANGRAPH_TRUSTED_KEYS": str(trusted)}


def _passing_copy(root: Path, env: dict[str, str]) -> None:
    """The failed record appended again as a pass, through the Python API, under *env*."""
    with Store.open(root / STORE) as store:
        [event] = store.events(seqs=[1])
    forged = event.replace(
        payload={**event.payload, "outcome": "passed", "reason": None}, by="agent"
    )
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        with Store.open(root / STORE) as store:
            store.append(forged.replace(at=now()))
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _untrusted_key(root: Path) -> Tampered:
    """A pass signed with a key the agent made itself (not in the trusted-keys file)."""
    judge = _ci_trusted(root)
    own = root.parent / f"{root.name}-agent"
    assert plangraph_main(root.parent, "keygen", "--output", str(own)).code == 0
    _passing_copy(root, {"PLANGRAPH_SIGNING_KEY_FILE": str(own)})
    return Tampered(judge)


def _api_without_key(root: Path) -> Tampered:
    """A pass recorded through the Python API where the agent runs: no private key there."""
    judge = _ci_trusted(root)
    _passing_copy(root, {})
    return Tampered(judge)


CASES = (
    TamperCase(
        "second-key",
        "a payload edited in place",
        "CONTENT_TAMPERED",
        _second_outcome_key,
        flips=True,
    ),
    TamperCase("unreadable", "a payload made unreadable", "CONTENT_TAMPERED", _unreadable_payload),
    TamperCase("deleted", "an event deleted", "CHAIN_BROKEN", _deleted_event),
    TamperCase(
        "no-trigger", "append-only trigger dropped", "APPEND_ONLY_DISABLED", _triggers_dropped
    ),
    TamperCase(
        "log-edit", "the status log says passed", "LOG_MISMATCH", _log_says_passed, flips=True
    ),
    TamperCase(
        "resealed",
        "a failure made a pass, id and chain recomputed, no key",
        "BAD_SIGNATURE",
        _resealed_without_key,
        signed=True,
        flips=True,
    ),
    TamperCase("unsigned", "a signature removed", "UNSIGNED", _signature_stripped, signed=True),
    TamperCase(
        "checkpoint",
        "the log's checkpoint rewritten",
        "CHECKPOINT_MISMATCH",
        _checkpoint_says_passed,
        flips=True,
    ),
    TamperCase(
        "view-swap",
        "the log says passed, its view log_source replaced",
        "STORE_TAMPERED",
        _view_swapped,
        signed=True,
        flips=True,
    ),
    TamperCase(
        "trigger",
        "a trigger planted that drops failed evidence",
        "STORE_TAMPERED",
        _trigger_planted,
        signed=True,
    ),
    TamperCase("index-swap", "events_kind rebuilt on by_", "STORE_CORRUPT", _index_swapped),
    TamperCase("rolled-back", "the store put back to an older copy", "HEAD_MISSING", _rolled_back),
    TamperCase(
        "untrusted",
        "a pass signed with the agent's own Ed25519 key",
        "UNTRUSTED_KEY",
        _untrusted_key,
        flips=True,
    ),
    TamperCase(
        "api-nokey",
        "a pass recorded through the Python API, no key",
        "UNSIGNED_EVENT",
        _api_without_key,
        flips=True,
    ),
)


def prepare(workdir: Path, signed: bool) -> Path:
    """The JWT sample in *workdir* as a git repository, its schema criterion's evidence failed
    and a claim recorded (refused), with a checkpoint of the log kept: the state every case
    starts from (made once for signed and once for unsigned stores, then copied)."""
    root = workdir / ("signed" if signed else "unsigned")
    if root.exists():
        return root
    shutil.copytree(FIXTURE, root)
    sample = root / "fixtures" / "user.json"
    sample.write_text(sample.read_text(encoding="utf-8").replace('"alice"', '"al"'))
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "sample"]):
        _git(root, *args)
    env = KEY if signed else {}
    saved = checkpoint.FIRST_AT, checkpoint.EVERY
    checkpoint.FIRST_AT, checkpoint.EVERY = 1, 1  # a checkpoint at once, for the last case
    try:
        assert plangraph_main(root, "verify", env=env).code == 1
        assert plangraph_main(root, "claim", SCHEMA, "--by", "agent", env=env).code == 1
        assert plangraph_main(root, "status", env=env).code == 0
    finally:
        checkpoint.FIRST_AT, checkpoint.EVERY = saved
    return root


def measure(workdir: Path, case: TamperCase) -> TamperResult:
    """Tamper with a copy of the prepared store as *case* says, then run ``plangraph audit``
    and a claim of the tampered node; say what caught it."""
    root = workdir / case.name
    shutil.copytree(prepare(workdir / "templates", case.signed), root)
    env = KEY if case.signed else {}
    tampered = case.tamper(root)
    audit_args: tuple[str, ...] = ()
    if tampered is not None:
        env, audit_args = {**env, **tampered.env}, tampered.audit
    audit = plangraph_main(root, "audit", *audit_args, "--format", "json", env=env)
    findings: list[str] = []
    if audit.code in (0, 1) and audit.out:
        data: dict[str, Any] = audit.json()
        findings = [str(problem["code"]) for problem in data["chain"]]
        findings += [str(event["code"]) for event in data["ignored_events"]]
        audited = audit.code == 1 and case.expect in findings
    else:  # a store refused as a whole: audit says why, with its code
        findings = [case.expect] if case.expect in audit.err else []
        audited = audit.code == 2 and bool(findings)
    refused = plangraph_main(root, "claim", SCHEMA, "--by", "agent", env=env).code == 1
    return TamperResult(case, audited, refused, findings)


def _git(cwd: Path, *args: str) -> None:
    git(cwd, *args)
