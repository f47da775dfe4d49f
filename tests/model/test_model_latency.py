"""Latency presets match their stated figures; overrides and the endpoint's factor apply."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.model_support import body, events_of, make_model, stream_of, timed, without_pings
from toolturn.model.config import LatencyConfig
from toolturn.model.latency import PRESETS, resolve_latency, token_gap_for_rate
from toolturn.model.response import Turn
from toolturn.randomness import stream

# profile -> (median ms to first token, mean output tokens/s), as stated in
# toolturn/model/latency.py
STATED = {"haiku": (500, 70), "sonnet": (1500, 78), "opus": (2500, 48)}
# The published ranges the presets must sit in (issue 4).
RANGES = {
    "haiku": ((400, 600), (50, 90)),
    "sonnet": ((1200, 1800), (60, 95)),
    "opus": ((2200, 2800), (40, 55)),
}


@pytest.mark.parametrize("profile", sorted(PRESETS))
def test_preset_medians_match_their_stated_figures(profile: str) -> None:
    preset = PRESETS[profile]  # type: ignore[index]
    ttft_ms = np.median(preset.ttft.sample_many_ns(stream(1, "ttft", profile), 20_000)) / 1e6
    # Speed of a 300-token response, median over 2,000 responses.
    gaps = preset.token_gap.sample_many_ns(
        stream(1, "gap", profile), 300 * 2_000
    ).reshape(2_000, 300)
    speed = np.median(300 / (gaps.sum(axis=1) / 1e9))
    stated_ttft, stated_speed = STATED[profile]
    assert abs(ttft_ms / stated_ttft - 1) < 0.03
    assert abs(speed / stated_speed - 1) < 0.05
    (ttft_low, ttft_high), (speed_low, speed_high) = RANGES[profile]
    assert ttft_low <= stated_ttft <= ttft_high and speed_low <= stated_speed <= speed_high


def test_a_rate_sets_the_mean_gap() -> None:
    gap = token_gap_for_rate(50.0)
    assert abs(gap.mean_ns() - 20_000_000) < 1
    assert gap.median_ms < 20.0  # lognormal: the median sits below the mean


def test_overrides_replace_only_what_they_name() -> None:
    latency = resolve_latency("opus", LatencyConfig(tokens_per_s=100, ping_interval_ms=2_000))
    assert latency.ttft == PRESETS["opus"].ttft
    assert abs(latency.token_gap.mean_ns() - 10_000_000) < 1
    assert latency.ping_interval_ns == 2_000_000_000


def test_model_start_times_follow_the_profile() -> None:
    for profile, (stated_ttft, _) in STATED.items():
        model = make_model(profile=profile, script={"kind": "generated", "end_probability": 1.0})
        starts = sorted(
            stream_of(model.respond(body(model), Turn(s, 0))).times[0] for s in range(300)
        )
        assert abs(starts[150] / 1e6 / stated_ttft - 1) < 0.08


def test_utilisation_stretches_every_latency_by_the_endpoints_factor() -> None:
    fixed = {
        "ttft": {"kind": "fixed", "ms": 1000},
        "token_gap": {"kind": "fixed", "ms": 10},
        "block_gap": {"kind": "fixed", "ms": 5},
        "tool_use_pause": {"kind": "fixed", "ms": 100},
        "json_chunk_gap": {"kind": "fixed", "ms": 1},
    }
    model = make_model(latency=fixed, endpoint={"capacity": 10, "latency_growth": 1.0})
    idle = stream_of(model.respond(body(model), Turn(1, 1), utilisation=0.0))
    busy = stream_of(model.respond(body(model), Turn(1, 1), utilisation=1.0))
    assert without_pings(events_of(idle)) == without_pings(events_of(busy))
    idle_times = [t for t, e in timed(idle) if e["type"] != "ping"]
    busy_times = [t for t, e in timed(busy) if e["type"] != "ping"]
    assert busy_times == [2 * t for t in idle_times]
