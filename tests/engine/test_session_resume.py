"""The persisted transcript and the resume path, shape by shape, with hand-fed streams and fake
integer time: what a crash keeps, the exact transcript the resumed loop sends, and the exact
repairs (issue 22 sec. 4): a trailing tool_use with no result; a parallel batch with some results
written and some not; leading orphan results after a naive compaction; a rewound branch."""

from __future__ import annotations

from typing import Any

from tests.helpers.loop_tools import READ, tool_response
from tests.helpers.runtime_script import message_end, message_start, of_type, text_response
from toolturn.distributions import Fixed
from toolturn.engine.session_faults import CONTINUE_TEXT, REWIND_TEXT
from toolturn.engine.transcript_log import TranscriptLog
from toolturn.runtime.commands import (
    CancelTool,
    Command,
    DiscardedResult,
    ResultReady,
    SendRequest,
    StartTool,
)
from toolturn.runtime.compaction import SUMMARY_TEXT, compact
from toolturn.runtime.loop import Phase, ToolTurnLoop
from toolturn.runtime.outcomes import SyntheticCause, ToolOutcome
from toolturn.runtime.pairing import RepairKind
from toolturn.runtime.record import Resume, TurnEnd
from toolturn.runtime.repair import MISSING_RESULT_TEXT, Repair, check_pairing
from toolturn.runtime.transcript_lines import Line, LineKind, read_transcript
from toolturn.scenario.schema import TranscriptConfig

PROMPT = "read the files"


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def use(tool_use_id: str, path: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_use_id, "name": "Read", "input": {"path": path}}


def result(tool_use_id: str, content: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}


def missing(tool_use_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "is_error": True,
            "content": MISSING_RESULT_TEXT}


class Agent:
    """A loop and its transcript log, each input's commands written to the log as the
    simulator's session does."""

    def __init__(self, config: TranscriptConfig | None = None) -> None:
        self.loop = ToolTurnLoop([READ], model="model-a")
        self.log = TranscriptLog(config or TranscriptConfig(), seed=1, session_id=0)

    def did(self, commands: list[Command], now: int) -> list[Command]:
        self.log.observe(self.loop, commands, now)
        return commands

    def start(self, prompt: str, now: int) -> list[Command]:
        return self.did(self.loop.start(prompt, now), now)

    def stream(self, events: list[dict[str, Any]], start: int) -> list[Command]:
        out: list[Command] = []
        for offset, event in enumerate(events):
            now = start + offset
            out += self.did(self.loop.on_event(event, now), now)
        return out

    def finish(self, tool_use_id: str, content: str, now: int) -> list[Command]:
        commands = self.loop.tool_finished(tool_use_id, ToolOutcome.SUCCESS, content, now)
        return self.did(commands, now)

    def crash(self, now: int) -> list[Command]:
        messages = self.log.crash(now)
        commands = self.loop.resume(messages, now, cause="crash")
        self.log.resync(self.loop)
        return commands

    def replace(self, messages: list[dict[str, Any]], now: int, cause: str) -> list[Command]:
        commands = self.loop.resume(messages, now, cause=cause)
        self.log.replaced(self.loop, now)
        return commands

    def resumed_request(self, prompt: str, now: int) -> SendRequest:
        (send,) = of_type(SendRequest, self.start(prompt, now))
        assert send.pairing_violations == ()  # the repaired body is legal
        return send


def one_read_turn(agent: Agent, tool_use_id: str = "toolu_1", start: int = 0) -> None:
    """A prompt and a response calling Read once, its result written."""
    agent.start(PROMPT, start)
    agent.stream(tool_response("msg_1", (tool_use_id, "Read", {"path": "/a"})), start + 10)
    agent.finish(tool_use_id, "contents of /a", start + 200)


def test_a_crash_while_a_tool_runs_leaves_a_trailing_tool_use_answered_by_the_repair() -> None:
    agent = Agent()
    agent.start(PROMPT, 0)
    started = agent.stream(tool_response("msg_1", ("toolu_1", "Read", {"path": "/a"})), 10)
    assert [c.tool_use_id for c in of_type(StartTool, started)] == ["toolu_1"]
    # The process dies while Read runs: the assistant message was written, its result never.
    commands = agent.crash(1_000)
    assert [(c.tool_use_id, c.reason) for c in of_type(CancelTool, commands)] == [
        ("toolu_1", SyntheticCause.CRASH)
    ]
    assert agent.loop.phase is Phase.IDLE
    assert agent.loop.messages == [
        {"role": "user", "content": [text(PROMPT)]},
        {"role": "assistant", "content": [text("Looking."), use("toolu_1", "/a")]},
    ]
    send = agent.resumed_request(CONTINUE_TEXT, 6_000)
    assert send.request_body["messages"] == [
        {"role": "user", "content": [text(PROMPT)]},
        {"role": "assistant", "content": [text("Looking."), use("toolu_1", "/a")]},
        {"role": "user", "content": [missing("toolu_1"), text(CONTINUE_TEXT)]},
    ]
    assert agent.loop.repairs == [Repair(RepairKind.MISSING_RESULT_INSERTED, 2, "toolu_1")]
    kinds = [(type(e), e.stop_reason if type(e) is TurnEnd else e.cause)
             for e in agent.loop.record.entries if type(e) is Resume or type(e) is TurnEnd]
    assert kinds == [(TurnEnd, "crash"), (Resume, "crash")]
    # The tool's late report is ignored: its call died with the process.
    assert agent.loop.tool_finished("toolu_1", ToolOutcome.SUCCESS, "late", 7_000) == []


def parallel_batch(agent: Agent) -> None:
    agent.start(PROMPT, 0)
    calls = [("toolu_1", "Read", {"path": "/a"}), ("toolu_2", "Read", {"path": "/b"}),
             ("toolu_3", "Read", {"path": "/c"})]
    started = agent.stream(tool_response("msg_1", *calls), 10)
    assert len(of_type(StartTool, started)) == 3  # Read is concurrency-safe: all three run
    handed = agent.finish("toolu_1", "contents of /a", 500)
    assert [c.tool_use_id for c in of_type(ResultReady, handed)] == ["toolu_1"]
    # toolu_3 ends before toolu_2: its result waits (tool_use order), so it is not written.
    assert of_type(ResultReady, agent.finish("toolu_3", "contents of /c", 600)) == []


def test_a_crash_inside_a_parallel_batch_keeps_the_results_written_and_answers_the_rest() -> None:
    agent = Agent()
    parallel_batch(agent)
    commands = agent.crash(700)
    assert [c.tool_use_id for c in of_type(CancelTool, commands)] == ["toolu_2"]
    assert agent.log.results_kept() == {"toolu_1"}
    send = agent.resumed_request(CONTINUE_TEXT, 5_000)
    assert send.request_body["messages"][1:] == [
        {"role": "assistant", "content": [
            text("Looking."), use("toolu_1", "/a"), use("toolu_2", "/b"), use("toolu_3", "/c")]},
        {"role": "user", "content": [
            missing("toolu_2"), missing("toolu_3"), result("toolu_1", "contents of /a"),
            text(CONTINUE_TEXT)]},
    ]
    assert agent.loop.repairs == [
        Repair(RepairKind.MISSING_RESULT_INSERTED, 2, "toolu_2"),
        Repair(RepairKind.MISSING_RESULT_INSERTED, 2, "toolu_3"),
    ]


def test_a_write_delay_loses_the_newest_lines() -> None:
    # Each line lands 150 ns after it is written: toolu_1's result (written at 500) is not on
    # disk at 600, so both results of the batch are lost.
    agent = Agent(TranscriptConfig(write_delay=Fixed(kind="fixed", ms=0.00015)))
    parallel_batch(agent)
    agent.crash(600)
    assert agent.log.results_kept() == set()
    agent.resumed_request(CONTINUE_TEXT, 5_000)
    assert [r.tool_use_id for r in agent.loop.repairs] == ["toolu_1", "toolu_2", "toolu_3"]


def test_a_buffered_log_loses_the_turn_it_had_not_flushed() -> None:
    agent = Agent(TranscriptConfig(durability="buffered"))
    parallel_batch(agent)
    agent.crash(700)
    # Nothing of the first turn reached the disk: the resumed session starts afresh.
    assert agent.loop.messages == []
    send = agent.resumed_request(CONTINUE_TEXT, 5_000)
    assert send.request_body["messages"] == [{"role": "user", "content": [text(CONTINUE_TEXT)]}]
    assert agent.loop.repairs == []


def test_a_buffered_log_keeps_what_a_turns_end_flushed() -> None:
    agent = Agent(TranscriptConfig(durability="buffered"))
    one_read_turn(agent)  # the batch completes: the turn ends, the buffer is flushed
    agent.log.flush(200)
    assert all(when is not None for when in agent.log.on_disk_ns)
    agent.crash(300)
    assert agent.loop.messages[-1] == {"role": "user", "content": [
        result("toolu_1", "contents of /a")]}


def finished_two_turns(agent: Agent) -> None:
    """prompt, tool_use, its result, a final answer: four messages, the chain ended."""
    one_read_turn(agent)
    agent.stream(text_response("msg_2", "Done."), 300)
    assert agent.loop.phase is Phase.IDLE
    assert len(agent.loop.messages) == 4


def test_a_naive_compaction_leaves_leading_orphan_results_the_repair_removes() -> None:
    agent = Agent()
    finished_two_turns(agent)
    compacted = compact(agent.loop.messages, "naive")
    assert compacted is not None
    summary = text(SUMMARY_TEXT.format(count=2))
    assert compacted == [
        {"role": "user", "content": [summary, result("toolu_1", "contents of /a")]},
        {"role": "assistant", "content": [text("Done.")]},
    ]
    agent.replace(compacted, 1_000, "compaction")
    send = agent.resumed_request("next question", 1_000)
    assert send.request_body["messages"] == [
        {"role": "user", "content": [summary]},
        {"role": "assistant", "content": [text("Done.")]},
        {"role": "user", "content": [text("next question")]},
    ]
    assert agent.loop.repairs == [Repair(RepairKind.LEADING_ORPHAN_REMOVED, 0, "toolu_1")]


def test_a_turn_boundary_compaction_never_parts_a_call_from_its_result() -> None:
    agent = Agent()
    finished_two_turns(agent)
    compacted = compact(agent.loop.messages, "turn_boundary")
    assert compacted == [
        {"role": "user", "content": [text(SUMMARY_TEXT.format(count=3))]},
        {"role": "assistant", "content": [text("Done.")]},
    ]
    assert check_pairing(compacted) == []
    assert compact(compacted, "naive") is None  # too short to cut again


def test_a_rewound_branch_is_what_a_later_crash_resumes_from() -> None:
    agent = Agent()
    finished_two_turns(agent)
    # The user rewinds to just after the tool_use (its result and the answer are the old branch).
    agent.replace(agent.loop.messages[:2], 1_000, "rewind")
    send = agent.resumed_request(REWIND_TEXT, 1_000)
    branch = [
        {"role": "user", "content": [text(PROMPT)]},
        {"role": "assistant", "content": [text("Looking."), use("toolu_1", "/a")]},
    ]
    assert send.request_body["messages"] == [
        *branch, {"role": "user", "content": [missing("toolu_1"), text(REWIND_TEXT)]},
    ]
    assert agent.loop.repairs == [Repair(RepairKind.MISSING_RESULT_INSERTED, 2, "toolu_1")]
    agent.stream(text_response("msg_3", "Another way."), 1_100)
    # A crash now reads back the last branch only, with what was written after it (the
    # repair's inserted result is not in the log: the same damage is found again).
    agent.crash(2_000)
    assert agent.loop.messages == [
        *branch,
        {"role": "user", "content": [text(REWIND_TEXT)]},
        {"role": "assistant", "content": [text("Another way.")]},
    ]
    agent.resumed_request(CONTINUE_TEXT, 3_000)
    assert agent.loop.repairs[-1] == Repair(RepairKind.MISSING_RESULT_INSERTED, 2, "toolu_1")


def test_reading_lines_merges_blocks_and_keeps_the_last_branch() -> None:
    lines = [
        Line(LineKind.USER, text("a")),
        Line(LineKind.ASSISTANT, text("x"), key=1),
        Line(LineKind.ASSISTANT, use("toolu_1", "/a"), key=1),
        Line(LineKind.RESULT, result("toolu_1", "r")),
        Line(LineKind.USER, text("b")),
        Line(LineKind.ASSISTANT, text("y"), key=2),
        Line(LineKind.ASSISTANT, text("z"), key=3),  # another message: not merged
    ]
    assert read_transcript(lines) == [
        {"role": "user", "content": [text("a")]},
        {"role": "assistant", "content": [text("x"), use("toolu_1", "/a")]},
        {"role": "user", "content": [result("toolu_1", "r"), text("b")]},
        {"role": "assistant", "content": [text("y")]},
        {"role": "assistant", "content": [text("z")]},
    ]
    branch = Line(LineKind.REPLACE, messages=({"role": "user", "content": "again"},))
    assert read_transcript([*lines, branch, Line(LineKind.ASSISTANT, text("w"), key=4)]) == [
        {"role": "user", "content": [text("again")]},
        {"role": "assistant", "content": [text("w")]},
    ]


def test_a_misfired_calls_early_result_never_reaches_the_log() -> None:
    # openai-chat under at_parsed_json: the call's arguments parse, its speculative run ends and
    # hands its result over, then a second object follows (a misfire). The log held that result
    # for the call's line: it must write the call's real answer (the parse error) instead.
    agent = Agent()
    agent.start(PROMPT, 0)
    block = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}
    head = [message_start("msg_1"), {"type": "content_block_start", "index": 0,
                                     "content_block": block},
            {"type": "content_block_delta", "index": 0,
             "delta": {"type": "input_json_delta", "partial_json": '{"path": "/a"}'}},
            {"type": "content_block_stop", "index": 0}]
    agent.stream(head, 10)
    [early] = of_type(ResultReady, agent.finish("toolu_1", "contents of /a", 20))
    dropped = agent.did(agent.loop.arguments_changed(0, 30), 30)
    assert dropped == [DiscardedResult("toolu_1", early.result, SyntheticCause.MISFIRE)]
    tail = [{"type": "content_block_delta", "index": 0,
             "delta": {"type": "input_json_delta", "partial_json": '{"path": "/b"}'}},
            {"type": "content_block_stop", "index": 0}, *message_end("tool_use")]
    [answer] = of_type(ResultReady, agent.stream(tail, 40))
    assert answer.result["is_error"] is True
    results = [line.block for line in agent.log.lines if line.kind is LineKind.RESULT]
    assert results == [answer.result]
    assert read_transcript(agent.log.lines)[-1] == agent.loop.messages[-1]
