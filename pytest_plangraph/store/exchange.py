"""Moving events between stores: JSON Lines export and the pieces of a merge (pure).

Export format (``plangraph export``): UTF-8 JSON Lines, one event per line in chain order, each line
the canonical JSON of the event with every field — content, ``id``, ``seq``, ``prev``, ``hash`` and
``signature`` — plus ``"format": 1``. There is no header line, so every line is an event and the
file can be split, grepped or streamed; :func:`verify_events` checks an export's chain exactly as
``Store.verify`` checks a store.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TextIO

from ..canonical import canonical_json, json_loads
from ..errors import ConflictError, StoreError
from ..plan.model import FORMAT_VERSION, Event, checked_event
from ..values import dataclass

__all__ = ["MergeResult", "PlanVersion", "new_plans", "read_jsonl", "union", "write_jsonl"]


@dataclass(frozen=True)
class PlanVersion:
    """A plan digest the store has seen and the version number it gave it."""

    digest: str
    plan_id: str
    version: int
    first_seen: str


@dataclass(frozen=True)
class MergeResult:
    """What ``Store.merge`` did: events added, events already present, plan versions added,
    and how many of the added events carried a signature that was not checked (this store has
    no signing key, so they are kept unsigned)."""

    added: int
    skipped: int
    plans_added: int
    unchecked_signatures: int = 0


def write_jsonl(events: Iterable[Event], out: TextIO) -> int:
    """Write *events* as JSON Lines to *out*; return how many were written."""
    count = 0
    for event in events:
        out.write(canonical_json({"format": FORMAT_VERSION, **event.to_json()}))
        out.write("\n")
        count += 1
    return count


def read_jsonl(lines: Iterable[str], source: str = "<export>") -> list[Event]:
    """Parse an export written by :func:`write_jsonl` (blank lines are ignored); each line is
    checked by the event model of the boundary, as input from outside."""
    events = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json_loads(line)
            if data.pop("format", None) != FORMAT_VERSION:
                raise ValueError(f'expected "format": {FORMAT_VERSION}')
            events.append(checked_event(data))
        except (ValueError, AttributeError) as exc:  # pydantic's ValidationError included
            raise StoreError(f"{source}:{number}: not a plangraph event line: {exc}") from exc
    return events


def union(
    sources: Sequence[Sequence[Event]], ids: set[str], keys: Mapping[str, Request]
) -> list[Event]:
    """Events of *sources* not already present, once each, in the order they were recorded:
    by time, and events of one time in their source's order (a batch stored at once, upstream
    first, stays so; see ``PlanGraph.record``), then by source.

    An event is present when its content id is in *ids* or its idempotency key is in *keys*
    (key → the request it was recorded for); the same key twice is one event, even when the
    two came from different shards. A key recorded for another request (another kind, node or
    criterion) raises :class:`ConflictError` (``IDEMPOTENCY_CONFLICT``): merging must not drop
    an event silently.
    """
    fresh: dict[str, Event] = {}
    known = dict(keys)
    taken = set(keys)
    every = [(e.at, n, i, e) for n, events in enumerate(sources) for i, e in enumerate(events)]
    for *_, event in sorted(every, key=lambda entry: entry[:3]):
        if event.id in ids or event.id in fresh:
            continue
        key = event.idempotency_key
        if key is not None:
            asked = request_of(event)
            recorded = known.setdefault(key, asked)
            if recorded != asked:
                raise ConflictError(
                    f"IDEMPOTENCY_CONFLICT: the idempotency key {key!r} names {_said(asked)} "
                    f"in one store and {_said(recorded)} in another; nothing was merged — "
                    "one of the two would be lost",
                    reason="IDEMPOTENCY_CONFLICT",
                )
            if key in taken:
                continue
            taken.add(key)
        fresh[event.id] = event
    return list(fresh.values())


Request = tuple[str, "str | None", "str | None"]
"""What an idempotency key was recorded for: the event's kind, node and criterion."""


def request_of(event: Event) -> Request:
    """The request *event* answers, as idempotency keys compare them."""
    return (event.kind, event.node, event.criterion)


def _said(request: Request) -> str:
    kind, node, criterion = request
    return f"a {kind} of {node}{f'/{criterion}' if criterion else ''}"


def new_plans(sources: Sequence[Sequence[PlanVersion]], known: set[str]) -> list[PlanVersion]:
    """Plan digests of *sources* not in *known*, once each, in order of first appearance.

    Order is by ``first_seen``, then by the order of the sources, then by the source's own
    number; the caller gives them the next free version numbers in that order.
    """
    ranked = sorted(
        ((index, plan) for index, plans in enumerate(sources) for plan in plans),
        key=lambda item: (item[1].first_seen, item[0], item[1].version),
    )
    fresh: dict[str, PlanVersion] = {}
    for _, plan in ranked:
        if plan.digest not in known and plan.digest not in fresh:
            fresh[plan.digest] = plan
    return list(fresh.values())


def same_request(event: Event, stored: Event) -> None:
    """Refuse *event* when its idempotency key was recorded for another request: another kind
    of event, node or criterion (the key would otherwise swallow it unrecorded). Who asked
    may differ: the same observation recorded by two people is one event."""
    asked, recorded = request_of(event), request_of(stored)
    if asked != recorded:
        what = " ".join(str(part) for part in recorded if part)
        raise ConflictError(
            f"IDEMPOTENCY_CONFLICT: the idempotency key {event.idempotency_key!r} was recorded "
            f"for another request ({what}); nothing was written — use a fresh key for each "
            f"distinct request",
            reason="IDEMPOTENCY_CONFLICT",
        )
