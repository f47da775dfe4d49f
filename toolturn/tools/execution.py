"""One call of a simulated tool, planned in advance: the driver then just plays the plan back.

`sample_call(spec, rng)` draws everything about a call at once (permission decision, outcome,
duration, progress times, result text), always making the same draws in the same order, so the plan
depends only on the spec and the generator. Give it a generator keyed by the call, e.g.
`toolturn.randomness.stream(seed, "tool", session_id, turn_index, call_index)`, and every executor
policy sees the same plan for the same call (common random numbers).

How a driver plays a plan: wait `permission_delay_ns`; if not `permitted`, the call ends refused
(the rest of the plan is unused). Otherwise it runs, emitting progress at `progress_ns` (offsets
from its start; at most `toolturn.limits.MAX_PROGRESS_PER_CALL`), and after `duration_ns` returns
`text` as a result (`outcome` "success"), as an is_error result ("error"), or raises with `text`
as the message ("exception"). A "hang" call has no duration and no progress: it runs until it is
cancelled, or until the driver's tool timeout (`TOOL_TIMEOUT_NS` by default) ends it with the
is_error result `timeout_text(...)`, as a real agent's tool timeout would: otherwise a tool that
cannot be cancelled, or a turn nobody interrupts, would stall its session for ever.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal

import numpy as np

from toolturn.distributions import NS_PER_MS, Distribution, Fixed, ms_to_ns
from toolturn.limits import MAX_PROGRESS_PER_CALL
from toolturn.tools.spec import ToolSpec

Outcome = Literal["success", "error", "exception", "hang"]

# How long a driver lets a call run before giving up on it: far beyond every catalogue tool's
# longest run (Claude Code's own Bash timeout tops out at 10 minutes).
TOOL_TIMEOUT_NS = 600 * 1_000_000_000
# A progress gap is at least this long, so a gap distribution that can draw ~0 cannot flood the
# simulator with events.
MIN_PROGRESS_GAP_NS = NS_PER_MS
# Most progress gaps drawn in one numpy call.
PROGRESS_BATCH_MAX = 1024
# Text that fills a successful result to its drawn length; its content does not matter.
_FILLER_LINE = "simulated tool output: lorem ipsum dolor sit amet, consectetur adipiscing elit\n"


@dataclass(frozen=True, slots=True)
class CallPlan:
    """Everything about one call of a simulated tool, decided before it runs."""

    # False: the call is refused (by a `deny` rule, or by the user when asked).
    permitted: bool
    # True when the user was asked (permission mode "ask").
    asked: bool
    # Time taken to decide on permission, before the tool starts; 0 unless asked.
    permission_delay_ns: int
    outcome: Outcome
    # Running time from start to result or failure; None for a hang.
    duration_ns: int | None
    # Offsets from the start at which the tool reports progress, increasing, all below duration_ns;
    # at most `MAX_PROGRESS_PER_CALL` of them.
    progress_ns: tuple[int, ...]
    # The result text ("success", "error") or the exception's message ("exception"); "" for a hang.
    text: str

    @property
    def is_error(self) -> bool:
        """Whether the call ends as an is_error tool_result (refused, failed, raised or hung)."""
        return not self.permitted or self.outcome != "success"


def sample_call(spec: ToolSpec, rng: np.random.Generator) -> CallPlan:
    """Draw the plan of one call of `spec` from `rng` (deterministic given the rng's state)."""
    # Every draw is made whatever the earlier ones decided, in this fixed order, so changing one
    # probability does not shift the draws of the others. Progress, whose number of draws varies,
    # comes last.
    permission = spec.permission
    deny_draw = rng.random()
    decision_delay_ns = permission.decision_delay.sample_ns(rng)
    outcome_draw = rng.random()
    duration_ns = spec.duration.sample_ns(rng)
    result_chars = spec.result_chars.sample(rng)

    if permission.mode == "ask":
        asked, permitted, delay_ns = (
            True,
            deny_draw >= permission.deny_probability,
            decision_delay_ns,
        )
    else:
        asked, permitted, delay_ns = False, permission.mode == "allow", 0

    outcome = _outcome(spec, outcome_draw)
    if outcome == "hang":
        return CallPlan(permitted, asked, delay_ns, outcome, None, (), "")
    progress = _progress_offsets(spec, rng, duration_ns)
    if outcome == "success":
        text = _filler(result_chars)
    elif outcome == "error":
        text = f"Error: {spec.name} failed (simulated error)"
    else:
        text = f"RuntimeError: {spec.name} raised (simulated exception)"
    return CallPlan(permitted, asked, delay_ns, outcome, duration_ns, progress, text)


def scripted_plan(duration_ns: int, text: str, is_error: bool) -> CallPlan:
    """The plan of a call whose run is given, not drawn (a replayed call: its logged duration and
    result): permitted at once, no progress, an error result or a success."""
    return CallPlan(True, False, 0, "error" if is_error else "success", duration_ns, (), text)


def timeout_text(name: str, timeout_ns: int = TOOL_TIMEOUT_NS) -> str:
    """The is_error result of a call that the driver's tool timeout ended."""
    return f"Error: tool {name!r} timed out after {timeout_ns / 1_000_000_000:g} s."


def _outcome(spec: ToolSpec, draw: float) -> Outcome:
    failures = spec.failures
    if draw < failures.error:
        return "error"
    if draw < failures.error + failures.exception:
        return "exception"
    if draw < failures.total():
        return "hang"
    return "success"


def _progress_offsets(
    spec: ToolSpec, rng: np.random.Generator, duration_ns: int
) -> tuple[int, ...]:
    gap = spec.progress_every
    if gap is None:
        return ()
    if type(gap) is Fixed:
        # A fixed gap draws nothing: the offsets are its multiples before the run ends, what
        # `_batched_offsets` gives, without its half a dozen numpy calls (Bash reports this way).
        step = max(ms_to_ns(gap.ms), MIN_PROGRESS_GAP_NS)
        return tuple(range(step, duration_ns, step)[:MAX_PROGRESS_PER_CALL])
    return _batched_offsets(gap, rng, duration_ns)


def _batched_offsets(
    gap: Distribution, rng: np.random.Generator, duration_ns: int
) -> tuple[int, ...]:
    # The gaps are drawn a batch at a time (about as many as the run needs, then as many again
    # until it is over): one numpy call instead of one per report. Progress is drawn last, so
    # the unused rest of a batch shifts no other draw.
    batch = min(int(duration_ns / max(gap.mean_ns(), MIN_PROGRESS_GAP_NS)) + 2, PROGRESS_BATCH_MAX)
    offsets: list[int] = []
    at = 0
    while True:
        ends = np.maximum(gap.sample_many_ns(rng, batch), MIN_PROGRESS_GAP_NS).cumsum() + at
        inside = int(ends.searchsorted(duration_ns))  # reports before the run ends
        offsets += ends[:inside].tolist()
        if inside < batch or len(offsets) >= MAX_PROGRESS_PER_CALL:
            # Past the cap the call runs on silently: a 1 ms gap through a call of the longest
            # duration would otherwise be a billion events.
            return tuple(offsets[:MAX_PROGRESS_PER_CALL])
        at = offsets[-1]


def _filler(chars: int) -> str:
    """`chars` characters of filler lines: a slice of one long filler, one copy per result
    instead of two. The long fillers are 1,024 lines doubled until long enough, each made once."""
    lines = 1024
    while lines * len(_FILLER_LINE) < chars:
        lines *= 2
    return _filler_lines(lines)[:chars]


@functools.cache
def _filler_lines(lines: int) -> str:
    return _FILLER_LINE * lines
