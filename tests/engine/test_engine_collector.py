"""`fewer_collections`: the collector's young threshold is raised and what existed is frozen
while simulating, and both are put back afterwards, also when the simulation stops with an
exception; a caller's own freeze is left alone."""

from __future__ import annotations

import gc

import pytest

from toolturn.engine.collector import SIMULATION_GEN0_THRESHOLD, fewer_collections


def test_the_threshold_is_raised_inside_and_restored_after() -> None:
    before = gc.get_threshold()
    with fewer_collections():
        assert gc.get_threshold() == (max(before[0], SIMULATION_GEN0_THRESHOLD), *before[1:])
    assert gc.get_threshold() == before


def test_restored_after_an_exception() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), fewer_collections():
        raise RuntimeError("strict mode stop")
    assert gc.get_threshold() == before


def test_what_existed_is_frozen_inside_and_thawed_after() -> None:
    assert gc.get_freeze_count() == 0
    with fewer_collections():
        assert gc.get_freeze_count() > 0
        made_inside = [[]]
        assert gc.is_tracked(made_inside)
    assert gc.get_freeze_count() == 0


def test_a_callers_own_freeze_is_left_alone() -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with fewer_collections():
            assert gc.get_freeze_count() == frozen
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_thawed_after_an_exception() -> None:
    with pytest.raises(RuntimeError), fewer_collections():
        raise RuntimeError("strict mode stop")
    assert gc.get_freeze_count() == 0
