"""A small agent on the official `anthropic` SDK, to probe: the SDK as a client of every case.

    toolturn probe -- python -m toolturn.probe.sdk_agent --mode async-stream

It declares Bash and Read, asks the model, runs the calls it gets (Read reads a file under the
working directory; Bash answers without running anything: a probe needs the exchange, not the
command) and sends the results back, until the model ends its turn or `MAX_TURNS` pass. Its
recovery is the plainest an SDK user writes: the SDK's own retries (2, with its backoff) for
errors before a stream starts, and one identical retry of a request whose stream broke. A
tool_use whose input is not an object, or names a tool it does not have, gets an error result.

Modes: `sync-stream` / `async-stream` use `messages.stream(...)` and its final message;
`sync-create` / `async-create` use `messages.create(stream=True)` and the project's own
accumulator (`toolturn.runtime.accumulator`) over the raw events.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

import anthropic
import httpx2

from toolturn.runtime.accumulator import StreamAccumulator, StreamProtocolError

MODES = ("sync-stream", "sync-create", "async-stream", "async-create")
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


def tool_result(block: dict[str, Any]) -> dict[str, Any]:
    """The result of one call, as the SDK user's agent would make it."""
    name, tool_input = block.get("name"), block.get("input")
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": block["id"]}
    if not isinstance(tool_input, dict) or name not in ("Bash", "Read"):
        return {**result, "content": f"cannot run {name}", "is_error": True}
    if name == "Read":
        path = Path(str(tool_input.get("file_path", "")))
        inside = path.resolve().is_relative_to(Path.cwd().resolve())
        if not inside or not path.is_file():
            return {**result, "content": f"no such file: {path}", "is_error": True}
        return {**result, "content": path.read_text(encoding="utf-8", errors="replace")[:2000]}
    return {**result, "content": f"(not run) {tool_input.get('command')}"}


def next_messages(messages: list[dict[str, Any]], final: dict[str, Any]) -> list[dict[str, Any]]:
    calls = [block for block in final["content"] if block.get("type") == "tool_use"]
    return [*messages, {"role": "assistant", "content": final["content"]},
            {"role": "user", "content": [tool_result(call) for call in calls]}]


def _params(model: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"model": model, "max_tokens": 4096, "messages": messages, "tools": TOOLS}


def _accumulate(events: Any) -> dict[str, Any]:
    accumulator = StreamAccumulator()
    for event in events:
        accumulator.feed(event.to_dict())
    return accumulator.snapshot()


def sync_turn(client: anthropic.Anthropic, mode: str, params: dict[str, Any]) -> dict[str, Any]:
    if mode == "sync-stream":
        with client.messages.stream(**params) as stream:
            return stream.get_final_message().to_dict()
    return _accumulate(client.messages.create(**params, stream=True))


async def async_turn(client: anthropic.AsyncAnthropic, mode: str,
                     params: dict[str, Any]) -> dict[str, Any]:
    if mode == "async-stream":
        async with client.messages.stream(**params) as stream:
            return (await stream.get_final_message()).to_dict()
    accumulator = StreamAccumulator()
    async for event in await client.messages.create(**params, stream=True):
        accumulator.feed(event.to_dict())
    return accumulator.snapshot()


# A broken stream: a dropped connection (the SDK lets httpx's error through mid-stream), an
# error status or event, a stream that does not add up (the SDK's or our accumulator's word).
RETRIED = (anthropic.APIConnectionError, anthropic.APIStatusError, httpx2.HTTPError,
           StreamProtocolError, ValueError, KeyError)


def run_sync(mode: str, model: str) -> int:
    client = anthropic.Anthropic(max_retries=2, timeout=60)
    messages: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]
    for _ in range(MAX_TURNS):
        for attempt in range(STREAM_RETRIES + 1):
            try:
                final = sync_turn(client, mode, _params(model, messages))
                break
            except RETRIED as error:
                if attempt == STREAM_RETRIES:
                    print(f"sdk_agent: gave up: {error}", file=sys.stderr)
                    return 1
        if final.get("stop_reason") != "tool_use":
            return 0
        messages = next_messages(messages, final)
    return 0


async def run_async(mode: str, model: str) -> int:
    client = anthropic.AsyncAnthropic(max_retries=2, timeout=60)
    messages: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]
    for _ in range(MAX_TURNS):
        for attempt in range(STREAM_RETRIES + 1):
            try:
                final = await async_turn(client, mode, _params(model, messages))
                break
            except RETRIED as error:
                if attempt == STREAM_RETRIES:
                    print(f"sdk_agent: gave up: {error}", file=sys.stderr)
                    return 1
        if final.get("stop_reason") != "tool_use":
            return 0
        messages = next_messages(messages, final)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolturn.probe.sdk_agent",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=MODES, default="sync-stream")
    parser.add_argument("--model", default="claude-sonnet-4-6")
    args = parser.parse_args(argv)
    if args.mode.startswith("async"):
        return asyncio.run(run_async(args.mode, args.model))
    return run_sync(args.mode, args.model)


if __name__ == "__main__":
    sys.exit(main())
