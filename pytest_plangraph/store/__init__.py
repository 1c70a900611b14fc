"""The evidence store: an append-only, hash-chained SQLite event log (DESIGN §9).

::

    from pytest_plangraph.store import Store

    with Store.open(root / DEFAULT_STORE) as store:
        stored = store.append(event, expected_plan_version=3)
        problems = store.verify()

``schema.py`` holds the tables and ``SCHEMA_VERSION``, ``chain.py`` the hash chain and signatures,
``faults.py`` the errors a person sees, ``exchange.py`` export and merge, ``filecache.py`` the
file-hash cache, ``sqlite.py`` the :class:`Store` itself. Nothing else in the project writes SQL.
"""

from __future__ import annotations

from ..vcs.environment import DEFAULT_STORE
from .chain import (
    APPEND_ONLY_DISABLED,
    BAD_SIGNATURE,
    CHAIN_BROKEN,
    CONTENT_TAMPERED,
    LOG_MISMATCH,
    UNSIGNED,
    ChainProblem,
    chain_hash,
    event_id,
    verify_events,
)
from .exchange import MergeResult, PlanVersion, read_jsonl
from .filecache import CacheEntry
from .schema import SCHEMA_VERSION
from .sqlite import Store

__all__ = [
    "APPEND_ONLY_DISABLED",
    "BAD_SIGNATURE",
    "CHAIN_BROKEN",
    "CONTENT_TAMPERED",
    "DEFAULT_STORE",
    "LOG_MISMATCH",
    "SCHEMA_VERSION",
    "UNSIGNED",
    "CacheEntry",
    "ChainProblem",
    "MergeResult",
    "PlanVersion",
    "Store",
    "chain_hash",
    "event_id",
    "read_jsonl",
    "verify_events",
]
