"""`toolturn traces replay`: each logged session as an explicit script, run under every policy (and
every recovery profile of the given scenario's runtime).

A logged session becomes one scenario (`replay_scenario`):

- the model answers turn `i` with the session's logged response `i` (text, thinking with its
  signature, tool calls with their real inputs); each call's run is scripted too
  (`ToolUseBlock.duration_ms`): it takes its logged duration (0 where none was logged) and returns
  its logged result, an is_error one where the log says so. A prompt's chain that the log ends
  on a tool call (an interrupted session) or a cut gets a closing text response, so the chain
  ends there;
  failed requests (API errors) are left out, as are block types the mock model does not stream
  (server tool uses). A response the log saw cut off mid-stream is cut off again
  (`ScriptedResponse.cut`): under a profile that resumes after a cut (`claude-code`), the resumed
  request gets the log's next response, as the logged session did;
- the user sends as many prompts as the log has, waiting the median of the session's logged
  think times between them (0 when it logged none);
- the tools are the ones the session called, concurrency-safe as Claude Code's read-only tools;
- from a given scenario: the model's name, latency, endpoint and faults, the runtime (policies,
  recovery profiles, retries, strict mode), interrupts and attachments, and the load as copies of
  the session: a closed loop of `concurrency` copies at once (1 by default). Its own script and
  tools are replaced by the session's.

Without a scenario the model is the logged one's latency preset, faultless, one copy, every policy.
Each policy (each arm, profile x policy, named as in the summary: `streaming [claude-code]`) runs
the same script on the same draws; the answers per session are TTFTS and turn latency per arm,
the session's simulated span, and what early start saved (span under `at_message_stop` and under
`serial`, minus span under `streaming`, of the default profile).
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from typing import Any

import numpy as np

from toolturn.engine.simulation import simulate
from toolturn.metrics.summary import arm_label
from toolturn.scenario.schema import Scenario
from toolturn.tools.spec import TOOL_NAME_PATTERN
from toolturn.traces.calibrate import MODEL_NAME, READ_ONLY_TOOLS
from toolturn.traces.logged import LoggedSession, Step, ToolCall

CHAIN_CUT_TEXT = "[replay: the logged chain of this prompt ended here]"
EMPTY_RESPONSE_TEXT = "[replay: the logged response had no content the mock model streams]"


def _scripted_blocks(step: Step) -> list[dict[str, Any]]:
    # Each tool_use block is its own call, in order: two sharing one id keep their own
    # durations and results.
    calls: dict[str, list[ToolCall]] = {}
    for call in step.tool_calls:
        calls.setdefault(call.tool_use_id, []).append(call)
    blocks: list[dict[str, Any]] = []
    for block in step.blocks:
        kind = block.get("type")
        if kind == "text" and block.get("text"):
            blocks.append({"type": "text", "text": str(block["text"])})
        elif kind == "thinking" and block.get("thinking") and block.get("signature"):
            blocks.append(
                {"type": "thinking", "thinking": str(block["thinking"]),
                 "signature": str(block["signature"])}
            )
        elif kind == "tool_use":
            same_id = calls.get(str(block.get("id")))
            if not same_id:
                continue
            call = same_id.pop(0)
            blocks.append(
                {"type": "tool_use", "name": call.name, "input": call.input,
                 "duration_ms": call.duration_ms or 0.0,
                 "result": call.result_text or "", "is_error": call.is_error}
            )
    return blocks or [{"type": "text", "text": EMPTY_RESPONSE_TEXT}]


def scripted_responses(session: LoggedSession) -> list[dict[str, Any]]:
    """The session's responses in turn order, each prompt's chain ending without tool calls."""
    responses: list[dict[str, Any]] = []
    steps = [step for step in session.steps if step.has_response]
    prompts = sorted({step.prompt_index for step in steps})
    for prompt in prompts:
        chain = [step for step in steps if step.prompt_index == prompt]
        for step in chain:
            responses.append(_scripted_response(step))
        last = responses[-1]
        if "cut" in last or any(b["type"] == "tool_use" for b in last["blocks"]):
            responses.append({"blocks": [{"type": "text", "text": CHAIN_CUT_TEXT}]})
    return responses


def _scripted_response(step: Step) -> dict[str, Any]:
    """One logged response as scripted. One the log saw cut off (`stream_error`) is cut again,
    after its last logged block (the log keeps only blocks that stopped), once the connection
    was silent as long as the log says it was (last block to the error line): a runtime that
    resumes after a cut then sends the request the log's next response answers."""
    response: dict[str, Any] = {"blocks": _scripted_blocks(step)}
    if step.stream_error is not None:
        response["cut"] = "cut_before_message_stop"
        if step.stream_error_ms is not None and step.last_block_ms is not None:
            response["cut_silence_ms"] = max(0.0, step.stream_error_ms - step.last_block_ms)
    return response


def replay_scenario(session: LoggedSession, base: Scenario | None, seed: int) -> Scenario:
    """The scenario replaying `session`; `ValueError` (pydantic's) when the log holds what a
    scenario cannot (an input that is not JSON a script may hold, say)."""
    responses = scripted_responses(session)
    called = {b["name"] for r in responses for b in r["blocks"] if b["type"] == "tool_use"}
    # A name the API would refuse is left undefined: the loop answers its calls as unknown.
    names = sorted(name for name in called if re.fullmatch(TOOL_NAME_PATTERN, name))
    think = session.think_times_ms()
    prompts = len({s.prompt_index for s in session.steps if s.has_response})
    data: dict[str, Any] = base.model_dump(mode="python", exclude_none=True) if base else {}
    model = data.get("model", {})
    if base is None:
        logged = next((s.model for s in session.steps if s.model), None)
        if logged and MODEL_NAME.fullmatch(logged):
            model["name"] = logged
            model["profile"] = next((p for p in ("haiku", "opus") if p in logged), "sonnet")
    model["script"] = {"kind": "explicit", "responses": responses}
    copies = base.load.concurrency if base and base.load.concurrency else 1
    session_table = data.get("session", {})
    session_table.update(
        user_prompts={"kind": "fixed", "n": max(1, prompts)},
        think_time={"kind": "fixed", "ms": statistics.median(think) if think else 0.0},
    )
    data.update(
        name=f"replay of {session.session_id}"[:200],
        description=f"{session.source}: logged session {session.session_id}",
        seed=seed if base is None else base.seed,
        load={"mode": "closed", "sessions": copies, "concurrency": copies},
        session=session_table,
        model=model,
        tools={
            "catalogue": "none",
            "define": [
                {"name": name, "input_schema": {"type": "object"},
                 "concurrency_safe": name in READ_ONLY_TOOLS,
                 "duration": {"kind": "fixed", "ms": 0}}
                for name in names
            ],
        },
    )
    return Scenario.model_validate(data)


@dataclass(slots=True)
class PolicyOutcome:
    policy: str
    turns: int
    ttfts_ms_p50: float | None
    turn_latency_ms_p50: float | None
    turn_latency_ms_mean: float | None
    session_span_ms: float
    tool_sequence: list[tuple[str, float | None]]  # (tool, duration ms) in start order, copy 0
    outcomes: dict[str, int]
    synthetic_results: int
    repairs: int


def _ms(values: list[int]) -> float | None:
    return float(np.median(values)) / 1e6 if values else None


def run_policy(scenario: Scenario, policy: str, profile: str = "default") -> PolicyOutcome:
    copies = scenario.load.concurrency or 1
    result = simulate(scenario, policy, float(copies), profile=profile)
    turns, tools, sessions = (result.rows[name] for name in ("turns", "tools", "sessions"))
    starts, ends = tools["start_ns"], tools["end_ns"]
    # The calls of copy 0, in start order (never started last), by index into the tools columns.
    first_copy = sorted(
        (index for index, session_id in enumerate(tools["session_id"]) if session_id == 0),
        key=lambda i: (starts[i] is None, starts[i] or 0, tools["block_stop_ns"][i]),
    )
    spans = [
        end - start
        for start, end in zip(sessions["start_ns"], sessions["end_ns"], strict=True)
        if end is not None
    ]
    outcomes: dict[str, int] = {}
    for outcome in turns["outcome"]:
        outcomes[str(outcome)] = outcomes.get(str(outcome), 0) + 1
    latencies = turns["latency_ns"]
    return PolicyOutcome(
        policy=policy,
        turns=len(latencies),
        ttfts_ms_p50=_ms([ttfts for ttfts in turns["ttfts_ns"] if ttfts is not None]),
        turn_latency_ms_p50=_ms(latencies),
        turn_latency_ms_mean=float(np.mean(latencies)) / 1e6 if latencies else None,
        session_span_ms=float(np.mean(spans)) / 1e6 if spans else 0.0,
        tool_sequence=[
            (str(tools["tool_name"][i]),
             None if ends[i] is None or starts[i] is None else (ends[i] - starts[i]) / 1e6)
            for i in first_copy
        ],
        outcomes=dict(sorted(outcomes.items())),
        synthetic_results=sum(turns["n_synthetic_results"]),
        repairs=len(result.rows["repairs"]["session_id"]),
    )


def replay_session(
    session: LoggedSession, base: Scenario | None, seed: int
) -> dict[str, Any]:
    report: dict[str, Any] = {
        "session": session.session_id,
        "source": session.source,
        "logged_tool_calls": len(session.tool_calls),
    }
    try:
        scenario = replay_scenario(session, base, seed)
    except ValueError as error:
        report["error"] = f"cannot be replayed: {str(error).splitlines()[0]}"
        return report
    runtime = scenario.runtime
    outcomes = {
        arm_label(profile, policy): run_policy(scenario, policy, profile)
        for profile in runtime.profiles
        for policy in runtime.policies
    }
    report["policies"] = {p: _outcome_json(o) for p, o in outcomes.items()}
    if "streaming" in outcomes:
        streaming = outcomes["streaming"].session_span_ms
        report["early_start_saved_ms"] = {
            baseline: outcomes[baseline].session_span_ms - streaming
            for baseline in ("at_message_stop", "serial")
            if baseline in outcomes
        }
    return report


def _outcome_json(outcome: PolicyOutcome) -> dict[str, Any]:
    return {
        "turns": outcome.turns,
        "ttfts_ms_p50": outcome.ttfts_ms_p50,
        "turn_latency_ms_p50": outcome.turn_latency_ms_p50,
        "turn_latency_ms_mean": outcome.turn_latency_ms_mean,
        "session_span_ms": outcome.session_span_ms,
        "tool_sequence": [{"tool": t, "duration_ms": d} for t, d in outcome.tool_sequence],
        "turn_outcomes": outcome.outcomes,
        "synthetic_results": outcome.synthetic_results,
        "repairs": outcome.repairs,
    }
