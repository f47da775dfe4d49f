"""The scripted mock model: one request body in, one response out (an HTTP error or a stream).

Pure and deterministic: no clock, no simulator. The answer depends only on the scenario's
`[model]` table, the root seed, the request body, the turn's identity (session, turn, attempt)
and the endpoint's utilisation. The response draws from its own keyed stream (its content, then
its timing) and each fault kind from another, so the same turn gets the same draws whatever else
happened in the run.

What it checks and draws, in order:

1. the request: required fields and the transcript's pairing (400, pairing worded by
   `check_pairing`; `respond` checks them, `answer` takes a body its caller has checked, as the
   simulator takes the loop's verdict), then the model name (404 if unknown);
2. HTTP faults (429, 529, 500 before streaming);
3. the content (explicit script or generated), then tool-call faults (unknown tool, invalid
   input, malformed JSON, duplicate id, arguments that go on after their object), chunking,
   `max_tokens` (the request's, and the `max_tokens_mid_tool_use` fault),
   `end_turn_with_tool_use`;
4. the timing (latency preset, overrides, endpoint factor);
5. error events, cuts and stalls; keep-alive pings.

The fallback model (`faults.fallback`) answers requests that name it, with its profile's latency
preset (the scenario's overrides are the primary's) and without faults: it is where a loop goes
when the primary is failing.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from toolturn.distributions import ms_to_ns
from toolturn.model.api_errors import INVALID_REQUEST, STATUS_ERRORS, error_body
from toolturn.model.chunking import (
    Chunks,
    chunk_tokens,
    chunk_tool_json_fine,
    chunk_tool_json_pairs,
    generated_chunks,
    tool_json,
)
from toolturn.model.config import (
    ExplicitScript,
    LatencyConfig,
    ModelConfig,
    ProfileName,
    ToolUseBlock,
)
from toolturn.model.disruption import Disrupted, disrupt, scripted_cut, with_keepalive_pings
from toolturn.model.endpoint import Endpoint
from toolturn.model.faults import (
    HTTP_FAULTS,
    TOOL_CALL_FAULTS,
    FaultDice,
    fault_probabilities,
    faults_on,
)
from toolturn.model.ids import api_id
from toolturn.model.input_tokens import InputTokenCounter
from toolturn.model.latency import MODEL_NAMES, Latency, resolve_latency
from toolturn.model.response import HttpError, Response, StreamEnding, StreamResponse, Turn
from toolturn.model.script import ExplicitPlanner, GeneratedPlanner, PlannedBlock, ToolInputs
from toolturn.model.stream import StreamBlock, Timeline, build_timeline
from toolturn.randomness import stream
from toolturn.runtime.pairing import TranscriptShapeError, check_pairing

REQUIRED_FIELDS = ("model", "max_tokens", "messages")
UNKNOWN_TOOL_NAME = "undefined_tool"
# Sessions whose scripted calls are remembered at once: the simulator forgets a session when it
# ends, `toolturn serve` never does (each unnamed request is a session), so the oldest go past this.
SCRIPTED_RUN_SESSIONS = 100_000


@dataclass(slots=True)
class _Content:
    """A response's content: its blocks ready to stream, its stop, the faults decided so far."""

    blocks: list[StreamBlock]
    stop_reason: str
    output_tokens: int
    faults: list[str]


def _last_tool_use_id(messages: Any) -> str | None:
    for message in reversed(messages):
        if message.get("role") == "assistant" and isinstance(message.get("content"), list):
            for block in reversed(message["content"]):
                if block.get("type") == "tool_use":
                    return str(block["id"])
    return None


def _signature(root_seed: int, turn: Turn, index: int) -> str:
    key = f"sig:{root_seed}:{turn.session_id}:{turn.turn_index}:{turn.attempt}:{index}".encode()
    return base64.b64encode(hashlib.blake2b(key, digest_size=64).digest()).decode()


class MockModel:
    """Answers Messages API requests as scripted in a scenario's `[model]` table.

    `tools` maps each tool name of the catalogue to a source of valid and invalid inputs; a
    generated script calls only these, an explicit script's invalid-input fault needs them.
    """

    def __init__(
        self,
        config: ModelConfig,
        root_seed: int,
        tools: Mapping[str, ToolInputs] | None = None,
    ) -> None:
        self.config = config
        self.root_seed = root_seed
        self.tools: Mapping[str, ToolInputs] = tools or {}
        self.endpoint = Endpoint(config.endpoint)
        self.name = config.name or MODEL_NAMES[config.profile]
        self.latency = resolve_latency(config.profile, config.latency)
        self._latencies: dict[str, Latency] = {self.name: self.latency}
        self.fallback_name: str | None = None
        fallback: ProfileName | None = config.faults.fallback
        if fallback is not None:
            self.fallback_name = MODEL_NAMES[fallback]
            if self.fallback_name == self.name:
                self.fallback_name += "-fallback"
            # The scenario's overrides describe its primary model; the fallback is a preset.
            self._latencies[self.fallback_name] = resolve_latency(fallback, LatencyConfig())
        script = config.script
        self._planner = (
            ExplicitPlanner(script)
            if isinstance(script, ExplicitScript)
            else GeneratedPlanner(script, self.tools)
        )
        self._input_tokens = InputTokenCounter()
        # Session id -> tool_use id -> its scripted call, for explicit scripts that script runs.
        self._scripted_runs: dict[int, dict[str, ToolUseBlock]] = {}
        self._fault_probabilities = fault_probabilities(config.faults)
        self._faults_on = faults_on(self._fault_probabilities)
        # The kinds of each group that can fire, in the group's order: a response asks only these
        # (a kind that cannot fire draws nothing, so skipping it moves no draw).
        self._http_faults = [
            (kind, status) for kind, status in HTTP_FAULTS.items() if kind in self._faults_on
        ]
        self._tool_call_faults_on = any(kind in self._faults_on for kind in TOOL_CALL_FAULTS)
        self._unknown_tool = UNKNOWN_TOOL_NAME
        while self._unknown_tool in self.tools:
            self._unknown_tool += "_"

    def forget_session(self, session_id: int) -> None:
        """Session `session_id` sends no more requests: drop what the model remembers of it (its
        transcript, kept to count the next request's input tokens quickly)."""
        self._input_tokens.forget(session_id)
        self._scripted_runs.pop(session_id, None)

    def scripted_call(self, session_id: int, tool_use_id: str) -> ToolUseBlock | None:
        """The scripted call behind a tool_use id this model sent session `session_id`, when the
        script scripts its run (`ToolUseBlock.duration_ms`); None otherwise."""
        return self._scripted_runs.get(session_id, {}).get(tool_use_id)

    def request_id(self, turn: Turn) -> str:
        return api_id("req", self.root_seed, turn.session_id, turn.turn_index, turn.attempt)

    def refuse(self, turn: Turn, utilisation: float = 1.0, *, origin_ns: int = 0) -> HttpError:
        """The endpoint's answer to a request it will not take (the simulator decides when)."""
        at_ns = origin_ns + self._error_delay(turn, utilisation)
        return self.endpoint.refusal(self.request_id(turn), at_ns)

    def respond(
        self,
        body: Mapping[str, Any],
        turn: Turn,
        utilisation: float = 0.0,
        *,
        origin_ns: int = 0,
    ) -> Response:
        """The response to request `body` sent by `turn` while the endpoint is at `utilisation`:
        the API's 400 for a body it would reject (`reject`), else `answer`. The response's times
        count from `origin_ns` (the simulator passes the clock's time: no shift of every event
        time afterwards).
        """
        problem = self._request_problem(body)
        if problem is not None:
            return self.reject(problem, turn, utilisation, origin_ns=origin_ns)
        return self.answer(body, turn, utilisation, origin_ns=origin_ns)

    def answer(
        self,
        body: Mapping[str, Any],
        turn: Turn,
        utilisation: float = 0.0,
        *,
        origin_ns: int = 0,
    ) -> Response:
        """`respond` to a body known to have the required fields and to pass `check_pairing`,
        without checking them again: what a simulator does with a loop's `SendRequest`, whose
        `pairing_violations` is that check. A 404 for an unknown model, an HTTP fault, or the
        stream."""
        model = body["model"]
        latency = self._latencies.get(model)
        if latency is None:
            return self._error(
                404, "not_found_error", f"model: {model}", turn, utilisation, origin_ns
            )
        dice = FaultDice(self.root_seed, self._fault_probabilities, turn, self._faults_on)
        primary = model == self.name
        if primary:
            for kind, status in self._http_faults:
                if dice.fires_once(kind):
                    error_type, message = STATUS_ERRORS[status]
                    return self._error(
                        status, error_type, message, turn, utilisation, origin_ns, kind
                    )
        return self._stream(
            body, turn, model, latency, dice if primary else None, utilisation, origin_ns
        )

    def reject(
        self, message: str, turn: Turn, utilisation: float = 0.0, *, origin_ns: int = 0
    ) -> HttpError:
        """The API's 400 `invalid_request_error` for a request it will not take, saying
        `message` (a missing field, a pairing violation as `check_pairing` words it)."""
        return self._error(400, INVALID_REQUEST, message, turn, utilisation, origin_ns)

    # -- errors -------------------------------------------------------------------------------

    @staticmethod
    def _request_problem(body: Mapping[str, Any]) -> str | None:
        """Why the API would reject `body` with 400, worded as it words it, or None."""
        for field in REQUIRED_FIELDS:
            if field not in body:
                return f"{field}: Field required"
        try:
            pairing = check_pairing(body["messages"])
        except TranscriptShapeError as error:
            return str(error)
        return pairing[0] if pairing else None

    def _error_delay(self, turn: Turn, utilisation: float) -> int:
        rng = stream(self.root_seed, "error_delay", turn.session_id, turn.turn_index, turn.attempt)
        factor = self.endpoint.latency_factor(utilisation)
        return round(self.latency.http_error_delay.sample_ns(rng) * factor)

    def _error(
        self,
        status: int,
        error_type: str,
        message: str,
        turn: Turn,
        utilisation: float,
        origin_ns: int,
        fault: str | None = None,
    ) -> HttpError:
        retry = ms_to_ns(self.config.faults.retry_after_ms) if status in (429, 529) else None
        return HttpError(
            status=status,
            body=error_body(error_type, message, self.request_id(turn)),
            at_ns=origin_ns + self._error_delay(turn, utilisation),
            retry_after_ns=retry,
            faults=(fault,) if fault else (),
        )

    # -- the stream ---------------------------------------------------------------------------

    def _stream(
        self,
        body: Mapping[str, Any],
        turn: Turn,
        model: str,
        latency: Latency,
        dice: FaultDice | None,
        utilisation: float,
        origin_ns: int,
    ) -> StreamResponse:
        keys = (turn.session_id, turn.turn_index, turn.attempt)
        rng = stream(self.root_seed, "response", *keys)
        content = self._content(body, turn, dice, rng)
        message_id = api_id("msg", self.root_seed, *keys)
        timeline = build_timeline(
            self._message(message_id, model, body, turn),
            content.blocks,
            content.stop_reason,
            content.output_tokens,
            latency,
            rng,
            self.endpoint.latency_factor(utilisation),
            origin_ns,
        )
        cut = (
            self._planner.scripted_cut(turn.turn_index, turn.attempt)
            if isinstance(self._planner, ExplicitPlanner)
            else None
        )
        return self._sent(timeline, dice, latency, message_id, model, content.faults, cut)

    def _content(
        self,
        body: Mapping[str, Any],
        turn: Turn,
        dice: FaultDice | None,
        rng: np.random.Generator,
    ) -> _Content:
        """The response's blocks, chunked, and its stop: step 3 of the module's docstring."""
        planned = self._planner.plan(turn.turn_index, rng)
        faults: list[str] = []
        calls = [index for index, block in enumerate(planned) if block.type == "tool_use"]
        malformed: set[int] = set()
        duplicated: set[int] = set()
        continued: set[int] = set()
        if dice is not None and self._tool_call_faults_on:
            malformed, duplicated, continued = self._tool_call_faults(
                planned, calls, dice, faults
            )
        ids = self._tool_ids(planned, calls, duplicated, turn, body, faults)
        self._remember_scripted_runs(turn, calls, ids)
        blocks = [
            self._chunked(block, index, ids, index in malformed, turn, rng)
            for index, block in enumerate(planned)
        ]
        if continued:
            assert dice is not None
            _continue_json(blocks, continued, dice.rng("tool_json_continues"))
        max_tokens = int(body["max_tokens"])
        output_tokens = sum(sum(block.chunks.tokens) for block in blocks)
        stop_reason = "tool_use" if calls else "end_turn"
        if output_tokens > max_tokens:
            blocks = _truncated_at_tokens(blocks, max_tokens)
            stop_reason, output_tokens = "max_tokens", max_tokens
        elif (
            dice
            and calls
            and "max_tokens_mid_tool_use" in dice.on
            and dice.fires_once("max_tokens_mid_tool_use")
        ):
            blocks = _cut_inside_a_tool_use(blocks, dice)
            stop_reason, output_tokens = "max_tokens", max_tokens
            faults.append("max_tokens_mid_tool_use")
        if (
            dice
            and stop_reason == "tool_use"
            and "end_turn_with_tool_use" in dice.on
            and dice.fires_once("end_turn_with_tool_use")
        ):
            stop_reason = "end_turn"
            faults.append("end_turn_with_tool_use")
        return _Content(blocks, stop_reason, output_tokens, faults)

    def _message(
        self, message_id: str, model: str, body: Mapping[str, Any], turn: Turn
    ) -> dict[str, Any]:
        """The `message` of the response's message_start."""
        return {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": self._input_tokens(body, turn.session_id),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": 1,
            },
        }

    def _sent(
        self,
        timeline: Timeline,
        dice: FaultDice | None,
        latency: Latency,
        message_id: str,
        model: str,
        faults: list[str],
        cut: tuple[str, float] | None = None,
    ) -> StreamResponse:
        """What is sent of `timeline`: step 5 of the module's docstring. A `cut` the script names
        (`ExplicitPlanner.scripted_cut`) takes the place of the stream's fault draws: the log
        it replays says what happened to this response."""
        ending: StreamEnding
        hit: Disrupted | None = None
        if cut is not None:
            hit = scripted_cut(timeline, cut[0], ms_to_ns(cut[1]))
        elif dice is not None:
            hit = disrupt(
                timeline,
                dice,
                self.config.faults.stall_duration,
                self.config.faults.stall_resume_probability,
            )
        if hit is None:
            times, events, end_ns, ending, stall_at = (
                timeline.times, timeline.events, timeline.times[-1], "complete", None
            )
        else:
            times, events, end_ns, ending, stall_at = (
                hit.times, hit.events, hit.end_ns, hit.ending, hit.stall_at
            )
            faults.extend(hit.faults)
        # What is left of the timeline is a prefix of it; an error event takes the place of the
        # first event cut. The pings then move the stops along with their events.
        kept = len(events) - 1 if ending == "error_event" else len(events)
        tool_stops = tuple(
            [span.stop for span in timeline.spans if span.type == "tool_use" and span.stop < kept]
        )
        sent_times, sent, tool_stops = with_keepalive_pings(
            times, events, end_ns, latency.ping_interval_ns, stall_at, tool_stops
        )
        return StreamResponse(
            sent_times, sent, end_ns, ending, message_id, model, tool_stops, tuple(faults)
        )

    def _remember_scripted_runs(self, turn: Turn, calls: list[int], ids: dict[int, str]) -> None:
        """Keep the scripted call behind each tool_use id, when the script scripts runs."""
        if isinstance(self._planner, ExplicitPlanner) and self._planner.scripts_runs:
            runs = self._scripted_runs.setdefault(turn.session_id, {})
            if len(self._scripted_runs) > SCRIPTED_RUN_SESSIONS:
                del self._scripted_runs[next(iter(self._scripted_runs))]
            scripted = self._planner.scripted_calls(turn.turn_index)
            for index, block in zip(calls, scripted, strict=True):
                if block.duration_ms is not None:
                    runs.setdefault(ids[index], block)

    def _tool_call_faults(
        self, planned: list[PlannedBlock], calls: list[int], dice: FaultDice, faults: list[str]
    ) -> tuple[set[int], set[int], set[int]]:
        """Rewrites the calls hit by unknown-tool or invalid-input faults; returns the block
        indices whose JSON is to be malformed, those whose id is to be a duplicate and those
        whose JSON goes on after its object."""
        # The calls each kind hits (none, mostly: then nothing is rewritten).
        draws = {kind: set(dice.firing(kind, len(calls))) for kind in TOOL_CALL_FAULTS}
        malformed: set[int] = set()
        duplicated: set[int] = set()
        continued: set[int] = set()
        if not any(draws.values()):
            return malformed, duplicated, continued
        for position, index in enumerate(calls):
            call = planned[index]
            if position in draws["unknown_tool"]:
                call.name = self._unknown_tool
                faults.append("unknown_tool")
            elif position in draws["invalid_tool_input"] and call.name in self.tools:
                rng = dice.rng("invalid_tool_input")
                invalid = self.tools[call.name].sample_invalid_input(rng)
                if invalid is not None:
                    call.input = invalid
                    faults.append("invalid_tool_input")
            if position in draws["malformed_tool_json"]:
                malformed.add(index)
                faults.append("malformed_tool_json")
            if position in draws["duplicate_tool_id"]:
                duplicated.add(index)
            if position in draws["tool_json_continues"]:
                continued.add(index)
                faults.append("tool_json_continues")
        return malformed, duplicated, continued

    def _tool_ids(
        self,
        planned: list[PlannedBlock],
        calls: list[int],
        duplicated: set[int],
        turn: Turn,
        body: Mapping[str, Any],
        faults: list[str],
    ) -> dict[int, str]:
        """The tool_use id of each call's block index. A duplicate copies the previous id of
        this response, or the transcript's last one; with neither it has no effect."""
        ids: dict[int, str] = {}
        previous: str | None = None
        for index in calls:
            new_id = api_id(
                "toolu", self.root_seed, turn.session_id, turn.turn_index, turn.attempt, index
            )
            if index in duplicated:
                if previous is None:
                    previous = _last_tool_use_id(body["messages"])
                if previous is not None:
                    new_id = previous
                    faults.append("duplicate_tool_id")
            ids[index] = new_id
            previous = new_id
        return ids

    def _chunked(
        self,
        block: PlannedBlock,
        index: int,
        ids: dict[int, str],
        malformed: bool,
        turn: Turn,
        rng: np.random.Generator,
    ) -> StreamBlock:
        if block.type == "text":
            return StreamBlock("text", _text_chunks(block, rng))
        if block.type == "thinking":
            signature = block.signature or _signature(self.root_seed, turn, index)
            return StreamBlock("thinking", _text_chunks(block, rng), signature=signature)
        if self.config.tool_json_streaming == "pairs":
            chunks = chunk_tool_json_pairs(block.input, rng)
        else:
            chunks = chunk_tool_json_fine(tool_json(block.input), rng)
        if malformed:
            # The closing brace never comes: the text does not parse as JSON.
            chunks.pieces[-1] = chunks.pieces[-1][:-1]
        return StreamBlock("tool_use", chunks, tool_id=ids[index], name=block.name)


def _text_chunks(block: PlannedBlock, rng: np.random.Generator) -> Chunks:
    if block.generated:
        return generated_chunks(block.generated, rng)
    return chunk_tokens(block.tokens, rng)


def _continue_json(
    blocks: list[StreamBlock], continued: set[int], rng: np.random.Generator
) -> None:
    """The fault `tool_json_continues`: each block in `continued` streams a second copy of its
    input object after its own, chunked by the fault's generator (so the response's own draws
    do not move). The text then parses no more: an object, then more than whitespace."""
    for index in sorted(continued):
        chunks = blocks[index].chunks
        # The call's own text once more: the shape of two calls' arguments run together.
        more = chunk_tool_json_fine("".join(chunks.pieces), rng)
        chunks.pieces += more.pieces[1:]  # not its opening empty delta
        chunks.tokens += more.tokens[1:]
        chunks.burst += more.burst[1:]


def _truncated_at_tokens(blocks: list[StreamBlock], limit: int) -> list[StreamBlock]:
    """The blocks as far as `limit` output tokens reach; the block reached last is cut short."""
    used = 0
    kept: list[StreamBlock] = []
    for block in blocks:
        count = 0
        for tokens in block.chunks.tokens:
            if used + tokens > limit:
                break
            used += tokens
            count += 1
        if count == len(block.chunks.pieces):
            kept.append(block)
            continue
        kept.append(replace(block, chunks=block.chunks.truncated(count), signature=""))
        break
    return kept


def _cut_inside_a_tool_use(blocks: list[StreamBlock], dice: FaultDice) -> list[StreamBlock]:
    """The blocks up to one tool_use, which stops before its JSON is complete."""
    rng = dice.rng("max_tokens_mid_tool_use")
    tools = [index for index, block in enumerate(blocks) if block.type == "tool_use"]
    index = tools[int(rng.integers(0, len(tools)))]
    block = blocks[index]
    # Keep the opening empty delta and more, never the fragment that closes the object.
    count = int(rng.integers(1, max(len(block.chunks.pieces), 2)))
    return [*blocks[:index], replace(block, chunks=block.chunks.truncated(count))]
