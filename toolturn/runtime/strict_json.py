"""JSON as RFC 8259 has it: `parse_json(text)`.

`parse_json_object(text)` is the same for
text that must hold an object: any other value is a `NotAnObject` (a ValueError) naming its type.

Python's json module also reads ``NaN``, ``Infinity`` and numbers beyond a double's range (as
inf), which it then writes back in a form no JSON reader accepts; the API never sends them. And it
recurses once per level of nesting, so a deep enough value raises RecursionError, which is not a
ValueError. Here every one of these is a ValueError saying why. Used for tool input (the
accumulator), SSE data, request bodies and the commands' input files.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from toolturn.runtime.errors import ToolTurnError

__all__ = ["NotAnObject", "parse_json", "parse_json_object"]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(
    text: str, float: type[float] = float, isinf: Callable[[float], bool] = math.isinf
) -> float:
    # Defaults bind the names: json calls this once per number with a fraction or an exponent.
    value = float(text)
    if isinf(value):
        raise ValueError(f"{text} is out of a double's range")
    return value


# One decoder for every call: `json.loads` with an option builds a new decoder per call, which
# costs more than the parse of a typical tool input.
_STRICT_JSON = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)


def parse_json(text: str) -> Any:
    """The JSON value of `text`; ValueError saying why when it is not strict JSON (nesting too
    deep for the parser included)."""
    try:
        return _STRICT_JSON.decode(text)
    except RecursionError:
        raise ValueError("nesting too deep") from None


class NotAnObject(ToolTurnError, ValueError):
    """Strict JSON, but a value other than an object: `kind` is the type it reads as (`list`,
    `str`, `int`, `NoneType`, ...), for messages worded by the caller."""

    def __init__(self, kind: str) -> None:
        super().__init__(f"JSON {kind}, not an object")
        self.kind = kind


def parse_json_object(text: str) -> dict[str, Any]:
    """The JSON object `text` holds; ValueError as `parse_json` when it is not strict JSON,
    `NotAnObject` when it is another value."""
    value = parse_json(text)
    if not isinstance(value, dict):
        raise NotAnObject(type(value).__name__)
    return value
