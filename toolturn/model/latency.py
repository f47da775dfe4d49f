"""Latency presets for the three model classes, and a scenario's overrides applied on top.

Calibration (medians; the spread is our choice, lognormal as latencies are right-skewed):

- Haiku class: first token ~0.5 s, 50-90 output tokens/s. Artificial Analysis measured Claude
  Haiku 4.5 at 0.48 s to first token and 53 tok/s on Anthropic's API, 88 tok/s on Vertex
  (as summarised at https://shadabchow.com/blogs/ai-models/claude-4-5-haiku-reasoning).
  Preset: ttft 500 ms, 70 tok/s.
- Sonnet class: first token 1.2-1.8 s, 60-95 tok/s. Artificial Analysis: Sonnet 4.5 at 1.80 s
  and 63 tok/s (https://lattice.uptownhr.com/claude-opus-4-5/speed-analysis); faster
  deployments reach ~90. Preset: ttft 1500 ms, 78 tok/s.
- Opus class: first token ~2.5 s, 40-55 tok/s. Artificial Analysis: Opus 4.1 at 2.67 s and
  45 tok/s (same page). Preset: ttft 2500 ms, 48 tok/s.

The ranges are the ones restated in issue 4. The pauses (before a tool_use block, between the
chunks of a JSON burst, between blocks) and the ping cadence are not published; they are set to
plausible values and can be overridden per scenario.

`longest_response_ns` is the other end: a response with every latency drawn at its largest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from toolturn.distributions import Distribution, Empirical, Fixed, LogNormal, Uniform, ms_to_ns
from toolturn.model.config import ExplicitScript, LatencyConfig, ModelConfig, ProfileName, Script

# Spread of one token's gap around its median. Wide per token, yet over a response of a few
# hundred tokens the speed settles close to the mean (the law of large numbers).
TOKEN_GAP_SIGMA = 0.5
TTFT_SIGMA = 0.3
# One pathological draw should not stall a simulated session for minutes.
TTFT_CAP_MS = 30_000.0
TOKEN_GAP_CAP_MS = 2_000.0


@dataclass(frozen=True, slots=True)
class Latency:
    """Every latency the model draws, resolved (preset plus overrides)."""

    ttft: Distribution
    token_gap: Distribution
    tool_use_pause: Distribution
    json_chunk_gap: Distribution
    block_gap: Distribution
    http_error_delay: Distribution
    ping_interval_ns: int


def token_gap_for_rate(tokens_per_s: float, sigma: float = TOKEN_GAP_SIGMA) -> LogNormal:
    """A lognormal gap whose mean is 1/`tokens_per_s`, so the speed over many tokens is the rate."""
    mean_ms = 1000.0 / tokens_per_s
    return LogNormal(
        kind="lognormal",
        median_ms=mean_ms / math.exp(sigma**2 / 2),
        sigma=sigma,
        max_ms=TOKEN_GAP_CAP_MS,
    )


def _lognormal(median_ms: float, sigma: float, max_ms: float | None = None) -> LogNormal:
    return LogNormal(kind="lognormal", median_ms=median_ms, sigma=sigma, max_ms=max_ms)


def _preset(ttft_ms: float, tokens_per_s: float, tool_use_pause_ms: float) -> Latency:
    return Latency(
        ttft=_lognormal(ttft_ms, TTFT_SIGMA, TTFT_CAP_MS),
        token_gap=token_gap_for_rate(tokens_per_s),
        tool_use_pause=_lognormal(tool_use_pause_ms, 0.5, 10 * tool_use_pause_ms),
        json_chunk_gap=Uniform(kind="uniform", low_ms=0.5, high_ms=3.0),
        block_gap=_lognormal(5.0, 0.5, 100.0),
        http_error_delay=_lognormal(150.0, 0.5, 5_000.0),
        ping_interval_ns=ms_to_ns(10_000),
    )


PRESETS: dict[ProfileName, Latency] = {
    "haiku": _preset(ttft_ms=500, tokens_per_s=70, tool_use_pause_ms=150),
    "sonnet": _preset(ttft_ms=1500, tokens_per_s=78, tool_use_pause_ms=300),
    "opus": _preset(ttft_ms=2500, tokens_per_s=48, tool_use_pause_ms=500),
}

# The name a response carries when the scenario names none.
MODEL_NAMES: dict[ProfileName, str] = {
    "haiku": "claude-haiku-4-5",
    "sonnet": "claude-sonnet-4-5",
    "opus": "claude-opus-4-5",
}


def resolve_latency(profile: ProfileName, overrides: LatencyConfig) -> Latency:
    """The profile's preset with every field the scenario set replaced."""
    preset = PRESETS[profile]
    token_gap = overrides.token_gap
    if token_gap is None and overrides.tokens_per_s is not None:
        token_gap = token_gap_for_rate(overrides.tokens_per_s)
    return Latency(
        ttft=_chosen(overrides.ttft, preset.ttft),
        token_gap=_chosen(token_gap, preset.token_gap),
        tool_use_pause=_chosen(overrides.tool_use_pause, preset.tool_use_pause),
        json_chunk_gap=_chosen(overrides.json_chunk_gap, preset.json_chunk_gap),
        block_gap=_chosen(overrides.block_gap, preset.block_gap),
        http_error_delay=_chosen(overrides.http_error_delay, preset.http_error_delay),
        ping_interval_ns=(
            preset.ping_interval_ns
            if overrides.ping_interval_ms is None
            else ms_to_ns(overrides.ping_interval_ms)
        ),
    )


def _chosen(override: Distribution | None, preset: Distribution) -> Distribution:
    return preset if override is None else override


def largest_ns(distribution: Distribution) -> int:
    """The largest draw of `distribution`, in ns."""
    if isinstance(distribution, Fixed):
        return ms_to_ns(distribution.ms)
    if isinstance(distribution, Uniform):
        return ms_to_ns(distribution.high_ms)
    if isinstance(distribution, LogNormal):
        return ms_to_ns(distribution.cap_ms)
    assert isinstance(distribution, Empirical)
    return ms_to_ns(max(distribution.values_ms))


def most_tool_calls(script: Script) -> int:
    """The most tool calls one response of `script` makes."""
    if isinstance(script, ExplicitScript):
        return max(
            sum(block.type == "tool_use" for block in response.blocks)
            for response in script.responses
        )
    return script.tool_calls.largest()


def longest_response_ns(config: ModelConfig, max_tokens: int) -> int:
    """The longest one attempt can take from admission to its end, every draw at its largest: a
    response of `max_tokens` tokens (the model stops there) from the slower of the model and its
    fallback, at the endpoint's slowest, with a stall; or an HTTP error's delay, as slow."""
    latencies = [resolve_latency(config.profile, config.latency)]
    if config.faults.fallback is not None:
        latencies.append(resolve_latency(config.faults.fallback, LatencyConfig()))
    blocks = 2 + most_tool_calls(config.script)  # thinking, text, the calls
    # Tool JSON arrives in fragments of at least four characters, a token per four: a fragment
    # per token, another where a key/value pair ends, and a block's empty first one.
    fragments = 2 * max_tokens + 2 * blocks
    slowest = max(
        max(largest_ns(latency.ttft), largest_ns(latency.http_error_delay))
        + blocks * (largest_ns(latency.block_gap) + largest_ns(latency.tool_use_pause))
        + max_tokens * largest_ns(latency.token_gap)
        + fragments * largest_ns(latency.json_chunk_gap)
        for latency in latencies
    )
    factor = 1.0 + config.endpoint.latency_growth
    return int(slowest * factor) + 1 + largest_ns(config.faults.stall_duration)
