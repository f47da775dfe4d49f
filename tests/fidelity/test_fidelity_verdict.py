"""The fidelity verdict: pairing that cannot crash on a differing story (each run's text columns
are dictionary-encoded with the values it met), pairing and saturation in the verdict, and the
exit status of each verdict. On tables built by the simulator: no live run needed."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from rich.console import Console

from toolturn.commands.fidelity import _exit_status
from toolturn.engine.runner import run_scenario
from toolturn.fidelity.overhead import table_hops
from toolturn.fidelity.pairing import MetricError, Pairing, metric_errors, pair_turns
from toolturn.fidelity.report import SATURATED, UNPAIRED, WITHIN, FidelityResult, print_fidelity
from toolturn.fidelity.saturation import Limits, Saturation
from toolturn.fidelity.settings import Tolerances
from toolturn.scenario.loader import load_scenario, with_overrides

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tables() -> dict[str, pa.Table]:
    scenario = with_overrides(load_scenario(ROOT / "scenarios" / "default.toml"), sessions=6,
                              policies=["streaming"])
    return run_scenario(scenario).tables("sim")


def with_outcome(table: pa.Table, row: int, outcome: str) -> pa.Table:
    """`table` with row `row`'s outcome changed, the column re-encoded as a run encodes it: a
    dictionary of the values met, in the order met (so its categories differ from the twin's)."""
    values = table.column("outcome").to_pylist()
    values[row] = outcome
    encoded = pa.array(values, pa.string()).dictionary_encode()
    return table.set_column(table.schema.get_field_index("outcome"), "outcome", encoded)


def test_a_turn_with_another_outcome_is_counted_and_named_not_a_crash(
    tables: dict[str, pa.Table],
) -> None:
    turns = tables["turns"]
    live_turns = with_outcome(turns, 0, "an outcome the simulator never wrote")
    both, pairing = pair_turns(turns, live_turns)
    assert pairing.paired == turns.num_rows and pairing.same_story == turns.num_rows - 1
    assert not pairing.complete
    (named,) = pairing.other_story
    assert f"session {turns.column('session_id')[0].as_py()}" in named
    assert "an outcome the simulator never wrote (live)" in named
    assert len(both) == turns.num_rows


def test_the_hops_survive_a_call_with_another_outcome(tables: dict[str, pa.Table]) -> None:
    tools = tables["tools"]
    live = dict(tables, tools=with_outcome(tools, 0, "never-seen"))
    hops = table_hops(tables, live, speed=1.0)
    tool_hop = next(hop for hop in hops if hop.name == "tool, start to end")
    # The changed call is left out of the tool hop; the others pair and differ by nothing.
    started = sum(1 for value in tools.column("start_ns").to_pylist() if value is not None)
    assert tool_hop.count in (started - 1, started)
    assert tool_hop.median_ms == 0


def test_turns_without_a_twin_are_named_by_side(tables: dict[str, pa.Table]) -> None:
    turns = tables["turns"]
    _, pairing = pair_turns(turns, turns.slice(1))
    assert pairing.paired == pairing.live_turns == turns.num_rows - 1
    (named,) = pairing.unpaired
    assert named.startswith("simulated only: ")
    _, reverse = pair_turns(turns.slice(1), turns)
    assert reverse.unpaired[0].startswith("live only: ")


def result(pairing: Pairing, saturation: Saturation | None = None,
           errors_of: dict[str, pa.Table] | None = None) -> FidelityResult:
    errors = [] if errors_of is None else metric_errors(errors_of, errors_of)[0]
    return FidelityResult(errors, pairing, [], 10.0, Tolerances(), saturation)


def cool(speed: float = 10.0) -> Saturation:
    return Saturation(0.5, 40.0, Limits(), speed, 10)


@pytest.mark.parametrize(
    ("pairing", "verdict", "status"),
    [
        (Pairing(315, 315, 315, 315), WITHIN, 0),
        (Pairing(315, 315, 0, 0), UNPAIRED, 3),  # no turn paired: never a pass
        (Pairing(315, 315, 3, 3), UNPAIRED, 3),
        (Pairing(315, 315, 315, 0), UNPAIRED, 3),  # paired, but every story differs
        (Pairing(0, 0, 0, 0), WITHIN, 0),
    ],
)
def test_pairing_is_part_of_the_verdict(
    pairing: Pairing, verdict: str, status: int, tables: dict[str, pa.Table]
) -> None:
    outcome = result(pairing, cool(), tables)
    assert outcome.verdict == verdict and outcome.passed is (status == 0)
    assert _exit_status(outcome) == status
    assert outcome.to_json()["verdict"] == verdict


def test_a_saturated_live_run_that_fails_is_exit_4_and_one_that_passes_is_0(
    tables: dict[str, pa.Table],
) -> None:
    hot = Saturation(lag_p95_ms=5.0, cpu_percent=96.0, limits=Limits(), speed=10.0,
                     sessions_at_once=10)
    # Within tolerance and all paired: a pass, lateness notwithstanding.
    passing = result(Pairing(315, 315, 315, 315), hot, tables)
    assert passing.verdict == WITHIN and _exit_status(passing) == 0
    assert passing.to_json()["saturation"]["saturated"] is True
    # Beyond tolerance, all paired, while saturated: the harness is the suspect, not the model.
    late = MetricError("streaming", "ttfts_ms", 315, 100.0, 200.0, 130.0, 260.0, 30.0, 60.0)
    outcome = FidelityResult([late], Pairing(315, 315, 315, 315), [], 10.0, Tolerances(), hot)
    assert outcome.verdict == SATURATED and _exit_status(outcome) == 4
    report = outcome.to_json()["saturation"]
    assert report["saturated"] is True and report["excess"] == pytest.approx(2.5)
    assert report["suggested_speed"] == 4.0 and report["suggested_sessions"] == 4
    assert [reason.split(" (")[0] for reason in report["reasons"]] == [
        "event loop lateness p95 5.00 ms of wall time", "live process at 96% of a core"]
    assert hot.suggestion() == (
        "--speed 4, or about 4 sessions at once instead of 10 ([load] concurrency = 4 in the "
        "scenario)")


def test_unpaired_turns_outrank_saturation_and_say_both(
    tables: dict[str, pa.Table], capsys: pytest.CaptureFixture[str],
) -> None:
    hot = Saturation(lag_p95_ms=5.0, cpu_percent=96.0, limits=Limits(), speed=10.0,
                     sessions_at_once=10)
    for pairing in (Pairing(315, 315, 0, 0), Pairing(315, 315, 300, 300)):
        outcome = result(pairing, hot, tables)
        assert outcome.verdict == UNPAIRED and _exit_status(outcome) == 3
        assert "turns unpaired or with another story: " in capsys.readouterr().out
        report = outcome.to_json()
        assert report["verdict"] == UNPAIRED and report["saturation"]["saturated"] is True
        console = Console(record=True, width=300)
        print_fidelity(outcome, console)
        text = console.export_text()
        assert "the live run could not keep up: " in text
        assert text.rstrip().endswith(f"verdict: {UNPAIRED}")


def test_the_unpaired_summary_is_printed_whenever_there_are_unpaired_turns(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Paired turns with another story (not complete) but also a metric beyond tolerance: the
    # verdict is the unpaired one, and a complete pairing prints no summary.
    assert _exit_status(result(Pairing(315, 315, 315, 314))) == 3
    assert "315 of 315 simulated and 315 live paired, 314 with the same story" in (
        capsys.readouterr().out)
    assert _exit_status(result(Pairing(315, 315, 315, 315))) == 0
    assert "unpaired" not in capsys.readouterr().out


def test_saturation_by_cpu_alone_and_within_limits() -> None:
    cpu_only = Saturation(0.3, 100.0, Limits(), speed=10.0, sessions_at_once=None)
    assert cpu_only.saturated and cpu_only.excess == pytest.approx(1.25)
    assert cpu_only.suggested_speed() == 8.0 and cpu_only.suggestion() == "--speed 8"
    assert len(cpu_only.reasons()) == 1
    assert not cool().saturated and cool().reasons() == []
    unmeasured = Saturation(float("nan"), 10.0, Limits(), 1.0, 3)
    assert not unmeasured.saturated and unmeasured.to_json()["lag_p95_ms"] is None


def test_the_printed_verdict_names_the_differing_turns_and_the_saturation(
    tables: dict[str, pa.Table],
) -> None:
    turns = tables["turns"]
    _, pairing = pair_turns(turns, with_outcome(turns, 0, "cut short").slice(0, turns.num_rows - 1))
    hot = Saturation(5.0, 10.0, Limits(), speed=10.0, sessions_at_once=10)
    console = Console(record=True, width=200)
    print_fidelity(result(pairing, hot, tables), console)
    text = console.export_text()
    assert "1 turns without a twin:\n  simulated only: " in text
    assert "1 turns with another story:\n  " in text and "cut short (live)" in text
    assert "the live run could not keep up: event loop lateness p95 5.00 ms" in text
    assert "Try --speed 4, or about 4 sessions at once instead of 10 ([load] concurrency = 4" \
        in text
    assert "the unpaired turns decide the verdict all the same" in text
    assert text.rstrip().endswith(f"verdict: {UNPAIRED}")


def test_the_limits_help_says_a_saturated_pass_is_a_pass(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from toolturn.cli import main

    with pytest.raises(SystemExit):
        main(["fidelity", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(exit 4) when" not in text
    assert text.count("exit 4 when the run is also beyond a tolerance with every turn paired") == 2
