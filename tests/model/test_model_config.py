"""The [model] table: defaults, and errors that name the field."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from toolturn.model.config import ModelConfig
from toolturn.model.model import MockModel


def error_locations(table: dict[str, Any]) -> list[tuple[str | int, ...]]:
    with pytest.raises(ValidationError) as caught:
        ModelConfig.model_validate(table)
    return [error["loc"] for error in caught.value.errors()]


def test_defaults_are_a_quiet_sonnet_with_a_generated_script() -> None:
    config = ModelConfig()
    assert config.profile == "sonnet" and config.tool_json_streaming == "pairs"
    assert config.script.kind == "generated" and config.faults.http_529 == 0


@pytest.mark.parametrize(
    ("table", "location"),
    [
        ({"profle": "haiku"}, ("profle",)),
        ({"profile": "gpt"}, ("profile",)),
        ({"latency": {"ttft": {"kind": "fixed", "ms": -1}}}, ("latency", "ttft", "fixed", "ms")),
        ({"latency": {"token_gap": {"kind": "fixed", "ms": 5}, "tokens_per_s": 50}}, ("latency",)),
        ({"faults": {"http_529": 1.5}}, ("faults", "http_529")),
        ({"faults": {"cut_everything": 0.1}}, ("faults", "cut_everything")),
        ({"faults": {"fallback": "gpt"}}, ("faults", "fallback")),
        ({"endpoint": {"refuse_status": 503}}, ("endpoint", "refuse_status")),
        ({"endpoint": {"capacity": 0}}, ("endpoint", "capacity")),
        ({"script": {"kind": "generated", "tool_calls": 0}}, ("script", "generated", "tool_calls")),
        (
            {"script": {"kind": "generated", "end_probability": 2}},
            ("script", "generated", "end_probability"),
        ),
        ({"script": {"kind": "explicit", "responses": []}}, ("script", "explicit", "responses")),
        (
            {
                "script": {
                    "kind": "explicit",
                    "responses": [{"blocks": [{"type": "tool_use", "input": {}}]}],
                }
            },
            ("script", "explicit", "responses", 0, "blocks", 0, "tool_use", "name"),
        ),
        ({"tool_json_streaming": "bytes"}, ("tool_json_streaming",)),
    ],
)
def test_errors_name_the_field(table: dict[str, Any], location: tuple[str | int, ...]) -> None:
    assert location in error_locations(table)


def test_every_field_is_described() -> None:
    from toolturn.model import config

    models = (
        config.ModelConfig,
        config.LatencyConfig,
        config.EndpointConfig,
        config.FaultsConfig,
        config.GeneratedScript,
        config.ExplicitScript,
        config.ScriptedResponse,
        config.TextBlock,
        config.ThinkingBlock,
        config.ToolUseBlock,
    )
    for model in models:
        for name, field in model.model_fields.items():
            assert field.description or name in ("kind", "type"), f"{model.__name__}.{name}"


def test_a_generated_script_must_name_catalogue_tools() -> None:
    config = ModelConfig.model_validate({"script": {"kind": "generated", "tool_mix": {"Nope": 1}}})
    with pytest.raises(ValueError, match="Nope"):
        MockModel(config, 1, {})
