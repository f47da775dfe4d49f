"""What every protocol's accumulator needs of the events it is fed: an event as a plain dict
(from a Mapping or an SDK's typed event), an event shortened for error messages, and the error
raised for an event that breaks its stream's protocol."""

from __future__ import annotations

import json
import reprlib
from collections.abc import Mapping
from typing import Any

from toolturn.runtime.errors import ToolTurnError

__all__ = ["StreamProtocolError", "as_dict", "describe"]


class StreamProtocolError(ToolTurnError):
    """An event broke the stream protocol; the message says what arrived and why it does not fit."""


# repr() recurses as deep as the event is nested; this one stops six levels down. (Only the
# depth matters: wide values are cut at 200 characters anyway.)
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
    """The thin adapter: a Mapping, or an SDK typed event (pydantic), as a plain dict."""
    if isinstance(event, Mapping):
        return dict(event)
    to_dict = getattr(event, "to_dict", None)
    if callable(to_dict):  # the anthropic and openai SDKs' models
        return dict(to_dict())
    model_dump = getattr(event, "model_dump", None)
    if callable(model_dump):  # any other pydantic model
        return dict(model_dump(mode="json", by_alias=True, exclude_unset=True))
    raise StreamProtocolError(
        f"an event must be a mapping or an SDK event object, got {type(event).__name__}"
    )
