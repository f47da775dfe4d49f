"""Inputs for the mock model: examples and generated inputs are valid, broken ones are not."""

from typing import Any

import pytest
from pydantic import ValidationError

from toolturn.randomness import stream
from toolturn.tools.catalogue import CATALOGUE_NAMES, catalogue
from toolturn.tools.inputs import sample_input, sample_invalid_input
from toolturn.tools.spec import ToolSpec

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


def test_boolean_subschemas_are_generated_from() -> None:
    # true accepts anything, false nothing: an optional key that must be absent, an item never
    # given. Both are valid JSON Schema; they crashed the generator.
    s = spec(
        {
            "type": "object",
            "properties": {
                "anything": True,
                "never": False,
                "none_of": {"enum": []},
                "list": {"type": "array", "items": True},
                "empty": {"type": "array", "items": False},
                "either": {"anyOf": [False, True]},
            },
            "required": ["anything", "list", "empty", "either"],
        }
    )
    rng = stream(2, "boolean")
    for _ in range(50):
        generated = sample_input(s, rng)
        assert s.input_problem(generated) is None
        assert "never" not in generated and "none_of" not in generated
        assert generated["empty"] == []
    assert sample_invalid_input(s, rng) is not None


def test_breaking_an_input_skips_boolean_property_schemas() -> None:
    s = spec(
        {"type": "object", "properties": {"a": True, "b": {"type": "string"}}, "required": ["a"]},
        examples=[{"a": 1, "b": "x"}],
    )
    broken = [sample_invalid_input(s, stream(1, "break", n)) for n in range(20)]
    assert all(b is not None and s.input_problem(b) is not None for b in broken)


@pytest.mark.parametrize("kind", ["number", "integer"])
def test_bounds_as_wide_as_floats_go_are_generated_from(kind: str) -> None:
    s = spec(
        {
            "type": "object",
            "properties": {"a": {"type": kind, "minimum": -1.7e308, "maximum": 1.7e308}},
            "required": ["a"],
        }
    )
    rng = stream(2, "wide")
    assert all(s.input_problem(sample_input(s, rng)) is None for _ in range(50))


def test_a_schema_without_a_type_generates_a_word() -> None:
    s = spec({"type": "object", "properties": {"a": {}}, "required": ["a"]})
    assert isinstance(sample_input(s, stream(1, "typeless"))["a"], str)


@pytest.mark.parametrize(
    ("subschema", "loc", "reason"),
    [
        (False, ("input_schema", "properties", "a"), "the schema false accepts no value"),
        ({"enum": []}, ("input_schema", "properties", "a", "enum"), "empty enum"),
        ({"anyOf": [False, {"enum": []}]}, ("input_schema", "properties", "a", "anyOf"),
         "no branch accepts a value"),
        ({"type": "array", "items": {"type": "object", "properties": {"b": False},
                                     "required": ["b"]}},
         ("input_schema", "properties", "a", "items", "properties", "b"), "accepts no value"),
        ({"type": "array", "items": False, "minItems": 1}, ("input_schema", "properties", "a"),
         "items = false accepts no item"),
        # What the generator would build: 1e8 items, a 1e9-character string, 1e6 arrays of 1e6.
        ({"type": "array", "minItems": 100_000_000}, ("input_schema", "properties", "a"),
         "could hold 100,000,004 values and characters (at most 1,000,000)"),
        ({"type": "array", "maxItems": 10**9}, ("input_schema", "properties", "a"),
         "could hold 1,000,000,001"),
        ({"type": "string", "minLength": 10**9}, ("input_schema", "properties", "a"),
         "could hold 1,000,000,000"),
        ({"type": "array", "maxItems": 1000, "items": {"type": "array", "maxItems": 1000}},
         ("input_schema", "properties", "a"), "could hold 1,001,001"),
        ({"anyOf": [{"type": "array", "items": {"type": "string", "minLength": 10**6}}]},
         ("input_schema", "properties", "a", "anyOf", 0), "could hold 3,000,001"),
    ],
)  # fmt: skip
def test_a_schema_the_generator_cannot_satisfy_is_refused_where_it_fails(
    subschema: Any, loc: tuple[Any, ...], reason: str
) -> None:
    schema = {"type": "object", "properties": {"a": subschema}, "required": ["a"]}
    with pytest.raises(ValidationError) as error:
        spec(schema)
    [detail] = error.value.errors()
    assert detail["loc"] == loc
    assert reason in detail["msg"] and "give the tool `examples`" in detail["msg"]


def test_a_list_of_items_schemas_is_refused() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"a": {"type": "array", "items": [{"type": "string"}]}},
        "required": ["a"],
    }
    with pytest.raises(ValidationError) as error:
        spec(schema)
    [detail] = error.value.errors()
    assert detail["loc"] == ("input_schema", "properties", "a")
    assert "does not support a list of items schemas" in detail["msg"]
