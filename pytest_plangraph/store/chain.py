"""The hash chain and signatures over events (pure: values in, values out).

For the event at position ``seq`` of a store::

    id        = sha256(canonical_json(event.content()))        content address, same in every store
    prev      = hash of the event at seq - 1, or "" for the first event
    hash      = sha256((prev + id).encode("utf-8"))             hex digests, concatenated as text
    signature = HMAC-SHA256(key, hash.encode("utf-8")) hex    only when a signing key is set

Editing an event's content changes its id (``CONTENT_TAMPERED``); fixing up the id breaks its hash,
fixing the hash breaks the next event's ``prev`` (``CHAIN_BROKEN``); rewriting the whole tail is
caught by the signatures when a key is set (``BAD_SIGNATURE``). Removing the last events cannot be
seen from the chain alone; exported copies and merged stores keep them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from json.encoder import encode_basestring
from operator import attrgetter
from typing import Any, NamedTuple

from ..canonical import canonical_json, digest
from ..hashes import sha256, sha256_hex
from ..plan.frozen import builder_of, builder_source
from ..plan.model import Event
from ..values import dataclass

SIGNING_KEY_ENV = "PLANGRAPH_SIGNING_KEY"

CHAIN_BROKEN = "CHAIN_BROKEN"
CONTENT_TAMPERED = "CONTENT_TAMPERED"
BAD_SIGNATURE = "BAD_SIGNATURE"
UNSIGNED = "UNSIGNED"
APPEND_ONLY_DISABLED = "APPEND_ONLY_DISABLED"
LOG_MISMATCH = "LOG_MISMATCH"


@dataclass(frozen=True)
class ChainProblem:
    """One finding of :func:`verify_events` / ``Store.verify``; ``seq`` 0 means the whole store."""

    seq: int
    event_id: str
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


def signing_key_from_env() -> bytes | None:
    """The key in ``PLANGRAPH_SIGNING_KEY`` (its bytes as the environment holds them, UTF-8
    or not), or None when it is unset or empty."""
    value = os.environ.get(SIGNING_KEY_ENV)
    return os.fsencode(value) if value else None


_CONTENT_FIELDS = tuple(
    name for name in Event.FIELDS if name not in {"id", "seq", "prev", "hash", "signature"}
)
"""The fields of an event's content address (:meth:`Event.content`)."""


def event_id(event: Event) -> str:
    """The content address of an event: sha256 of the canonical JSON of ``event.content()``."""
    return digest(event.content())


def event_id_of(event: Event, payload_text: str) -> str:
    """:func:`event_id` of *event* whose payload's canonical JSON is *payload_text* (encoded
    once for the store's row): the payload is not dumped and encoded again."""
    return event_ids_of([event], [payload_text])[0]


_CONTENT_ORDER = tuple(sorted(_CONTENT_FIELDS))
"""The content fields in canonical order."""


def event_ids_of(events: Iterable[Event], payload_texts: Iterable[str]) -> list[str]:
    """:func:`event_id_of` of each event with its payload's text, in one pass: the values
    several events share (the time, the actor, the kind and the plan's digest of one run) are
    encoded once, into the text before, between and after the two members each event has of
    its own (its criterion and node: text, or null), and each event's text is those joined
    around its payload's in canonical order; an event of other values is joined member by
    member. The digests are taken from one empty sha256 copied for each event."""
    joined: dict[tuple[Any, ...], tuple[str, str, str, str] | None] = {}
    encoded: dict[tuple[str, str | None], str] = {}
    texts = list(payload_texts)
    start = sha256(b"", expected=sum(map(len, texts)))  # chosen for the batch's bytes
    ids = []
    for event, text in zip(events, texts, strict=True):
        shared = _SHARED_OF(event)
        frame = joined.get(shared)
        if frame is None and shared not in joined:
            frame = joined[shared] = _frame(shared)
        criterion, node = _OWN_OF(event)
        if (
            frame is None
            or (criterion is not None and type(criterion) is not str)  # _plain, no call made
            or (node is not None and type(node) is not str)
        ):
            content = _members(event, text, encoded)
        else:
            before, between, before_payload, after = frame
            content = "".join(
                [
                    before,
                    "null" if criterion is None else encode_basestring(criterion),
                    between,
                    "null" if node is None else encode_basestring(node),
                    before_payload,
                    text,
                    after,
                ]
            )
        digest_of = start.copy()
        digest_of.update(content.encode("utf-8"))
        ids.append(digest_of.hexdigest())
    return ids


_SHARED = ("at", "by", "idempotency_key", "kind", "plan_digest")
"""The content fields the events of one batch mostly share."""
_SHARED_OF = attrgetter(*_SHARED)
_OWN_OF = attrgetter("criterion", "node")


def _plain(value: object) -> bool:
    """Text or None: a value encoded as the encoder's string function (or ``null``) has it."""
    return value is None or type(value) is str


def _frame(shared: tuple[Any, ...]) -> tuple[str, str, str, str] | None:
    """The canonical text of an event's content around its criterion, its node and its
    payload, for the values of :data:`_SHARED` (None when one is not text or None)."""
    if not all(_plain(value) for value in shared):
        return None
    at, by, key, kind, plan_digest = (canonical_json(value) for value in shared)
    return (
        f'{{"at":{at},"by":{by},"criterion":',
        f',"idempotency_key":{key},"kind":{kind},"node":',
        ',"payload":',
        f',"plan_digest":{plan_digest}}}',
    )


def _members(event: Event, text: str, encoded: dict[tuple[str, str | None], str]) -> str:
    """The canonical text of *event*'s content, member by member (each text or None value
    encoded once per batch), its payload's text *text*."""
    parts = []
    for name in _CONTENT_ORDER:
        if name == "payload":
            parts.append('"payload":' + text)
            continue
        value = getattr(event, name)
        if value is None or type(value) is str:
            found = encoded.get((name, value))
            if found is None:
                found = encoded[(name, value)] = _MEMBER[name] + canonical_json(value)
        else:  # not a value the event model holds: encoded as it is
            found = _MEMBER[name] + canonical_json(value)
        parts.append(found)
    return "{" + ",".join(parts) + "}"


_MEMBER = {name: canonical_json(name) + ":" for name in _CONTENT_ORDER}
"""``"name":`` of each content field."""


def chain_hash(prev: str, content_id: str) -> str:
    """``sha256(prev + id)`` as hex."""
    return sha256_hex((prev + content_id).encode("utf-8"))


def _same(a: bytes, b: bytes) -> bool:
    """``hmac.compare_digest`` (imported with a key alone: :mod:`hmac` loads OpenSSL)."""
    import hmac

    return hmac.compare_digest(a, b)


def sign(key: bytes, link_hash: str) -> str:
    """``HMAC-SHA256(key, hash)`` as hex."""
    import hashlib  # with a key alone (OpenSSL's: see :mod:`...hashes`)
    import hmac

    return hmac.new(key, link_hash.encode("utf-8"), hashlib.sha256).hexdigest()


def seal(
    event: Event, seq: int, prev: str, key: bytes | None, content_id: str | None = None
) -> Event:
    """The event as stored at position *seq* after *prev*, with id, hash and signature filled.

    *content_id* saves recomputing an id the caller already has; it must be ``event_id(event)``.
    """
    content_id = content_id or event_id(event)
    link = chain_hash(prev, content_id)
    signature = sign(key, link) if key is not None else None
    cls = type(event)
    if cls is not Event:  # a subclass: copied field by field
        return event.replace(id=content_id, seq=seq, prev=prev, hash=link, signature=signature)
    given = event.fields_set
    found = _SEALING.get(given)
    if found is None:
        names = tuple(name for name in Event.FIELDS if name in given and name not in _CHAIN)
        found = _SEALING[given] = (names, attrgetter(*names, "kind"))  # a tuple, always
    names, values_of = found
    data = dict(zip(names, values_of(event)[:-1], strict=True))
    data.update(id=content_id, seq=seq, prev=prev, hash=link, signature=signature)
    # the fields given with the chain's, as Frozen.replace gives them: built from the data
    sealed: Event = builder_of(Event)(data)
    return sealed


def seal_many(
    fresh: Iterable[tuple[Event, str]], seq: int, prev: str, key: bytes | None
) -> list[Event]:
    """:func:`seal` of each event of *fresh* (with its content id), chained in that order after
    position *seq* whose hash is *prev*: the same events, each sealed by the function written
    once for its set of given fields (:func:`_sealer`), each link hashed from one copied
    sha256."""
    sealers = _SEALERS
    start = sha256(b"")  # copied for each link: the hash object made once
    sealed: list[Event] = []
    append = sealed.append
    for event, content_id in fresh:
        seq += 1
        if type(event) is not Event:  # a subclass: as seal() copies it
            stored = seal(event, seq, prev, key, content_id)
            append(stored)
            prev = stored.hash
            continue
        content_id = content_id or event_id(event)
        hashed = start.copy()  # chain_hash
        hashed.update((prev + content_id).encode("utf-8"))
        link = hashed.hexdigest()
        given = event.fields_set
        sealer = sealers[given] if given in sealers else _sealer(given)
        if sealer is None:  # a required field not given: seal() says what is wrong
            append(seal(event, seq, prev, key, content_id))
        else:
            signature = sign(key, link) if key is not None else None
            append(sealer(event, content_id, seq, prev, link, signature))
        prev = link
    return sealed


_SEALERS: dict[frozenset[str], Callable[..., Event] | None] = {}
"""The function that seals an event of each set of given fields (:func:`_sealer`)."""


def _sealer(given: frozenset[str]) -> Callable[..., Event] | None:
    """The function ``seal_one(event, id, seq, prev, hash, signature)`` that makes the event
    :func:`seal` makes of an :class:`Event` whose given fields are *given*: its content
    fields stored straight into a new value's slots (the others their defaults, as the
    builder stores them), then the chain's, ``fields_set`` the given and the chain's. Written
    once per set of given fields (a batch has one or two) as the record builders are
    (:func:`~pytest_plangraph.plan.frozen.builder_source`), not through a mapping of the
    fields and the builder reading it back. None when they lack a required field (then
    :func:`seal` refuses the event, as it did)."""
    if any(name not in given and name not in Event.DEFAULTS for name in Event.FIELDS):
        _SEALERS[given] = None  # as seal() builds it: refused
        return None
    twin = builder_source(Event)[1]["twin"]
    if twin is None:  # no class to store into (not one made directly on Frozen)
        _SEALERS[given] = None
        return None
    scope: dict[str, Any] = {"new": object.__new__, "twin": twin, "Event": Event}
    # the fields_set seal() gives: the content fields given (no other name) and the chain's
    scope["fields"] = frozenset(name for name in Event.FIELDS if name in given) | _CHAIN
    lines = ["def seal_one(event, id, seq, prev, hash, signature):", "    value = new(twin)"]
    for name in Event.FIELDS:
        if name in _CHAIN:
            lines.append(f"    value.{name} = {name}")
        elif name in given:
            lines.append(f"    value.{name} = event.{name}")
        elif isinstance(Event.DEFAULTS[name], type):  # a factory: a new value, as built
            scope[f"default_{name}"] = Event.DEFAULTS[name]
            lines.append(f"    value.{name} = default_{name}()")
        else:
            scope[f"default_{name}"] = Event.DEFAULTS[name]
            lines.append(f"    value.{name} = default_{name}")
    lines += ["    value.fields_set = fields", "    value.__class__ = Event", "    return value"]
    exec("\n".join(lines), scope)  # the source made from the class's own fields
    sealer: Callable[..., Event] = scope["seal_one"]
    _SEALERS[given] = sealer
    return sealer


_CHAIN = frozenset({"id", "seq", "prev", "hash", "signature"})
"""The fields :func:`seal` fills in."""
_SEALING: dict[frozenset[str], tuple[tuple[str, ...], Callable[[Event], Any]]] = {}
"""The content fields an event gives (by its ``fields_set``), and what reads them, kept per
distinct set: an event is sealed by building it from those values and the chain's."""


class Link(NamedTuple):
    """The chain fields of one stored event, taken as they are (even from a damaged row)."""

    seq: int
    id: str
    prev: str
    hash: str
    signature: str | None

    @classmethod
    def of(cls, event: Event) -> Link:
        """The link of a stored event."""
        return cls(event.seq, event.id, event.prev, event.hash, event.signature)


def check_link(
    event: Link, computed_id: str | None, expected_prev: str, key: bytes | None
) -> list[ChainProblem]:
    """Problems of one stored event. *computed_id* is None when its content could not be read."""
    problems: list[ChainProblem] = []
    where = f"event {event.seq} ({event.id[:12] or 'no id'})"

    def add(code: str, message: str) -> None:
        problems.append(ChainProblem(event.seq, event.id, code, f"{where}: {message}"))

    if computed_id is None:
        add(CONTENT_TAMPERED, "its content cannot be read; it was edited outside plangraph")
    elif computed_id != event.id:
        add(CONTENT_TAMPERED, "its content does not match its id; it was edited after recording")
    if event.prev != expected_prev:
        add(CHAIN_BROKEN, "its prev does not match the hash of the event before it")
    if event.hash != chain_hash(event.prev, event.id):
        add(CHAIN_BROKEN, "its hash is not sha256(prev + id)")
    if key is not None and not str(event.signature or "").startswith("ed25519:"):
        # An Ed25519 signature is checked against the trusted public keys (store/trust.py).
        if not event.signature:
            add(UNSIGNED, "it has no signature although a signing key is set")
        elif not _same(event.signature.encode(), sign(key, event.hash).encode()):
            add(BAD_SIGNATURE, "its signature does not match (wrong key or forged event)")
    return problems


def verify_events(events: Iterable[Event], key: bytes | None) -> list[ChainProblem]:
    """Check ids, the chain and (with *key*) signatures of events in chain order."""
    problems: list[ChainProblem] = []
    prev = ""
    for event in events:
        problems.extend(check_link(Link.of(event), event_id(event), prev, key))
        prev = event.hash
    return problems
