"""The `[model]` table of a scenario: which model, how fast it speaks, what it says, what breaks.

    [model]
    name = "claude-sonnet-4-5"
    profile = "sonnet"                       # latency preset: haiku | sonnet | opus
    tool_json_streaming = "pairs"            # or "fine_grained"

    [model.latency]                          # any preset field may be overridden
    ttft = { kind = "lognormal", median_ms = 1500, sigma = 0.3 }
    tokens_per_s = 80

    [model.script]                           # generated from distributions...
    kind = "generated"
    tool_mix = { read_file = 3, grep = 2, bash = 1 }
    tool_calls = { kind = "empirical", values = [1, 1, 1, 2, 2, 3] }
    end_probability = 0.15

    [model.endpoint]
    capacity = 64
    overflow = "refuse"
    refuse_status = 529

    [model.faults]
    http_529 = 0.02                          # per request
    cut_mid_tool_json = 0.01                 # per tool_use block
    fallback = "haiku"

Explicit scripts list the responses block by block instead:

    [model.script]
    kind = "explicit"
    [[model.script.responses]]
    blocks = [{ type = "text", text = "Reading." },
              { type = "tool_use", name = "read_file", input = { path = "a.py" } }]

A scripted call may script its run as well (what `toolturn traces replay` writes for a logged call):
`{ type = "tool_use", name = "Bash", input = { command = "ls" }, duration_ms = 610,
result = "a.py", is_error = false }` runs 610 ms and returns "a.py", whatever the tool's own
duration and failures would draw.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from toolturn.counts import Count, EmpiricalCount, FixedCount, UniformCount, fixed_count
from toolturn.distributions import Distribution, fixed_ms
from toolturn.field_problems import repeated
from toolturn.fields import chance
from toolturn.limits import (
    MAX_DURATION_MS,
    MAX_LATENCY_GROWTH,
    MIN_PING_INTERVAL_MS,
    MIN_RATE_PER_S,
)
from toolturn.runtime.protocol_timing import Protocol
from toolturn.tools.json_values import JsonObject

ProfileName = Literal["haiku", "sonnet", "opus"]


class _Config(BaseModel):
    # Strict, as every table of a scenario (see toolturn.scenario.schema._Section).
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)


class LatencyConfig(_Config):
    """Overrides of the profile's latency preset; a field left out keeps the preset's value."""

    ttft: Distribution | None = Field(
        default=None,
        description="Time from sending the request to message_start; the first text follows "
        "a block gap and a token or two later.",
    )
    token_gap: Distribution | None = Field(
        default=None, description="Time between two output tokens (text, thinking or tool JSON)."
    )
    tokens_per_s: float | None = Field(
        default=None,
        ge=MIN_RATE_PER_S,
        description="Mean output speed; sets token_gap to a lognormal with this mean.",
    )
    tool_use_pause: Distribution | None = Field(
        default=None, description="Pause before a tool_use block starts."
    )
    json_chunk_gap: Distribution | None = Field(
        default=None, description="Gap between the chunks of one burst of tool input JSON."
    )
    block_gap: Distribution | None = Field(
        default=None, description="Gap between one content block's stop and the next's start."
    )
    http_error_delay: Distribution | None = Field(
        default=None, description="Time until an HTTP error response (429, 500, 529) arrives."
    )
    ping_interval_ms: float | None = Field(
        default=None,
        ge=MIN_PING_INTERVAL_MS,
        le=MAX_DURATION_MS,
        description="Silence after which the server sends a keep-alive ping event.",
    )

    @model_validator(mode="after")
    def _one_speed(self) -> LatencyConfig:
        if self.token_gap is not None and self.tokens_per_s is not None:
            raise ValueError("give token_gap or tokens_per_s, not both")
        return self


class TextBlock(_Config):
    type: Literal["text"]
    text: str = Field(min_length=1, description="The text the model says.")


class ThinkingBlock(_Config):
    type: Literal["thinking"]
    thinking: str = Field(min_length=1, description="The thinking text.")
    signature: str = Field(min_length=1, description="The signature sent at the block's end.")


class ToolUseBlock(_Config):
    """A scripted call. With `duration_ms` the call's run is scripted too (a replayed session's
    logged call): it runs that long and returns `result` (an is_error result with `is_error`),
    whatever the tool's own duration and failure draws would say."""

    type: Literal["tool_use"]
    name: str = Field(min_length=1, description="The tool called, by name.")
    input: JsonObject = Field(default_factory=dict, description="The call's input object.")
    duration_ms: float | None = Field(
        default=None, ge=0, le=MAX_DURATION_MS,
        description="Script the call's run: it takes this long; none: the tool's draws decide.",
    )
    result: str = Field(default="", description="With duration_ms: the result's text.")
    is_error: bool = Field(default=False, description="With duration_ms: an is_error result.")


ScriptedBlock = Annotated[TextBlock | ThinkingBlock | ToolUseBlock, Field(discriminator="type")]


# The cuts a script may name: the ones a log can tell apart (Claude Code logs a block when it
# stops, so a response is seen cut before its first block or after its last, never inside one).
ScriptedCut = Literal["cut_before_first_block", "cut_before_message_stop"]


class ScriptedResponse(_Config):
    """With `cut`, the response's first attempt is cut off as that fault cuts a stream (a
    replayed session's response the log saw cut off), whatever the fault draws say; a retry of
    it, and the response once the script runs out, stream whole."""

    blocks: list[ScriptedBlock] = Field(
        min_length=1, description="The response's content blocks, in order."
    )
    cut: ScriptedCut | None = Field(
        default=None,
        description="Cut the response's first attempt: before its first block, or after its "
        "last block (before message_stop); none: the fault draws decide.",
    )
    cut_silence_ms: float = Field(
        default=0, ge=0, le=MAX_DURATION_MS,
        description="With cut: how long the connection stays silent, open, before it closes.",
    )

    @model_validator(mode="after")
    def _silence_needs_a_cut(self) -> ScriptedResponse:
        if self.cut_silence_ms and self.cut is None:
            raise ValueError("cut_silence_ms is set but cut is not: a silence needs a cut")
        return self


class ExplicitScript(_Config):
    """Turn `i` of every session answers with `responses[i]` (the last one once they run out)."""

    kind: Literal["explicit"]
    responses: list[ScriptedResponse] = Field(
        min_length=1, description="One response per turn, in turn order."
    )


def _smallest_draw(count: Count) -> int:
    if isinstance(count, FixedCount):
        return count.n
    if isinstance(count, UniformCount):
        return count.low
    if isinstance(count, EmpiricalCount):
        return min(count.values)
    return 0  # a lognormal draw rounds to 0 now and then


class GeneratedScript(_Config):
    """Responses drawn from distributions, so a load test needs no hand-written script."""

    kind: Literal["generated"]
    end_probability: float = chance(
        "Chance that a turn ends the session's task (a final answer, no tool calls).", default=0.2
    )
    max_turns: int = Field(
        default=40, ge=1, description="The turn with this index minus one always ends the task."
    )
    tool_calls: Count = Field(
        default_factory=lambda: fixed_count(1),
        description="Tool calls in a turn that does not end the task (at least 1).",
    )
    tool_mix: dict[str, Annotated[float, Field(ge=0)]] = Field(
        default_factory=dict,
        description="Relative weight of each tool by name; all tools equally if empty.",
    )
    thinking_tokens: Count = Field(
        default_factory=lambda: fixed_count(0),
        description="Length of the thinking block in tokens; no thinking block when 0.",
    )
    text_tokens: Count = Field(
        default_factory=lambda: fixed_count(30),
        description="Length of the text before the tool calls in tokens; no text block when 0.",
    )
    final_text_tokens: Count = Field(
        default_factory=lambda: fixed_count(200),
        description="Length of the final answer in tokens (at least 1).",
    )

    @field_validator("tool_calls", "final_text_tokens")
    @classmethod
    def _at_least_one(cls, count: Count) -> Count:
        if _smallest_draw(count) < 1:
            raise ValueError("must never draw 0 (a turn ending the task is end_probability's job)")
        return count

    @field_validator("tool_mix")
    @classmethod
    def _some_weight(cls, mix: dict[str, float]) -> dict[str, float]:
        # Summed as the planner sums them: a total past the largest float is infinite, and every
        # draw would pick the last tool.
        total = sum(float(mix[name]) for name in sorted(mix))
        if mix and total <= 0:
            raise ValueError("weights must not all be zero")
        if math.isinf(total):
            raise ValueError("the weights sum past the largest float: use smaller relative weights")
        return mix


Script = Annotated[ExplicitScript | GeneratedScript, Field(discriminator="kind")]


class EndpointConfig(_Config):
    """The model endpoint under load: how many streams it serves at once and what happens beyond."""

    capacity: int | None = Field(
        default=None, ge=1, description="Concurrent requests served; unlimited if omitted."
    )
    latency_growth: float = Field(
        default=0.0,
        ge=0,
        le=MAX_LATENCY_GROWTH,
        description="Latency factor is 1 + latency_growth * utilisation (in-flight / capacity).",
    )
    overflow: Literal["queue", "refuse"] = Field(
        default="queue", description="Beyond capacity, queue the request or refuse it."
    )
    refuse_status: Literal[429, 529] = Field(
        default=529, description="HTTP status of a refusal: 429 rate limit or 529 overloaded."
    )
    retry_after_ms: float = Field(
        default=1000, ge=0, le=MAX_DURATION_MS, description="The retry-after a refusal carries."
    )


class FaultsConfig(_Config):
    """A probability for each fault, per the unit its description names; all zero by default."""

    http_429: float = chance("Per request: 429 rate_limit_error.")
    http_529: float = chance("Per request: 529 overloaded_error.")
    http_500: float = chance("Per request: 500 api_error.")
    error_overloaded: float = chance("Per stream: an overloaded_error event mid-stream.")
    error_api: float = chance("Per stream: an api_error event mid-stream.")
    cut_before_first_block: float = chance("Per stream: connection cut after message_start.")
    cut_mid_text: float = chance("Per text block: connection cut inside the block.")
    cut_mid_tool_json: float = chance("Per tool_use block: connection cut inside its JSON.")
    cut_after_tool_use_stop: float = chance(
        "Per tool_use block: connection cut right after it."
    )
    cut_before_message_stop: float = chance("Per stream: cut after message_delta.")
    stall: float = chance("Per stream: no events for stall_duration somewhere.")
    stall_duration: Distribution = Field(
        default_factory=lambda: fixed_ms(30_000), description="How long a stall lasts."
    )
    stall_resume_probability: float = chance(
        "Chance a stall resumes; otherwise it ends in a cut.", default=0.5
    )
    malformed_tool_json: float = chance("Per tool call: its input JSON does not parse.")
    duplicate_tool_id: float = chance("Per tool call: it reuses an earlier tool_use id.")
    tool_json_continues: float = chance(
        "Per tool call: its arguments go on after a complete JSON object, a second "
        "object following ({...}{...}), as some models emit for parallel calls; they do not "
        "parse. Under openai-chat with chat_start = at_parsed_json its speculative start "
        "misfires."
    )
    unknown_tool: float = chance("Per tool call: it names a tool that does not exist.")
    invalid_tool_input: float = chance("Per tool call: its input fails the tool's schema.")
    max_tokens_mid_tool_use: float = chance(
        "Per stream with a tool call: max_tokens stops it inside a tool_use."
    )
    end_turn_with_tool_use: float = chance(
        "Per stream with a tool call: stop_reason end_turn despite the tool_use."
    )
    retry_after_ms: float = Field(
        default=1000,
        ge=0,
        le=MAX_DURATION_MS,
        description="The retry-after a 429 or 529 fault carries.",
    )
    fallback: ProfileName | None = Field(
        default=None,
        description="Profile of the fallback model; it answers requests naming it, without faults.",
    )


class ServeConfig(_Config):
    """How `toolturn serve` treats what real clients send; the simulator never reads it."""

    model_names: dict[str, ProfileName] = Field(
        default_factory=dict,
        description="Model name patterns (fnmatch: claude-haiku-*) to the latency preset a "
        "request naming one is served with; the first match in file order wins.",
    )
    strict_model_names: bool = Field(
        default=False,
        description="404 for a name that is neither the model's nor matched; by default every "
        "name plays the scenario's model.",
    )
    schema_inputs: bool = Field(
        default=False,
        description="Also call client tools without built-in read-only inputs, with inputs "
        "from this scenario or the client's schema (they may write or run anything).",
    )


class ModelConfig(_Config):
    name: str | None = Field(
        default=None, description="Model name in responses; the profile's usual name if omitted."
    )
    profile: ProfileName = Field(default="sonnet", description="Latency preset.")
    protocol: Protocol | list[Protocol] = Field(
        default="anthropic",
        description="Wire protocol the turns are spoken in: anthropic (Messages), "
        "openai-responses or openai-chat (Chat Completions); a list runs each on the same draws, "
        "like policies (toolturn.runtime.protocol_timing).",
    )
    tool_json_streaming: Literal["pairs", "fine_grained"] = Field(
        default="pairs",
        description="Tool input JSON in whole key/value pairs (a pause, then a burst), "
        "or in character-level chunks.",
    )
    latency: LatencyConfig = Field(
        default_factory=LatencyConfig, description="Overrides of the preset's latencies."
    )
    script: Script = Field(
        default_factory=lambda: GeneratedScript(kind="generated"),
        description="What the model says: explicit responses or generated ones.",
    )
    endpoint: EndpointConfig = Field(
        default_factory=EndpointConfig, description="Capacity and overload behaviour."
    )
    faults: FaultsConfig = Field(
        default_factory=FaultsConfig, description="Failure probabilities and the fallback model."
    )
    serve: ServeConfig = Field(
        default_factory=ServeConfig, description="For toolturn serve: model names, tool inputs."
    )

    @field_validator("protocol")
    @classmethod
    def _protocols_once(cls, value: str | list[str]) -> str | list[str]:
        if isinstance(value, list):
            if not value:
                raise ValueError("list at least one protocol")
            twice = repeated(value)
            if twice:
                raise ValueError(f"listed more than once: {', '.join(twice)}")
        return value

    @property
    def protocols(self) -> list[Protocol]:
        """The protocols to run, in the order listed (one arm each)."""
        return list(self.protocol) if isinstance(self.protocol, list) else [self.protocol]
