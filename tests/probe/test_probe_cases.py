"""The official SDK (sync and async, `messages.stream` and `create(stream=True)`) as the client
of every shipped probe case, through `toolturn.probe.sdk_agent`, in this process: the recording's
tables and the recovery classes asserted for each (issue 17, sections 2-4), and the probe's own
class of each run, read from what the client sent next (issue 30)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import anthropic
import pytest

from toolturn.live.session import SessionResult, run_session
from toolturn.live.tools import LiveCall, ToolError
from toolturn.probe import sdk_agent
from toolturn.probe.runner import WORKDIR_FILES, CaseRun, serve_case
from toolturn.probe.scorecard import score
from toolturn.probe.suite import PACKAGED_SUITE, ProbeCase, Suite, case_model, load_suite
from toolturn.probe.verdicts import run_class
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.runtime.retry import RetrySettings
from toolturn.runtime.tooldef import ToolDefinition
from toolturn.wire.background import serve_in_thread
from toolturn.wire.client_tools import ClientTools
from toolturn.wire.recorder import Recorder
from toolturn.wire.recording import RECOVERY_CLASSES, TABLES

SUITE = load_suite(PACKAGED_SUITE)
CASES = {case.name: case for case in SUITE.cases}
SPEED = 200.0  # a 60 s stall takes 0.3 s
FAST = Suite(SUITE.folder, SUITE.timeout_s, SPEED, SUITE.give_up_s, SUITE.cases)

# What this agent does about each fault: its only recovery is one identical retry of a broken
# stream; it answers whatever calls it got, and stops at any stop reason but tool_use.
RETRIED = "identical_retry"
KEPT = "calls_answered"
ERRORS = "calls_answered_with_errors"  # kept, one or more answered with an error result
EXPECTED: dict[str, tuple[str, ...]] = {
    "two_calls_clean": (), "out_of_order_reads": (),
    "cut_in_tool_json": (RETRIED,), "cut_after_tool_use": (RETRIED,),
    "cut_before_first_block": (RETRIED,), "error_after_tool_use": (RETRIED,),
    "cut_after_tool_use_late_cut": (RETRIED,),
    # A body that ends cleanly without message_stop: the SDK takes the partial message as final,
    # with no stop reason, and the agent stops there.
    "cut_after_tool_use_clean_eof": ("stopped",),
    "error_before_blocks": (RETRIED,), "overloaded_storm": (RETRIED,) * 3,
    "stall_after_message_start": (KEPT,), "stall_after_text": (KEPT,),
    "malformed_tool_json": (KEPT,), "unknown_tool": (ERRORS,), "invalid_tool_input": (ERRORS,),
    "duplicate_tool_ids": ("broken_transcript",),
    "max_tokens_open_tool_use": ("stopped",), "max_tokens_closed_tool_use": ("stopped",),
    "end_turn_with_tool_use": ("stopped",),
}
# Where a way of asking changes it: a Message answered whole (`create`) with unparsable tool
# JSON fails the SDK's own parse, and the agent answers the call with an error result.
BY_MODE = {("malformed_tool_json", "create"): (ERRORS,)}


def expected(name: str, mode: str) -> tuple[str, ...]:
    return BY_MODE.get((name, mode.rpartition("-")[2]), EXPECTED[name])


# The same, as the probe classes them (`toolturn.probe.verdicts`): a clean case is classed by
# what follows its first answer.
SDK_CLASSES = {name: classes[0] if classes else "calls_answered"
               for name, classes in EXPECTED.items()}


def run_agent(case: ProbeCase, mode: str, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> (
        tuple[int, dict[str, list[dict[str, Any]]], CaseRun]):
    for name, text in WORKDIR_FILES.items():
        (workdir / name).parent.mkdir(parents=True, exist_ok=True)
        (workdir / name).write_text(text)
    monkeypatch.chdir(workdir)
    with serve_case(case, FAST, workdir, lambda _: None) as (server, tap):
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-dummy")
        if mode.startswith("async"):
            status = asyncio.run(sdk_agent.run_async(mode, "claude-sonnet-4-6"))
        else:
            status = sdk_agent.run_sync(mode, "claude-sonnet-4-6")
    tables = tap.tables()
    run = CaseRun(case, status, 0.0, tables, [], "", tuple(tap.exchanges))
    return status, {name: table.to_pylist() for name, table in tables.items()}, run


@pytest.mark.parametrize("mode", sdk_agent.MODES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_sdk_agent_against_every_probe_case(
    name: str, mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    status, rows, run = run_agent(CASES[name], mode, tmp_path, monkeypatch)
    requests, calls, recoveries = rows["requests"], rows["tool_calls"], rows["recoveries"]
    assert tuple(r["recovery"] for r in recoveries) == expected(name, mode)
    # One classifier: the recording's class is the scorecard's.
    assert run_class(run.exchanges) == score(run)["class"] == (
        expected(name, mode) or ("calls_answered",))[0]
    assert {r["faults"] for r in recoveries} <= {CASES[name].fault.kind}
    first = requests[0]
    # The body ended properly without message_stop: recorded as its own ending, not complete.
    assert (first["ending"] == "clean_eof") == name.endswith("clean_eof")
    assert (first["turn_index"], first["attempt"], first["status"] in (200, 529)) == (1, 1, True)
    assert all(r["pairing_violations"] == 0 for r in requests if r["status"] != 400)
    card = score(run)
    if EXPECTED[name] == ():  # clean: both calls answered, in order, then a final answer
        assert status == 0 and len(requests) == 2 and card["lost"] == 0
        assert [c["result_request_index"] for c in calls] == [1, 1]
        assert all(c["results_in_order"] and c["is_error"] is False for c in calls)
        assert all(c["round_trip_ns"] > 0 for c in calls)
    elif EXPECTED[name][0] == RETRIED:
        retries = [r for r in requests if r["retry"]]
        assert len(retries) == len(EXPECTED[name]) == card["retries"]
        assert all(r["since_previous_response_ns"] >= 0 for r in retries)
        assert status == 0 and requests[-1]["status"] == 200
    elif name == "duplicate_tool_ids":
        assert card["400s"] == 2 and status == 1  # its retry repeats the broken transcript
        assert requests[1]["first_violation"] is not None
    elif name in ("unknown_tool", "invalid_tool_input"):
        results = {c["name"]: c["is_error"] for c in calls}
        assert True in results.values() and status == 0
    elif EXPECTED[name] == ("stopped",):
        assert len(requests) == 1 and recoveries[0]["next_request_index"] is None


def test_the_tables_have_their_schemas_and_the_classes_are_known(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, rows, run = run_agent(CASES["cut_after_tool_use"], "sync-stream", tmp_path, monkeypatch)
    for spec in TABLES:
        assert run.tables[spec.name].schema.equals(spec.schema)
    assert {r["recovery"] for r in rows["recoveries"]} <= set(RECOVERY_CLASSES)
    cut, retry = rows["requests"][0], rows["requests"][1]
    assert (cut["ending"], retry["retry"], retry["attempt"]) == ("cut", True, 2)
    # The cut's first call stopped; nobody sent its result (the retry got new ids).
    lost = [c for c in rows["tool_calls"] if c["request_index"] == 0]
    assert len(lost) == 1 and lost[0]["block_stop_ns"] is not None
    assert lost[0]["message_stop_ns"] is None and lost[0]["result_request_index"] is None


# ----- the project's own loop (toolturn.live) as the client -----

async def _read(call: LiveCall) -> str:
    path = Path(str(call.input.get("file_path", "")))
    if not path.is_file():
        raise ToolError(f"no such file: {path}")
    return path.read_text()


async def _bash(call: LiveCall) -> str:
    return f"(not run) {call.input.get('command')}"


def run_live(case: ProbeCase, workdir: Path) -> tuple[SessionResult, dict[str, list[Any]]]:
    for name, text in WORKDIR_FILES.items():
        (workdir / name).parent.mkdir(parents=True, exist_ok=True)
        (workdir / name).write_text(text)
    definitions = [ToolDefinition(tool["name"], tool["input_schema"], concurrency_safe=True)
                   for tool in sdk_agent.TOOLS]
    # The loop's retries, with backoffs short enough for a test (retry-after wins anyway).
    retry = RetrySettings(max_retries=3, initial_delay_ns=5_000_000)
    loop = ToolTurnLoop(definitions, model="claude-sonnet-4-6", retry=retry, max_turns=6)
    recorder = Recorder()
    with serve_in_thread(case_model(case.scenario), speed=SPEED, log=lambda _: None,
                         client_tools=ClientTools({}, client_dir=str(workdir)),
                         recorder=recorder, rewrite=case.fault) as server:
        async def session() -> SessionResult:
            client = anthropic.AsyncAnthropic(base_url=server.base_url, api_key="x",
                                              max_retries=0, timeout=20)
            try:
                return await run_session(client, loop, sdk_agent.PROMPT,
                                         {"Read": _read, "Bash": _bash})
            finally:
                await client.close()
        result = asyncio.run(session())
    recorder.give_up(None)
    return result, {name: table.to_pylist() for name, table in recorder.tables().items()}


# The loop's own recovery (its default profile), as measured: a cut stream ends the session
# (`stream_error`, no retry); an error event is retried as it was sent; bad calls get error
# results and the turn goes on; a tool_use cut open by max_tokens ends the session.
GAVE_UP, KEPT_ONCE, RETRIED_ONCE = ("stopped",), (KEPT,), (RETRIED,)
ERRORS_ONCE = (ERRORS,)
LIVE_EXPECTED: dict[str, tuple[tuple[str, ...], str]] = {
    "two_calls_clean": ((), "end_turn"), "out_of_order_reads": ((), "end_turn"),
    "cut_in_tool_json": (GAVE_UP, "stream_error"), "cut_after_tool_use": (GAVE_UP, "stream_error"),
    "cut_after_tool_use_late_cut": (GAVE_UP, "stream_error"),
    "cut_after_tool_use_clean_eof": (GAVE_UP, "stream_error"),
    "cut_before_first_block": (GAVE_UP, "stream_error"),
    "error_after_tool_use": (RETRIED_ONCE, "end_turn"),
    "error_before_blocks": (RETRIED_ONCE, "end_turn"),
    "overloaded_storm": ((RETRIED,) * 3, "end_turn"),
    "stall_after_message_start": (KEPT_ONCE, "end_turn"),
    "stall_after_text": (KEPT_ONCE, "end_turn"),
    "malformed_tool_json": (ERRORS_ONCE, "end_turn"),
    "unknown_tool": (ERRORS_ONCE, "end_turn"), "invalid_tool_input": (ERRORS_ONCE, "end_turn"),
    "duplicate_tool_ids": (KEPT_ONCE, "end_turn"),
    "max_tokens_open_tool_use": (GAVE_UP, "max_tokens"),
    "max_tokens_closed_tool_use": (ERRORS_ONCE, "end_turn"),
    "end_turn_with_tool_use": (KEPT_ONCE, "end_turn"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_projects_live_loop_against_every_probe_case(name: str, tmp_path: Path) -> None:
    result, rows = run_live(CASES[name], tmp_path)
    classes = tuple(r["recovery"] for r in rows["recoveries"])
    assert (classes, result.reason) == LIVE_EXPECTED[name]
    assert all(r["pairing_violations"] == 0 for r in rows["requests"])  # never a broken request
    assert result.requests == len(rows["requests"])
    answered = [c for c in rows["tool_calls"] if c["result_request_index"] is not None]
    if KEPT in classes or ERRORS in classes or not classes:
        assert answered and all(c["round_trip_ns"] > 0 for c in answered)
