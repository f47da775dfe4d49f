"""`fewer_collections`: the collector's young threshold is raised while simulating, and put
back afterwards, also when the simulation stops with an exception."""

from __future__ import annotations

import gc

import pytest

from sim.engine.collector import SIMULATION_GEN0_THRESHOLD, fewer_collections


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
