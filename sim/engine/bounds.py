"""How long and how busy one session of a scenario can be: the bounds a runaway session passes.

Everything a session does is finite by construction: a bounded number of prompts, turns per
prompt (the loop's `max_turns_per_prompt`), attempts per turn (the retry budget, fresh once after
a fallback), tool calls per response, progress reports per call (`MAX_PROGRESS_PER_CALL`) and
attachments per turn (`MAX_ATTACHMENTS_PER_TURN`), and every wait is a draw of a capped
distribution. These are the worst cases of all of them together, doubled, so a session that goes
past one is not unlucky but broken (a chain of callbacks that never stops):

- `actions`: the callbacks a session may be handed (a prompt, serving a request, a batch of its
  stream, its end or error, a retry's wake, an interrupt, a permission answer, a tool's finish),
  late ones for work already cancelled included. Per attempt: 8 + 4 * tools; per session:
  prompts * (2 + turns * attempts * attempt). Progress reports and attachments are not counted:
  each chain has its own cap (per call, per turn) and ends with its call or turn.
- `span_ns`: simulated time from the session's arrival. Per attempt: the queue (when the endpoint
  queues, every other session that can run at once ahead of it, each for one attempt), the
  response (first token, every gap and pause of a response of `MAX_TOKENS` tokens, at most two
  fragments of tool JSON per token, at the endpoint's slowest, plus a stall) or an HTTP error's
  delay, the longest backoff or retry-after, and every tool call one after another (permission
  delay and run, or the tool timeout of a hang); per turn: attempts of these and the interrupt's
  delay; per session: prompts * (think time + turns * turn).

A session past either bound is stopped (`SessionRunaway`), naming the seed, the policy and the
session that reproduce it.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.distributions import Distribution, Empirical, Fixed, LogNormal, Uniform, ms_to_ns
from sim.errors import UserError
from sim.limits import MAX_COUNT
from sim.model.config import ExplicitScript, GeneratedScript, LatencyConfig
from sim.model.latency import Latency, resolve_latency
from sim.scenario.counts import Count, EmpiricalCount, FixedCount, UniformCount
from sim.scenario.schema import Scenario
from sim.tools.execution import TOOL_TIMEOUT_NS
from sim.tools.spec import ToolSpec

# The loop's max_tokens (every request asks for it; the model stops a response there).
MAX_TOKENS = 4096
# Worst cases are doubled: the bound is for catching a session that never stops, not a slow one.
MARGIN = 2


@dataclass(frozen=True, slots=True)
class SessionBounds:
    actions: int
    span_ns: int


class SessionRunaway(UserError):
    """A session went past its bounds: a simulator bug, stopped instead of running forever.

    The fields are the positional args, so that the exception pickles (from a worker process)."""

    def __init__(
        self, seed: int, session_id: int, policy: str, time_ns: int, detail: str
    ) -> None:
        super().__init__(seed, session_id, policy, time_ns, detail)
        self.seed = seed
        self.session_id = session_id
        self.policy = policy
        self.time_ns = time_ns
        self.detail = detail

    def __str__(self) -> str:
        return (
            f"session {self.session_id} (seed {self.seed}, policy {self.policy}) stopped at "
            f"{self.time_ns / 1e9:.3f} s of simulated time: {self.detail} (a simulator bug: "
            "reproduce it with --seed and --policy and report it with the scenario)"
        )


def largest_ns(distribution: Distribution) -> int:
    """The largest draw of `distribution`, in ns."""
    if isinstance(distribution, Fixed):
        return ms_to_ns(distribution.ms)
    if isinstance(distribution, Uniform):
        return ms_to_ns(distribution.high_ms)
    if isinstance(distribution, LogNormal):
        return ms_to_ns(distribution.cap_ms)
    assert isinstance(distribution, Empirical)
    return ms_to_ns(max(distribution.values_ms))


def largest_count(count: Count) -> int:
    if isinstance(count, FixedCount):
        return count.n
    if isinstance(count, UniformCount):
        return count.high
    if isinstance(count, EmpiricalCount):
        return max(count.values)
    return MAX_COUNT if count.max is None else count.max


def session_bounds(scenario: Scenario, level: float | None) -> SessionBounds:
    """The bounds of one session of `scenario` at load `level` (see the module docstring)."""
    runtime = scenario.runtime
    prompts = largest_count(scenario.session.user_prompts)
    turns = runtime.max_turns_per_prompt
    attempts = (runtime.retries.max_retries + 1) * (
        2 if runtime.fallback_after_overloads is not None else 1
    )
    tools = _tool_calls(scenario)
    specs = scenario.tool_specs
    actions = prompts * (2 + turns * attempts * (8 + 4 * tools))

    call_ns = max((_call_ns(spec) for spec in specs), default=0)
    service_ns = _response_ns(scenario)
    queue_ns = (_at_once(scenario, level) - 1) * service_ns if _queues(scenario) else 0
    attempt_ns = queue_ns + service_ns + _backoff_ns(scenario) + tools * call_ns
    turn_ns = attempts * attempt_ns + largest_ns(scenario.session.interrupts.after)
    span_ns = prompts * (largest_ns(scenario.session.think_time) + turns * turn_ns)
    return SessionBounds(actions=MARGIN * actions, span_ns=MARGIN * span_ns)


def _tool_calls(scenario: Scenario) -> int:
    """The most tool calls one response makes."""
    script = scenario.model.script
    if isinstance(script, GeneratedScript):
        return largest_count(script.tool_calls)
    assert isinstance(script, ExplicitScript)
    return max(
        sum(block.type == "tool_use" for block in response.blocks) for response in script.responses
    )


def _call_ns(spec: ToolSpec) -> int:
    """A call's longest time from its tool_use to its result: asked, then run or timed out."""
    return largest_ns(spec.permission.decision_delay) + max(
        largest_ns(spec.duration), TOOL_TIMEOUT_NS
    )


def _response_ns(scenario: Scenario) -> int:
    """One attempt's longest time from admission to its end: a whole response of `MAX_TOKENS`
    tokens at the slowest latency the endpoint reaches (or an HTTP error's delay), plus a stall."""
    model = scenario.model
    latencies = [resolve_latency(model.profile, model.latency)]
    if model.faults.fallback is not None:
        latencies.append(resolve_latency(model.faults.fallback, LatencyConfig()))
    blocks = 2 + _tool_calls(scenario)  # thinking, text, the calls
    slowest = max(_stream_ns(latency, blocks) for latency in latencies)
    factor = 1.0 + model.endpoint.latency_growth
    return int(slowest * factor) + 1 + largest_ns(model.faults.stall_duration)


def _stream_ns(latency: Latency, blocks: int) -> int:
    # Tool JSON arrives in fragments of at least four characters, a token per four: a
    # fragment per token, another where a key/value pair ends, and a block's empty first one.
    fragments = 2 * MAX_TOKENS + 2 * blocks
    return (
        max(largest_ns(latency.ttft), largest_ns(latency.http_error_delay))
        + blocks * (largest_ns(latency.block_gap) + largest_ns(latency.tool_use_pause))
        + MAX_TOKENS * largest_ns(latency.token_gap)
        + fragments * largest_ns(latency.json_chunk_gap)
    )


def _backoff_ns(scenario: Scenario) -> int:
    retries = scenario.runtime.retries
    return max(
        retries.max_backoff_ns,
        ms_to_ns(scenario.model.faults.retry_after_ms),
        ms_to_ns(scenario.model.endpoint.retry_after_ms),
    )


def _queues(scenario: Scenario) -> bool:
    endpoint = scenario.model.endpoint
    return endpoint.capacity is not None and endpoint.overflow == "queue"


def _at_once(scenario: Scenario, level: float | None) -> int:
    """The most sessions running at once: the concurrency (closed loop), else every session."""
    load = scenario.load
    if load.mode == "closed":
        concurrency = load.concurrency if level is None else int(level)
        assert concurrency is not None
        return min(concurrency, load.sessions)
    return load.sessions
