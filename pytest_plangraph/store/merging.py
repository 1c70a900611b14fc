"""Reading the inputs of ``plangraph merge``: another store file, checked before anything of
it is taken (a missing file, an export, a damaged or foreign file, a chain that does not
verify are each refused by name)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from ..errors import StoreError
from ..plan.model import Event
from .chain import ChainProblem
from .exchange import PlanVersion


class SourceStore(Protocol):
    """What merging reads of a store it opened: its chain's problems, events and plans."""

    def __enter__(self) -> SourceStore: ...

    def __exit__(self, *exc: object) -> None: ...

    def verify(self) -> Sequence[ChainProblem]: ...

    def events(self) -> list[Event]: ...

    def plans(self) -> list[PlanVersion]: ...


class StoreOpener(Protocol):
    """How a store file is opened (:meth:`pytest_plangraph.store.sqlite.Store.open`)."""

    def __call__(
        self, path: Path, *, create: bool, readonly: bool, signing_key: bytes | None
    ) -> SourceStore: ...


def load_source(
    source: Path, key: bytes | None, open_store: StoreOpener
) -> tuple[list[Event], list[PlanVersion]]:
    """The events and plan versions of the store at *source*, whose chain (and signatures,
    with *key*) verify; :class:`StoreError` naming *source* otherwise. *open_store* opens a
    store file (the store module passes :meth:`Store.open
    <pytest_plangraph.store.sqlite.Store.open>`, so this module need not import it)."""

    if not source.is_file():
        raise StoreError(
            f"cannot merge {source}: there is no store file there; name the store files to "
            "merge, e.g. another checkout's .plangraph/store.db or a CI job's copy"
        )
    with source.open("rb") as handle:
        if handle.read(1) == b"{":
            raise StoreError(
                f"cannot merge {source}: it is an export (JSON Lines), not a store; merge "
                "takes store files, e.g. another checkout's .plangraph/store.db"
            )
    try:
        other = open_store(source, create=False, readonly=True, signing_key=key)
    except StoreError as exc:
        reason = _without_store_advice(str(exc))
        raise StoreError(f"cannot merge {source}: {reason}; nothing was merged") from None
    with other:
        problems = [p for p in other.verify() if p.seq > 0]
        if problems:
            raise StoreError(
                f"refusing to merge {source}: its chain does not verify ({len(problems)} "
                f"problem(s), first: {problems[0]}); nothing was merged"
            )
        return other.events(), other.plans()


_STORE_ADVICE = re.compile(
    r"(?:[.;,]? (?:Restore it from|[Pp]ass --store|or pass --store)[^.]*)+\.?$"
)


def _without_store_advice(message: str) -> str:
    """*message* of a store that cannot be opened, without its closing advice (restore the
    file, pass --store): merging, that file is an input, and --store names the target."""
    return _STORE_ADVICE.sub("", message).rstrip(" .;—")
