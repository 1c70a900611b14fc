"""The evidence store: an append-only, hash-chained SQLite event log (DESIGN §9).

::

    from pytest_plangraph.store.sqlite import Store

    with Store.open(root / DEFAULT_STORE) as store:
        stored = store.append(event, expected_plan_version=3)
        problems = store.verify()

``schema.py`` holds the tables and ``SCHEMA_VERSION``, ``chain.py`` the hash chain and signatures,
``faults.py`` the errors a person sees, ``exchange.py`` export and merge, ``filecache.py`` the
file-hash cache, ``sqlite.py`` the :class:`Store` itself, ``glance.py`` the head read by a
status answered from the kept state. Nothing else in the project writes SQL.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .sqlite import Store

__all__ = ["Store"]


def __getattr__(name: str) -> Any:
    # Kept for the store modules that name the package's Store, and imported on first use:
    # a status answered from the kept state reads the head alone (glance.py), without the
    # modules the Store needs for everything else.
    if name == "Store":
        from .sqlite import Store

        return Store
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
