"""The :class:`~pytest_plangraph.api.PlanGraph` methods that attest a completed node and verify
an attestation (the package docstring says what each part owns)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..errors import UsageError
from ..plan.evidence import ABSENT
from ..repository import Repository
from ..values import dataclass, field
from ..vcs.testglob import is_collect_key

if TYPE_CHECKING:  # the machinery of attesting is imported by the calls that attest
    from ..judge.inputs import Snapshot
    from ..judge.logfold import LogFold
    from ..judge.states import NodeState, PlanState, Reason
    from ..store.keys import SigningKey

__all__ = ["Attestation", "AttestationCheck", "Attesting"]


@dataclass(frozen=True)
class Attestation:
    """A node's attestation: the signed envelope, or ``None`` with the gate's reasons when the
    node is not completed (nothing is signed then)."""

    node: str
    verdict: Literal["PASSED", "FAILED"]
    status: str
    envelope: dict[str, Any] | None
    reasons: tuple[Reason, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The JSON shape of ``plangraph attest`` (without the ``format`` key)."""
        return {
            "node": self.node,
            "verdict": self.verdict,
            "status": self.status,
            "reasons": [r.to_json() for r in self.reasons],
            "envelope": self.envelope,
        }


@dataclass(frozen=True)
class AttestationCheck:
    """What verifying an attestation found: ``verified``, or the problems (a signature that does
    not count, a malformed statement, subjects whose files changed)."""

    verified: bool
    problems: tuple[str, ...] = ()
    node: str | None = None
    signer: str | None = None
    changed: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The JSON shape of ``plangraph attest --verify`` (without the ``format`` key)."""
        return {
            "verified": self.verified,
            "node": self.node,
            "signer": self.signer,
            "problems": list(self.problems),
            "changed": self.changed,
        }


def _evidence_files(fold: LogFold, node_state: NodeState) -> list[str]:
    """The files the evidence deciding each criterion of the node is bound to (test files,
    the code they bind, ``conftest.py``, the configuration file, a command's subjects): a
    change to any of them after signing is a change ``--verify`` reports."""
    found: list[str] = []
    for criterion in node_state.criteria:
        kept = fold.evidence.get((node_state.id, criterion.id))
        record = {} if kept is None else kept[1].payload
        if criterion.evidence is None or record.get("id") != criterion.evidence:
            continue
        subjects = record.get("subjects") or {}
        # a path bound absent has no digest to attest it by (the gate checked it is still so),
        # nor what a folder could collect (no file: the gate walked it again)
        found.extend(
            str(path)
            for path, sha in subjects.items()
            if sha != ABSENT and not is_collect_key(str(path))
        )
    return found


_MAX_ENVELOPE = 64 << 20
"""Bytes of an envelope file read at most: a statement is a few kilobytes per file it names."""


class Attesting(Repository):
    """Attest completed nodes (in-toto statements in DSSE envelopes) and verify attestations."""

    def attest(self, node: str) -> Attestation:
        """The signed attestation of *node* when the gate passes it, else its reasons. The key
        is ``PLANGRAPH_SIGNING_KEY_FILE``'s; without one, :class:`UsageError`."""
        from ..judge.derive import derive

        self._ready()
        self.require_node(node)
        key = _signing_key()
        fold = self.fold()
        snapshot = self.snapshot(fold)
        return self._attest(node, key, snapshot, derive(self.graph, fold, snapshot), fold)

    def attest_completed(self) -> list[Attestation]:
        """The attestation of every completed node, in topological order."""
        from ..judge.derive import derive

        self._ready()
        key = _signing_key()
        fold = self.fold()
        snapshot = self.snapshot(fold)
        state = derive(self.graph, fold, snapshot)
        done = [n for n, s in state.nodes.items() if s.status == "completed"]
        return [self._attest(n, key, snapshot, state, fold) for n in done]

    def _attest(
        self, node: str, key: SigningKey, snapshot: Snapshot, state: PlanState, fold: LogFold
    ) -> Attestation:
        from ..judge.gate import gate
        from ..judge.inputs import node_files
        from ..judge.states import Reason
        from ..vcs.environment import git_info, now
        from .dsse import IN_TOTO_PAYLOAD_TYPE, sign
        from .statement import payload, statement

        decision = gate(self.graph, state, node)
        node_state = state.nodes[node]
        if decision.verdict != "PASSED" or node_state.status != "completed":
            reasons = decision.reasons or (
                Reason("NOT_COMPLETED", f"the node is {node_state.status}, not completed"),
            )
            return Attestation(node, "FAILED", node_state.status, None, reasons)
        files: dict[str, str] = {}
        for path in [*node_files(self.graph, node, snapshot), *_evidence_files(fold, node_state)]:
            sha = snapshot.files.get(path) or self.workspace.hash_file(path)
            if sha is None:  # a file the gate needed is gone: nothing to attest it by
                reason = Reason("OUTPUT_MISSING", f"{path} is missing")
                return Attestation(node, "FAILED", node_state.status, None, (reason,))
            files[path] = sha
        plan_file = self._plan_subject()
        if plan_file is not None and (sha := self.workspace.hash_file(plan_file)) is not None:
            files[plan_file] = sha
        data = statement(
            self.graph.nodes[node],
            node_state,
            decision,
            files=files,
            plan=self.plan_ref(create=False),
            plan_file=plan_file,
            git=git_info(self.root, self.store_path),
            at=now(),
        )
        envelope = sign(payload(data), IN_TOTO_PAYLOAD_TYPE, key)
        return Attestation(node, "PASSED", node_state.status, envelope)

    def _plan_subject(self) -> str | None:
        """The plan file as a path under the root, or None when it lies outside."""
        if self.plan_path is None:
            return None
        try:
            return self.plan_path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return None

    def verify_attestation(self, text: str) -> AttestationCheck:
        """Check the envelope *text* (JSON) against ``PLANGRAPH_TRUSTED_KEYS``: its signature
        first, then each subject's current sha256 under the root against the statement's."""
        from ..store.keys import load_trusted
        from ..store.trust import TRUSTED_KEYS_ENV
        from .dsse import IN_TOTO_PAYLOAD_TYPE, open_envelope
        from .statement import differences, read_statement

        value = os.environ.get(TRUSTED_KEYS_ENV)
        if not value:
            raise UsageError(
                f"verifying an attestation needs the signer's public key: set {TRUSTED_KEYS_ENV} "
                "to the trusted-keys file (see docs/trust.md)"
            )
        trusted = load_trusted(Path(value), TRUSTED_KEYS_ENV)
        if len(text) > _MAX_ENVELOPE:
            return AttestationCheck(False, ("the file is too large to be an attestation",))
        try:
            envelope = json.loads(text)
        except (ValueError, RecursionError):
            return AttestationCheck(False, ("the file is not JSON (one DSSE envelope)",))
        opened = open_envelope(envelope, trusted)
        if opened.signer is None:
            return AttestationCheck(False, (opened.problem or "no valid signature",))
        signer = f"{opened.signer.id} ({', '.join(sorted(opened.signer.roles)) or 'no role'})"
        if opened.payload_type != IN_TOTO_PAYLOAD_TYPE:
            problem = f"the payloadType is {opened.payload_type!r}, not {IN_TOTO_PAYLOAD_TYPE}"
            return AttestationCheck(False, (problem,), signer=signer)
        read = read_statement(opened.payload)
        if isinstance(read, str):
            return AttestationCheck(False, (read,), signer=signer)
        data, subjects = read
        node = data["predicate"].get("node")
        node = node if isinstance(node, str) else None
        current = {s.name: self.workspace.hash_file(s.name) for s in subjects}
        changed = differences(subjects, current)
        problems = tuple(
            f"{c['name']}: "
            + ("missing now" if c["current"] is None else "its sha256 differs from the statement's")
            for c in changed
        )
        return AttestationCheck(not changed, problems, node, signer, changed)


def _signing_key() -> SigningKey:
    """The Ed25519 key of ``PLANGRAPH_SIGNING_KEY_FILE``; without one, :class:`UsageError`."""
    from ..store.signatures import SIGNING_KEY_FILE_ENV, signer_from_env

    key = signer_from_env()
    if key is None:
        raise UsageError(
            f"attesting signs with an Ed25519 key: set {SIGNING_KEY_FILE_ENV} to the private "
            "key `plangraph keygen` wrote"
        )
    return key
