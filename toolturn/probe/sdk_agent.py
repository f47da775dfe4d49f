"""A small agent on the official SDKs, to probe: an SDK as a client of every case.

    toolturn probe -- python -m toolturn.probe.sdk_agent --mode async-stream
    toolturn probe --protocol openai-chat -- python -m toolturn.probe.sdk_agent \
        --protocol openai-chat --mode sync-create

It declares Bash and Read, asks the model, runs the calls it gets (Read reads a file under the
working directory; Bash answers without running anything: a probe needs the exchange, not the
command) and sends the results back, until the model ends its turn or `MAX_TURNS` pass. Its
recovery is the plainest an SDK user writes: the SDK's own retries (2, with its backoff) for
errors before a stream starts, and one identical retry of a request whose stream broke. A
call whose input is not an object, or names a tool it does not have, gets an error result.

`--protocol anthropic` (the default) uses the `anthropic` SDK against ANTHROPIC_BASE_URL:
modes `sync-stream` / `async-stream` use `messages.stream(...)` and its final message;
`sync-create` / `async-create` use `messages.create(stream=True)` and the project's own
accumulator (`toolturn.runtime.accumulator`) over the raw events. `openai-responses` and
`openai-chat` use the `openai` SDK against OPENAI_BASE_URL, the same four modes in the
Responses API or Chat Completions (`toolturn.probe.sdk_agent_openai`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai

from toolturn.probe import sdk_agent_openai
from toolturn.runtime.accumulator import StreamAccumulator, StreamProtocolError
from toolturn.wire.codecs import ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES

MODES = ("sync-stream", "sync-create", "async-stream", "async-create")
PROTOCOLS = (ANTHROPIC, OPENAI_RESPONSES, OPENAI_CHAT)
DEFAULT_MODELS = {ANTHROPIC: "claude-sonnet-4-6", OPENAI_RESPONSES: "gpt-5",
                  OPENAI_CHAT: "gpt-4o"}
MAX_TURNS = 6
STREAM_RETRIES = 1
TOOLS: list[dict[str, Any]] = [
    {"name": "Bash", "description": "Run a shell command",
     "input_schema": {"type": "object", "properties": {"command": {"type": "string"},
                                                       "description": {"type": "string"}},
                      "required": ["command"]}},
    {"name": "Read", "description": "Read a file",
     "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}},
                      "required": ["file_path"]}},
]
PROMPT = "Look at this project with your tools, then say what it is."


def outcome(name: Any, tool_input: Any) -> tuple[str, bool]:
    """The result of one call, as the SDK user's agent would make it: its text, and whether
    it is an error."""
    if not isinstance(tool_input, dict) or name not in ("Bash", "Read"):
        return f"cannot run {name}", True
    if name == "Read":
        path = Path(str(tool_input.get("file_path", "")))
        inside = path.resolve().is_relative_to(Path.cwd().resolve())
        if not inside or not path.is_file():
            return f"no such file: {path}", True
        return path.read_text(encoding="utf-8", errors="replace")[:2000], False
    return f"(not run) {tool_input.get('command')}", False


def tool_result(block: dict[str, Any]) -> dict[str, Any]:
    content, is_error = outcome(block.get("name"), block.get("input"))
    result = {"type": "tool_result", "tool_use_id": block["id"], "content": content}
    return {**result, "is_error": True} if is_error else result


def next_messages(messages: list[dict[str, Any]], final: dict[str, Any]) -> list[dict[str, Any]]:
    calls = [block for block in final["content"] if block.get("type") == "tool_use"]
    return [*messages, {"role": "assistant", "content": final["content"]},
            {"role": "user", "content": [tool_result(call) for call in calls]}]


def wants_results(final: dict[str, Any]) -> bool:
    return final.get("stop_reason") == "tool_use"


def _params(model: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"model": model, "max_tokens": 4096, "messages": messages, "tools": TOOLS}


def _accumulate(events: Any) -> dict[str, Any]:
    accumulator = StreamAccumulator()
    for event in events:
        accumulator.feed(event.to_dict())
    return accumulator.snapshot()


def sync_turn(client: anthropic.Anthropic, mode: str, model: str,
              messages: list[dict[str, Any]]) -> dict[str, Any]:
    params = _params(model, messages)
    if mode == "sync-stream":
        with client.messages.stream(**params) as stream:
            return stream.get_final_message().to_dict()
    return _accumulate(client.messages.create(**params, stream=True))


async def async_turn(client: anthropic.AsyncAnthropic, mode: str, model: str,
                     messages: list[dict[str, Any]]) -> dict[str, Any]:
    params = _params(model, messages)
    if mode == "async-stream":
        async with client.messages.stream(**params) as stream:
            return (await stream.get_final_message()).to_dict()
    accumulator = StreamAccumulator()
    async for event in await client.messages.create(**params, stream=True):
        accumulator.feed(event.to_dict())
    return accumulator.snapshot()


# A broken stream: a dropped connection (the SDK lets httpx's error through mid-stream), an
# error status or event, a stream that does not add up (the SDK's or our accumulator's word;
# the openai SDK's stream helpers raise RuntimeError for a stream without its last event).
RETRIED = (anthropic.APIConnectionError, anthropic.APIStatusError, openai.APIError,
           httpx2.HTTPError, StreamProtocolError, sdk_agent_openai.BrokenStream, RuntimeError,
           ValueError, KeyError)
History = list[dict[str, Any]]
GoesOn = Callable[[dict[str, Any]], bool]  # whether the answer's calls are run and answered
Carry = Callable[[History, dict[str, Any]], History]


def _protocol_parts(protocol: str, asynchronous: bool) -> tuple[Any, Any, GoesOn, Carry]:
    """The protocol's client, its turn (sync or async), whether an answer's calls are run, and
    the history carried on."""
    if protocol == ANTHROPIC:
        client = anthropic.AsyncAnthropic if asynchronous else anthropic.Anthropic
        return (client(max_retries=2, timeout=60), async_turn if asynchronous else sync_turn,
                wants_results, next_messages)
    sync, asynchronous_turn, calls, carry = sdk_agent_openai.TURNS[protocol]
    # A dummy key when none is set: the probe's servers take any (the runner sets one).
    key = os.environ.get("OPENAI_API_KEY") or "sk-probe-dummy"
    openai_client = openai.AsyncOpenAI if asynchronous else openai.OpenAI
    return (openai_client(api_key=key, max_retries=2, timeout=60),
            asynchronous_turn if asynchronous else sync,
            lambda final: bool(calls(final)),
            lambda history, final: carry(history, final, outcome))


class _Conversation:
    """The agent's turns with the I/O left out, so that the sync and the async driver share
    them: the history the next request sends, what came back (an answer, or the error that
    broke its stream), and the exit status once it is over (`None` until then)."""

    def __init__(self, goes_on: GoesOn, carry: Carry) -> None:
        self.history: History = [{"role": "user", "content": PROMPT}]
        self.status: int | None = None
        self._goes_on, self._carry = goes_on, carry
        self._turns = 0
        self._broken = 0  # broken streams of the current turn

    def take(self, answer: dict[str, Any] | Exception) -> None:
        if isinstance(answer, Exception):
            if self._broken == STREAM_RETRIES:
                print(f"sdk_agent: gave up: {answer}", file=sys.stderr)
                self.status = 1
            self._broken += 1
            return
        self._broken = 0
        if not self._goes_on(answer):
            self.status = 0
            return
        self.history = self._carry(self.history, answer)
        self._turns += 1
        if self._turns == MAX_TURNS:
            self.status = 0


def _settled(turn: Callable[[], dict[str, Any]]) -> dict[str, Any] | Exception:
    """The answer of one request, or the error that broke its stream."""
    try:
        return turn()
    except RETRIED as error:
        return error


async def _settled_async(turn: Awaitable[dict[str, Any]]) -> dict[str, Any] | Exception:
    try:
        return await turn
    except RETRIED as error:
        return error


def run_sync(mode: str, model: str, protocol: str = ANTHROPIC) -> int:
    client, turn, goes_on, carry = _protocol_parts(protocol, asynchronous=False)
    conversation = _Conversation(goes_on, carry)
    while conversation.status is None:
        conversation.take(_settled(lambda: turn(client, mode, model, conversation.history)))
    return conversation.status


async def run_async(mode: str, model: str, protocol: str = ANTHROPIC) -> int:
    client, turn, goes_on, carry = _protocol_parts(protocol, asynchronous=True)
    conversation = _Conversation(goes_on, carry)
    try:
        while conversation.status is None:
            conversation.take(await _settled_async(turn(client, mode, model,
                                                        conversation.history)))
        return conversation.status
    finally:
        await client.close()  # within the loop: its connections are closed before it ends


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolturn.probe.sdk_agent",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--protocol", choices=PROTOCOLS, default=ANTHROPIC)
    parser.add_argument("--mode", choices=MODES, default="sync-stream")
    parser.add_argument("--model", default=None,
                        help="the model asked for (default: one of the protocol's vendor)")
    args = parser.parse_args(argv)
    model = args.model or DEFAULT_MODELS[args.protocol]
    if args.mode.startswith("async"):
        return asyncio.run(run_async(args.mode, model, args.protocol))
    return run_sync(args.mode, model, args.protocol)


if __name__ == "__main__":
    sys.exit(main())
