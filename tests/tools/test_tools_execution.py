"""Call plans: sampled rates match the spec (fixed seeds), plans are deterministic per stream."""

from typing import Any

import numpy as np
import pytest

from toolturn.limits import MAX_DURATION_MS, MAX_PROGRESS_PER_CALL
from toolturn.randomness import stream
from toolturn.tools.execution import (
    MIN_PROGRESS_GAP_NS,
    PROGRESS_BATCH_MAX,
    CallPlan,
    _batched_offsets,
    _progress_offsets,
    sample_call,
)
from toolturn.tools.spec import ToolSpec

N = 20_000


def spec(**fields: Any) -> ToolSpec:
    return ToolSpec.model_validate(
        {"name": "T", "duration": {"kind": "uniform", "low_ms": 10, "high_ms": 30}, **fields}
    )


def plans(s: ToolSpec, n: int = N, seed: int = 1) -> list[CallPlan]:
    rng = stream(seed, "tool-test")
    return [sample_call(s, rng) for _ in range(n)]


def within(observed: int, n: int, p: float) -> bool:
    """Observed count within 4 standard deviations of a binomial(n, p) mean."""
    return abs(observed - n * p) <= 4 * (n * p * (1 - p)) ** 0.5 + 1


def test_outcome_rates_match_the_probabilities() -> None:
    sampled = plans(spec(failures={"error": 0.1, "exception": 0.05, "hang": 0.02}))
    counts = {
        kind: sum(p.outcome == kind for p in sampled) for kind in ("error", "exception", "hang")
    }
    assert within(counts["error"], N, 0.1)
    assert within(counts["exception"], N, 0.05)
    assert within(counts["hang"], N, 0.02)


def test_ask_permission_denies_at_its_rate_and_takes_its_delay() -> None:
    permission = {
        "mode": "ask",
        "deny_probability": 0.3,
        "decision_delay": {"kind": "fixed", "ms": 2000},
    }
    sampled = plans(spec(permission=permission))
    assert all(p.asked and p.permission_delay_ns == 2_000_000_000 for p in sampled)
    assert within(sum(not p.permitted for p in sampled), N, 0.3)
    assert all(p.is_error for p in sampled if not p.permitted)


def test_allow_and_deny_are_immediate() -> None:
    allowed = plans(spec(), n=100)
    assert all(p.permitted and not p.asked and p.permission_delay_ns == 0 for p in allowed)
    denied = plans(spec(permission={"mode": "deny"}), n=100)
    assert all(not p.permitted and p.is_error for p in denied)


def test_durations_follow_the_distribution() -> None:
    durations = np.array([p.duration_ns for p in plans(spec())])
    assert durations.min() >= 10_000_000 and durations.max() <= 30_000_000
    assert abs(durations.mean() - 20_000_000) < 200_000


def test_success_text_has_the_drawn_length() -> None:
    sampled = plans(spec(result_chars={"kind": "uniform", "low": 100, "high": 200}), n=500)
    assert all(100 <= len(p.text) <= 200 and p.outcome == "success" for p in sampled)
    assert not any(p.is_error for p in sampled)


def test_error_and_exception_texts_name_the_tool() -> None:
    (error,) = plans(spec(failures={"error": 1.0}), n=1)
    (exception,) = plans(spec(failures={"exception": 1.0}), n=1)
    assert error.is_error and "T failed" in error.text
    assert exception.is_error and exception.text.startswith("RuntimeError")


def test_hang_has_no_duration_and_no_progress() -> None:
    (hang,) = plans(spec(failures={"hang": 1.0}, progress_every={"kind": "fixed", "ms": 1}), n=1)
    assert (hang.outcome, hang.duration_ns, hang.progress_ns, hang.is_error) == (
        "hang",
        None,
        (),
        True,
    )


def test_progress_times_are_increasing_and_inside_the_run() -> None:
    s = spec(duration={"kind": "fixed", "ms": 1000}, progress_every={"kind": "fixed", "ms": 300})
    (plan,) = plans(s, n=1)
    assert plan.progress_ns == (300_000_000, 600_000_000, 900_000_000)


def test_progress_gap_has_a_floor() -> None:
    s = spec(
        duration={"kind": "fixed", "ms": 10},
        progress_every={"kind": "uniform", "low_ms": 0, "high_ms": 0.001},
    )
    (plan,) = plans(s, n=1)
    assert plan.progress_ns == tuple(range(MIN_PROGRESS_GAP_NS, 10_000_000, MIN_PROGRESS_GAP_NS))


def test_progress_of_a_long_run_spans_several_batches() -> None:
    s = spec(
        duration={"kind": "fixed", "ms": 10_000},
        progress_every={"kind": "uniform", "low_ms": 1, "high_ms": 3},
    )
    (plan,) = plans(s, n=1)
    gaps = [b - a for a, b in zip((0, *plan.progress_ns), plan.progress_ns, strict=False)]
    assert len(plan.progress_ns) > PROGRESS_BATCH_MAX  # more reports than one batch holds
    assert all(1_000_000 <= gap <= 3_000_000 for gap in gaps)
    # No report at or past the end, and no room left before it for another whole gap.
    assert 10_000_000_000 - 3_000_000 < plan.progress_ns[-1] < 10_000_000_000


def test_progress_of_one_call_is_capped() -> None:
    # A report every millisecond through the longest duration: a billion offsets, gigabytes.
    s = spec(
        duration={"kind": "fixed", "ms": MAX_DURATION_MS},
        progress_every={"kind": "fixed", "ms": 1},
    )
    (plan,) = plans(s, n=1)
    ms = 1_000_000
    assert plan.progress_ns == tuple(range(ms, ms * (MAX_PROGRESS_PER_CALL + 1), ms))


@pytest.mark.parametrize(
    ("gap_ms", "duration_ms"),
    [(1000, 3500), (1000, 3000), (300, 299), (0.0004, 2), (1, MAX_DURATION_MS), (2.5, 10)],
)
def test_a_fixed_gap_gives_what_the_batches_give(gap_ms: float, duration_ms: float) -> None:
    # A fixed gap's offsets are counted, not drawn: the same offsets as the batched draws
    # (a multiple of the gap at the run's end is not a report; the floor and the cap hold).
    s = spec(progress_every={"kind": "fixed", "ms": gap_ms})
    duration_ns = round(duration_ms * 1_000_000)
    assert s.progress_every is not None
    batched = _batched_offsets(s.progress_every, stream(1, "gaps"), duration_ns)
    assert _progress_offsets(s, stream(1, "gaps"), duration_ns) == batched
    if duration_ms == MAX_DURATION_MS:
        assert len(batched) == MAX_PROGRESS_PER_CALL


def test_same_stream_same_plan() -> None:
    s = spec(failures={"error": 0.3}, progress_every={"kind": "uniform", "low_ms": 1, "high_ms": 5})
    assert sample_call(s, stream(9, "tool", 3, 1, 0)) == sample_call(s, stream(9, "tool", 3, 1, 0))
    assert plans(s, n=200, seed=4) == plans(s, n=200, seed=4)
    assert plans(s, n=200, seed=4) != plans(s, n=200, seed=5)


def test_changing_a_failure_rate_keeps_the_durations() -> None:
    # Draws are made in a fixed order whatever the outcome, so other aspects do not shift.
    calm = plans(spec(), n=300)
    flaky = plans(spec(failures={"error": 0.5}), n=300)
    assert [p.duration_ns for p in calm] == [p.duration_ns for p in flaky]


@pytest.mark.parametrize("chars", [0, 1, 79, 80, 81, 5000, 81_921, 250_000])
def test_filler_is_exactly_as_long_as_drawn(chars: int) -> None:
    (plan,) = plans(spec(result_chars=chars), n=1)
    assert len(plan.text) == chars
    # Past the first long filler (1,024 lines) too: the same lines, whatever the length.
    line = "simulated tool output: lorem ipsum dolor sit amet, consectetur adipiscing elit\n"
    assert plan.text == (line * (chars // len(line) + 1))[:chars]
