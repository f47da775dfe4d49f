"""Issue 31, section 2, from a `toolturn serve --record` folder: the recording's speed scales its
times into the scenario's, the client's sibling cancellations after a failed Bash are no errors
of their tools, and text sizes are never invented from a recording (it holds no text). Each
recording is written by the recorder and the writer `toolturn serve --record` uses."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from toolturn.metrics.provenance import file_sha256
from toolturn.model.response import Turn
from toolturn.traces.calibrate import calibrated_scenario
from toolturn.traces.sources import read_logs
from toolturn.traces.stats import trace_stats
from toolturn.wire.record_files import write_recording
from toolturn.wire.recorder import Recorder
from toolturn.wire.sent import SentCall

MS = 1_000_000


def use(tool_use_id: str, name: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_use_id, "name": name, "input": {}}


def result(tool_use_id: str, error: bool) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "is_error": error}


def record(folder: Path, metadata: dict[str, Any]) -> Path:
    """One session: a batch of Bash, Grep and Read where Bash failed and the client cancelled
    Grep and Read for it (all three error results), then a final answer 40 ms later."""
    recorder = Recorder()
    prompt = [{"role": "user", "content": "go"}]
    first = recorder.arrived(1 * MS, Turn(3, 0, 1), "m", prompt, b"a", [])
    calls = [SentCall("b", "Bash", 4 * MS), SentCall("g", "Grep", 5 * MS),
             SentCall("r", "Read", 6 * MS)]
    recorder.answered(first, status=200, ending="complete", faults=(), end_ns=7 * MS,
                      calls=calls, message_stop_ns=7 * MS)
    history = [*prompt, {"role": "assistant", "content": [use("b", "Bash"), use("g", "Grep"),
                                                           use("r", "Read")]},
               {"role": "user", "content": [result("b", True), result("g", True),
                                            result("r", True)]}]
    second = recorder.arrived(47 * MS, Turn(3, 1, 1), "m", history, b"b", [])
    recorder.answered(second, status=200, ending="complete", faults=(), end_ns=50 * MS)
    folder.mkdir()
    write_recording(folder, recorder.tables(), metadata)
    return folder


def test_the_recording_s_speed_scales_its_times(tmp_path: Path) -> None:
    slow = read_logs([str(record(tmp_path / "one", {"case": "x"}))]).sessions[0]
    fast = read_logs([str(record(tmp_path / "ten", {"case": "x", "speed": 10}))]).sessions[0]
    bash_slow, bash_fast = slow.steps[0].tool_calls[0], fast.steps[0].tool_calls[0]
    assert bash_slow.duration_ms == pytest.approx(43.0)  # block stop 4 ms, results at 47 ms
    assert bash_fast.duration_ms == pytest.approx(430.0)
    assert fast.steps[1].sent_ms == pytest.approx(470.0)


def test_a_bad_speed_is_reported_and_read_as_1(tmp_path: Path) -> None:
    folder = record(tmp_path / "bad", {"case": "x", "speed": -3})
    logs = read_logs([str(folder)])
    (problem,) = logs.skipped.lines
    assert problem.reason.startswith("bad speed: -3 is no positive number")
    assert logs.sessions[0].steps[0].tool_calls[0].duration_ms == pytest.approx(43.0)


def test_sibling_cancellations_are_no_errors_of_their_tools(tmp_path: Path) -> None:
    logs = read_logs([str(record(tmp_path / "rec", {"case": "x"}))])
    figures = trace_stats(logs)
    assert figures["tool_errors_by_tool"] == {"Bash": 1}
    assert figures["tool_results_sibling_cancelled"] == 2
    data = tomllib.loads(calibrated_scenario(logs, "rec", 1))
    tools = {tool["name"]: tool for tool in data["tools"]["define"]}
    assert tools["Bash"]["failures"] == {"error": 1.0}
    assert "failures" not in tools["Grep"] and "failures" not in tools["Read"]


def test_a_recording_gives_no_text_sizes(tmp_path: Path) -> None:
    text = calibrated_scenario(read_logs([str(record(tmp_path / "rec", {"case": "x"}))]),
                               "rec", 1)
    script = tomllib.loads(text)["model"]["script"]
    assert not {"text_tokens", "final_text_tokens", "thinking_tokens"} & set(script)
    assert "the logs hold no response text" in text


SERVED = """name = "served"
seed = 1
[load]
mode = "closed"
sessions = 1
concurrency = 1
[tools]
catalogue = "none"
[[tools.define]]
name = "Bash"
duration = { kind = "fixed", ms = 5 }
[[tools.define]]
name = "Grep"
cancels_siblings = GREP
duration = { kind = "fixed", ms = 5 }
[[tools.define]]
name = "Read"
duration = { kind = "fixed", ms = 5 }
"""


@pytest.mark.parametrize(("grep_cancels", "errors"), [
    (True, {"Grep": 1}),  # the served scenario's cancelling tool, whatever its name
    (False, {"Bash": 1, "Grep": 1, "Read": 1}),  # none cancels: every error is the tool's
])
def test_the_served_scenario_says_which_tools_cancel_their_siblings(
    tmp_path: Path, grep_cancels: bool, errors: dict[str, int]
) -> None:
    scenario = tmp_path / "served.toml"
    scenario.write_text(SERVED.replace("GREP", str(grep_cancels).lower()))
    metadata = {"scenario_file": str(scenario), "scenario_sha256": file_sha256(scenario)}
    figures = trace_stats(read_logs([str(record(tmp_path / "rec", metadata))]))
    assert figures["tool_errors_by_tool"] == errors
    assert figures["tool_results_sibling_cancelled"] == 3 - len(errors)


def test_a_changed_scenario_file_falls_back_to_the_default_catalogue(tmp_path: Path) -> None:
    scenario = tmp_path / "served.toml"
    scenario.write_text(SERVED.replace("GREP", "true"))
    metadata = {"scenario_file": str(scenario), "scenario_sha256": "0" * 64}
    figures = trace_stats(read_logs([str(record(tmp_path / "rec", metadata))]))
    assert figures["tool_errors_by_tool"] == {"Bash": 1}  # the catalogue's Bash cancels
