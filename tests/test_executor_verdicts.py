"""Remembered schema verdicts: an input validated before gets the same verdict as a fresh
validation (remembered by the text an input was parsed from, or by the input written out), and
inputs that are not exactly their JSON text are always validated afresh."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sim.runtime.executor import _schema_problem, _validate, build_validators
from sim.runtime.tooldef import ToolDefinition

SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["path"],
    "additionalProperties": False,
}
VALIDATOR = build_validators({"Read": ToolDefinition("Read", SCHEMA)})["Read"]
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
    fresh = _validate(VALIDATOR, tool_input)
    assert _schema_problem(VALIDATOR, tool_input) == fresh
    assert _schema_problem(VALIDATOR, json.loads(json.dumps(tool_input))) == fresh  # remembered


@pytest.mark.parametrize("tool_input", INPUTS, ids=json.dumps)
def test_a_verdict_remembered_by_the_parsed_text_is_a_fresh_one(tool_input: dict[str, Any]) -> None:
    fresh = _validate(VALIDATOR, tool_input)
    text = json.dumps(tool_input, indent=1)  # not how the executor would write it out
    assert _schema_problem(VALIDATOR, json.loads(text), text) == fresh
    assert _schema_problem(VALIDATOR, json.loads(text), text) == fresh  # remembered


def test_inputs_unlike_their_json_text_are_validated_afresh() -> None:
    assert _schema_problem(VALIDATOR, {"path": "/a", "limit": 3}) is None
    # The same JSON text, but a tuple, an int key, a NaN: each is checked as it is.
    odd: list[dict[Any, Any]] = [
        {"path": ("/a",), "limit": 3},
        {"path": "/a", 1: 3},
        {"path": "/a", "limit": float("nan")},
    ]
    for tool_input in odd:
        assert _schema_problem(VALIDATOR, tool_input) == _validate(VALIDATOR, tool_input)
        assert _schema_problem(VALIDATOR, tool_input) is not None
