"""What the project's own `claude-code` profile does in a probe case: `ToolTurnLoop` with that
profile, driven here against the case's server exactly as an agent would be, and classed from
what it sent (`toolturn.probe.verdicts`), so the scorecard can say whether the agent agreed.

The driver is the plainest one that carries out every command the loop gives, one at a time
on this thread: a request through the official SDK (streaming; without streaming when the
profile says so for a retry after a mid-stream `event: error`, the Message fed to the loop as
its events, `toolturn.runtime.message_events`), a tool run at once (Read reads a file of the
working directory, Bash answers without running anything, as `toolturn.probe.sdk_agent`), a
wait slept (at the server's speed: the loop's clock runs `speed` times the wall clock). It
declares the tools `sdk_agent` declares, Bash's safety the profile's.
"""

from __future__ import annotations

import tempfile
import time
from collections import deque
from pathlib import Path
from typing import Any

import anthropic
import httpx2

from toolturn.live.sdk_errors import error_event, is_error_event, retry_after_ns
from toolturn.probe.runner import make_workdir, serve_case
from toolturn.probe.sdk_agent import MAX_TURNS, PROMPT, TOOLS
from toolturn.probe.suite import ProbeCase, Suite
from toolturn.probe.verdicts import run_class
from toolturn.runtime.commands import (
    AskPermission,
    Command,
    SendRequest,
    SessionEnded,
    StartTool,
    WaitUntil,
)
from toolturn.runtime.loop import Phase, ToolTurnLoop
from toolturn.runtime.message_events import message_events
from toolturn.runtime.outcomes import ToolOutcome
from toolturn.runtime.recovery import CLAUDE_CODE, RecoveryPolicy, RetryTransport
from toolturn.runtime.retry import RetrySettings
from toolturn.runtime.tooldef import ToolDefinition

MODEL = "claude-sonnet-4-6"
_CLIENT_TIMEOUT_S = 120.0


def profile_class(case: ProbeCase, suite: Suite, profile: RecoveryPolicy = CLAUDE_CODE) -> str:
    """The class (`toolturn.probe.verdicts`) of `profile`'s own run of `case`."""
    with tempfile.TemporaryDirectory(prefix=f"toolturn-profile-{case.name}-") as temporary:
        workdir = Path(temporary)
        make_workdir(workdir)
        with serve_case(case, suite, workdir, lambda _: None) as (server, tap):
            client = anthropic.Anthropic(base_url=server.base_url, api_key="x", max_retries=0,
                                         timeout=_CLIENT_TIMEOUT_S)
            try:
                ProfileDriver(profile, client, suite.speed, workdir).run(PROMPT)
            finally:
                client.close()
    return run_class(tap.exchanges)


class ProfileDriver:
    """Carries out a `ToolTurnLoop`'s commands, in order, until the session ends."""

    def __init__(self, profile: RecoveryPolicy, client: anthropic.Anthropic, speed: float,
                 workdir: Path) -> None:
        definitions = [ToolDefinition(tool["name"], tool["input_schema"],
                                      concurrency_safe=tool["name"] == "Read") for tool in TOOLS]
        # The profile's retries with the profile's backoff, fewer of them: a probe's fault
        # strikes a few attempts at most.
        retry = profile.retry or RetrySettings()
        self.loop = ToolTurnLoop(definitions, model=MODEL, profile=profile,
                                 max_turns=MAX_TURNS,
                                 retry=RetrySettings(max_retries=min(retry.max_retries, 4),
                                                     initial_delay_ns=retry.initial_delay_ns,
                                                     max_delay_ns=retry.max_delay_ns))
        self.profile = profile
        self.client = client
        self.speed = speed
        self.workdir = workdir
        self._origin = time.monotonic_ns()
        self._error_event = False  # the last response was broken by an `event: error`
        self.ended: SessionEnded | None = None

    def now(self) -> int:
        return round((time.monotonic_ns() - self._origin) * self.speed)

    def run(self, prompt: str) -> SessionEnded:
        pending: deque[Command] = deque(self.loop.start(prompt, self.now()))
        while pending and self.ended is None:
            pending.extend(self._carry_out(pending.popleft()))
        if self.ended is None:
            raise RuntimeError("the loop stopped giving commands before the session ended")
        return self.ended

    def _carry_out(self, command: Command) -> list[Command]:
        if isinstance(command, SendRequest):
            return self._send(command)
        if isinstance(command, StartTool):
            outcome, content = run_tool(self.workdir, command.name, command.input)
            return self.loop.tool_finished(command.tool_use_id, outcome, content, self.now())
        if isinstance(command, WaitUntil):
            return self._wait()
        if isinstance(command, AskPermission):
            return self.loop.permission_decided(command.tool_use_id, True, self.now())
        if isinstance(command, SessionEnded):
            self.ended = command
        # CancelTool, CancelRequest, TurnEnded: a tool here has finished before the loop
        # could cancel it, and nothing else is running.
        return []

    def _wait(self) -> list[Command]:
        """A `WaitUntil`: only a backoff is slept out. The loop also asks to be woken to watch a
        stream for silence (rule 9h), but this driver reads each stream to its end before it
        carries out a command: such a wait is moot, and sleeping it out would hold the run for
        the profile's whole idle timeout (300 s under `codex`). So the loop is asked what it
        waits for now."""
        if self.loop.phase is not Phase.BACKOFF:
            return []
        commands = self.loop.wake(self.now())
        if len(commands) == 1 and isinstance(commands[0], WaitUntil):
            wake_ns = commands[0].time_ns
            time.sleep(max(wake_ns - self.now(), 0) / self.speed / 1e9)
            return self.loop.wake(max(self.now(), wake_ns))
        return commands

    def _send(self, send: SendRequest) -> list[Command]:
        body = dict(send.request_body)
        if (self._error_event and send.attempt > 1
                and self.profile.retry_after_error_event is RetryTransport.NON_STREAMING):
            body["stream"] = False
        self._error_event = False
        try:
            if body["stream"] is False:
                return self._answer(send, message_events(self.client.messages.create(
                    **body).to_dict()))
            return self._stream(send, self.client.messages.create(**body))
        except anthropic.APIStatusError as error:
            wait_ns = retry_after_ns(error.response.headers)
            return self.loop.request_failed(
                error.status_code, self.now(), request_id=send.request_id,
                retry_after_ns=None if wait_ns is None else round(wait_ns * self.speed))
        except anthropic.APIConnectionError:
            return self.loop.request_failed(None, self.now(), request_id=send.request_id)

    def _stream(self, send: SendRequest, stream: Any) -> list[Command]:
        commands: list[Command] = []
        try:
            with stream:
                for event in stream:
                    commands += self._feed(send, event.to_dict())
        except anthropic.APIStatusError as error:
            if not is_error_event(error):
                raise
            self._error_event = True
            commands += self._feed(send, error_event(error))
        except (anthropic.APIConnectionError, httpx2.TransportError):
            pass  # a cut: the loop hears it as the stream's end before message_stop
        return commands + self.loop.stream_ended(self.now(), send.request_id)

    def _answer(self, send: SendRequest, events: list[dict[str, Any]]) -> list[Command]:
        commands: list[Command] = []
        for event in events:
            commands += self._feed(send, event)
        return commands + self.loop.stream_ended(self.now(), send.request_id)

    def _feed(self, send: SendRequest, event: dict[str, Any]) -> list[Command]:
        # Commands are carried out after the stream: tools answer at once, and a request the
        # loop sends next only follows the end of this one.
        return self.loop.on_event(event, self.now(), send.request_id)


def run_tool(workdir: Path, name: str, tool_input: dict[str, Any]) -> tuple[ToolOutcome, str]:
    """A call's outcome and result: Read reads a file inside `workdir`, Bash runs nothing (a
    probe needs the exchange, not the command)."""
    if name == "Read":
        path = Path(str(tool_input.get("file_path", "")))
        path = path if path.is_absolute() else workdir / path
        if not path.resolve().is_relative_to(workdir.resolve()) or not path.is_file():
            return ToolOutcome.ERROR, f"no such file: {path}"
        return ToolOutcome.SUCCESS, path.read_text(encoding="utf-8", errors="replace")[:2000]
    return ToolOutcome.SUCCESS, f"(not run) {tool_input.get('command')}"
