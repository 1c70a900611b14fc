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
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
