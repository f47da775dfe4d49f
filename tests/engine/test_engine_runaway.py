"""Sessions end: nothing a session scheduled outlives it (issue 13, defect 1), and a session that
would run on anyway is stopped with a message naming the seed and the session."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.helpers.engine_runs import dict_rows
from toolturn.cli import main
from toolturn.engine.bounds import SessionRunaway, session_bounds
from toolturn.engine.simulation import simulate
from toolturn.limits import MAX_ATTACHMENTS_PER_TURN
from toolturn.runtime.commands import WaitUntil
from toolturn.runtime.loop import Phase, ToolTurnLoop
from toolturn.scenario.loader import load_scenario, with_overrides

ROOT = Path(__file__).parents[2]
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


# A small scenario whose first request is refused, so the loop asks to be woken for a retry.
REFUSED = """
name = "refused"
seed = 11
[load]
mode = "closed"
sessions = 1
concurrency = 1
[runtime]
policies = ["streaming"]
max_turns_per_prompt = 2
[model.faults]
http_529 = 1.0
"""


def refused(tmp_path: Path) -> Path:
    path = tmp_path / "refused.toml"
    path.write_text(REFUSED)
    return path


def wakes_forever(monkeypatch: pytest.MonkeyPatch, every_ns: int) -> None:
    """A broken loop: each wake asks for another one `every_ns` later, for ever."""

    def wake(loop: ToolTurnLoop, now_ns: int) -> list[object]:
        return [WaitUntil(now_ns + every_ns)]

    monkeypatch.setattr(ToolTurnLoop, "wake", wake)


def test_a_session_that_acts_for_ever_at_one_instant_is_stopped_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wakes_forever(monkeypatch, 0)
    scenario = load_scenario(refused(tmp_path))
    bounds = session_bounds(scenario, 1.0)
    with pytest.raises(SessionRunaway) as info:
        simulate(scenario, "streaming", 1.0)
    stop = info.value
    assert (stop.seed, stop.session_id, stop.policy) == (11, 0, "streaming")
    assert f"more than {bounds.actions:,} actions" in str(stop)
    assert str(stop).startswith("session 0 (seed 11, policy streaming) stopped at ")


def test_a_session_that_outlives_its_bound_is_stopped_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = load_scenario(refused(tmp_path))
    bounds = session_bounds(scenario, 1.0)
    # Few actions, far apart: the bound on simulated time is passed first.
    wakes_forever(monkeypatch, bounds.span_ns // 5)
    with pytest.raises(SessionRunaway) as info:
        simulate(scenario, "streaming", 1.0)
    stop = info.value
    assert stop.session_id == 0
    assert stop.time_ns > bounds.span_ns
    assert "longer than its scenario allows" in str(stop)


def test_sim_run_reports_a_runaway_in_one_line_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    wakes_forever(monkeypatch, 0)
    out = tmp_path / "out"
    status = main(["run", str(refused(tmp_path)), "--no-report", "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("toolturn run: error: session 0 (seed 11, policy streaming) stopped at ")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()


def test_a_runaway_crosses_from_a_worker_process_intact() -> None:
    stop = SessionRunaway(3, 7, "serial", 42, "more than 10 actions")
    again = pickle.loads(pickle.dumps(stop))
    assert isinstance(again, SessionRunaway)
    assert str(again) == str(stop)
    # A session of another recovery profile names it, and it survives the pickle too.
    other = pickle.loads(pickle.dumps(SessionRunaway(3, 7, "serial", 42, "x", "claude-code")))
    assert other.profile == "claude-code"
    assert "(seed 3, policy serial, profile claude-code)" in str(other)
    assert "--seed, --policy and --profile" in str(other)


@pytest.mark.parametrize("name", ["default", "interrupt_storm", "fallback_storm", "overload"])
def test_the_shipped_scenarios_stay_well_inside_their_bounds(name: str) -> None:
    scenario = with_overrides(load_scenario(ROOT / "scenarios" / f"{name}.toml"), sessions=8)
    level = (scenario.load.levels or (None,))[-1]
    bounds = session_bounds(scenario, level)
    result = simulate(scenario, scenario.runtime.policies[0], level)
    sessions = dict_rows(result.rows["sessions"])
    assert len(sessions) == 8
    for row in sessions:
        assert row["end_ns"] - row["arrival_ns"] < bounds.span_ns / 100


def test_a_turn_takes_at_most_so_many_attachments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A notification every millisecond through a 20 s tool call: 20,000 of them, uncapped.
    per_turn: Counter[tuple[int, int]] = Counter()
    attach = ToolTurnLoop.attachment

    def count(loop: ToolTurnLoop, *args: object, **kwargs: object) -> object:
        per_turn[id(loop), loop.turn] += 1
        return attach(loop, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ToolTurnLoop, "attachment", count)
    path = tmp_path / "busy.toml"
    path.write_text(
        """
name = "busy"
seed = 3
[load]
mode = "closed"
sessions = 1
concurrency = 1
[runtime]
policies = ["streaming"]
[session.attachments]
notification = 1000
[model.script]
kind = "generated"
end_probability = 0.0
max_turns = 2
tool_mix = { Slow = 1 }
[tools]
catalogue = "none"
[[tools.define]]
name = "Slow"
duration = { kind = "fixed", ms = 20000 }
"""
    )
    result = simulate(load_scenario(path), "streaming", 1.0)
    assert result.sessions_finished == 1
    assert max(per_turn.values()) == MAX_ATTACHMENTS_PER_TURN


def test_a_runaway_in_a_worker_process_is_reported_in_one_line(tmp_path: Path) -> None:
    # Worker processes are spawned (fresh interpreters): the broken loop comes in through a
    # sitecustomize module on their path, as it does in the parent.
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "from toolturn.runtime.commands import WaitUntil\n"
        "from toolturn.runtime.loop import ToolTurnLoop\n"
        "ToolTurnLoop.wake = lambda loop, now_ns: [WaitUntil(now_ns)]\n"
    )
    scenario = tmp_path / "refused.toml"
    scenario.write_text(
        REFUSED.replace('policies = ["streaming"]', 'policies = ["streaming", "serial"]')
    )
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hook), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, "-m", "toolturn.cli", "run", str(scenario), "--jobs", "2", "--no-report",
         "--out", str(out)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith("toolturn run: error: session 0 (seed 11, policy ")
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert not out.exists()
