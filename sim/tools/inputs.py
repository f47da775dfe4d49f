"""Tool inputs for the mock model: valid ones to call a tool with, invalid ones for the fault.

A spec's `examples` are the preferred source of valid inputs (the catalogue gives every tool a few
realistic ones). Without examples, an input is generated from the JSON schema; the generator knows
the common keywords (type, properties, required, enum, const, string lengths, numeric bounds, array
sizes, anyOf / oneOf) and a spec whose schema it cannot satisfy is rejected when it is loaded, so
generation never fails during a run.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from sim.randomness import below

if TYPE_CHECKING:
    from sim.tools.spec import ToolSpec

# Generated strings are short words, recognisable as made up in a transcript.
_WORDS = ("alpha", "beta", "gamma", "delta", "sigma", "omega", "kappa", "lambda")
# A value of the wrong JSON type for each type, for making inputs that fail their schema.
_WRONG_TYPE_VALUE: dict[str, Any] = {
    "string": 12345,
    "integer": "not a number",
    "number": "not a number",
    "boolean": "yes",
    "array": "not a list",
    "object": "not an object",
    "null": "not null",
}
# How many generated inputs must validate before a schema is trusted to the generator.
_GENERATION_TRIALS = 8


class InputGenerationError(ValueError):
    """The schema uses something the generator cannot satisfy (a pattern, a format, ...)."""


def sample_input(spec: ToolSpec, rng: np.random.Generator) -> dict[str, Any]:
    """A valid input for `spec`: one of its examples, or generated from its schema."""
    if spec.examples:
        return dict(spec.examples[below(rng, len(spec.examples))])
    generated = _generate(spec.input_schema, rng)
    assert isinstance(generated, dict)  # an object schema generates a dict
    return generated


def sample_invalid_input(spec: ToolSpec, rng: np.random.Generator) -> dict[str, Any] | None:
    """An input that fails `spec`'s schema, made by breaking a valid one, or None when the schema
    accepts every object (nothing to break).

    Candidate breakages, tried in an order drawn from `rng`: drop a required key, give a property a
    value of the wrong type, add an unknown key where additional properties are forbidden.
    """
    valid = sample_input(spec, rng)
    schema = spec.input_schema
    properties: dict[str, Any] = schema.get("properties", {})
    candidates: list[dict[str, Any]] = []
    for key in schema.get("required", []):
        candidates.append({k: v for k, v in valid.items() if k != key})
    for key, subschema in sorted(properties.items()):
        wrong = _WRONG_TYPE_VALUE.get(_first_type(subschema) or "")
        if wrong is not None:
            candidates.append({**valid, key: wrong})
    if schema.get("additionalProperties") is False:
        candidates.append({**valid, "unexpected_key": True})
    for index in rng.permutation(len(candidates)):
        candidate = candidates[int(index)]
        if spec.input_problem(candidate) is not None:
            return candidate
    return None


def check_inputs_can_be_generated(spec: ToolSpec) -> None:
    """Raise ValueError if valid inputs cannot be generated from the spec's schema."""
    rng = np.random.default_rng(0)
    for _ in range(_GENERATION_TRIALS):
        try:
            candidate = _generate(spec.input_schema, rng)
        except InputGenerationError as error:
            raise ValueError(
                f"cannot generate inputs from this schema ({error}); give the tool `examples`"
            ) from None
        problem = spec.input_problem(candidate)
        if problem is not None:
            raise ValueError(
                f"inputs generated from this schema fail it ({problem}); give the tool `examples`"
            )


def _first_type(schema: dict[str, Any]) -> str | None:
    declared = schema.get("type")
    if isinstance(declared, list):
        non_null = [t for t in declared if t != "null"]
        return non_null[0] if non_null else (declared[0] if declared else None)
    return declared


def _generate(schema: dict[str, Any], rng: np.random.Generator) -> Any:
    for unsupported in ("pattern", "format", "not", "allOf", "$ref", "patternProperties"):
        if unsupported in schema:
            raise InputGenerationError(f"the generator does not support {unsupported!r}")
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][below(rng, len(schema["enum"]))]
    for combinator in ("anyOf", "oneOf"):
        if combinator in schema:
            # The first branch: for oneOf, a later branch might overlap another and break "one".
            return _generate(schema[combinator][0], rng)
    kind = _first_type(schema)
    if kind == "object" or (kind is None and "properties" in schema):
        return _generate_object(schema, rng)
    if kind == "string":
        return _generate_string(schema, rng)
    if kind == "integer":
        lowest, highest = _bounds(schema, integer=True)
        return lowest + below(rng, highest - lowest + 1)
    if kind == "number":
        low, high = _bounds(schema, integer=False)
        return float(rng.uniform(low, high))
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        return _generate_array(schema, rng)
    if kind == "null":
        return None
    raise InputGenerationError(f"no type to generate (type = {schema.get('type')!r})")


def _generate_object(schema: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    missing = required - properties.keys()
    if missing and schema.get("additionalProperties") is False:
        raise InputGenerationError(f"required keys without properties: {sorted(missing)}")
    result: dict[str, Any] = {}
    # Sorted, so the draws do not depend on how the schema's keys happen to be ordered.
    for key in sorted(properties):
        if key in required or rng.random() < 0.5:
            result[key] = _generate(properties[key], rng)
    for key in sorted(missing):
        result[key] = _WORDS[below(rng, len(_WORDS))]
    return result


def _generate_string(schema: dict[str, Any], rng: np.random.Generator) -> str:
    min_length = int(schema.get("minLength", 1))
    max_length = int(schema.get("maxLength", max(min_length, 24)))
    if max_length < min_length:
        raise InputGenerationError("maxLength is below minLength")
    word = f"{_WORDS[below(rng, len(_WORDS))]}-{below(rng, 1000)}"
    return word.ljust(min_length, "x")[:max_length]


@overload
def _bounds(schema: dict[str, Any], *, integer: Literal[True]) -> tuple[int, int]: ...
@overload
def _bounds(schema: dict[str, Any], *, integer: Literal[False]) -> tuple[float, float]: ...
def _bounds(schema: dict[str, Any], *, integer: bool) -> tuple[float, float]:
    step = 1 if integer else 1e-6
    if "minimum" in schema:
        low = schema["minimum"]
    elif "exclusiveMinimum" in schema:
        low = schema["exclusiveMinimum"] + step
    else:
        low = 0
    if "maximum" in schema:
        high = schema["maximum"]
    elif "exclusiveMaximum" in schema:
        high = schema["exclusiveMaximum"] - step
    else:
        high = low + 100
    if integer:
        low, high = math.ceil(low), math.floor(high)
    if high < low:
        raise InputGenerationError("the numeric bounds leave no value")
    return low, high


def _generate_array(schema: dict[str, Any], rng: np.random.Generator) -> list[Any]:
    min_items = int(schema.get("minItems", 0))
    max_items = int(schema.get("maxItems", min_items + 3))
    if max_items < min_items:
        raise InputGenerationError("maxItems is below minItems")
    items = schema.get("items", {"type": "string"})
    count = min_items + below(rng, max_items - min_items + 1)
    return [_generate(items, rng) for _ in range(count)]
