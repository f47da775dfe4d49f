"""Error bodies, statuses and request-check wording of the OpenAI APIs (Responses and Chat
Completions share them), and how the mock model's errors, worded as the Messages API words
them, are said in OpenAI's terms.

An error body is `{"error": {"message": ..., "type": ..., "param": ..., "code": ...}}`; the
request id travels in the `x-request-id` header, not in the body. The model's errors map so:

| Messages API (status, type)    | OpenAI (status, type, code)                          |
| 400 invalid_request_error      | 400 invalid_request_error (the check's param, code)  |
| 404 not_found_error (a model)  | 404 invalid_request_error, model_not_found           |
| 429 rate_limit_error           | 429 requests, rate_limit_exceeded                    |
| 500 api_error                  | 500 server_error                                     |
| 529 overloaded_error           | 503 server_error (OpenAI has no 529)                 |

Retry headers (`retry-after`, `retry-after-ms`) are the same on both APIs; the openai SDK
reads both.

Mid-stream, the Responses API says an error twice, as it does when it sheds load: an `error`
event, `{"type": "error", "error": {"type", "code", "message", "param"}, "sequence_number"}`
(the error nested, as the API sends it; its reference documents the fields flat, and the
official SDKs read both), then `response.failed` with `{"code", "message"}` in the response's
`error`. `STREAM_ERRORS` gives the words for each of the model's error events:

| Messages API event type | OpenAI error type         | code                   |
| overloaded_error        | service_unavailable_error | server_is_overloaded   |
| api_error (and others)  | server_error              | server_error           |
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

REQUEST_ID_HEADER = "x-request-id"
INVALID_REQUEST = "invalid_request_error"
RATE_LIMITED = ("Rate limit reached for requests per min (RPM) in organization org-toolturn. "
                "Please try again later.")
OVERLOADED = "The server is overloaded or not ready yet."
SERVER_ERROR = ("The server had an error while processing your request. Sorry about that!")
STREAM_OVERLOADED = "Our servers are currently overloaded. Please try again later."
# The API's words end "Please include the request ID ... in your message.": left out, the
# stream's events do not carry the request id (its `x-request-id` header does).
STREAM_SERVER_ERROR = ("An error occurred while processing your request. You can retry your "
                       "request, or contact us through our help center at help.openai.com if "
                       "the error persists.")
NOT_JSON = ("We could not parse the JSON body of your request. (HINT: This likely means you "
            "aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, "
            "but what was sent was not valid JSON. If you have trouble figuring out how to fix "
            "this, please contact us through our help center at help.openai.com.)")

# Messages API error type -> (OpenAI status, type, code, message; None: the model's own).
_FROM_MESSAGES: dict[str, tuple[int, str, str | None, str | None]] = {
    "rate_limit_error": (429, "requests", "rate_limit_exceeded", RATE_LIMITED),
    "overloaded_error": (503, "server_error", None, OVERLOADED),
    "api_error": (500, "server_error", None, SERVER_ERROR),
}


# Messages API error event type -> the Responses stream's (type, code, message).
STREAM_ERRORS: dict[str, tuple[str, str, str]] = {
    "overloaded_error": ("service_unavailable_error", "server_is_overloaded", STREAM_OVERLOADED),
    "api_error": ("server_error", "server_error", STREAM_SERVER_ERROR),
}


@dataclass(frozen=True, slots=True)
class Problem:
    """Why a request is refused with 400: the API's message, the parameter it names, its code."""

    message: str
    param: str | None = None
    code: str | None = None


class Refused(Exception):
    """A request check failed; `problem` says how the API words it."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def problem_of(check: Callable[[Any], None], request: Any) -> Problem | None:
    """What `check` refuses `request` for (the first rule it breaks); None if it passes."""
    try:
        check(request)
    except Refused as refused:
        return refused.problem
    return None


def body(message: str, error_type: str, param: str | None = None,
         code: str | None = None) -> dict[str, Any]:
    """An OpenAI error body."""
    return {"error": {"message": message, "type": error_type, "param": param, "code": code}}


def from_messages(status: int, error_type: str, message: str) -> tuple[int, dict[str, Any]]:
    """The OpenAI status and body for an error the model words as the Messages API does."""
    mapped = _FROM_MESSAGES.get(error_type)
    if mapped is not None:
        new_status, new_type, code, text = mapped
        return new_status, body(text or message, new_type, None, code)
    if error_type == "not_found_error" and message.startswith("model: "):
        name = message.removeprefix("model: ")
        return 404, body(f"The model `{name}` does not exist or you do not have access to it.",
                         INVALID_REQUEST, None, "model_not_found")
    if error_type == "not_found_error":
        return status, body(f"Invalid URL ({message.removesuffix(': not found')})",
                            INVALID_REQUEST)
    return status, body(message, INVALID_REQUEST if status < 500 else "server_error")


# ----- the request checks' wording -----

def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def missing(param: str) -> Refused:
    return Refused(Problem(f"Missing required parameter: '{param}'.", param,
                           "missing_required_parameter"))


def invalid_type(param: str, expected: str, value: Any) -> Refused:
    return Refused(Problem(f"Invalid type for '{param}': expected {expected}, but got "
                           f"{_json_type(value)} instead.", param, "invalid_type"))


def invalid_value(param: str, value: Any, supported: tuple[str, ...]) -> Refused:
    names = [f"'{name}'" for name in supported]
    listed = ", ".join(names[:-1]) + f", and {names[-1]}" if len(names) > 1 else names[0]
    return Refused(Problem(f"Invalid value: '{value}'. Supported values are: {listed}.", param,
                           "invalid_value"))


def below_minimum(param: str, minimum: int | float, value: Any) -> Refused:
    kind = "integer" if isinstance(minimum, int) else "decimal"
    return Refused(Problem(f"Invalid '{param}': {kind} below minimum value. Expected a value >= "
                           f"{minimum}, but got {value} instead.", param,
                           f"{kind}_below_min_value"))


def above_maximum(param: str, maximum: int | float, value: Any) -> Refused:
    kind = "integer" if isinstance(maximum, int) else "decimal"
    return Refused(Problem(f"Invalid '{param}': {kind} above maximum value. Expected a value <= "
                           f"{maximum}, but got {value} instead.", param,
                           f"{kind}_above_max_value"))


def field(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], expected: str,
          where: str, *, required: bool = False) -> Any:
    """`obj[key]` if it is of `kind` (a bool is never a number); None if absent and optional.
    `where` is the parameter path of `obj` ('' at the top)."""
    param = f"{where}.{key}" if where else key
    if key not in obj or (obj[key] is None and not required):
        if required:
            raise missing(param)
        return None
    value = obj[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise invalid_type(param, expected, value)
    return value


def number_in(obj: dict[str, Any], key: str, low: float, high: float) -> None:
    """An optional number from `low` to `high` (temperature, top_p)."""
    value = field(obj, key, (int, float), "a number", "")
    if value is not None and value < low:
        raise below_minimum(key, low, value)
    if value is not None and value > high:
        raise above_maximum(key, high, value)


def check_model_request(body: Any) -> None:
    """What both APIs check first: the body is an object with a string `model`."""
    if not isinstance(body, dict):
        raise invalid_type("body", "an object", body)
    field(body, "model", str, "a string", "", required=True)
