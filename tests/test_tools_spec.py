"""ToolSpec validation and what the runtime sees of a tool."""

from typing import Any

import pytest
from pydantic import ValidationError

from sim.tools.spec import ToolSpec


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
    assert locations(error) == {("input_schema",)}
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
