"""Issue 31, section 2: `toolturn traces` counts that match the log, each on a fixture of the
shape Claude Code CLI 2.1.328 writes (tests/fixtures/traces/claude-code-shapes, README there).

- a response cut off mid-stream: the CLI's synthetic API-error line is no request of its own,
  its kind is the one the line names, and its `isMeta` resume joins the history and times the
  resumed request (31 ms, not the 20 s stall);
- an input the CLI could not parse (`__unparsedToolInput`) is counted apart and never becomes
  an input example;
- two calls sharing one id replay with their own durations (567 and 541 ms);
- calibrate learns concurrency safety from calls seen overlapping (a read-only Bash beside a
  Grep), and times first tokens without the stall."""

from __future__ import annotations

import itertools
import json
import tomllib
from pathlib import Path

import pytest

from toolturn.cli import main
from toolturn.runtime.repair import check_pairing
from toolturn.tools.spec import SafeWhen
from toolturn.traces.calibrate import calibrated_scenario, overlapped_tools
from toolturn.traces.replay import replay_session
from toolturn.traces.sources import read_logs
from toolturn.traces.stats import trace_stats

SHAPES = Path(__file__).parents[1] / "fixtures" / "traces" / "claude-code-shapes"
CUT = SHAPES / "cut_and_resumed.jsonl"
SHARED = SHAPES / "shared_id_and_overlap.jsonl"
UNPARSED = SHAPES / "unparsed_input.jsonl"
CUT_AFTER_USE = SHAPES / "cut_after_tool_use.jsonl"
CUT_AFTER_RESULT = SHAPES / "cut_after_tool_result.jsonl"


def stats(path: Path) -> dict[str, object]:
    return trace_stats(read_logs([str(path)]))


def test_a_cut_response_is_one_request_with_the_error_kind_the_log_names() -> None:
    figures = stats(CUT)
    # Three requests were sent: the Read step, the one cut off, the resumed one.
    assert figures["requests"] == 3 and figures["model_steps"] == 3
    assert figures["api_errors"] == 1 and figures["responses_cut"] == 1
    assert figures["api_errors_by_kind"] == {"connection_failed": 1}
    assert figures["pairing_violations"] == 0 and figures["repairs_by_kind"] == {}
    assert figures["prompts"] == 1 and figures["meta_lines"] == 1


@pytest.mark.parametrize(
    ("path", "requests", "calls_without_result"),
    [(CUT, 3, 0), (CUT_AFTER_USE, 3, 1), (CUT_AFTER_RESULT, 2, 0)],
)
def test_a_cut_wherever_it_falls_is_no_request_and_no_pairing_violation(
    path: Path, requests: int, calls_without_result: int
) -> None:
    figures = stats(path)
    assert figures["requests"] == requests and figures["responses_cut"] == 1
    assert figures["api_errors_by_kind"] == {"connection_failed": 1}
    assert figures["tool_calls_without_result"] == calls_without_result
    assert figures["pairing_violations"] == 0 and figures["repairs_by_kind"] == {}
    # The resumed request holds the cut response (what the client sent: no call left
    # unanswered) and the resume text, as one alternating transcript.
    (session,) = read_logs([str(path)]).sessions
    resumed = session.steps[-1] if path != CUT_AFTER_USE else session.steps[1]
    assert check_pairing(resumed.messages) == []
    roles = [m["role"] for m in resumed.messages]
    assert all(a != b for a, b in itertools.pairwise(roles))
    assert "cut off mid-stream" in json.dumps(resumed.messages[-1])


def test_a_cut_call_that_never_ran_leaves_the_history() -> None:
    (session,) = read_logs([str(CUT_AFTER_USE)]).sessions
    cut, resumed = session.steps[0], session.steps[1]
    assert [c.tool_use_id for c in cut.tool_calls] == ["toolu_c1"]
    assert resumed.messages[1] == {"role": "assistant",
                                   "content": [{"type": "text", "text": "Counting."}]}


def test_a_cut_after_its_call_ran_keeps_the_call_and_its_result() -> None:
    (session,) = read_logs([str(CUT_AFTER_RESULT)]).sessions
    cut, resumed = session.steps
    assert cut.stream_error is not None and cut.tool_calls[0].duration_ms == 50.0
    blocks = resumed.messages[-1]["content"]
    assert [b["type"] for b in blocks] == ["tool_result", "text"]


def test_the_resume_line_times_the_resumed_request() -> None:
    (session,) = read_logs([str(CUT)]).sessions
    cut, resumed = session.steps[1], session.steps[2]
    assert cut.stream_error is not None and cut.stream_error.startswith("connection_failed: ")
    assert resumed.first_block_delay_ms == pytest.approx(31.0)
    # The resumed request's history: the cut response, then the resume text.
    assert [m["role"] for m in resumed.messages[-2:]] == ["assistant", "user"]
    assert "cut off mid-stream" in resumed.messages[-1]["content"][0]["text"]
    figures = stats(CUT)
    assert figures["first_block_delay_ms"]["max"] == 1000.0  # no 20,189 ms delay


def test_calibrate_times_first_tokens_without_the_cut_response() -> None:
    text = calibrated_scenario(read_logs([str(CUT)]), "cut", 1)
    ttft = tomllib.loads(text)["model"]["latency"]["ttft"]["values_ms"]
    assert ttft == [31.0, 1000.0]


def test_an_unparsed_input_is_counted_apart_and_no_example() -> None:
    figures = stats(UNPARSED)
    # The client's parse failure (answered by its own InputValidationError): no run of Edit.
    assert figures["tool_calls_unparsed_input"] == 1
    assert figures["tool_calls_unparsed_input_by_tool"] == {"Edit": 1}
    assert figures["tool_calls"] == 0 and figures["tool_calls_by_tool"] == {}
    assert figures["tool_errors_by_tool"] == {} and figures["tool_duration_ms_by_tool"] == {}
    text = calibrated_scenario(read_logs([str(UNPARSED)]), "unparsed", 1)
    assert "__unparsedToolInput" not in text
    (edit,) = tomllib.loads(text)["tools"]["define"]
    assert "examples" not in edit
    # Neither its 20 ms nor its validation error feed Edit's duration or failure rate.
    assert "failures" not in edit and edit["duration"] == {"kind": "fixed", "ms": 0}


def test_two_calls_sharing_an_id_keep_their_own_durations_and_results() -> None:
    (session,) = read_logs([str(SHARED)]).sessions
    first, second = session.steps[0].tool_calls
    assert (first.duration_ms, second.duration_ms) == (567.0, 541.0)
    assert (first.result_text, second.result_text) == ("hello.txt\nnotes.txt", "1 notes.txt")
    report = replay_session(session, None, 1)
    for outcome in report["policies"].values():
        assert [(t["tool"], t["duration_ms"]) for t in outcome["tool_sequence"][:2]] == [
            ("Bash", 567.0), ("Bash", 541.0)]


def test_calibrate_learns_safety_from_calls_seen_overlapping(tmp_path: Path) -> None:
    logs = read_logs([str(SHARED)])
    # The read-only Bash's result came before the Grep called before it.
    assert overlapped_tools(logs.sessions) == {"Grep": 1, "Bash": 1}
    out = tmp_path / "cal.toml"
    assert main(["traces", "calibrate", str(SHARED), "-o", str(out)]) == 0
    assert main(["validate", str(out)]) == 0
    tools = {t["name"]: t for t in tomllib.loads(out.read_text())["tools"]["define"]}
    assert tools["Grep"]["concurrency_safe"] is True
    bash = tools["Bash"]
    assert bash["concurrency_safe"] is False
    assert bash["concurrency_safe_when"]["field"] == "command"
    rule = SafeWhen.model_validate(bash["concurrency_safe_when"]).predicate()
    assert rule({"command": "cat hello.txt"}) and rule({"command": "git status"})
    assert not rule({"command": "rm notes.txt"}) and not rule({"command": "ls > out.txt"})


def test_a_tool_never_seen_overlapping_runs_alone() -> None:
    text = calibrated_scenario(read_logs([str(UNPARSED)]), "alone", 1)
    (edit,) = tomllib.loads(text)["tools"]["define"]
    assert edit["concurrency_safe"] is False and "concurrency_safe_when" not in edit
