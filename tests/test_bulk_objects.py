"""bulk_objects pauses the cyclic garbage collector for a whole export and always restores it;
long_lived_objects also leaves what was made out of its scans until thawed_at_end."""

import gc
import weakref

import pytest

from pipeline.support.bulk import bulk_objects, long_lived_objects, thawed_at_end


def test_the_collector_is_paused_inside_and_restored_after_even_on_error():
    assert gc.isenabled()
    with bulk_objects():
        assert not gc.isenabled()
        with bulk_objects():  # nested: the outermost restores it
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError), bulk_objects():
        raise ValueError("a document that does not fit")
    assert gc.isenabled()


def test_a_collector_paused_by_the_caller_stays_paused():
    gc.disable()
    try:
        with bulk_objects():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


class _Node:
    """An object the collector tracks, in a cycle with itself."""

    def __init__(self) -> None:
        self.me = self


def test_long_lived_objects_are_made_with_the_collector_paused_then_frozen_until_the_end():
    assert gc.get_freeze_count() == 0
    with thawed_at_end():
        with long_lived_objects():
            assert not gc.isenabled()
            made = [_Node() for _ in range(1_000)]
        assert gc.isenabled()
        assert gc.get_freeze_count() >= len(made)  # everything alive, these among them
        watched = weakref.ref(made[0])
        del made
        gc.collect()
        assert watched() is not None  # a frozen cycle is not collected...
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert watched() is None  # ...until handed back


def test_frozen_objects_are_handed_back_even_on_error_and_a_paused_collector_stays_paused():
    with pytest.raises(ValueError), thawed_at_end(), long_lived_objects():
        raise ValueError("a definition that does not load")
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    gc.disable()
    try:
        with thawed_at_end(), long_lived_objects():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
