"""Inputs for the mock model: examples and generated inputs are valid, broken ones are not."""

from typing import Any

import pytest

from sim.randomness import stream
from sim.tools.catalogue import CATALOGUE_NAMES, catalogue
from sim.tools.inputs import sample_input, sample_invalid_input
from sim.tools.spec import ToolSpec

DEFAULT = catalogue("default")


def spec(schema: dict[str, Any], **fields: Any) -> ToolSpec:
    return ToolSpec.model_validate(
        {"name": "T", "duration": {"kind": "fixed", "ms": 1}, "input_schema": schema, **fields}
    )


@pytest.mark.parametrize("tool", DEFAULT, ids=lambda t: t.name)
def test_catalogue_inputs_validate_and_invalid_ones_do_not(tool: ToolSpec) -> None:
    rng = stream(1, "inputs", tool.name)
    for _ in range(50):
        assert tool.input_problem(sample_input(tool, rng)) is None
        invalid = sample_invalid_input(tool, rng)
        assert invalid is not None and tool.input_problem(invalid) is not None


def test_catalogue_matches_the_coding_agent_shape() -> None:
    by_name = {tool.name: tool for tool in DEFAULT}
    assert list(by_name) == ["Read", "Grep", "Glob", "Bash", "Edit", "Write", "WebFetch", "Task"]
    assert all(by_name[n].concurrency_safe for n in ("Read", "Grep", "Glob", "WebFetch", "Task"))
    assert not any(by_name[n].concurrency_safe for n in ("Bash", "Edit", "Write"))
    assert [n for n, t in by_name.items() if t.cancels_siblings] == ["Bash"]
    assert by_name["Task"].progress_every is not None
    assert by_name["WebFetch"].failures.total() > 0
    assert by_name["WebFetch"].duration.mean_ns() > 100 * by_name["Read"].duration.mean_ns()


def test_catalogue_names() -> None:
    assert catalogue("none") == ()
    assert set(CATALOGUE_NAMES) == {"default", "none"}
    with pytest.raises(ValueError, match="unknown catalogue"):
        catalogue("nope")


SCHEMAS: list[dict[str, Any]] = [
    {"type": "object"},
    {
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 30, "maxLength": 40},
            "n": {"type": "integer", "minimum": 3, "exclusiveMaximum": 6},
            "ratio": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
            "flag": {"type": "boolean"},
            "mode": {"enum": ["a", "b"]},
            "fixed": {"const": 7},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2},
            "nested": {
                "type": "object",
                "properties": {"x": {"type": ["null", "integer"]}},
                "required": ["x"],
            },
            "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        },
        "required": ["path", "n", "ratio", "tags", "nested"],
        "additionalProperties": False,
    },
]


@pytest.mark.parametrize("schema", SCHEMAS)
def test_generated_inputs_validate(schema: dict[str, Any]) -> None:
    s = spec(schema)
    rng = stream(2, "generated")
    for _ in range(100):
        assert s.input_problem(sample_input(s, rng)) is None


def test_generation_is_deterministic_per_stream() -> None:
    s = spec(SCHEMAS[1])
    first = [sample_input(s, stream(3, "g", i)) for i in range(20)]
    assert first == [sample_input(s, stream(3, "g", i)) for i in range(20)]
    assert len({repr(x) for x in first}) > 1


def test_examples_are_preferred_and_copied() -> None:
    s = spec(SCHEMAS[0], examples=[{"a": 1}])
    drawn = sample_input(s, stream(1, "e"))
    drawn["a"] = 2
    assert s.examples == [{"a": 1}]


def test_schema_that_accepts_everything_has_no_invalid_input() -> None:
    assert sample_invalid_input(spec({"type": "object"}), stream(1, "i")) is None
