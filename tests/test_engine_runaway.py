"""Sessions end: nothing a session scheduled outlives it (issue 13, defect 1), and a session that
would run on anyway is stopped with a message naming the seed and the session."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.engine.simulation import simulate
from sim.runtime.loop import Phase, ToolTurnLoop
from sim.scenario.loader import load_scenario, with_overrides

ROOT = Path(__file__).parent.parent
STORM = ROOT / "scenarios" / "interrupt_storm.toml"


def overloaded_storm(tmp_path: Path, horizon_s: float | None = None) -> Path:
    """interrupt_storm with an overloaded_error in half the streams: attachments, interrupts and
    retries together (the case of issue 13, defect 1)."""
    text = STORM.read_text().replace(
        "[model]\n", "[model.faults]\nerror_overloaded = 0.5\n\n[model]\n", 1
    )
    if horizon_s is not None:
        text = text.replace("[load]\n", f"[load]\nhorizon_s = {horizon_s}\n", 1)
    path = tmp_path / "storm.toml"
    path.write_text(text)
    return path


def test_no_attachment_arrives_after_its_session_ended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An attachment arrives only while its turn's tools run. A turn whose tools started in an
    # attempt given up for a retry can end the session without a TurnEnded (the retry failed, or
    # the user interrupted the backoff): the chain of arrivals must stop there too.
    late: list[Phase] = []
    attach = ToolTurnLoop.attachment

    def spy(loop: ToolTurnLoop, *args: object, **kwargs: object) -> object:
        if loop.phase is Phase.IDLE:
            late.append(loop.phase)
        return attach(loop, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ToolTurnLoop, "attachment", spy)
    # A horizon, so that the run ends even where the chain of arrivals would not.
    scenario = with_overrides(
        load_scenario(overloaded_storm(tmp_path, horizon_s=3600)),
        sessions=6,
        policies=["streaming"],
    )
    result = simulate(scenario, "streaming", 4.0)
    assert result.sessions_finished == 6
    assert late == []


def test_the_overloaded_storm_runs_to_its_end_without_a_horizon(tmp_path: Path) -> None:
    scenario = with_overrides(
        load_scenario(overloaded_storm(tmp_path)), sessions=6, policies=["streaming"]
    )
    result = simulate(scenario, "streaming", 4.0)
    assert result.sessions_finished == 6
