"""ToolSpec validation and what the runtime sees of a tool."""

import datetime
import math
from typing import Any

import pytest
from pydantic import ValidationError

from toolturn.tools.spec import ToolSpec


def spec(**fields: Any) -> ToolSpec:
    return ToolSpec.model_validate({"name": "T", "duration": {"kind": "fixed", "ms": 1}, **fields})


def locations(error: pytest.ExceptionInfo[ValidationError]) -> set[tuple[Any, ...]]:
    return {tuple(detail["loc"]) for detail in error.value.errors()}


def test_definition_carries_the_runtime_facts() -> None:
    definition = spec(
        description="d", concurrency_safe=True, cancels_siblings=True, cancellable=False
    ).definition()
    assert (definition.name, definition.description) == ("T", "d")
    assert (definition.concurrency_safe, definition.cancels_siblings, definition.cancellable) == (
        True,
        True,
        False,
    )
    assert definition.to_api() == {
        "name": "T",
        "input_schema": {"type": "object"},
        "description": "d",
    }


@pytest.mark.parametrize("name", ["", "has space", "x" * 65, "dot.name"])
def test_name_follows_the_api_rule(name: str) -> None:
    with pytest.raises(ValidationError):
        spec(name=name)


def test_invalid_json_schema_is_rejected() -> None:
    with pytest.raises(ValidationError) as error:
        spec(
            input_schema={
                "type": "object",
                "properties": {"n": {"type": "integer", "minimum": "0"}},
            }
        )
    assert "not a valid JSON schema" in str(error.value)
    assert locations(error) == {("input_schema",)}


def test_schema_must_describe_an_object() -> None:
    with pytest.raises(ValidationError) as error:
        spec(input_schema={"type": "string"})
    assert "object schema" in str(error.value)


def test_failure_probabilities_may_not_exceed_one() -> None:
    with pytest.raises(ValidationError) as error:
        spec(failures={"error": 0.6, "hang": 0.5})
    assert locations(error) == {("failures",)}


def test_unknown_failure_kind_is_rejected() -> None:
    with pytest.raises(ValidationError) as error:
        spec(failures={"timeout": 0.1})
    assert locations(error) == {("failures", "timeout")}


def test_examples_must_match_the_schema() -> None:
    schema = {"type": "object", "properties": {"p": {"type": "string"}}, "required": ["p"]}
    with pytest.raises(ValidationError) as error:
        spec(input_schema=schema, examples=[{"p": "ok"}, {"q": 1}])
    assert locations(error) == {("examples", 1)}
    assert "'p' is a required property" in str(error.value)


def test_schema_the_generator_cannot_satisfy_needs_examples() -> None:
    schema = {"type": "object", "properties": {"id": {"type": "string", "pattern": "^[A-Z]{3}$"}}}
    with pytest.raises(ValidationError) as error:
        spec(input_schema=schema)
    assert locations(error) == {("input_schema", "properties", "id")}
    assert "give the tool `examples`" in str(error.value)
    assert spec(input_schema=schema, examples=[{"id": "ABC"}]).examples == [{"id": "ABC"}]


def test_fixed_zero_progress_gap_is_rejected() -> None:
    with pytest.raises(ValidationError) as error:
        spec(progress_every={"kind": "fixed", "ms": 0})
    assert locations(error) == {("progress_every",)}


def test_input_problem_reports_the_reason() -> None:
    s = spec(input_schema={"type": "object", "properties": {"n": {"type": "integer"}}})
    assert s.input_problem({"n": 1}) is None
    assert s.input_problem({"n": "x"}) == "'x' is not of type 'integer'"


@pytest.mark.parametrize(
    ("schema", "loc", "reason"),
    [
        ({"properties": {"a": {"$ref": "#/nope"}}}, ("input_schema", "properties", "a", "$ref"),
         "'#/nope' points nowhere in the schema"),
        ({"properties": {"a": {"$ref": "#anchor"}}}, ("input_schema", "properties", "a", "$ref"),
         "points nowhere"),
        # Fetched from the network by jsonschema's default registry, at every validation.
        ({"properties": {"a": {"$ref": "http://127.0.0.1:9/x.json"}}},
         ("input_schema", "properties", "a", "$ref"), "is outside the schema"),
        # A property named like a data keyword is still a schema.
        ({"properties": {"const": {"$ref": "#/nope"}}},
         ("input_schema", "properties", "const", "$ref"), "points nowhere"),
    ],
)  # fmt: skip
def test_a_reference_must_resolve_within_the_schema(
    schema: dict[str, Any], loc: tuple[Any, ...], reason: str
) -> None:
    # With examples the generator is not used, so only this check stands between the reference
    # and the first validation that reaches it, during a run.
    with pytest.raises(ValidationError) as error:
        spec(input_schema={"type": "object", **schema}, examples=[{"a": 1}])
    [detail] = error.value.errors()
    assert detail["loc"] == loc
    assert reason in detail["msg"]


def test_references_within_the_schema_are_kept_and_followed() -> None:
    schema = {
        "type": "object",
        "$defs": {"n": {"type": "integer"}},
        # A "$ref" inside const is data, not a reference.
        "properties": {"a": {"$ref": "#/$defs/n"}, "b": {"const": {"$ref": "nowhere"}}},
    }
    s = spec(input_schema=schema, examples=[{"a": 1}, {"b": {"$ref": "nowhere"}}])
    assert s.input_problem({"a": "x"}) == "'x' is not of type 'integer'"


def test_draft_03_is_refused() -> None:
    # Its `required` is a flag of each property, not a list the generator reads.
    with pytest.raises(ValidationError) as error:
        spec(input_schema={"$schema": "http://json-schema.org/draft-03/schema#", "type": "object"})
    assert locations(error) == {("input_schema",)}
    assert "draft-03 is not supported" in str(error.value)


def nested_lists(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("fields", "loc", "reason"),
    [
        ({"examples": [{"a": datetime.date(1979, 5, 27)}]}, ("examples", 0, "a"),
         "a TOML date is not a JSON value"),
        ({"examples": [{"a": [1, datetime.time(7, 32)]}]}, ("examples", 0, "a", 1),
         "a TOML time is not a JSON value"),
        ({"examples": [{"a": math.inf}]}, ("examples", 0, "a"), "inf is not a JSON number"),
        ({"input_schema": {"type": "object", "default": {"a": math.nan}}},
         ("input_schema", "default", "a"), "nan is not a JSON number"),
        ({"examples": [{"a": nested_lists(64)}]}, ("examples", 0, "a", *[0] * 63),
         "nested more than 64 levels deep"),
    ],
)  # fmt: skip
def test_inputs_and_schemas_hold_json_values_only(
    fields: dict[str, Any], loc: tuple[Any, ...], reason: str
) -> None:
    with pytest.raises(ValidationError) as error:
        spec(**fields)
    [detail] = error.value.errors()
    assert detail["loc"] == loc
    assert reason in detail["msg"]


@pytest.mark.parametrize(
    "fields",
    [
        {"concurrency_safe": "yes"},
        {"cancellable": 1},
        {"failures": {"error": True}},
        {"result_chars": {"kind": "fixed", "n": 2.0}},
        {"duration": {"kind": "fixed", "ms": "5"}},
    ],
)
def test_values_of_the_wrong_type_are_not_converted(fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        spec(**fields)


def test_an_integer_is_a_float() -> None:
    assert spec(duration={"kind": "fixed", "ms": 5}).duration.mean_ns() == 5_000_000


def test_concurrency_safety_declared_per_call() -> None:
    read_only = {"field": "command", "matches": r"(ls|cat|git status)(\s.*)?"}
    definition = spec(concurrency_safe_when=read_only).definition()
    assert definition.safe_for({"command": "ls -la"})
    assert definition.safe_for({"command": "git status"})
    assert not definition.safe_for({"command": "ls > listing"})  # a redirect
    assert not definition.safe_for({"command": "cat a; rm b"})  # a separator
    assert not definition.safe_for({"command": "rm -rf /"})
    assert not definition.safe_for({"other": "ls"})
    assert spec().definition().safe_for({"command": "ls"}) is False  # concurrency_safe's default


def test_a_bad_safety_pattern_is_refused_where_it_is() -> None:
    with pytest.raises(ValidationError) as error:
        spec(concurrency_safe_when={"field": "command", "matches": "(ls"})
    assert locations(error) == {("concurrency_safe_when", "matches")}
    assert "not a regular expression" in str(error.value)
