"""Recovery profiles: the loop's choices on faults, as data (`toolturn.runtime.loop` reads them).

A `RecoveryPolicy` names one answer to each question the loop meets when a response goes wrong:
what a cut stream, a mid-stream error, max_tokens, bad tool JSON or a duplicate id lead to, in
which order results go back, how often and how long to retry, and how the runtime words its own
error results. The loop's rules (`toolturn.runtime.loop`, rules 2a, 9a-9i and 13) say what each
answer does; a profile is never a subclass or a copy of the loop.

Three profiles are built in (`PROFILES`):

- `default`: the project's own (every rule as it was before profiles existed).
- `claude-code`: the public Claude Code CLI 2.1.x as observed against a loopback mock (issue 16),
  updated to 2.1.328 (issue 30: compound read-only Bash commands run in parallel) and to 2.1.337
  (a stream broken by `event: error` is a cut: its completed calls kept, a request with no block
  retried as it was, streaming). Where the CLI was not observed (its backoff cap, its
  cancelled-call wording) the value is ours and says so.
- `codex`: the public Codex CLI 0.169.0 (`codex exec`) as observed against a loopback Responses
  mock (issue 34), its rules mapped onto the Messages API loop (the comment at `CODEX`).

    ToolTurnLoop(tools, model="m", profile="claude-code")      # or profile=CLAUDE_CODE
    replace(DEFAULT, result_order=ResultOrder.COMPLETION)       # a profile of one's own
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from types import MappingProxyType
from typing import Any

from toolturn.runtime.read_only_shell import ReadOnlyCommand
from toolturn.runtime.results import ErrorTexts
from toolturn.runtime.retry import RetrySettings


class ResultOrder(str, Enum):
    """The order of the tool_results in a batch's user message."""

    TOOL_USE = "tool_use"
    COMPLETION = "completion"


class AfterToolUseCut(str, Enum):
    """A cut (or an error taken as one) after at least one tool_use block completed."""

    END_SESSION = "end_session"
    # Keep the completed blocks, run the kept calls to the end, send the ordinary next turn.
    CONTINUE = "continue"


class AfterTextCut(str, Enum):
    """A cut after content began but before any tool_use completed."""

    END_SESSION = "end_session"
    # Keep the completed blocks, append `resume_text` as a user message, send at once.
    RESUME = "resume"
    # Keep the completed blocks (none, if only an open one survived) and add no marker; the
    # request after goes as `cut_resend` says.
    KEEP = "keep"


class CutResend(str, Enum):
    """How the request after a kept cut (rules 9b, 9c) goes."""

    # At once, as the chain's next turn.
    NEXT_TURN = "next_turn"
    # After the backoff, as a retry: it spends the retry budget the cut's turn had (carried to
    # the request's turn); with none left, the session ends `stream_error` once the kept calls
    # are answered.
    RETRY = "retry"


class BeforeContentCut(str, Enum):
    """A cut before any content block started (message_start alone does not count)."""

    END_SESSION = "end_session"
    # Retry the identical request after the backoff.
    RETRY = "retry"


class OverloadedAfterContent(str, Enum):
    """An `overloaded_error` event after at least one block completed."""

    # Discard the attempt and retry it, or fall back (rules 7, 8).
    RETRY = "retry"
    # As a cut: the choices above decide.
    AS_CUT = "as_cut"


class RetryTransport(str, Enum):
    """How a retry after a mid-stream `event: error` goes. The loop sends the same body either
    way; a driver honouring `non_streaming` sends it with `stream: false` and feeds the Message
    back as events (`toolturn.runtime.message_events`). The simulator's engine streams always."""

    STREAMING = "streaming"
    NON_STREAMING = "non_streaming"


class ErrorEvent(str, Enum):
    """An `error` event of another type than `overloaded_error`."""

    # The stream error of rule 9: keep, answer, end the session.
    END_SESSION = "end_session"
    # As a cut: the choices above decide.
    AS_CUT = "as_cut"
    # Any error event, `overloaded_error` too: nothing happens; the stream's end decides (a
    # `stream_ended` before `message_stop` is a cut).
    IGNORE = "ignore"


class MaxTokens(str, Enum):
    """max_tokens with no complete tool_use in the response."""

    END_SESSION = "end_session"
    # Append `continue_text` as a user message and send the next turn at once.
    CONTINUE = "continue"


class MaxTokensAfterCalls(str, Enum):
    """max_tokens after at least one tool_use completed (rule 5)."""

    # The batch goes back to the model like any other.
    SEND_BATCH = "send_batch"
    # The calls run and are answered in the transcript; then the session ends `max_tokens`.
    END_SESSION = "end_session"


class ParallelCalls(str, Enum):
    """Which calls may run beside each other (when they may start is the executor policy's)."""

    # The tools' own concurrency safety (and `safe_when`): an unsafe call runs alone.
    BY_SAFETY = "by_safety"
    # Every call, writes or not.
    ALL = "all"


class InvalidJsonInput(str, Enum):
    """What a tool_use whose input JSON did not parse keeps as its input in the transcript."""

    EMPTY = "empty"  # {}
    UNPARSED = "unparsed"  # {"__unparsedToolInput": {"raw": text, "len": len(text)}}


class DuplicateIds(str, Enum):
    """Two tool_use blocks of one response with one id (or a tool_use with an id the transcript
    already holds)."""

    # The transcript keeps the first block and the first result; the copy is not run.
    RUN_FIRST = "run_first"
    # As RUN_FIRST, but the copy runs too, after the first call of its id; its result is dropped.
    RUN_EACH = "run_each"
    # Ids are not checked: the copy is a call like any other, run beside the rest, and the
    # transcript keeps both blocks and both results under the one id. Requests then carry that
    # history as it is (the boundary repairs none of it), and a Messages API refuses them.
    UNCHECKED = "unchecked"


class RunningOnCut(str, Enum):
    """Running calls when a cut ends the session."""

    CANCEL = "cancel"  # the cancellable ones
    FINISH = "finish"


class SiblingErrors(str, Enum):
    """A failing call of a tool marked `cancels_siblings`."""

    CANCEL_SIBLINGS = "cancel_siblings"  # the tool's rule (executor rule 8)
    IGNORE = "ignore"  # cancels nothing


# Per-call concurrency safety: tool input -> whether this call may run beside other safe calls.
CallSafety = Callable[[Mapping[str, Any]], bool]


# Redirects, pipes, command separators, substitutions, a second line: a command holding one may
# write or run more than its pattern shows.
SHELL_METACHARACTERS = "<>|;&`$\n"


@dataclass(frozen=True, slots=True)
class InputPattern:
    """A call is safe when the string at `field` of its input fully matches `matches` and holds
    none of the characters of `forbid` (redirects, pipes, command separators, substitutions).
    Data, so a scenario can declare it; a callable, so a `ToolDefinition` can use it."""

    field: str
    matches: str
    forbid: str = SHELL_METACHARACTERS
    # `matches` compiled, once per pattern (it is asked of every call of its tool).
    # (`dataclasses.field`: `field` is the name of a field here.)
    _compiled: re.Pattern[str] = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # A bad pattern fails here, not at the first call.
        object.__setattr__(self, "_compiled", re.compile(self.matches))

    def __call__(self, tool_input: Mapping[str, Any]) -> bool:
        value = tool_input.get(self.field)
        if not isinstance(value, str) or any(char in value for char in self.forbid):
            return False
        return self._compiled.fullmatch(value) is not None


# Bash calls that only read (`toolturn.runtime.read_only_shell`: compound commands whose every
# part reads) run in parallel, as the CLI runs them (2.1.328, issue 30).
READ_ONLY_BASH = ReadOnlyCommand("command")

RESUME_TEXT = (
    "Your response above was cut off mid-stream. Resume directly from where it stops — no "
    "apology, no recap. If none of it survived, answer the request from the start."
)
CONTINUE_TEXT = (
    "Output token limit hit. Resume directly — no apology, no recap of what you were doing. Pick "
    "up mid-thought if that is where the cut happened. Break remaining work into smaller pieces."
)
UNPARSED_INPUT_KEY = "__unparsedToolInput"
# Marks an error text of the claude-code profile that is toolturn's, not the CLI's.
OURS = "(worded by toolturn's claude-code profile, not by the CLI)"


@dataclass(frozen=True, slots=True)
class RecoveryPolicy:
    """One answer to each of the loop's recovery questions (the module docstring)."""

    name: str
    result_order: ResultOrder = ResultOrder.TOOL_USE
    after_tool_use_cut: AfterToolUseCut = AfterToolUseCut.END_SESSION
    after_text_cut: AfterTextCut = AfterTextCut.END_SESSION
    resume_text: str = RESUME_TEXT
    before_content_cut: BeforeContentCut = BeforeContentCut.END_SESSION
    overloaded_after_content: OverloadedAfterContent = OverloadedAfterContent.RETRY
    retry_after_error_event: RetryTransport = RetryTransport.STREAMING
    error_event: ErrorEvent = ErrorEvent.END_SESSION
    cut_resend: CutResend = CutResend.NEXT_TURN
    max_tokens: MaxTokens = MaxTokens.END_SESSION
    max_tokens_after_calls: MaxTokensAfterCalls = MaxTokensAfterCalls.SEND_BATCH
    continue_text: str = CONTINUE_TEXT
    invalid_json_input: InvalidJsonInput = InvalidJsonInput.EMPTY
    duplicate_ids: DuplicateIds = DuplicateIds.RUN_FIRST
    running_on_cut: RunningOnCut = RunningOnCut.CANCEL
    sibling_errors: SiblingErrors = SiblingErrors.CANCEL_SIBLINGS
    parallel_calls: ParallelCalls = ParallelCalls.BY_SAFETY
    # None: the loop's own `retry` argument (the scenario's [runtime.retries] in the simulator).
    retry: RetrySettings | None = None
    # The largest fraction of a backoff a driver's jitter draw gives (added or cut, as `retry`
    # says); used by drivers that draw the jitter themselves.
    retry_jitter: float = 0.0
    # A second, inner retry layer for requests that fail before any event (rule 6a): None, one
    # layer (`retry` takes every failure). With it, such a failure is retried under these
    # settings, and only once they are spent does it count as one failure of the outer layer.
    request_retry: RetrySettings | None = None
    # Statuses that are final (no retry in either layer) when the response says no retry-after.
    final_without_retry_after: frozenset[int] = frozenset()
    # Rule 9h: a stream silent this long after its last event (from its first on) is cut; None:
    # no limit (the stream's end or the user decides).
    stream_idle_timeout_ns: int | None = None
    # Rule 9i: `error` event types that end the turn at once, no retry: the kept calls run,
    # then the session ends `stream_error` (before rule 9e's choice is asked).
    final_error_types: frozenset[str] = frozenset()
    error_texts: ErrorTexts = ErrorTexts()
    # Per-call safety for tools by name, over the tool's own (section 2 of issue 16).
    safe_when: Mapping[str, CallSafety] = field(default_factory=lambda: MappingProxyType({}))

    def input_in_transcript(self, raw: str) -> dict[str, Any]:
        """The input a tool_use whose JSON did not parse keeps in the transcript (rule 13)."""
        if self.invalid_json_input is InvalidJsonInput.UNPARSED:
            return {UNPARSED_INPUT_KEY: {"raw": raw, "len": len(raw)}}
        return {}


DEFAULT = RecoveryPolicy("default")

CLAUDE_CODE = RecoveryPolicy(
    "claude-code",
    result_order=ResultOrder.COMPLETION,
    after_tool_use_cut=AfterToolUseCut.CONTINUE,
    after_text_cut=AfterTextCut.RESUME,
    before_content_cut=BeforeContentCut.RETRY,
    # A stream broken by `event: error` (overloaded_error too, once a block completed) is taken
    # as a cut (`error_event` below) and a retry of it streams, as 2.1.337 does (2026-12-07,
    # `make probe-claude PROBE_REPEAT=3`: 3 of 3 runs of error_after_tool_use kept and answered
    # the calls, 3 of 3 of error_before_blocks sent the same request again, streaming; 2.1.332
    # the same). Issue 30 saw 2.1.328 retry it without
    # streaming 4 times in 5 (`RetryTransport.NON_STREAMING`, the profile's choice until
    # 2.1.337); no release measured here did.
    overloaded_after_content=OverloadedAfterContent.AS_CUT,
    retry_after_error_event=RetryTransport.STREAMING,
    error_event=ErrorEvent.AS_CUT,
    max_tokens=MaxTokens.CONTINUE,
    invalid_json_input=InvalidJsonInput.UNPARSED,
    duplicate_ids=DuplicateIds.RUN_EACH,
    # The CLI aborts on a user interrupt; on a cut it continues (above), so this only matters
    # when a cut still ends the session (a retry budget spent).
    running_on_cut=RunningOnCut.FINISH,
    sibling_errors=SiblingErrors.IGNORE,
    # 529/429 retried up to 10 times, 500 ms x 2^(n-1) plus up to 25 %. The 32 s cap is ours.
    retry=RetrySettings(
        max_retries=10, initial_delay_ns=500_000_000, max_delay_ns=32_000_000_000,
        jitter_adds=True,
    ),
    retry_jitter=0.25,
    # The unknown-tool text is the CLI's; the other two are ours in the CLI's wrapper, and say
    # so (a reader of a transcript should not take them for the CLI's words).
    error_texts=ErrorTexts(
        unknown_tool="<tool_use_error>Error: No such tool available: {name}</tool_use_error>",
        invalid_json="<tool_use_error>Error: input for tool {name!r} is not valid JSON: {why}"
        f" {OURS}</tool_use_error>",
        invalid_input="<tool_use_error>Error: input for tool {name!r} is invalid: {why}"
        f" {OURS}</tool_use_error>",
    ),
    safe_when=MappingProxyType({"Bash": READ_ONLY_BASH}),
)

# Codex's backoff: 200 ms x 2^(n-1) (times a draw in [0.9, 1.1), our `retry_jitter` adds up to
# 10 % instead). No cap was observed; 60 s is ours, past the fifth retry's 3.2 s.
_CODEX_BACKOFF = RetrySettings(
    initial_delay_ns=200_000_000, max_delay_ns=60_000_000_000, jitter_adds=True
)

# The Codex CLI 0.169.0 (`codex exec`) as observed against a loopback Responses mock (issue 34,
# section 2). The probe suite's 0.171.0 (docs/scorecards.md) did what these rules say in every
# case but one detail: its retry after a drop before any content was the same conversation in
# other bytes (`modified_retry`), where this profile sends the identical request.
# The rules are about what is kept and retried, so the profile runs on the Messages API loop: a
# `function_call` item's `response.output_item.done` is a tool_use block's `content_block_stop`,
# `response.completed` is `message_stop`, `response.incomplete` is max_tokens, a retryable
# `response.failed` is a cut (the stream ends without message_stop).
CODEX = RecoveryPolicy(
    "codex",
    # The follow-up: the kept items in stream order, one output per call in the calls' stream
    # order, not completion order.
    result_order=ResultOrder.TOOL_USE,
    # A cut (FIN, RST, a clean end without completion, a retryable failure, an idle timeout):
    # every block that reached its stop is kept, an open one dropped and never run; the kept
    # calls run to their end; then the retry (after the backoff, counted) carries the original
    # input plus the kept blocks and their results, with no marker. With nothing kept it is the
    # identical request.
    after_tool_use_cut=AfterToolUseCut.CONTINUE,
    after_text_cut=AfterTextCut.KEEP,
    before_content_cut=BeforeContentCut.RETRY,
    cut_resend=CutResend.RETRY,
    # `event: error` before the end is ignored: the stream's end decides. A retryable
    # `response.failed` (the wire codec's mapping of an `error` event, code `server_error`)
    # ends the stream: that end is the cut above.
    error_event=ErrorEvent.IGNORE,
    # A stream silent for `stream_idle_timeout_ms` (300 000 by default: Codex's
    # DEFAULT_STREAM_IDLE_TIMEOUT_MS, codex-rs/core/src/model_provider_info.rs) is lost: a cut.
    stream_idle_timeout_ns=300_000 * 1_000_000,
    # A context-length failure mid-stream (`response.failed`, code `context_length_exceeded`;
    # on the Messages API the `invalid_request_error` a too-long prompt gets) ends the turn at
    # once, no retry; a completed call still runs first. Before any event it is a 400: final
    # under every profile.
    final_error_types=frozenset({"invalid_request_error"}),
    # max_tokens ends the session, no retry; a completed call still runs first.
    max_tokens=MaxTokens.END_SESSION,
    max_tokens_after_calls=MaxTokensAfterCalls.END_SESSION,
    # Malformed arguments: no process starts and the call is kept; a Messages API tool_use
    # needs an object, so the raw text is kept under the unparsed key (Codex resends the
    # item's arguments verbatim).
    invalid_json_input=InvalidJsonInput.UNPARSED,
    # Ids are not checked: both calls run at once (the copy under its own run key, a driver's
    # reports being per key) and the follow-up carries both calls and both outputs under the one
    # id, as Codex sends them.
    duplicate_ids=DuplicateIds.UNCHECKED,
    running_on_cut=RunningOnCut.FINISH,
    # Every call of a response runs at once, writes or not; a failing call cancels no sibling.
    parallel_calls=ParallelCalls.ALL,
    sibling_errors=SiblingErrors.IGNORE,
    # Two layers: a failed request (an HTTP status, or no response at all) is retried silently
    # (`request_max_retries`, 4); the stream layer (`stream_max_retries`, 5) counts each cut
    # and each spent request layer as one failure. A 429 without retry-after is final.
    retry=replace(_CODEX_BACKOFF, max_retries=5),
    retry_jitter=0.1,
    request_retry=replace(_CODEX_BACKOFF, max_retries=4),
    final_without_retry_after=frozenset({429}),
    # Codex's words. Arguments that parse but do not fit the tool's parameters get the same
    # text (Codex's parse of the arguments into the tool's parameters fails either way).
    error_texts=ErrorTexts(
        unknown_tool="unsupported call: {name}",
        invalid_json="failed to parse function arguments: {why}",
        invalid_input="failed to parse function arguments: {why}",
    ),
)

PROFILES: Mapping[str, RecoveryPolicy] = MappingProxyType(
    {profile.name: profile for profile in (DEFAULT, CLAUDE_CODE, CODEX)}
)


def profile_of(profile: RecoveryPolicy | str) -> RecoveryPolicy:
    """A profile given as itself or by name; an unknown name is a ValueError listing the
    known ones."""
    if isinstance(profile, RecoveryPolicy):
        return profile
    try:
        return PROFILES[profile]
    except KeyError:
        known = ", ".join(PROFILES)
        raise ValueError(f"unknown recovery profile {profile!r} (known: {known})") from None
