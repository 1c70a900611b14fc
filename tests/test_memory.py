"""collector_paused: what the block builds is kept, garbage made before it is not promoted."""

from __future__ import annotations

import gc
import weakref

from pytest_plangraph.memory import collector_paused


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def _cycle() -> weakref.ref[_Node]:
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_cyclic_garbage_made_before_the_block_is_collected_not_promoted() -> None:
    gc.collect()
    gone = _cycle()  # unreachable, but a cycle: only the collector frees it
    assert gone() is not None
    with collector_paused():
        built = [{"n": i} for i in range(1000)]
    assert gone() is None
    assert gc.isenabled() and len(built) == 1000


def test_nested_blocks_restore_the_collector() -> None:
    with collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_objects_frozen_by_the_application_stay_frozen() -> None:
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with collector_paused():
            pass
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
