"""Tool inputs for the mock model: valid ones to call a tool with, invalid ones for the fault.

A spec's `examples` are the preferred source of valid inputs (the catalogue gives every tool a few
realistic ones). Without examples, an input is generated from the JSON schema; the generator knows
the common keywords (type, properties, required, enum, const, string lengths, numeric bounds, array
sizes, anyOf / oneOf, the boolean schemas true and false) and a spec whose schema it cannot
satisfy is rejected when it is loaded, so generation never fails during a run. So is a schema whose
inputs could grow past `MAX_COUNT` values and characters (`minLength = 1e9`, or arrays of arrays of
a thousand items each): the generator would build them however long it took.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any, Literal, Protocol, overload

import numpy as np

from toolturn.limits import MAX_COUNT
from toolturn.randomness import below

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
# The widest range of integers drawn from: `below` scales a float by it.
_WIDEST_INTEGER_RANGE = int(sys.float_info.max)
# A place within a schema: keys and list indices.
Path = tuple[str | int, ...]


class InputSpec(Protocol):
    """What inputs are made from: a tool's input schema, its example inputs and the schema's
    verdict on a candidate (`toolturn.tools.spec.ToolSpec` is one). A protocol, not the spec itself,
    because a spec checks when it is loaded that inputs can be generated from it: the spec
    depends on this module, never the other way."""

    @property
    def input_schema(self) -> dict[str, Any]: ...

    @property
    def examples(self) -> Sequence[dict[str, Any]]: ...

    def input_problem(self, candidate: dict[str, Any]) -> str | None: ...


class InputGenerationError(ValueError):
    """The schema uses something the generator cannot satisfy (a pattern, a format, ...), at
    `path` within it (keys and list indices; empty for the whole schema)."""

    def __init__(self, reason: str, path: Path = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path = path

    def under(self, *keys: str | int) -> InputGenerationError:
        """The same error, seen from the schema `keys` lead into."""
        return InputGenerationError(self.reason, (*keys, *self.path))


def sample_input(spec: InputSpec, rng: np.random.Generator) -> dict[str, Any]:
    """A valid input for `spec`: one of its examples, or generated from its schema."""
    if spec.examples:
        return dict(spec.examples[below(rng, len(spec.examples))])
    generated = _generate(spec.input_schema, rng)
    assert isinstance(generated, dict)  # an object schema generates a dict
    return generated


def sample_invalid_input(spec: InputSpec, rng: np.random.Generator) -> dict[str, Any] | None:
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


def check_inputs_can_be_generated(spec: InputSpec) -> None:
    """Raise InputGenerationError, located in the schema and saying why, if valid inputs cannot be
    generated from the spec's schema."""
    try:
        _largest(spec.input_schema)
    except InputGenerationError as error:
        raise InputGenerationError(
            f"{error.reason}; give the tool `examples`, or smaller sizes", error.path
        ) from None
    rng = np.random.default_rng(0)
    for _ in range(_GENERATION_TRIALS):
        try:
            candidate = _generate(spec.input_schema, rng)
        except InputGenerationError as error:
            raise InputGenerationError(
                f"cannot generate inputs from this schema ({error.reason}); give the tool "
                "`examples`",
                error.path,
            ) from None
        problem = spec.input_problem(candidate)
        if problem is not None:
            raise InputGenerationError(
                f"inputs generated from this schema fail it ({problem}); give the tool `examples`"
            )


def _first_type(schema: dict[str, Any] | bool) -> str | None:
    if isinstance(schema, bool):
        return None
    declared = schema.get("type")
    if isinstance(declared, list):
        non_null = [t for t in declared if t != "null"]
        return non_null[0] if non_null else (declared[0] if declared else None)
    return declared


def _accepts_nothing(schema: dict[str, Any] | bool) -> bool:
    return schema is False or (isinstance(schema, dict) and schema.get("enum") == [])


def _branch(schema: dict[str, Any]) -> tuple[str, int] | None:
    """The anyOf / oneOf branch generated from, as (keyword, index), or None.

    The first branch that accepts something: for oneOf, a later branch might overlap another and
    break "one".
    """
    for combinator in ("anyOf", "oneOf"):
        if combinator in schema:
            for index, branch in enumerate(schema[combinator]):
                if not _accepts_nothing(branch):
                    return combinator, index
            raise InputGenerationError("no branch accepts a value", (combinator,))
    return None


def _generate(schema: dict[str, Any] | bool, rng: np.random.Generator) -> Any:
    if schema is True:
        return _generate_word(rng)
    if schema is False:
        raise InputGenerationError("the schema false accepts no value")
    for unsupported in ("pattern", "format", "not", "allOf", "$ref", "patternProperties"):
        if unsupported in schema:
            raise InputGenerationError(f"the generator does not support {unsupported!r}")
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        if not schema["enum"]:
            raise InputGenerationError("an empty enum accepts no value", ("enum",))
        return schema["enum"][below(rng, len(schema["enum"]))]
    branch = _branch(schema)
    if branch is not None:
        try:
            return _generate(schema[branch[0]][branch[1]], rng)
        except InputGenerationError as error:
            raise error.under(*branch) from None
    return _generate_typed(schema, rng)


def _generate_typed(schema: dict[str, Any], rng: np.random.Generator) -> Any:
    """A value of the schema's (first) type, or a word for a schema without one."""
    kind = _first_type(schema)
    if kind == "object" or (kind is None and "properties" in schema):
        return _generate_object(schema, rng)
    if kind == "string":
        return _generate_string(schema, rng)
    if kind == "integer":
        lowest, highest = _bounds(schema, integer=True)
        return lowest + below(rng, min(highest - lowest + 1, _WIDEST_INTEGER_RANGE))
    if kind == "number":
        return _generate_number(schema, rng)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        return _generate_array(schema, rng)
    if kind == "null":
        return None
    # No type (a schema of constraints only, or true): any value will do, so a word.
    return _generate_word(rng)


def _generate_number(schema: dict[str, Any], rng: np.random.Generator) -> float:
    low, high = _bounds(schema, integer=False)
    if math.isinf(high - low):
        # numpy refuses a range wider than the largest float: draw from one half its size.
        return float(rng.uniform(low / 2, high / 2)) * 2
    return float(rng.uniform(low, high))


def _generate_word(rng: np.random.Generator) -> str:
    return _WORDS[below(rng, len(_WORDS))]


def _generate_object(schema: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    missing = required - properties.keys()
    if missing and schema.get("additionalProperties") is False:
        raise InputGenerationError(f"required keys without properties: {sorted(missing)}")
    result: dict[str, Any] = {}
    # Sorted, so the draws do not depend on how the schema's keys happen to be ordered.
    for key in sorted(properties):
        if key not in required and _accepts_nothing(properties[key]):
            continue  # a key that must not be given
        if key in required or rng.random() < 0.5:
            try:
                result[key] = _generate(properties[key], rng)
            except InputGenerationError as error:
                raise error.under("properties", key) from None
    for key in sorted(missing):
        result[key] = _generate_word(rng)
    return result


def _generate_string(schema: dict[str, Any], rng: np.random.Generator) -> str:
    min_length = int(schema.get("minLength", 1))
    max_length = int(schema.get("maxLength", max(min_length, 24)))
    if max_length < min_length:
        raise InputGenerationError("maxLength is below minLength")
    word = f"{_generate_word(rng)}-{below(rng, 1000)}"
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


def _array_sizes(schema: dict[str, Any]) -> tuple[int, int]:
    """The fewest and most items the generator puts in an array of `schema`."""
    min_items = int(schema.get("minItems", 0))
    return min_items, int(schema.get("maxItems", min_items + 3))


def _generate_array(schema: dict[str, Any], rng: np.random.Generator) -> list[Any]:
    min_items, max_items = _array_sizes(schema)
    if max_items < min_items:
        raise InputGenerationError("maxItems is below minItems")
    items = schema.get("items", {"type": "string"})
    if items is False:
        if min_items > 0:
            raise InputGenerationError("items = false accepts no item, yet minItems is above 0")
        return []
    if isinstance(items, list):
        raise InputGenerationError("the generator does not support a list of items schemas")
    count = min_items + below(rng, max_items - min_items + 1)
    try:
        return [_generate(items, rng) for _ in range(count)]
    except InputGenerationError as error:
        raise error.under("items") from None


def _largest(schema: dict[str, Any] | bool, path: Path = ()) -> int:
    """The most values and characters an input generated from `schema` can hold, following the
    generator's choices; raises InputGenerationError where it passes `MAX_COUNT`, before the
    generator would build such an input."""
    size = 1
    if isinstance(schema, bool) or "const" in schema or "enum" in schema:
        return size
    try:
        branch = _branch(schema)
    except InputGenerationError:
        return size  # nothing to generate: the generator says so
    kind = _first_type(schema)
    if branch is not None:
        size = _largest(schema[branch[0]][branch[1]], (*path, *branch))
    elif kind == "object" or (kind is None and "properties" in schema):
        properties: dict[str, Any] = schema.get("properties", {})
        size += sum(_largest(sub, (*path, "properties", key)) for key, sub in properties.items())
        size += len(set(schema.get("required", [])) - properties.keys())
    elif kind == "string":
        size = int(schema.get("minLength", 1))
    elif kind == "array":
        items = schema.get("items", {"type": "string"})
        if not isinstance(items, list):
            size += max(_array_sizes(schema)) * _largest(items, (*path, "items"))
    if size > MAX_COUNT:
        raise InputGenerationError(
            f"inputs generated from this schema could hold {size:,} values and characters "
            f"(at most {MAX_COUNT:,})",
            path,
        )
    return size
