"""A user's input file for the commands that read one (`toolturn accumulate`, `toolturn repair`):
its bytes (`-` is stdin), its text, and JSON Lines of objects, every problem a `UserError` naming
the file and the line; and the JSON they print back.

An input larger than `MAX_INPUT_BYTES` is refused, not read: `/dev/zero` or a runaway pipe would
otherwise be read until memory ran out. JSON is read strictly (`toolturn.runtime.strict_json`): NaN,
Infinity and numbers beyond a double's range would be printed back as no JSON reader accepts.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from toolturn.errors import UserError
from toolturn.runtime.strict_json import NotAnObject, parse_json_object

# Far beyond any real transcript or recorded stream (the mock server takes request bodies of up
# to 32 MiB), and as much as a machine can parse: JSON takes several times its size in memory.
MAX_INPUT_BYTES = 256 * 1024 * 1024


def read_input(path: str, name: str) -> bytes:
    """The bytes of file `path`, or of stdin for `-`; `name` is how messages call it."""
    # One byte more than the limit tells a file at the limit from a larger one.
    try:
        if path == "-":
            body = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
        else:
            with open(path, "rb") as file:
                body = file.read(MAX_INPUT_BYTES + 1)
    except OSError as error:
        raise UserError(f"{name}: cannot read: {error.strerror or error}") from None
    if len(body) > MAX_INPUT_BYTES:
        raise UserError(f"{name}: too large: an input may hold at most {MAX_INPUT_BYTES:,} bytes")
    return body


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
            objects.append(parse_json_object(line))
        except NotAnObject as error:
            raise UserError(
                f"{name}: line {number}: {what} must be a JSON object, not {error.kind}"
            ) from None
        except ValueError as error:
            raise UserError(f"{name}: line {number}: not JSON ({error})") from None
    return objects


def print_json(document: Any, name: str) -> None:
    """Print `document`, read from input `name`, as indented JSON with non-ASCII text as is."""
    try:
        text = json.dumps(document, ensure_ascii=False, indent=2)
    except RecursionError:  # json writes recursively, one level of nesting per call
        raise UserError(f"{name}: nesting too deep to print") from None
    print_text(text)


def print_text(text: str) -> None:
    """Print text that may hold lone surrogates (a `\\ud800` escape in JSON input decodes to
    one), which UTF-8 cannot encode: each is printed as that escape. In JSON output that is the
    same string to any reader (json leaves surrogates only inside strings): nothing is lost."""
    print(text.encode("utf-8", "backslashreplace").decode("utf-8"))
