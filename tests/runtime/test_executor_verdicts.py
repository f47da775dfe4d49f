"""Remembered schema verdicts: an input validated before gets the same verdict as a fresh
validation (remembered by the text an input was parsed from, or by the input written out), and
inputs that are not exactly their JSON text are always validated afresh."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolturn.runtime.tooldef import ToolDefinition
from toolturn.runtime.validation import VERDICTS_PER_SCHEMA, InputValidation, validate

SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["path"],
    "additionalProperties": False,
}
VALIDATION = InputValidation([ToolDefinition("Read", SCHEMA)])
VALIDATOR = VALIDATION.validator("Read")
INPUTS: list[dict[str, Any]] = [
    {"path": "/a"},
    {"path": "/a", "limit": 3},
    {"path": 3},
    {"limit": 3},
    {"path": "/a", "limit": 2.5},
    {"path": "/a", "limit": True},
    {"path": "/a", "x": 1, "y": 2},
    {"y": 2, "path": "/a", "x": 1},
]


@pytest.mark.parametrize("tool_input", INPUTS, ids=json.dumps)
def test_a_remembered_verdict_is_a_fresh_one(tool_input: dict[str, Any]) -> None:
    fresh = validate(VALIDATOR, tool_input)
    assert VALIDATION.problem("Read", tool_input) == fresh
    assert VALIDATION.problem("Read", json.loads(json.dumps(tool_input))) == fresh  # remembered


@pytest.mark.parametrize("tool_input", INPUTS, ids=json.dumps)
def test_a_verdict_remembered_by_the_parsed_text_is_a_fresh_one(tool_input: dict[str, Any]) -> None:
    fresh = validate(VALIDATOR, tool_input)
    text = json.dumps(tool_input, indent=1)  # not how the executor would write it out
    assert VALIDATION.problem("Read", json.loads(text), text) == fresh
    assert VALIDATION.problem("Read", json.loads(text), text) == fresh  # remembered


def test_inputs_unlike_their_json_text_are_validated_afresh() -> None:
    assert VALIDATION.problem("Read", {"path": "/a", "limit": 3}) is None
    # The same JSON text, but a tuple, an int key, a NaN: each is checked as it is.
    odd: list[dict[Any, Any]] = [
        {"path": ("/a",), "limit": 3},
        {"path": "/a", 1: 3},
        {"path": "/a", "limit": float("nan")},
    ]
    for tool_input in odd:
        assert VALIDATION.problem("Read", tool_input) == validate(VALIDATOR, tool_input)
        assert VALIDATION.problem("Read", tool_input) is not None


def test_tools_with_one_schema_share_its_validator_and_others_do_not() -> None:
    validation = InputValidation(
        [
            ToolDefinition("Read", SCHEMA),
            ToolDefinition("View", json.loads(json.dumps(SCHEMA))),  # equal, not the same
            ToolDefinition("Bash", {"type": "object", "required": ["command"]}),
        ]
    )
    assert validation.validator("Read") is validation.validator("View")
    assert validation.validator("Bash") is not validation.validator("Read")
    assert validation.tool_names() == {"Read", "View", "Bash"}
    assert validation.problem("Bash", {"path": "/a"}) == "'command' is a required property"
    assert validation.problem("View", {"path": "/a"}) is None


def test_verdicts_past_the_bound_are_forgotten_and_stay_right() -> None:
    validation = InputValidation([ToolDefinition("Read", SCHEMA)])
    for number in range(VERDICTS_PER_SCHEMA + 3):
        assert validation.problem("Read", {"path": f"/{number}"}) is None
    assert validation.problem("Read", {"path": 0}) == validate(VALIDATOR, {"path": 0})


def test_two_validations_share_nothing() -> None:
    # No process-wide state: a validation built for the same tools compiles its own.
    tools = [ToolDefinition("Read", SCHEMA)]
    assert InputValidation(tools).validator("Read") is not InputValidation(tools).validator("Read")
