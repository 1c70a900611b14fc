"""Reading the inputs of ``plangraph merge``: another store file, checked before anything of
it is taken (a missing file, an export, a damaged or foreign file, a chain that does not
verify are each refused by name)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..errors import StoreError
from ..plan.model import Event
from .chain import ChainProblem
from .exchange import MergeResult, PlanVersion, new_plans, union
from .planrows import check_plan_rows
from .rows import add_plan
from .signatures import is_ed25519


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
        try:
            return other.events(), other.plans()
        except StoreError as exc:
            reason = _without_store_advice(str(exc))
            raise StoreError(f"cannot merge {source}: {reason}; nothing was merged") from None


_STORE_ADVICE = re.compile(
    r"(?:[.;,]? (?:Restore it from|[Pp]ass --store|or pass --store)[^.]*)+\.?$"
)


def _without_store_advice(message: str) -> str:
    """*message* of a store that cannot be opened, without its closing advice (restore the
    file, pass --store): merging, that file is an input, and --store names the target."""
    return _STORE_ADVICE.sub("", message).rstrip(" .;—")


class Merging:
    """``plangraph merge`` as a mixin of :class:`~pytest_plangraph.store.sqlite.Store`."""

    if TYPE_CHECKING:
        _key: bytes | None
        path: Path

        def _signer_checked(self) -> None: ...

        def _transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...

        def _insert(
            self,
            con: sqlite3.Connection,
            fresh: Sequence[tuple[Event, str]],
            *,
            merged: bool = False,
        ) -> list[Event]: ...

        @classmethod
        def open(
            cls, path: Path, *, create: bool, readonly: bool, signing_key: bytes | None
        ) -> SourceStore: ...

    def merge(
        self,
        sources: Sequence[Path],
        *,
        loaded: Sequence[tuple[list[Event], list[PlanVersion]]] | None = None,
    ) -> MergeResult:
        """Union the events of other stores into this one, re-chained here (idempotent).

        Each source's chain (with this store's key, its signatures too) is verified first; a
        source that fails is refused by name and nothing is written. Plan digests new to this
        store are numbered in order of first appearance. Merged events are chained (and, with a
        key, signed) anew here; without a key, a source's signatures are not checked and the
        result counts the signed events added unsigned. *loaded* are the sources as
        :func:`~pytest_plangraph.store.merging.load_source` read them, when the caller checked
        them before this store was opened.
        """
        if loaded is None:
            loaded = [load_source(Path(source), self._key, self.open) for source in sources]
        self._signer_checked()
        with self._transaction() as con:
            check_plan_rows(con, self.path)
            known = {row[0] for row in con.execute("SELECT digest FROM plans")}
            plans = new_plans([plans for _, plans in loaded], known)
            for plan in plans:
                add_plan(con, plan)
            ids = {row[0] for row in con.execute("SELECT id FROM events")}
            keys = {
                str(key): (str(kind), node, criterion)
                for key, kind, node, criterion in con.execute(
                    "SELECT idempotency_key, kind, node, criterion FROM events "
                    "WHERE idempotency_key IS NOT NULL"
                )
            }
            fresh = union([events for events, _ in loaded], ids, keys)
            # verified on loading
            self._insert(con, [(event, event.id) for event in fresh], merged=True)
        total = sum(len(events) for events, _ in loaded)
        unchecked = (
            0
            if self._key is not None
            else sum(1 for e in fresh if e.signature and not is_ed25519(e.signature))
        )
        return MergeResult(len(fresh), total - len(fresh), len(plans), unchecked)
