"""What the SDK's exceptions mean to the tool-turn loop.

An `APIStatusError` is either an HTTP error status (the request failed before any event: the
loop's `request_failed`, with the server's retry-after) or, with status 200, an `event: error`
in the stream, which the SDK raises instead of yielding (the loop wants it as an event).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anthropic

NS_PER_MS = 1_000_000
NS_PER_S = 1_000_000_000


def retry_after_ns(headers: Mapping[str, str]) -> int | None:
    """The wait a response asks for: `retry-after-ms`, else `retry-after` in seconds (the SDK's
    order); None if neither is a number (an HTTP date is not honoured, as a wait is relative)."""
    for name, scale in (("retry-after-ms", NS_PER_MS), ("retry-after", NS_PER_S)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            wait = float(value)
        except ValueError:
            continue
        if wait >= 0:
            return round(wait * scale)
    return None


def is_error_event(error: anthropic.APIStatusError) -> bool:
    """Whether the SDK raised this for an `event: error` inside a 200 stream."""
    return error.status_code < 400


def error_event(error: anthropic.APIStatusError) -> dict[str, Any]:
    """The `error` event the SDK raised `error` for, as the stream carried it."""
    body = error.body
    if isinstance(body, dict) and body.get("type") == "error":
        if isinstance(body.get("error"), dict):
            return body
    return {"type": "error", "error": {"type": "api_error", "message": str(error)}}
