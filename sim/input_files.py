"""A user's input file for the commands that read one (`sim accumulate`, `sim repair`): its bytes
(`-` is stdin), its text, and JSON Lines of objects, every problem a `UserError` naming the file
and the line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from sim.errors import UserError


def read_input(path: str, name: str) -> bytes:
    """The bytes of file `path`, or of stdin for `-`; `name` is how messages call it."""
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise UserError(f"{name}: cannot read: {error.strerror or error}") from None


def utf8_text(body: bytes, name: str) -> str:
    """The file's text (a byte-order mark dropped)."""
    try:
        return body.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise UserError(f"{name}: not UTF-8 ({error.reason} at byte {error.start})") from None


def json_object_lines(text: str, name: str, what: str) -> list[dict[str, Any]]:
    """One JSON object per non-blank line; `what` names one in messages ("an event")."""
    objects: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as error:
            raise UserError(f"{name}: line {number}: not JSON ({error})") from None
        if not isinstance(value, dict):
            raise UserError(
                f"{name}: line {number}: {what} must be a JSON object, not {type(value).__name__}"
            )
        objects.append(value)
    return objects
