"""The SDK is warmed before a live run's clock starts (`toolturn.live.warm_up`): one request
answered in memory, with every kind of event, and `run_live` makes it before its first unit."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import toolturn.fidelity.live_run as live_run
from tests.helpers.engine_runs import default_scenario
from toolturn.fidelity.settings import LiveSettings
from toolturn.live.warm_up import warm_up_sdk


def test_the_warm_up_reads_a_whole_stream_without_a_server() -> None:
    # 15 events sent; the SDK drops the ping.
    assert asyncio.run(warm_up_sdk()) == 14


def test_run_live_warms_the_sdk_before_its_first_unit(monkeypatch: pytest.MonkeyPatch) -> None:
    order: list[str] = []

    async def warm_up() -> int:
        order.append("warm up")
        return 0

    async def run_unit(*args: Any, **kwargs: Any) -> Any:
        order.append("unit")
        raise RuntimeError("stop here")

    monkeypatch.setattr(live_run, "warm_up_sdk", warm_up)
    monkeypatch.setattr(live_run, "run_unit", run_unit)
    with pytest.raises(RuntimeError, match="stop here"):
        asyncio.run(live_run.run_live(default_scenario(2), LiveSettings(speed=1.0)))
    assert order == ["warm up", "unit"]
