"""What a scenario file says, as pydantic models: one TOML file validates to one `Scenario`.

Every table rejects keys it does not know. Times are written in ms (or s where a name says so) and
read as integer ns through the `*_ns` properties. The tables:

- `[load]`     how sessions arrive: a closed loop of N concurrent sessions, or an open loop
               (Poisson arrivals or a trace); optionally a sweep over load levels.
- `[session]`  what one session does: how many prompts, user think time, interrupts, attachments.
- `[runtime]`  how the agent runtime behaves: executor policies to compare, strict mode, retries,
               the turn limit, model fallback.
- `[model]`    the mock model (`toolturn.model.config.ModelConfig`).
- `[tools]`    the simulated tools: a catalogue, new tools, partial overrides of catalogue tools.
- `[experiment]` optional: points over any of the above and replications (seeds) per point.
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from toolturn.counts import Count, fixed_count
from toolturn.distributions import NS_PER_MS, Distribution, Fixed, LogNormal
from toolturn.field_problems import (
    FieldProblem,
    problems_under,
    raise_at,
    raise_problems,
    repeated,
)
from toolturn.fields import chance
from toolturn.limits import (
    MAX_ATTACHMENT_RATE_PER_S,
    MAX_COUNT,
    MAX_DURATION_MS,
    MAX_RETRIES,
    MAX_SEED,
    MAX_SESSION_MS,
    MAX_SPAN_MS,
    MIN_HORIZON_S,
    MIN_RATE_PER_S,
    REQUEST_MAX_TOKENS,
)
from toolturn.model.config import GeneratedScript, ModelConfig
from toolturn.model.latency import largest_ns, longest_response_ns, most_tool_calls
from toolturn.runtime.protocol_timing import ChatStart
from toolturn.runtime.tooldef import ToolDefinition
from toolturn.scenario.experiment import ExperimentConfig
from toolturn.tools.catalogue import catalogue
from toolturn.tools.execution import TOOL_TIMEOUT_NS
from toolturn.tools.override import apply_override
from toolturn.tools.spec import ToolSpec

NS_PER_S = 1_000_000_000

Policy = Literal["streaming", "at_message_stop", "serial"]
# The recovery profiles of toolturn.runtime.recovery.PROFILES (a test keeps the two the same).
Profile = Literal["default", "claude-code", "codex"]
ALL_POLICIES: tuple[Policy, ...] = ("streaming", "at_message_stop", "serial")
DEFAULT_PROFILES: tuple[Profile, ...] = ("default",)


class _Section(BaseModel):
    # Strict: TOML values have types, so `seed = true`, `strict = "off"` or `sessions = "3"` is a
    # mistake to report, not 1, True and 3. An integer is still a float (`ms = 5`).
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)


# --- [load] -------------------------------------------------------------------------------------


class LoadConfig(_Section):
    """How sessions arrive.

    closed: `concurrency` sessions run at once; when one ends the next starts, until `sessions`
    have run. open: sessions arrive on their own schedule, at `arrival_rate_per_s` (a Poisson
    process) or at the times of `trace_ms`, however many are already running. `sweep` runs the
    scenario once per load level (concurrency values when closed, arrival rates when open).
    """

    mode: Literal["closed", "open"] = Field(
        description="closed: fixed concurrency; open: arrivals."
    )
    sessions: int = Field(
        ge=1, le=MAX_COUNT, description="Sessions to run (per load level when sweeping)."
    )
    concurrency: int | None = Field(
        default=None, ge=1, description="closed: sessions running at once."
    )
    arrival_rate_per_s: float | None = Field(
        default=None,
        ge=MIN_RATE_PER_S,
        description="open: mean session arrivals per second (Poisson).",
    )
    trace_ms: list[Annotated[float, Field(ge=0, le=MAX_SPAN_MS)]] | None = Field(
        default=None,
        min_length=1,
        description="open: session arrival times in ms from the start, non-decreasing; the first "
        "`sessions` of them are used.",
    )
    sweep: list[Annotated[float, Field(gt=0)]] | None = Field(
        default=None,
        min_length=1,
        description="Load levels to run one after another: concurrency values (closed) or arrival "
        "rates per second (open); replaces concurrency / arrival_rate_per_s.",
    )
    horizon_s: float | None = Field(
        default=None,
        ge=MIN_HORIZON_S,
        le=MAX_SPAN_MS / 1000,
        description="Stop at this much simulated time; none: run to the end.",
    )

    @field_validator("sweep")
    @classmethod
    def _distinct_levels(cls, sweep: list[float] | None) -> list[float] | None:
        # Results are keyed by level: two runs at one level would be merged as one.
        if sweep is not None:
            twice = repeated(sweep)
            if twice:
                shown = ", ".join(f"{level:g}" for level in twice)
                raise ValueError(f"levels listed more than once: {shown}")
        return sweep

    @model_validator(mode="after")
    def _fits_mode(self) -> LoadConfig:
        problems: list[FieldProblem] = []

        def forbid(field: str, reason: str) -> None:
            if getattr(self, field) is not None:
                problems.append(FieldProblem((field,), reason, getattr(self, field)))

        if self.mode == "closed":
            forbid("arrival_rate_per_s", 'applies only to mode = "open"')
            forbid("trace_ms", 'applies only to mode = "open"')
            if self.concurrency is None and self.sweep is None:
                problems.append(
                    FieldProblem(("concurrency",), 'mode = "closed" needs concurrency (or sweep)')
                )
            if self.sweep is not None and any(level != int(level) for level in self.sweep):
                problems.append(
                    FieldProblem(
                        ("sweep",),
                        "closed-loop levels are concurrencies: whole numbers",
                        self.sweep,
                    )
                )
        else:
            forbid("concurrency", 'applies only to mode = "closed"')
            if self.trace_ms is not None:
                forbid("arrival_rate_per_s", "give arrival_rate_per_s or trace_ms, not both")
                forbid("sweep", "a trace fixes the arrival times; it cannot be swept")
                if any(b < a for a, b in zip(self.trace_ms, self.trace_ms[1:], strict=False)):
                    problems.append(FieldProblem(("trace_ms",), "arrival times must not decrease"))
                if len(self.trace_ms) < self.sessions:
                    problems.append(
                        FieldProblem(
                            ("sessions",),
                            f"the trace has only {len(self.trace_ms)} arrivals for {self.sessions} "
                            "sessions",
                            self.sessions,
                        )
                    )
            elif self.sweep is not None and min(self.sweep) < MIN_RATE_PER_S:
                problems.append(
                    FieldProblem(
                        ("sweep",),
                        "open-loop levels are arrival rates per second: at least "
                        f"{MIN_RATE_PER_S:g}",
                        self.sweep,
                    )
                )
            elif self.arrival_rate_per_s is None and self.sweep is None:
                problems.append(
                    FieldProblem(
                        ("arrival_rate_per_s",),
                        'mode = "open" needs arrival_rate_per_s, trace_ms or sweep',
                    )
                )
        raise_problems("LoadConfig", problems)
        return self

    @property
    def levels(self) -> tuple[float, ...]:
        """The load levels to run: the sweep, or the one level given (empty for a trace)."""
        if self.sweep is not None:
            return tuple(self.sweep)
        level = self.concurrency if self.mode == "closed" else self.arrival_rate_per_s
        return () if level is None else (float(level),)

    @property
    def horizon_ns(self) -> int | None:
        return None if self.horizon_s is None else round(self.horizon_s * NS_PER_S)

    @property
    def trace_ns(self) -> tuple[int, ...] | None:
        """The arrival times used (the first `sessions` of the trace) in ns, or None."""
        if self.trace_ms is None:
            return None
        return tuple(round(ms * NS_PER_MS) for ms in self.trace_ms[: self.sessions])


# --- [session] ----------------------------------------------------------------------------------


class InterruptPhases(_Section):
    """Relative weights of the phase a user interrupt lands in."""

    streaming: float = Field(default=1.0, ge=0, description="While the model streams.")
    tools: float = Field(default=1.0, ge=0, description="While tools run.")


class InterruptConfig(_Section):
    """User interrupts (pressing Esc): at most one per turn."""

    probability: float = chance("Chance a turn is interrupted.")
    phase: InterruptPhases = Field(
        default_factory=InterruptPhases, description="Weights of the phase the interrupt targets."
    )
    after: Distribution = Field(
        default_factory=lambda: LogNormal(kind="lognormal", median_ms=2000, sigma=0.8),
        description="Delay from the start of the chosen phase to the interrupt; if the phase is "
        "over by then, the turn is not interrupted.",
    )

    @model_validator(mode="after")
    def _some_phase(self) -> InterruptConfig:
        if self.probability > 0 and self.phase.streaming + self.phase.tools <= 0:
            raise_at("InterruptConfig", ("phase",), "the weights must not all be zero")
        return self


class AttachmentRates(_Section):
    """Attachments arriving while tools run (Poisson, per second of tool time, by kind); they are
    appended after the whole batch of tool results."""

    queued_user_input: float = Field(
        default=0.0,
        ge=0,
        le=MAX_ATTACHMENT_RATE_PER_S,
        description="Messages the user types meanwhile.",
    )
    notification: float = Field(
        default=0.0, ge=0, le=MAX_ATTACHMENT_RATE_PER_S, description="System notifications."
    )
    file_change: float = Field(
        default=0.0,
        ge=0,
        le=MAX_ATTACHMENT_RATE_PER_S,
        description="Files changed outside the agent.",
    )

    def rates(self) -> dict[str, float]:
        """Rate per second by attachment kind, in a fixed order."""
        return {
            "queued_user_input": self.queued_user_input,
            "notification": self.notification,
            "file_change": self.file_change,
        }


# A prompt's chain of turns is resumed (after a crash or a rewind) at most this many times; a
# fault drawn past it does not happen. Why: a session stays finite however the dice fall
# (`toolturn.engine.bounds`).
MAX_RESUMES_PER_PROMPT = 3


class TranscriptConfig(_Section):
    """The session's persisted transcript, as an agent writes its session log: one line per
    block and per tool result (`toolturn.runtime.transcript_lines`). What a crash keeps is what was
    written by then."""

    write_delay: Distribution = Field(
        default_factory=lambda: Fixed(kind="fixed", ms=0),
        description="Time from a line's append to its being on disk (lines land in order).",
    )
    durability: Literal["line", "buffered"] = Field(
        default="line",
        description="line: each line is flushed as it is written; buffered: lines wait in a "
        "buffer flushed at each turn's end, and a crash loses the buffer.",
    )


class SessionFaultsConfig(_Section):
    """Session-level faults: the agent's process dies, the user rewinds."""

    crash: float = chance(
        "Chance per turn that the agent's process dies during it (running tools "
        "die with it); the session resumes from its persisted transcript."
    )
    restart_delay: Distribution = Field(
        default_factory=lambda: LogNormal(kind="lognormal", median_ms=5_000, sigma=0.5,
                                          max_ms=120_000),
        description="Time from a crash to the resumed session's first request.",
    )
    rewind: float = chance(
        "Chance per turn that the user rewinds to an earlier message during it and "
        "goes on from there (a branch)."
    )


class CompactionConfig(_Section):
    """Compaction: before a prompt, a transcript past `trigger_tokens` input tokens has its
    earlier half replaced by a summary (`toolturn.runtime.compaction`)."""

    trigger_tokens: int | None = Field(
        default=None, ge=1, description="Input tokens past which the transcript is compacted; "
        "none: never.",
    )
    cut: Literal["naive", "turn_boundary"] = Field(
        default="turn_boundary",
        description="naive: at half the messages, wherever that falls (it may part a tool_use "
        "from its results); turn_boundary: never inside a tool turn.",
    )


class SessionConfig(_Section):
    """One session: a user sends prompts, thinks between them, sometimes interrupts."""

    user_prompts: Count = Field(
        default_factory=lambda: fixed_count(1),
        description="Prompts per session (each answered by one or more turns); never 0.",
    )
    think_time: Distribution = Field(
        default_factory=lambda: LogNormal(
            kind="lognormal", median_ms=15_000, sigma=0.8, max_ms=600_000
        ),
        description="User think time between the answer to one prompt and the next prompt.",
    )
    interrupts: InterruptConfig = Field(
        default_factory=InterruptConfig, description="User interrupts."
    )
    attachments: AttachmentRates = Field(
        default_factory=AttachmentRates, description="Attachment arrival rates by kind."
    )
    transcript: TranscriptConfig = Field(
        default_factory=TranscriptConfig, description="The persisted transcript."
    )
    faults: SessionFaultsConfig = Field(
        default_factory=SessionFaultsConfig, description="Crashes and rewinds."
    )
    compaction: CompactionConfig = Field(
        default_factory=CompactionConfig, description="Compaction of long transcripts."
    )

    @property
    def has_faults(self) -> bool:
        """Whether a session can crash, rewind or be compacted."""
        return self.resumes or self.compaction.trigger_tokens is not None

    @property
    def resumes(self) -> bool:
        """Whether a chain of turns can be resumed (a crash or a rewind can happen)."""
        return self.faults.crash > 0 or self.faults.rewind > 0

    def chains_per_prompt(self) -> int:
        """The most chains of turns one prompt can take: its own and its resumes."""
        return 1 + MAX_RESUMES_PER_PROMPT if self.resumes else 1

    @field_validator("user_prompts")
    @classmethod
    def _at_least_one_prompt(cls, prompts: Count) -> Count:
        if prompts.smallest() < 1:
            raise ValueError(
                "can draw 0 prompts; use a fixed, uniform or empirical count of at least 1"
            )
        return prompts


# --- [runtime] ----------------------------------------------------------------------------------


class RetryConfig(_Section):
    """Retries of requests refused before any event (429, 529, 500), as the anthropic SDK does them:
    backoff doubles from initial to max, multiplied by a jitter factor in [1 - jitter, 1]."""

    max_retries: int = Field(
        default=2, ge=0, le=MAX_RETRIES, description="Retries after the first attempt."
    )
    initial_backoff_ms: float = Field(
        default=500, ge=0, le=MAX_DURATION_MS, description="Backoff before the first retry."
    )
    max_backoff_ms: float = Field(
        default=8000, ge=0, le=MAX_DURATION_MS, description="Cap on the backoff."
    )
    jitter: float = chance("Largest fraction taken off a backoff.", default=0.25)
    honour_retry_after: bool = Field(
        default=True, description="Wait what a retry-after header asks instead, when it is given."
    )

    @model_validator(mode="after")
    def _ordered(self) -> RetryConfig:
        if self.max_backoff_ms < self.initial_backoff_ms:
            raise_at(
                "RetryConfig",
                ("max_backoff_ms",),
                "is below initial_backoff_ms",
                self.max_backoff_ms,
            )
        return self

    @property
    def initial_backoff_ns(self) -> int:
        return round(self.initial_backoff_ms * NS_PER_MS)

    @property
    def max_backoff_ns(self) -> int:
        return round(self.max_backoff_ms * NS_PER_MS)


class RuntimeConfig(_Section):
    """The agent runtime under test."""

    policies: list[Policy] = Field(
        default_factory=lambda: list(ALL_POLICIES),
        min_length=1,
        description="Executor policies to run and compare, on the same random draws.",
    )
    profiles: list[Profile] = Field(
        default_factory=lambda: list(DEFAULT_PROFILES),
        min_length=1,
        description="Recovery profiles to run and compare (toolturn.runtime.recovery), each under "
        "every "
        "policy, on the same random draws.",
    )
    strict: bool = Field(
        default=False, description="A pairing mismatch stops the run instead of being repaired."
    )
    chat_start: ChatStart = Field(
        default="at_next_call",
        description="On openai-chat, when streaming starts a call: at_next_call (when the next "
        "call's index begins, or at finish_reason) or at_parsed_json (as soon as its arguments "
        "parse as a JSON object: speculative, a start whose arguments then change is a misfire).",
    )
    max_turns_per_prompt: int = Field(
        default=50,
        ge=1,
        le=MAX_COUNT,
        description="The loop's limit on model turns answering one prompt.",
    )
    retries: RetryConfig = Field(default_factory=RetryConfig, description="Retries with backoff.")
    fallback_after_overloads: int | None = Field(
        default=None,
        ge=1,
        description="Switch to model.faults.fallback after this many overloaded errors in a row; "
        "none: never.",
    )

    @field_validator("policies", "profiles")
    @classmethod
    def _no_repeats(cls, names: list[str]) -> list[str]:
        twice = repeated(names)
        if twice:
            raise ValueError(f"listed more than once: {', '.join(twice)}")
        return names


# --- [tools] ------------------------------------------------------------------------------------


class ToolsConfig(_Section):
    """The tools of the scenario: a catalogue's, then the defined ones, with overrides applied."""

    catalogue: Literal["default", "none"] = Field(
        default="default", description="The catalogue to start from; none: no catalogue tools."
    )
    define: list[ToolSpec] = Field(
        default_factory=list, description="Tools added to the catalogue's."
    )
    override: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Partial changes to catalogue tools by name (see toolturn.tools.override).",
    )

    _specs: tuple[ToolSpec, ...] = PrivateAttr()

    @model_validator(mode="after")
    def _resolve(self) -> ToolsConfig:
        base = {spec.name: spec for spec in catalogue(self.catalogue)}
        problems: list[FieldProblem] = []
        for name, changes in self.override.items():
            if name not in base:
                known = ", ".join(base) or "none"
                problems.append(
                    FieldProblem(
                        ("override", name),
                        f"no catalogue tool by this name (catalogue tools: {known})",
                    )
                )
                continue
            try:
                base[name] = apply_override(base[name], changes)
            except ValidationError as error:
                problems.extend(problems_under(("override", name), error))
        seen = set(base)
        for index, spec in enumerate(self.define):
            if spec.name in seen:
                problems.append(
                    FieldProblem(
                        ("define", index, "name"),
                        f"a tool named {spec.name!r} already exists (change a catalogue tool "
                        f"with [tools.override.{spec.name}])",
                        spec.name,
                    )
                )
            seen.add(spec.name)
        raise_problems("ToolsConfig", problems)
        self._specs = (*base.values(), *self.define)
        return self

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        """Every tool of the scenario: catalogue order, then definition order."""
        return self._specs


# --- the scenario -------------------------------------------------------------------------------


class Scenario(_Section):
    """One scenario file. Cross-section rules: a generated script's tool_mix names only tools of the
    scenario and has tools to call; fallback is configured in both [runtime] and [model.faults] or
    in neither; with every draw at its largest, one response lasts at most `MAX_SPAN_MS` and one
    session at most `MAX_SESSION_MS` (`longest_session_ns`)."""

    name: str = Field(min_length=1, description="Short name, shown in results.")
    description: str = Field(default="", description="What the scenario is for.")
    seed: int = Field(ge=0, le=MAX_SEED, description="Root seed of every random stream.")
    load: LoadConfig = Field(description="How sessions arrive.")
    session: SessionConfig = Field(
        default_factory=SessionConfig, description="One session's behaviour."
    )
    runtime: RuntimeConfig = Field(
        default_factory=RuntimeConfig, description="The runtime under test."
    )
    model: ModelConfig = Field(default_factory=ModelConfig, description="The mock model.")
    tools: ToolsConfig = Field(default_factory=ToolsConfig, description="The simulated tools.")
    experiment: ExperimentConfig | None = Field(
        default=None,
        description="Points over scenario values and seeds per point "
        "(toolturn.scenario.experiment); "
        "none: the scenario is its one point.",
    )

    _content_hash: str | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _sections_agree(self) -> Scenario:
        problems: list[FieldProblem] = []
        names = {spec.name for spec in self.tools.specs}
        script = self.model.script
        if isinstance(script, GeneratedScript):
            for tool in sorted(set(script.tool_mix) - names):
                problems.append(
                    FieldProblem(
                        ("model", "script", "tool_mix", tool),
                        "no tool by this name in [tools]",
                        tool,
                    )
                )
            if not names and script.end_probability < 1:
                problems.append(
                    FieldProblem(
                        ("model", "script"), "the generated script calls tools but [tools] has none"
                    )
                )
        fallback = self.model.faults.fallback
        after = self.runtime.fallback_after_overloads
        if after is not None and fallback is None:
            problems.append(
                FieldProblem(
                    ("runtime", "fallback_after_overloads"),
                    "needs a fallback model: set model.faults.fallback",
                    after,
                )
            )
        if fallback is not None and after is None:
            problems.append(
                FieldProblem(
                    ("model", "faults", "fallback"),
                    "is never used: set runtime.fallback_after_overloads",
                    fallback,
                )
            )
        raise_problems("Scenario", problems)
        return self

    @model_validator(mode="after")
    def _fits_simulated_time(self) -> Scenario:
        # Every value may be within its bound and their product still not: a response's times
        # are summed in int64 arrays, a session's end is an int64 column.
        response_ns = longest_response_ns(self.model, REQUEST_MAX_TOKENS)
        if response_ns > MAX_SPAN_MS * NS_PER_MS:
            raise_at(
                "Scenario",
                ("model",),
                f"one response could last {response_ns / NS_PER_S / 86400:.4g} days with every "
                f"latency at its largest ({REQUEST_MAX_TOKENS} tokens, latency_growth and a "
                f"stall included), more than {MAX_SPAN_MS / 1000 / 86400:.4g}: lower the "
                "latencies' largest values",
            )
        session_ns = self.longest_session_ns(1)
        if session_ns > MAX_SESSION_MS * NS_PER_MS:
            raise_at(
                "Scenario",
                ("session",),
                f"one session could last {session_ns / NS_PER_S / 86400:.4g} days with every "
                "draw at its largest (session.user_prompts times runtime.max_turns_per_prompt "
                "turns of every retry, response and tool call), more than "
                f"{MAX_SESSION_MS / 1000 / 86400:.4g}: lower some of them",
            )
        return self

    @property
    def attempts_per_turn(self) -> int:
        """The most requests one turn sends: the retry budget, fresh once after a fallback."""
        runtime = self.runtime
        fallback = runtime.fallback_after_overloads is not None
        return (runtime.retries.max_retries + 1) * (2 if fallback else 1)

    @property
    def tool_calls_per_response(self) -> int:
        """The most tool calls one response makes."""
        return most_tool_calls(self.model.script)

    def longest_session_ns(self, at_once: int) -> int:
        """How long one session could last from its arrival with every draw at its largest,
        `at_once` sessions sharing the endpoint: per attempt, the queue (when the endpoint
        queues, every other session ahead, each for one attempt), the response, the longest
        backoff or retry-after, and every tool call one after another (permission delay, then its
        run or the tool timeout of a hang); per turn, every attempt and the interrupt's delay;
        per session, every prompt's think time and turns."""
        endpoint = self.model.endpoint
        response_ns = longest_response_ns(self.model, REQUEST_MAX_TOKENS)
        queues = endpoint.capacity is not None and endpoint.overflow == "queue"
        queue_ns = (at_once - 1) * response_ns if queues else 0
        backoff_ns = max(
            self.runtime.retries.max_backoff_ns,
            round(self.model.faults.retry_after_ms * NS_PER_MS),
            round(endpoint.retry_after_ms * NS_PER_MS),
        )
        call_ns = max(
            (
                largest_ns(spec.permission.decision_delay)
                + max(largest_ns(spec.duration), TOOL_TIMEOUT_NS)
                for spec in self.tool_specs
            ),
            default=0,
        )
        attempt_ns = (
            queue_ns + response_ns + backoff_ns + self.tool_calls_per_response * call_ns
        )
        session = self.session
        turn_ns = self.attempts_per_turn * attempt_ns + largest_ns(session.interrupts.after)
        chains = session.chains_per_prompt()
        chain_ns = self.runtime.max_turns_per_prompt * turn_ns
        restarts_ns = (chains - 1) * largest_ns(session.faults.restart_delay)
        prompt_ns = largest_ns(session.think_time) + chains * chain_ns + restarts_ns
        return session.user_prompts.largest() * prompt_ns

    @property
    def tool_specs(self) -> tuple[ToolSpec, ...]:
        """Every simulated tool of the scenario, in a fixed order."""
        return self.tools.specs

    def tool_definitions(self) -> tuple[ToolDefinition, ...]:
        """What the runtime sees of the scenario's tools."""
        return tuple(spec.definition() for spec in self.tools.specs)

    @property
    def content_hash(self) -> str:
        """sha256 (hex) of the scenario file's bytes; for a scenario not read from a file, of its
        canonical JSON."""
        if self._content_hash is None:
            canonical = json.dumps(
                self.model_dump(mode="json"), sort_keys=True, separators=(",", ":")
            )
            self._content_hash = hashlib.sha256(canonical.encode()).hexdigest()
        return self._content_hash

    @classmethod
    def from_file_bytes(cls, data: dict[str, Any], file_bytes: bytes) -> Scenario:
        """Validate parsed TOML `data`, remembering the hash of the bytes it was parsed from."""
        scenario = cls.model_validate(data)
        scenario._content_hash = hashlib.sha256(file_bytes).hexdigest()
        return scenario
