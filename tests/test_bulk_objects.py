"""bulk_objects pauses the cyclic garbage collector over a chunk's parse and always restores it."""

import gc

import pytest

from pipeline.support.bulk import bulk_objects


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
