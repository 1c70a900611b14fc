"""Evidence handed over already signed: what ``POST /plans/{id}/evidence`` stores, and only when
the gate would count it.

An agent-facing surface must never record evidence on anyone's word (DESIGN §5, docs/trust.md).
So an evidence event that comes from outside — a CI job that recorded it with its own store and
exported it (``plangraph export``), for instance — is stored only when its signature verifies
with a key this process trusts for evidence (role ``ci``, or the HMAC key): the very check the
gate makes when it reads the log. Without any key configured no signature can be checked and
nothing is received. The event is stored as it came: an Ed25519 signature covers its content id
and is kept; an HMAC one covers its place in the chain it came from and is checked there, and the
store signs it anew at its new place, as ``plangraph merge`` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from . import apicheck
from .errors import SignatureError, UsageError, field_problem
from .plan.evidence import Evidence, checked_evidence
from .plan.model import Event, checked_event
from .repository import Repository

__all__ = ["Intake"]

NO_TRUSTED_KEYS = "NO_TRUSTED_KEYS"


class Intake(Repository):
    """What :class:`~pytest_plangraph.api.PlanGraph` receives from elsewhere: signed evidence."""

    if TYPE_CHECKING:

        def _expect(self, expected: int | None) -> None:
            """The plan-version check of :class:`~pytest_plangraph.replan.Replanning`."""

    def receive_evidence(
        self, event: Event | Mapping[str, Any], *, expected_plan_version: int | None = None
    ) -> Event:
        """Store one evidence *event* as ``plangraph export`` writes it (its ``format`` key
        may be left out), signed by a key trusted for evidence; return it as stored. The same
        event twice is one event (its content id, or its idempotency key, is already there).

        :class:`SignatureError` when the gate would not count it (nothing stored);
        :class:`UsageError` when it is not an evidence event of a criterion of this plan;
        ``ConflictError`` when the plan is not version *expected_plan_version*."""
        from .judge.payloads import checked_payloads
        from .store.chain import event_id

        found = _event(event)
        if found.kind != "evidence":
            raise UsageError(
                f"only evidence events are received here, not a {found.kind} event; claims and "
                "patches have their own requests, and approvals are a person's (plangraph "
                "approve)"
            )
        self._ready()
        content_id = event_id(found)
        if found.id and found.id != content_id:
            raise SignatureError(
                f"the event's id {found.id[:16]}… is not the sha256 of its content "
                f"({content_id[:16]}…): it was changed after it was recorded",
                "BAD_SIGNATURE",
            )
        _trusted(found, content_id)  # first: nothing of an untrusted event is looked at further
        record = _record(found)
        if record.plan.id != self.plan.plan:
            raise UsageError(
                f"the evidence was recorded for plan {record.plan.id!r}, not {self.plan.plan!r}"
            )
        checked_payloads(self.graph, [record])  # a criterion of this plan, by its verifier
        version = apicheck.version(expected_plan_version, "expected_plan_version")
        self._expect(version)
        stored = self._store_signed(found.replace(id=content_id))
        from .hooks.manager import notify

        notify(
            "plangraph_evidence_recorded",
            [{"evidence": record, "store_path": str(self.store_path)}],
        )
        return stored

    def _store_signed(self, event: Event) -> Event:
        """Append *event* keeping its Ed25519 signature (a merge of one event: the same event
        already stored is not added again); the event as stored."""
        self.plan_ref()  # the plan version the store numbers, made before the event
        self.store.merge([], loaded=[([event], [])])
        for stored in self.store.events(node=event.node, kinds=["evidence"]):
            if stored.id == event.id or (
                event.idempotency_key is not None
                and stored.idempotency_key == event.idempotency_key
            ):
                return stored
        raise UsageError(f"evidence event {event.id[:16]}… was not stored")  # pragma: no cover


def _event(event: Event | Mapping[str, Any]) -> Event:
    if isinstance(event, Event):
        return event
    if not isinstance(event, Mapping):
        raise UsageError(f"an event is a JSON object, not {type(event).__name__}")
    data = dict(event)
    if data.pop("format", 1) != 1:
        raise UsageError('an event line of another format: expected "format": 1')
    from pydantic import ValidationError  # an event from outside: the boundary checks it

    try:
        return checked_event(data)
    except ValidationError as exc:
        problems = "; ".join(field_problem(e, "event") for e in exc.errors())
        raise UsageError(f"not a plangraph event: {problems}") from None


def _record(event: Event) -> Evidence:
    """The evidence record *event* carries, checked to be about the event's own criterion."""
    from pydantic import ValidationError

    try:
        record = checked_evidence(event.payload)
    except ValidationError as exc:
        problem = field_problem(exc.errors()[0])
        raise UsageError(f"the event's payload is not an evidence record: {problem}") from None
    if (record.node, record.criterion) != (event.node, event.criterion):
        raise UsageError(
            f"the event is about {event.node}/{event.criterion} but its record about {record.ref}"
        )
    return record


def _trusted(event: Event, content_id: str) -> None:
    """:class:`SignatureError` unless the gate would count *event* under this process's keys."""
    from .store.trust import policy_from_env

    policy = policy_from_env()
    if not policy.configured:
        raise SignatureError(
            "no key is configured (PLANGRAPH_TRUSTED_KEYS or PLANGRAPH_SIGNING_KEY), so no "
            "signature can be checked and no evidence is received; configure the keys the gate "
            "trusts (docs/trust.md) where the server runs",
            NO_TRUSTED_KEYS,
        )
    chain = (event.prev, event.hash, event.signature or "")
    code = policy.check(event.kind, event.payload, content_id, chain)
    if code is not None:
        raise SignatureError(_WHY[code], code)


_WHY = {
    "UNSIGNED_EVENT": "the event carries no signature; only evidence signed by a key trusted "
    "for role ci is stored (sign where it is recorded: PLANGRAPH_SIGNING_KEY_FILE)",
    "BAD_SIGNATURE": "the signature does not verify: the event was changed after it was signed, "
    "or the signature was made for another event",
    "UNTRUSTED_KEY": "the event is signed by a key that is not in the trusted-keys file "
    "(PLANGRAPH_TRUSTED_KEYS)",
    "ROLE_NOT_TRUSTED": "the event is signed by a trusted key without the role ci, which "
    "evidence needs",
}
