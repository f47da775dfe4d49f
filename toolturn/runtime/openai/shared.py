"""What both OpenAI accumulators need: an event shortened for error messages, the thin adapter
from SDK objects to dicts, and the one parse of a call's arguments."""

from __future__ import annotations

import json
import reprlib
from collections.abc import Mapping
from typing import Any

from toolturn.runtime.accumulator import StreamProtocolError
from toolturn.runtime.strict_json import NotAnObject, parse_json_object

__all__ = ["as_dict", "describe", "parse_arguments"]

# repr() recurses as deep as the event is nested; this one stops six levels down.
_SHORT_REPR = reprlib.Repr()
_SHORT_REPR.maxdict = _SHORT_REPR.maxlist = _SHORT_REPR.maxtuple = 50
_SHORT_REPR.maxstring = _SHORT_REPR.maxother = 200


def describe(event: Any) -> str:
    """The event as it arrived, shortened to 200 characters, for error messages."""
    try:
        text = json.dumps(event, ensure_ascii=False, default=repr)
    except (TypeError, ValueError, RecursionError):  # keys JSON cannot write, a cycle, depth
        text = _SHORT_REPR.repr(event)
    return text if len(text) <= 200 else text[:197] + "..."


def as_dict(event: Any) -> dict[str, Any]:
    """A Mapping, or an SDK typed event (pydantic), as a plain dict."""
    if isinstance(event, Mapping):
        return dict(event)
    to_dict = getattr(event, "to_dict", None)
    if callable(to_dict):  # the openai SDK's models
        return dict(to_dict())
    raise StreamProtocolError(
        f"an event must be a mapping or an SDK event object, got {type(event).__name__}"
    )


def parse_arguments(raw: str) -> tuple[dict[str, Any] | None, str | None]:
    """A call's arguments text: (the object, None) or (None, why it is not a JSON object).
    Empty text is the empty object, as the Messages accumulator has it: models calling a function
    without parameters send nothing as often as ``{}``."""
    if not raw:
        return {}, None
    try:
        return parse_json_object(raw), None
    except NotAnObject as error:
        return None, f"arguments are {error}"
    except ValueError as error:
        return None, f"arguments are not valid JSON: {error}"
