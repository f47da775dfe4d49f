"""Error payloads worded and shaped as the Messages API sends them.

An HTTP error body is
`{"type": "error", "error": {"type": ..., "message": ...}, "request_id": ...}`; a mid-stream
`event: error` carries the same `{"type": "error", "error": {...}}` without the id.
"""

from __future__ import annotations

from typing import Any

# Error type and message per HTTP status, as the API words them.
OVERLOADED = ("overloaded_error", "Overloaded")
API_ERROR = ("api_error", "Internal server error")
RATE_LIMITED = (
    "rate_limit_error",
    "Number of concurrent connections has exceeded your rate limit. Please try again later or "
    "contact sales at https://www.anthropic.com/contact-sales to discuss your options for a "
    "rate limit increase.",
)
STATUS_ERRORS: dict[int, tuple[str, str]] = {429: RATE_LIMITED, 500: API_ERROR, 529: OVERLOADED}

INVALID_REQUEST = "invalid_request_error"


def error_event(error_type: str, message: str) -> dict[str, Any]:
    """The payload of a mid-stream `event: error`."""
    return {"type": "error", "error": {"type": error_type, "message": message}}


def error_body(error_type: str, message: str, request_id: str) -> dict[str, Any]:
    """The JSON body of an HTTP error response."""
    return {
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": request_id,
    }
