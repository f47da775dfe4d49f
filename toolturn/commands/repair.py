"""`toolturn repair FILE`: run the API-boundary pairing repair on a transcript and print the result.

FILE holds a JSON list of messages, a request body (a JSON object with `messages`), or JSONL with
one message per line; `-` reads stdin. The output is `{"messages": [...], "repairs": [...]}`.
With `--strict` nothing is repaired: the violations are printed, one per line, worded as the API's
400 errors, and the exit status is 1 if there are any (0, silently, if there are none).
Input that is not a transcript is reported in one line naming the place, with exit status 2.
"""

from __future__ import annotations

import argparse
from typing import Any

from toolturn.errors import UserError
from toolturn.input_files import json_object_lines, print_json, print_text, read_input, utf8_text
from toolturn.runtime.pairing import TranscriptShapeError
from toolturn.runtime.repair import check_pairing, ensure_tool_result_pairing
from toolturn.runtime.strict_json import parse_json

EXIT_VIOLATIONS = 1


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "repair",
        help="make a transcript's tool_use / tool_result pairing legal and list each repair",
        description=(
            "Run the API-boundary repair on a transcript (JSON list of messages, request body "
            "with 'messages', or JSONL of messages) and print the repaired messages and the "
            "repairs as JSON."
        ),
    )
    parser.add_argument("file", metavar="FILE", help="transcript file; - for stdin")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="repair nothing: print the violations as the API words them, exit 1 if any",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    name = "<stdin>" if args.file == "-" else args.file
    messages = parse_transcript(read_input(args.file, name), name)
    try:
        if args.strict:
            violations = check_pairing(messages)
            for violation in violations:
                print_text(violation)
            return EXIT_VIOLATIONS if violations else 0
        repaired, repairs = ensure_tool_result_pairing(messages)
    except TranscriptShapeError as error:
        raise UserError(f"{name}: {error}") from None
    output = {"messages": repaired, "repairs": [repair.to_json() for repair in repairs]}
    print_json(output, name)
    return 0


def parse_transcript(body: bytes, name: str) -> list[Any]:
    """The list of messages in a file's bytes, whichever of the three formats it uses."""
    text = utf8_text(body, name)
    stripped = text.strip()
    if not stripped:
        raise UserError(f"{name}: empty file: expected a transcript")
    try:
        document = parse_json(stripped)
    except ValueError as error:
        if stripped.startswith("{"):
            return json_object_lines(text, name, "a message")
        raise UserError(f"{name}: not JSON ({error})") from None
    if isinstance(document, list):
        return document
    if isinstance(document, dict):
        if "messages" in document:
            messages = document["messages"]
            if not isinstance(messages, list):
                raise UserError(f"{name}: messages: must be a list, not {type(messages).__name__}")
            return messages
        if "role" in document:
            return [document]  # JSONL holding a single message
        raise UserError(f"{name}: a JSON object must be a request body with 'messages'")
    raise UserError(
        f"{name}: expected a list of messages or a request body, not {type(document).__name__}"
    )
