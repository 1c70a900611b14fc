"""The events of the store's log as runtime values: plain frozen classes (pure, no I/O, no
pydantic); :mod:`.boundary` holds the pydantic model that checks an event given from outside."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, get_args

from .evidence import Evidence, checked_evidence
from .frozen import Frozen
from .names import EventKind

if TYPE_CHECKING:
    pass

EVENT_KINDS: tuple[str, ...] = get_args(EventKind)
_CHAIN_FIELDS = frozenset({"id", "seq", "prev", "hash", "signature"})


class Event(Frozen):
    """One append-only entry of the store. Status is derived from these, never stored.

    ``id`` addresses the content (everything but the chain fields), so merging stores is a
    union; ``seq``, ``prev``, ``hash`` and ``signature`` belong to one store's chain. Events
    given to the store were checked where they were made (the API) or read
    (:func:`~.boundary.runtime_event`); the store checks their chain and signatures.
    """

    __slots__ = (
        "at",
        "by",
        "criterion",
        "hash",
        "id",
        "idempotency_key",
        "kind",
        "node",
        "payload",
        "plan_digest",
        "prev",
        "seq",
        "signature",
    )
    DEFAULTS: ClassVar[Mapping[str, Any]] = {
        "id": "",
        "seq": 0,
        "node": None,
        "criterion": None,
        "payload": dict,
        "idempotency_key": None,
        "prev": "",
        "hash": "",
        "signature": None,
    }

    id: str
    seq: int
    kind: EventKind
    node: str | None
    criterion: str | None
    at: str
    by: str
    plan_digest: str
    payload: dict[str, Any]
    idempotency_key: str | None
    prev: str
    hash: str
    signature: str | None

    def content(self) -> dict[str, Any]:
        """The content-addressed part: everything but id and the chain fields."""
        return self.to_json(exclude=_CHAIN_FIELDS)

    @property
    def evidence(self) -> Evidence | None:
        """The evidence record carried by an ``evidence`` event (ValueError when its payload
        is not one: the store checks every record it is given, so only an edited store has
        such a payload)."""
        if self.kind != "evidence":
            return None
        return checked_evidence(self.payload)


class LoggedEvent(Protocol):
    """What derivation reads of an event: a stored :class:`Event`, or the lighter row
    :meth:`Store.log <pytest_plangraph.store.Store.log>` reads for status (the store hands over
    light rows, the judge and the store's trust screen read them)."""

    @property
    def seq(self) -> int: ...
    @property
    def id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def node(self) -> str | None: ...
    @property
    def criterion(self) -> str | None: ...
    @property
    def by(self) -> str: ...
    @property
    def payload(self) -> Mapping[str, Any]: ...


def checked_event(data: Any) -> Event:
    """Validate *data* (an event as an exported store writes it: input from outside) with the
    pydantic model of the boundary and return the runtime event (``pydantic.ValidationError``,
    a ValueError, when it is not one)."""
    from .boundary import Event as EventModel

    return Event(**EventModel.model_validate(data).model_dump())
