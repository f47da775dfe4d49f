"""What the server answers besides `POST /v1/messages`: the endpoints a real client calls around
its model requests (Claude Code counts tokens and lists models), and how a request's model name
and transcript are seen by the mock model.

1. `POST /v1/messages/count_tokens` takes a Messages request without `max_tokens` and answers
   `{"input_tokens": N}`, counted as the mock model counts a request's input tokens.
2. `GET /v1/models` lists the names served, as the API lists models (`data`, `has_more`,
   `first_id`, `last_id`); `GET /v1/models/NAME` describes one. Unless names are strict, any
   NAME is served (rule 3), so any NAME is described. The shape is told by the request's
   headers (`model_shape`): with `anthropic-version` (every Anthropic SDK and Claude Code send
   it) the Messages API's; without, the OpenAI API's (`object: "list"`, each model
   `{"id", "object": "model", "created", "owned_by"}`).
3. Model names: a name matching one of the scenario's `[model.serve] model_names` patterns
   (fnmatch, first match in file order) is served with that latency preset (the scenario's
   script and faults); unless the server is strict, any other name the scenario does not know
   plays the scenario's own model, so any client works whatever model it asks for. Strict,
   such a name is the API's 404.
4. Messages of role `system` inside `messages` (Claude Code sends its context so) are taken out
   before the model sees the transcript: they are not turns, and the pairing check's role
   alternation is about user and assistant. Consecutive messages of one role left then are
   combined into one turn, as the API combines them (`toolturn.wire.request_shape` rule 5).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from typing import Any, Literal

from toolturn.model.config import ProfileName
from toolturn.model.input_tokens import InputTokenCounter
from toolturn.model.model import MockModel
from toolturn.wire.request_shape import merged_turns

MESSAGES_PATH = "/v1/messages"
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"
MODELS_PATH = "/v1/models"
# When the mock's models were "created", as the listing reports (a fixed date: deterministic).
CREATED_AT = "2025-01-01T00:00:00Z"
CREATED_UNIX = 1_735_689_600  # the same instant in Unix seconds (the OpenAI APIs' `created`)
OWNER = "toolturn"  # `owned_by` of the OpenAI listing


def served_names(model: MockModel) -> list[str]:
    """The names the scenario's model answers to by itself: its own, then its fallback's."""
    return [model.name, *([model.fallback_name] if model.fallback_name else [])]


def mapped_profile(name: str, model: MockModel) -> tuple[bool, ProfileName | None]:
    """Whether a pattern matches `name` (rule 3), and the latency preset it maps to (None: the
    scenario's own model serves it)."""
    if name in served_names(model):
        return False, None
    for pattern, profile in model.config.serve.model_names.items():
        if fnmatch.fnmatchcase(name, pattern):
            return True, None if profile == model.config.profile else profile
    return False, None


def model_body(body: Mapping[str, Any], model: MockModel, strict: bool, *,
               matched: bool = False) -> Mapping[str, Any]:
    """`body` as `model` is to see it (rules 3 and 4); `body` itself if unchanged. `matched`:
    the name matched a pattern, so it is served even when strict."""
    changes: dict[str, Any] = {}
    if (matched or not strict) and body["model"] not in served_names(model):
        changes["model"] = model.name
    messages = body["messages"]
    if any(isinstance(m, dict) and m.get("role") == "system" for m in messages):
        messages = [
            m for m in messages if not (isinstance(m, dict) and m.get("role") == "system")
        ]
    merged = merged_turns(messages)
    if merged is not body["messages"]:
        changes["messages"] = merged
    return {**body, **changes} if changes else body


def count_tokens(body: Mapping[str, Any]) -> dict[str, int]:
    """The answer to `POST /v1/messages/count_tokens` (rule 1)."""
    return {"input_tokens": InputTokenCounter()(body, None)}


ModelShape = Literal["anthropic", "openai"]


def model_shape(headers: Mapping[str, str]) -> ModelShape:
    """Which API's model listing a client expects, by its headers (rule 2; names in lower case)."""
    return "anthropic" if "anthropic-version" in headers else "openai"


def model_info(name: str, shape: ModelShape = "anthropic") -> dict[str, Any]:
    if shape == "openai":
        return {"id": name, "object": "model", "created": CREATED_UNIX, "owned_by": OWNER}
    return {"type": "model", "id": name, "display_name": name, "created_at": CREATED_AT}


def model_list(model: MockModel, shape: ModelShape = "anthropic") -> dict[str, Any]:
    """The answer to `GET /v1/models` (rule 2)."""
    names = served_names(model)
    if shape == "openai":
        return {"object": "list", "data": [model_info(name, shape) for name in names]}
    return {
        "data": [model_info(name) for name in names],
        "has_more": False,
        "first_id": names[0],
        "last_id": names[-1],
    }
