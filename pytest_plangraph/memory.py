"""One helper for the places that build large, acyclic object graphs in one go."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (re-entrant: restores the state it found).

    Reading a large log or plan allocates many small containers and no reference cycles; every
    full collection those allocations trigger would walk everything built so far, again.

    The young generations are collected on the way in, so that only what the block builds is
    young on the way out; that is then moved to the oldest generation without being scanned
    (``gc.freeze()`` then ``gc.unfreeze()``), so the first young collection afterwards does not
    walk it all either. It stays collectable. Skipped when the application froze objects of its
    own, which must stay frozen.
    """
    enabled = gc.isenabled()
    promote = enabled and gc.get_freeze_count() == 0
    if promote:
        gc.collect(1)  # garbage made before the block is not promoted with what it builds
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if promote and gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
