"""Pairing live turns with their simulated twins, and the errors, on tables built by the simulator
(a run against itself, and against a copy with known changes): exact, no live run needed."""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from toolturn.engine.runner import run_scenario
from toolturn.fidelity.pairing import MetricError, metric_errors, pair_turns, relative_error
from toolturn.fidelity.settings import Tolerances
from toolturn.scenario.loader import load_scenario, with_overrides

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tables() -> dict[str, pa.Table]:
    scenario = with_overrides(load_scenario(ROOT / "scenarios" / "default.toml"), sessions=8,
                              policies=["streaming", "serial"])
    return run_scenario(scenario).tables("sim")


def scaled(table: pa.Table, column: str, factor: float) -> pa.Table:
    values = pc.cast(pc.round(pc.multiply(table.column(column).cast(pa.float64()), factor)),
                     pa.int64())
    return table.set_column(table.schema.get_field_index(column), column, values)


def by_metric(errors: list[MetricError], policy: str) -> dict[str, MetricError]:
    return {error.metric: error for error in errors if error.policy == policy}


def test_a_run_against_itself_pairs_every_turn_with_no_error(tables: dict[str, pa.Table]) -> None:
    errors, pairing = metric_errors(tables, tables)
    assert pairing.paired == pairing.sim_turns == pairing.live_turns == pairing.same_story > 0
    first_policy = tables["turns"].column("policy")[0].as_py()
    assert [e.policy for e in errors[:5]] == [first_policy] * 5  # in the run's order
    assert {e.policy for e in errors} == {"streaming", "serial"}
    for error in errors:
        assert error.pairs > 0
        assert error.error_median == 0 and error.error_p95 == 0
        assert error.diff_median == 0 and error.diff_p95 == 0
        assert error.within(Tolerances(0, 0, 0))


def test_latency_a_tenth_longer_is_a_ten_percent_error_and_paired_difference(
    tables: dict[str, pa.Table],
) -> None:
    live = dict(tables, turns=scaled(tables["turns"], "latency_ns", 1.1))
    errors, _ = metric_errors(tables, live)
    latency = by_metric(errors, "serial")["latency_ms"]
    assert latency.error_median == pytest.approx(0.1, abs=1e-6)
    assert latency.diff_median == pytest.approx(latency.sim_median * 0.1, rel=1e-3)
    assert not latency.within(Tolerances(median=0.05, p95=0.2))
    assert latency.within(Tolerances(median=0.11, p95=0.11))
    assert by_metric(errors, "serial")["ttfts_ms"].within(Tolerances(0, 0, 0))


def test_turns_without_a_twin_are_not_paired_and_other_stories_are_counted(
    tables: dict[str, pa.Table],
) -> None:
    turns = tables["turns"]
    keep = pc.not_equal(turns.column("session_id"), 0)
    attempts = turns.column("n_attempts").to_pylist()
    changed = turns.set_column(turns.schema.get_field_index("n_attempts"), "n_attempts",
                               pa.array([attempts[0] + 1, *attempts[1:]], pa.int64()))
    _, pairing = pair_turns(turns, changed.filter(keep))
    dropped = turns.num_rows - pc.sum(keep.cast(pa.int64())).as_py()
    assert dropped > 0
    assert pairing.paired == turns.num_rows - dropped
    first_is_session_0 = turns.column("session_id")[0].as_py() == 0
    assert pairing.same_story == pairing.paired - (0 if first_is_session_0 else 1)


def test_relative_errors_of_zero() -> None:
    assert relative_error(0.0, 0.0) == 0.0
    assert relative_error(1.0, 0.0) == math.inf
    assert relative_error(1.5, 1.0) == 0.5
    # A start lag of 0 simulated and 0.4 ms live: within the absolute tolerance only.
    zero = MetricError("streaming", "start_lag_ms", 3, 0.0, 0.0, 0.4, 0.4, 0.4, 0.4)
    assert zero.within(Tolerances(absolute_ms=1.0))
    assert not zero.within(Tolerances(absolute_ms=0.1))


def test_a_run_of_two_profiles_pairs_each_turn_with_its_own_profile_s_twin() -> None:
    # The same sessions under both profiles share every key but the profile: pairing on the
    # profile too finds each turn's one twin, with no fan-out.
    scenario = with_overrides(load_scenario(ROOT / "scenarios" / "default.toml"), sessions=4,
                              policies=["streaming"], profiles=["default", "claude-code"])
    two = run_scenario(scenario).tables("sim")
    assert set(two["turns"].column("profile").to_pylist()) == {"default", "claude-code"}
    errors, pairing = metric_errors(two, two)
    assert pairing.paired == pairing.sim_turns == pairing.live_turns == two["turns"].num_rows
    assert all(error.error_median == 0 and error.error_p95 == 0 for error in errors)
