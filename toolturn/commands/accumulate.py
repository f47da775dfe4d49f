"""`toolturn accumulate FILE`: replay a recorded stream through the accumulator and print the
result.

FILE holds raw ``text/event-stream`` bytes or JSONL of event dicts (one per line); the format is
detected from the first non-blank line: ``{`` means JSONL, anything else SSE. ``-`` reads stdin.
"""

from __future__ import annotations

import argparse
from typing import Any

from toolturn.errors import UserError
from toolturn.input_files import json_object_lines, print_json, read_input, utf8_text
from toolturn.runtime.accumulator import StreamAccumulator, StreamProtocolError
from toolturn.wire.sse import PartialEvent, SSEDecodeError, decode_stream


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "accumulate",
        help="replay a recorded stream (SSE or JSONL events) and print its messages as JSON",
        description=(
            "Feed a recorded Messages API stream to the stream accumulator and print the "
            "per-block messages, the merged message, stop reason, usage, the blocks a cut left "
            "open and any error event, as JSON."
        ),
    )
    parser.add_argument(
        "file", metavar="FILE", help="SSE body or JSONL of event dicts; - for stdin"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    name = "<stdin>" if args.file == "-" else args.file
    body = read_input(args.file, name)
    events, partial = _decode(body, name)
    print_json(accumulate(events, partial, name), name)
    return 0


def accumulate(
    events: list[dict[str, Any]], partial: PartialEvent | None, name: str
) -> dict[str, Any]:
    """The command's JSON result for decoded events (and the SSE tail a cut left, if any)."""
    accumulator = StreamAccumulator()
    for number, event in enumerate(events, start=1):
        try:
            accumulator.feed(event)
        except StreamProtocolError as error:
            raise UserError(f"{name}: event {number}: {error}") from None
    if not accumulator.started and accumulator.error is None:
        raise UserError(f"{name}: no message_start: the file holds no stream")
    return {
        "blocks": [
            {
                "message_id": done.message_id,
                "index": done.index,
                "message": done.as_message(),
                "input_error": done.input_error,
                "raw_input": done.raw_input,
            }
            for done in accumulator.completed
        ],
        "message": accumulator.snapshot(),
        "stop_reason": accumulator.stop_reason,
        "usage": accumulator.usage,
        "finished": accumulator.finished,
        "open_blocks": list(accumulator.open_indices),
        "error": accumulator.error,
        "partial_event": None if partial is None else _describe_partial(partial),
    }


def _describe_partial(partial: PartialEvent) -> dict[str, Any]:
    return {
        "event": partial.event,
        "data_lines": list(partial.data_lines),
        "unterminated_line": partial.unterminated_line,
    }


def _decode(body: bytes, name: str) -> tuple[list[dict[str, Any]], PartialEvent | None]:
    first_line = next((line.strip() for line in body.splitlines() if line.strip()), b"")
    if not first_line:
        raise UserError(f"{name}: empty file: expected SSE or JSONL stream events")
    if first_line.removeprefix(b"\xef\xbb\xbf").startswith(b"{"):
        return json_object_lines(utf8_text(body, name), name, "an event"), None
    try:
        return decode_stream(body)
    except SSEDecodeError as error:
        raise UserError(f"{name}: {error}") from None
