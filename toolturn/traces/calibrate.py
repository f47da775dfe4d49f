"""`toolturn traces calibrate`: a scenario whose distributions are the logs' own, commented with
where each number came from.

Every distribution is `empirical`: the logged values as they are (more than `MAX_VALUES` are
reduced to that many evenly spaced order statistics, which keeps every quantile to within
1/MAX_VALUES of the logged one). No fit, so no fit error: a value the logs never show is never
drawn. What the logs cannot say is said in a comment and left at the scenario's defaults:
concurrency (one session at a time), output speed (the profile's preset), interrupts and
attachments (none), faults (none).

How each figure is read (see `toolturn.traces.stats` for the definitions):

- prompts per session and steps: main sessions only (a sub-agent's session is one tool call of
  its parent's, whose duration already counts it);
- `end_probability`: the share of model steps that made no tool call (a step without calls ends
  its prompt's chain);
- text sizes: characters / 4 of the logged blocks (about four characters make a token), at least
  1 for a final answer; from logs that hold response text only (a `toolturn serve --record`
  folder holds none: with only those, the defaults);
- tool durations: tool_use timestamp to tool_result timestamp; error share: results logged with
  `is_error` (a call whose input the client could not parse, `__unparsedToolInput`, never ran
  the tool: in neither); result sizes: the result's characters; up to `MAX_EXAMPLES` logged
  inputs become the tool's examples, which the mock model calls it with (never an unparsed one);
- concurrency safety: Claude Code's read-only tools, and any tool the logs show running beside
  another call (`overlapped_tools`: results out of call order, or logged run times that
  overlap); a shell so seen is safe for read-only commands only;
- time to first token: request sent (the prompt, the last tool result, or the client's resume
  line) to first block logged (an upper bound, see
  `toolturn.traces.logged.Step.first_block_delay_ms`), over responses that were not cut off (a
  cut response's first block may wait on the stall that cut it).
"""

from __future__ import annotations

import math
import re
import textwrap
import tomllib
from collections import Counter
from typing import Any

import numpy as np

from toolturn.errors import UserError
from toolturn.limits import MAX_COUNT, MAX_DURATION_MS
from toolturn.scenario.schema import Scenario
from toolturn.tools.spec import TOOL_NAME_PATTERN, ToolSpec
from toolturn.traces.logged import SHELL_TOOLS, LoggedSession, Step, ToolCall
from toolturn.traces.read_only_pattern import read_only_shell_pattern
from toolturn.traces.sources import Logs
from toolturn.traces.stats import durations_by_tool
from toolturn.traces.toml_values import toml_string, toml_value

# The claude-code profile's read-only shell rule as a scenario can declare it: one regular
# expression built from the rule's lists, separators and quotes its own business (`forbid = ""`).
READ_ONLY_SHELL = {"field": "command", "matches": read_only_shell_pattern(), "forbid": ""}
MAX_VALUES = 1000
# A model name worth writing into a scenario (Claude Code's failed requests say "<synthetic>").
MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/-]{0,199}")
MAX_EXAMPLES = 5
CHARS_PER_TOKEN = 4
# Claude Code's tools that only read, which it runs beside each other.
READ_ONLY_TOOLS = frozenset(
    {"Read", "Grep", "Glob", "LS", "WebFetch", "WebSearch", "NotebookRead", "TodoRead",
     "BashOutput"}
)


def reduced(values: list[float]) -> list[float]:
    """At most `MAX_VALUES` of `values`, sorted: all of them, or evenly spaced order statistics."""
    ordered = sorted(values)
    if len(ordered) <= MAX_VALUES:
        return ordered
    picks = np.quantile(ordered, np.linspace(0, 1, MAX_VALUES), method="inverted_cdf")
    return [float(v) for v in picks]


def _ms(values: list[float]) -> list[float]:
    return [round(min(max(v, 0.0), MAX_DURATION_MS), 3) for v in reduced(values)]


def _counts(values: list[int]) -> list[int]:
    return [min(max(int(v), 0), MAX_COUNT) for v in reduced([float(v) for v in values])]


def _tokens(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN)


def _chars_of(step: Step, kind: str) -> int:
    key = "thinking" if kind == "thinking" else "text"
    return sum(len(str(b.get(key, ""))) for b in step.blocks if b.get("type") == kind)


def _p50(values: list[float]) -> str:
    return f"{float(np.median(values)):,.1f}"


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def comment(self, text: str) -> None:
        self.lines.extend(f"# {line}" for line in textwrap.wrap(text, width=98))

    def key(self, name: str, value: Any, note: str | None = None) -> None:
        if note:
            self.comment(note)
        self.lines.append(f"{name} = {toml_value(value)}")

    def table(self, header: str) -> None:
        self.lines.extend(["", header])


def _session_part(out: _Writer, main: list[LoggedSession]) -> None:
    out.table("[session]")
    prompts = [max(1, len(s.prompts_ms)) for s in main]
    out.key(
        "user_prompts", {"kind": "empirical", "values": _counts(prompts)},
        f"prompts per session: empirical, the {len(main)} logged main sessions",
    )
    think = [t for s in main for t in s.think_times_ms()]
    if think:
        out.key(
            "think_time", {"kind": "empirical", "values_ms": _ms(think)},
            f"think time: empirical, {len(think)} logged gap(s) from an answer to the next prompt "
            f"(p50 {_p50(think)} ms)",
        )
    else:
        out.comment("think time: no session logged a second prompt; the default is kept")


def _model_part(out: _Writer, steps: list[Step]) -> None:
    out.table("[model]")
    models = Counter(s.model for s in steps if s.model and MODEL_NAME.fullmatch(s.model))
    if models:
        name, count = models.most_common(1)[0]
        profile = next((p for p in ("haiku", "opus", "sonnet") if p in name), "sonnet")
        out.key(
            "name", name,
            f"the model of {count} of the {sum(models.values())} logged responses; its latency "
            f"preset by name ({profile})",
        )
        out.key("profile", profile)
    else:
        out.comment("no model named in the logs: the sonnet preset")
        out.key("profile", "sonnet")
    delays = [d for s in steps if s.stream_error is None
              and (d := s.first_block_delay_ms) is not None]
    if delays:
        out.table("[model.latency]")
        out.key(
            "ttft", {"kind": "empirical", "values_ms": _ms(delays)},
            f"time to first token: empirical, {len(delays)} logged requests, request sent to the "
            f"first block logged (p50 {_p50(delays)} ms; an upper bound, as Claude Code logs a "
            "block when it stops); output speed: the preset's (the logs do not time tokens)",
        )
    else:
        out.comment("the logs have no timestamps: the preset's latencies")


def _script_part(out: _Writer, steps: list[Step], tools: list[str], longest: int,
                 texts: list[Step]) -> None:
    out.table("[model.script]")
    out.key("kind", "generated")
    calling = [s for s in steps if s.tool_calls]
    final = [s for s in steps if not s.tool_calls]
    end = len(final) / len(steps) if tools else 1.0
    out.key(
        "end_probability", round(end, 6),
        f"{len(final)} of the {len(steps)} logged model steps made no tool call",
    )
    out.key("max_turns", max(40, longest + 1), "more than the longest logged session's steps")
    if calling and tools:
        out.key(
            "tool_calls",
            {"kind": "empirical", "values": _counts([len(s.tool_calls) for s in calling])},
            f"calls per step that made any: empirical, {len(calling)} logged steps",
        )
        mix = Counter(c.name for s in calling for c in s.tool_calls if c.name in tools)
        out.key("tool_mix", dict(sorted(mix.items())), "the logged calls by tool")
    _text_part(out, texts, calling, final)


def _text_part(out: _Writer, texts: list[Step], calling: list[Step], final: list[Step]) -> None:
    """Text sizes from the steps whose log holds their text (`texts`): a `toolturn serve
    --record` folder holds none, and its steps would read as empty answers."""
    if not texts:
        out.comment("text sizes: the logs hold no response text (toolturn serve --record "
                    "folders keep none): the defaults")
        return
    held = {id(step) for step in texts}
    calling = [s for s in calling if id(s) in held]
    final = [s for s in final if id(s) in held]
    if calling:
        text = [_tokens(_chars_of(s, "text")) for s in calling]
        out.key(
            "text_tokens", {"kind": "empirical", "values": _counts(text)},
            "text before the calls: characters / 4 of each calling step's text blocks",
        )
    thinking = [_tokens(_chars_of(s, "thinking")) for s in texts]
    if any(thinking):
        out.key(
            "thinking_tokens", {"kind": "empirical", "values": _counts(thinking)},
            "thinking: characters / 4 of each step's thinking blocks",
        )
    if final:
        answers = [max(1, _tokens(_chars_of(s, "text"))) for s in final]
        out.key(
            "final_text_tokens", {"kind": "empirical", "values": _counts(answers)},
            f"final answers: characters / 4 of the text of the {len(final)} steps without calls",
        )


def _tool_part(out: _Writer, name: str, sessions: list[LoggedSession]) -> None:
    named = [c for s in sessions for c in s.tool_calls if c.name == name]
    # A call whose input the client could not parse never ran the tool (the client answered
    # it with its own validation error): no duration, error or example of the tool's.
    calls = [c for c in named if not c.input_unparsed]
    unparsed = len(named) - len(calls)
    durations = durations_by_tool(sessions).get(name, [])
    errors = sum(1 for c in calls if c.is_error and not c.sibling_cancelled)
    cancelled = sum(1 for c in calls if c.sibling_cancelled)
    out.table("[[tools.define]]")
    out.comment(f"{name}: {len(calls)} logged call(s), {errors} with is_error results"
                + (f" of its own ({cancelled} more cancelled for a failed sibling)"
                   if cancelled else "")
                + (f"; {unparsed} more whose input the client could not parse, left out"
                   if unparsed else ""))
    out.key("name", name)
    out.key("input_schema", {"type": "object"})
    _safety(out, name, overlapped_tools(sessions).get(name, 0))
    if durations:
        out.key(
            "duration", {"kind": "empirical", "values_ms": _ms(durations)},
            f"empirical, {len(durations)} logged duration(s) (p50 {_p50(durations)} ms)",
        )
    else:
        out.key("duration", {"kind": "fixed", "ms": 0}, "no logged duration (no timestamps, "
                "or no call that ran)")
    if errors:
        out.key("failures", {"error": round(errors / len(calls), 6)})
    sizes = [len(c.result_text) for c in calls if c.result_text is not None]
    if sizes:
        out.key("result_chars", {"kind": "empirical", "values": _counts(sizes)})
    examples = _examples([c.input for c in calls if c.input_logged])
    if examples:
        out.key("examples", examples, f"{len(examples)} logged inputs")


def overlapped_tools(sessions: list[LoggedSession]) -> dict[str, int]:
    """Per tool, how many of its calls the logs show running beside another call of their step:
    a call whose result came before the result of a call the response made earlier (one at a
    time, results come in call order), or, where the log times a call's run (Claude Code's
    `durationMs`), one that started before a sibling's result while that sibling started before
    its own (`_ran_together`). A log without result times shows none."""
    counts: Counter[str] = Counter()
    for step in (step for session in sessions for step in session.steps):
        timed = [call for call in step.tool_calls if call.result_ms is not None]
        for index, earlier in enumerate(timed):
            for later in timed[index + 1:]:
                if _ran_together(earlier, later):
                    counts[earlier.name] += 1
                    counts[later.name] += 1
    return dict(counts)


def _ran_together(earlier: ToolCall, later: ToolCall) -> bool:
    """Whether the log proves two calls of one response (`earlier` called first, both with a
    result time) ran at once: results out of call order, or each started (at the latest, its
    result's time less its logged run time) before the other's result."""
    earlier_end, later_end = earlier.result_ms, later.result_ms
    earlier_start, later_start = earlier.latest_start_ms, later.latest_start_ms
    if earlier_end is None or later_end is None or earlier_start is None or later_start is None:
        return False
    if later_end < earlier_end:
        return True
    return later_start < earlier_end and earlier_start < later_end


def _safety(out: _Writer, name: str, overlapped: int) -> None:
    """Concurrency safety: Claude Code's read-only tools run beside each other; another tool
    seen running beside a call is safe too, and a shell so seen is safe for the read-only
    commands the claude-code profile runs in parallel (`READ_ONLY_COMMAND`), alone otherwise."""
    seen = f"{overlapped} of its logged calls ran beside another call of their response"
    if name in READ_ONLY_TOOLS:
        out.key("concurrency_safe", True, "runs beside other safe calls: Claude Code's read-only "
                f"tools do ({seen})")
    elif overlapped and name in SHELL_TOOLS:
        out.key("concurrency_safe", False, f"{seen}: read-only commands run beside other safe "
                "calls (the claude-code profile's rule), any other command alone")
        out.key("concurrency_safe_when", READ_ONLY_SHELL)
    elif overlapped:
        out.key("concurrency_safe", True, f"{seen}: it runs beside other safe calls")
    else:
        out.key("concurrency_safe", False, "no logged call of it ran beside another: it runs "
                "alone")


def _examples(inputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Up to `MAX_EXAMPLES` distinct logged inputs that TOML can hold (no nulls, no lone
    surrogates) and a tool's examples may be."""
    chosen: list[dict[str, Any]] = []
    seen: set[str] = set()
    for given in inputs:
        try:
            text = toml_value(given)
            text.encode("utf-8")
            ToolSpec.model_validate(
                {"name": "x", "duration": {"kind": "fixed", "ms": 0},
                 "examples": [tomllib.loads(f"x = {text}")["x"]]}
            )
        except (ValueError, tomllib.TOMLDecodeError, UnicodeEncodeError):
            continue  # pydantic's ValidationError is a ValueError
        if text not in seen:
            seen.add(text)
            chosen.append(given)
        if len(chosen) == MAX_EXAMPLES:
            break
    return chosen


def calibrated_scenario(logs: Logs, name: str, seed: int) -> str:
    """The scenario TOML text calibrated on `logs`; it validates (checked before it is returned)."""
    main = [s for s in logs.sessions if not s.sidechain]
    steps = [st for s in main for st in s.steps if st.has_response]
    if not steps:
        raise UserError("the logs hold no model response to calibrate from")
    tools = sorted({c.name for st in steps for c in st.tool_calls})
    valid = [t for t in tools if re.fullmatch(TOOL_NAME_PATTERN, t)]
    out = _Writer()
    out.comment(
        f"Calibrated by `toolturn traces calibrate` from {len(logs.files)} log files: {len(main)} "
        f"sessions, {len(steps)} model responses, "
        f"{sum(len(s.tool_calls) for s in steps)} tool calls."
    )
    out.comment("Each number below says where it came from; what the logs cannot say keeps the")
    out.comment("defaults (see docs/real-session-logs.md, `toolturn traces calibrate`).")
    out.key("name", name)
    out.key("description", f"Calibrated from {len(main)} logged sessions")
    out.key("seed", seed)
    out.table("[load]")
    out.comment(
        "The logs do not say how many sessions ran at once: one at a time, as many as logged."
    )
    out.key("mode", "closed")
    out.key("sessions", max(1, len(main)))
    out.key("concurrency", 1)
    _session_part(out, main)
    _model_part(out, steps)
    texts = [st for s in main if s.bodies_logged for st in s.steps if st.has_response]
    _script_part(out, steps, valid, max(len(s.steps) for s in main), texts)
    out.table("[tools]")
    out.key("catalogue", "none", "only the logged tools")
    for tool in tools:
        if tool in valid:
            _tool_part(out, tool, main)
        else:
            out.comment(f"{toml_string(tool)} left out: not a valid API tool name")
    text = "\n".join(out.lines) + "\n"
    Scenario.model_validate(tomllib.loads(text))
    return text
