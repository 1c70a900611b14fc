"""The evidence store: an append-only, hash-chained SQLite event log (DESIGN §9).

::

    from pytest_plangraph.store.sqlite import Store

    with Store.open(root / DEFAULT_STORE) as store:
        stored = store.append(event, expected_plan_version=3)
        problems = store.verify()

``schema.py`` holds the tables and ``SCHEMA_VERSION``, ``chain.py`` the hash chain and signatures,
``faults.py`` the errors a person sees, ``exchange.py`` export and merge, ``filecache.py`` the
file-hash cache, ``sqlite.py`` the :class:`Store` itself. Nothing else in the project writes SQL.
"""

from __future__ import annotations

# Kept for the store modules that name the package's Store; every other module imports each
# name from the module that defines it.
from .sqlite import Store

__all__ = ["Store"]
