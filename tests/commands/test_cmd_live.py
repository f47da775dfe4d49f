"""`toolturn live` and `toolturn fidelity` on a small scenario at a high speed: the same tables and
schemas as `toolturn run`, turns paired with their twins, the fidelity command's exit statuses, the
endpoint and key rules, and Ctrl-C. No test asserts a wall-clock figure."""

from __future__ import annotations

import asyncio
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pyarrow.parquet as pq
import pytest

from toolturn.cli import main
from toolturn.commands.live import LOOPBACK_KEY, live_scenario, live_settings
from toolturn.errors import UserError
from toolturn.metrics.writer import TABLES
from toolturn.scenario.loader import load_scenario

ROOT = Path(__file__).resolve().parents[2]
SPEED = "100"
# Quick tools only (no hangs), short think times, two policies, a few sessions.
SMALL = """
name = "live-small"
seed = 5
[load]
mode = "closed"
sessions = 3
concurrency = 3
[session]
user_prompts = { kind = "uniform", low = 1, high = 2 }
think_time = { kind = "fixed", ms = 500 }
[runtime]
policies = ["streaming", "serial"]
max_turns_per_prompt = 4
[model]
profile = "haiku"
[model.script]
kind = "generated"
end_probability = 0.3
tool_calls = { kind = "uniform", low = 1, high = 2 }
tool_mix = { Read = 1, Grep = 1, Glob = 1 }
final_text_tokens = { kind = "fixed", n = 20 }
"""


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("scenario") / "small.toml"
    path.write_text(SMALL)
    return path


@pytest.fixture(scope="module")
def runs(small: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A `toolturn run` and a `toolturn live` of the small scenario (made once for the module)."""
    folder = tmp_path_factory.mktemp("runs")
    simulated, live = folder / "simulated", folder / "live"
    assert main(["run", str(small), "--out", str(simulated), "--no-report"]) == 0
    assert main(["live", str(small), "--speed", SPEED, "--out", str(live), "--no-report"]) == 0
    return simulated, live


def test_sim_live_writes_the_tables_and_schemas_of_sim_run(runs: tuple[Path, Path]) -> None:
    simulated, live = runs
    assert sorted(p.name for p in live.iterdir()) == sorted(p.name for p in simulated.iterdir())
    for spec in TABLES:
        ours = pq.read_schema(live / f"{spec.name}.parquet").remove_metadata()
        theirs = pq.read_schema(simulated / f"{spec.name}.parquet").remove_metadata()
        assert ours.equals(theirs), spec.name
    extra = json.loads((live / "run.json").read_text())["metadata"]["extra"]
    assert extra["live"] == {"speed": float(SPEED), "base_url": "embedded toolturn serve"}


def test_live_turns_pair_with_their_simulated_twins(runs: tuple[Path, Path]) -> None:
    """Same turns, same calls (tool_use ids), same outcomes: the keying is shared."""
    simulated, live = runs

    def table(folder: Path, name: str, columns: list[str]) -> list[tuple[object, ...]]:
        rows = pq.read_table(folder / f"{name}.parquet", columns=columns).to_pylist()
        return sorted(tuple(row.values()) for row in rows)

    turn = ["policy", "session_id", "turn_index", "n_attempts", "n_tool_calls", "outcome"]
    call = ["policy", "session_id", "turn_index", "tool_use_id", "tool_name", "outcome"]
    assert table(live, "turns", turn) == table(simulated, "turns", turn)
    assert table(live, "tools", call) == table(simulated, "tools", call)
    assert len(table(live, "turns", turn)) > 6


def test_sim_report_and_sim_compare_read_a_live_folder(
    runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    simulated, live = runs
    assert main(["report", str(live)]) == 0
    assert (live / "report" / "report.html").is_file()
    assert main(["compare", str(simulated), str(live)]) in (0, 1)
    assert "TTFTS p50" in capsys.readouterr().out


def test_fidelity_passes_within_wide_tolerances_and_fails_within_none(
    small: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A loaded test host may make a live run late: these limits keep saturation out of it.
    roomy = ["--max-lag-ms", "1e6", "--max-cpu", "1e6"]
    wide = ["--tolerance-median", "1000", "--tolerance-p95", "1000", *roomy]
    passing = tmp_path / "pass"
    assert main(["fidelity", str(small), "--speed", SPEED, "--out", str(passing), *wide]) == 0
    out = capsys.readouterr().out
    assert "turns:" in out and "what the real path adds per hop" in out
    assert "verdict: within tolerance, all turns paired" in out
    report = json.loads((passing / "fidelity.json").read_text())
    assert report["passed"] is True and report["pairing"]["paired"] > 6
    assert report["verdict"] == "within tolerance, all turns paired"
    pairing = report["pairing"]
    assert pairing["same_story"] == pairing["paired"] == pairing["sim_turns"] == pairing[
        "live_turns"]
    assert pairing["unpaired"] == pairing["other_story"] == []
    assert report["saturation"]["saturated"] is False
    assert {hop["name"] for hop in report["hops_wall_ms"]} >= {
        "request, first of a session", "event loop lateness", "SDK parsing, per event",
        "live run, % of one core"}
    assert (passing / "fidelity.png").stat().st_size > 0
    assert (passing / "simulated" / "run.json").is_file()
    assert (passing / "live" / "run.json").is_file()

    none = ["--tolerance-median", "0", "--tolerance-p95", "0", "--tolerance-ms", "0", *roomy]
    failing = tmp_path / "fail"
    assert main(["fidelity", str(small), "--speed", SPEED, "--out", str(failing), *none]) == 1
    assert "beyond tolerance:" in capsys.readouterr().out
    assert json.loads((failing / "fidelity.json").read_text())["passed"] is False


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--speed", "0"], "--speed: must be a positive number"),
        (["--sessions", "0"], "--sessions: must be at least 1"),
        (["--base-url", "ftp://x"], "--base-url: not an http(s) URL"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(
    small: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["live", str(small), *argv]) == 2
    assert message in capsys.readouterr().err


def test_a_bad_tolerance_is_one_line_and_exit_2(
    small: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["fidelity", str(small), "--tolerance-p95", "-1", "--out", str(tmp_path / "f")]
    assert main(argv) == 2
    assert "--tolerance-p95: must be a number at least 0" in capsys.readouterr().err
    assert not (tmp_path / "f").exists()


def test_a_real_key_is_read_only_for_a_non_loopback_url() -> None:
    def settings(url: str | None, environ: dict[str, str]) -> tuple[str | None, str]:
        chosen = live_settings(SimpleNamespace(base_url=url, speed=1.0), environ)
        return chosen.base_url, chosen.api_key

    secret = {"ANTHROPIC_API_KEY": "sk-test"}
    assert settings(None, secret) == (None, LOOPBACK_KEY)
    assert settings("http://127.0.0.1:8765", secret) == ("http://127.0.0.1:8765", LOOPBACK_KEY)
    assert settings("http://localhost:1", secret)[1] == LOOPBACK_KEY
    assert settings("https://api.example.com", secret)[1] == "sk-test"
    with pytest.raises(UserError, match="ANTHROPIC_API_KEY must hold the API key"):
        settings("https://api.example.com", {})


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_live_run_ends_with_130_and_writes_nothing(
    small: Path, tmp_path: Path, stop: signal.Signals
) -> None:
    out = tmp_path / "live"
    process = subprocess.Popen(
        [sys.executable, "-m", "toolturn.cli", "live", str(small), "--speed", "1",
         "--out", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        start_new_session=True,
    )
    try:
        assert process.stderr is not None
        ready, _, _ = select.select([process.stderr], [], [], 60)
        assert ready, "toolturn live never said it started"
        assert process.stderr.readline().startswith("toolturn live: live-small, 2 units")
        time.sleep(0.5)  # into the sessions (at speed 1 they take far longer)
        assert process.poll() is None
        os.kill(process.pid, stop)
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130
    assert "interrupted" in err and "Traceback" not in err
    assert not out.exists()
    assert not any(tmp_path.iterdir())


def test_an_open_load_starts_live_sessions_when_the_simulator_does(small: Path) -> None:
    """Sessions due on the scenario's schedule (a trace of arrivals here), started at their due
    times: the sessions table's arrivals are the simulated run's, exactly."""
    from toolturn.engine.runner import run_scenario
    from toolturn.fidelity.live_run import run_live
    from toolturn.fidelity.settings import LiveSettings
    from toolturn.scenario.loader import load_scenario

    text = SMALL.replace('mode = "closed"\nsessions = 3\nconcurrency = 3',
                         'mode = "open"\nsessions = 3\ntrace_ms = [0, 400, 900]')
    path = small.with_name("open.toml")
    path.write_text(text)
    scenario = load_scenario(path)
    live = asyncio.run(run_live(scenario, LiveSettings(speed=float(SPEED))))
    simulated = run_scenario(scenario).tables("sim")["sessions"].to_pylist()
    assert len(live.results) == len(scenario.runtime.policies)
    for ours in live.results:
        sessions = ours.rows["sessions"]
        arrivals = sorted(zip(sessions["session_id"], sessions["arrival_ns"], strict=True))
        assert arrivals == sorted((r["session_id"], r["arrival_ns"])
                                  for r in simulated if r["policy"] == ours.columns["policy"])
        assert [a for _, a in arrivals] == [0, 400_000_000, 900_000_000]
        assert ours.sessions_finished == 3


FAULTY = SMALL + """
[session.faults]
crash = 0.5
rewind = 0.2
[session.compaction]
trigger_tokens = 500
"""
IGNORED = "[session.faults] and [session.compaction] not applied: a live run does not crash, " \
    "rewind or compact its sessions, so "


def test_live_and_fidelity_say_they_run_without_session_faults_and_so_do_the_twins(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    faulty = tmp_path / "faulty.toml"
    faulty.write_text(FAULTY)
    live = tmp_path / "live"
    argv = ["--sessions", "1", "--speed", SPEED, "--no-report"]
    assert main(["live", str(faulty), *argv, "--out", str(live)]) == 0
    err = capsys.readouterr().err
    assert f"toolturn live: warning: {IGNORED}its sessions run without them\n" in err
    sessions = pq.read_table(live / "sessions.parquet").to_pylist()
    assert {row["n_calls_lost"] for row in sessions} == {0}
    assert {row["n_compactions"] for row in sessions} == {0}
    wide = ["--tolerance-median", "1000", "--tolerance-p95", "1000"]
    fidelity = tmp_path / "fidelity"
    main(["fidelity", str(faulty), "--sessions", "1", "--speed", SPEED, "--out", str(fidelity),
          *wide])
    err = capsys.readouterr().err
    assert f"toolturn fidelity: warning: {IGNORED}both twins run without them\n" in err
    # The simulated twin ran without them too: no resume, so no repair has a cause.
    repairs = pq.read_table(fidelity / "simulated" / "repairs.parquet").to_pylist()
    assert all(row["cause"] is None for row in repairs)
    twin = pq.read_table(fidelity / "simulated" / "sessions.parquet").to_pylist()
    assert {row["n_compactions"] for row in twin} == {0}


def test_a_scenario_without_session_faults_is_run_as_written_without_a_warning(
    small: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = SimpleNamespace(scenario=small, speed=1.0, seed=None, sessions=None, policies=None)
    scenario = live_scenario(args)
    assert capsys.readouterr().err == ""
    assert scenario == load_scenario(small)
