"""A simulated tool described by data: its schema, how it may run, how long it takes, how it fails.

A `ToolSpec` is what a scenario's `[[tools.define]]` entry (or a catalogue entry) validates to.
What the runtime sees of it is `ToolSpec.definition()`; the rest (durations, failures, permission,
result size) is for the driver hosting the tool, which draws one call's plan with
`toolturn.tools.execution.sample_call`.

    [[tools.define]]
    name = "Lint"
    input_schema = { type = "object", properties = { path = { type = "string" } } }
    concurrency_safe = true
    duration = { kind = "lognormal", median_ms = 400, sigma = 0.5 }
    failures = { error = 0.1 }
    permission = { mode = "ask", decision_delay = { kind = "fixed", ms = 2000 } }
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Literal

import jsonschema
import referencing
import referencing.exceptions
import referencing.jsonschema
from jsonschema.exceptions import SchemaError, best_match
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from toolturn.counts import Count, fixed_count
from toolturn.distributions import Distribution, Fixed, fixed_ms
from toolturn.field_problems import FieldProblem, Location, raise_at, raise_problems
from toolturn.fields import chance
from toolturn.runtime.recovery import SHELL_METACHARACTERS, InputPattern
from toolturn.runtime.tooldef import ToolDefinition
from toolturn.tools.inputs import InputGenerationError, check_inputs_can_be_generated
from toolturn.tools.json_values import JsonObject

# The Messages API's rule for tool names.
TOOL_NAME_PATTERN = r"^[a-zA-Z0-9_-]{1,64}$"
# Schema keywords whose values are data, not schemas: a "$ref" inside them is not a reference.
_DATA_KEYWORDS = frozenset({"const", "enum", "examples", "default"})
# Schema keywords whose values map names to schemas: their keys are names, not keywords.
_SCHEMA_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)


class ToolFailures(BaseModel):
    """Per-call probabilities of each way a call can fail; what is left over is success."""

    # Strict, as every table of a scenario (see toolturn.scenario.schema._Section).
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)

    error: float = chance("The tool runs and returns an is_error result.")
    exception: float = chance("The tool raises instead of returning a result.")
    hang: float = chance("The tool never finishes; only cancellation ends it.")

    def total(self) -> float:
        return self.error + self.exception + self.hang


class Permission(BaseModel):
    """Whether a call may run: always, never, or after asking the user (which takes time)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)

    mode: Literal["allow", "deny", "ask"] = Field(
        default="allow",
        description="allow: runs at once; deny: always refused; ask: the user decides.",
    )
    decision_delay: Distribution = Field(
        default_factory=lambda: fixed_ms(0),
        description="How long the user takes to decide (mode = 'ask' only; ignored otherwise).",
    )
    deny_probability: float = chance("Chance the user refuses (mode = 'ask' only).")


class SafeWhen(BaseModel):
    """Per-call concurrency safety, declared: a call is safe when the string at `field` of its
    input fully matches the regular expression `matches` and holds none of the characters of
    `forbid` (by default redirects, pipes, separators and substitutions). For a shell:
    `{ field = "command", matches = "(ls|cat|git status)(\\s.*)?" }`."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)

    field: str = Field(min_length=1, description="The input's string field to look at.")
    matches: str = Field(description="A Python regular expression the whole value must match.")
    forbid: str = Field(
        default=SHELL_METACHARACTERS,
        description="Characters that make the call unsafe wherever they appear.",
    )

    @field_validator("matches")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        try:
            re.compile(pattern)
        except re.error as error:
            raise ValueError(f"not a regular expression: {error}") from None
        return pattern

    def predicate(self) -> InputPattern:
        return InputPattern(self.field, self.matches, self.forbid)


class ToolSpec(BaseModel):
    """One simulated tool. Cross-field rules: failure probabilities sum to at most 1; every example
    input matches the schema; without examples, inputs can be generated from the schema."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)

    name: str = Field(pattern=TOOL_NAME_PATTERN, description="The name the model calls it by.")
    description: str = Field(default="", description="Shown to the model in the tools parameter.")
    input_schema: JsonObject = Field(
        default_factory=lambda: {"type": "object"},
        description="JSON schema of the input (an object schema, as the Messages API requires).",
    )
    examples: list[JsonObject] = Field(
        default_factory=list,
        description="Valid inputs the mock model picks from; without them inputs are generated "
        "from input_schema.",
    )
    concurrency_safe: bool = Field(
        default=False, description="May run beside other concurrency-safe calls."
    )
    concurrency_safe_when: SafeWhen | None = Field(
        default=None,
        description="Concurrency safety per call, from its input (over concurrency_safe).",
    )
    cancels_siblings: bool = Field(
        default=False, description="An error in this tool cancels the other calls of the batch."
    )
    cancellable: bool = Field(
        default=True, description="A user interrupt may cancel it while it runs."
    )
    duration: Distribution = Field(description="Time from start to result (or to the failure).")
    progress_every: Distribution | None = Field(
        default=None, description="Gap between progress events while running; none: no progress."
    )
    failures: ToolFailures = Field(
        default_factory=ToolFailures, description="Probabilities of each failure kind per call."
    )
    permission: Permission = Field(
        default_factory=Permission, description="Permission decision before the call runs."
    )
    result_chars: Count = Field(
        default_factory=lambda: fixed_count(200),
        description="Length in characters of a successful result's text.",
    )

    _validator: jsonschema.protocols.Validator = PrivateAttr()

    @field_validator("input_schema")
    @classmethod
    def _is_a_json_object_schema(cls, schema: dict[str, Any]) -> dict[str, Any]:
        validator_class = jsonschema.validators.validator_for(
            schema, default=jsonschema.Draft202012Validator
        )
        try:
            validator_class.check_schema(schema)
        except SchemaError as error:
            where = "/".join(map(str, error.absolute_path)) or "the top level"
            raise ValueError(f"not a valid JSON schema: {error.message} (at {where})") from None
        if validator_class is jsonschema.Draft3Validator:
            # Its `required` is a flag of each property, which nothing here reads.
            raise ValueError("JSON Schema draft-03 is not supported: use draft-04 or later")
        if schema.get("type") != "object":
            raise ValueError('the Messages API needs an object schema: set type = "object"')
        raise_problems("ToolSpec", _unresolved_references(schema))
        return schema

    @field_validator("progress_every")
    @classmethod
    def _progress_gap_is_positive(cls, gap: Distribution | None) -> Distribution | None:
        if isinstance(gap, Fixed) and gap.ms <= 0:
            raise ValueError("a fixed progress gap must be above 0 ms")
        return gap

    @model_validator(mode="after")
    def _consistent(self) -> ToolSpec:
        total = self.failures.total()
        if total > 1:
            raise_at("ToolSpec", ("failures",), f"the probabilities sum to {total:g}, above 1")
        self._validator = jsonschema.validators.validator_for(
            self.input_schema, default=jsonschema.Draft202012Validator
        )(self.input_schema)
        for index, example in enumerate(self.examples):
            problem = self.input_problem(example)
            if problem is not None:
                raise_at("ToolSpec", ("examples", index), f"does not match input_schema: {problem}")
        if not self.examples:
            try:
                check_inputs_can_be_generated(self)
            except InputGenerationError as error:
                raise_at("ToolSpec", ("input_schema", *error.path), error.reason)
        return self

    def input_problem(self, candidate: dict[str, Any]) -> str | None:
        """Why `candidate` fails the input schema (the most relevant reason), or None if valid."""
        error = best_match(self._validator.iter_errors(candidate))
        return None if error is None else error.message

    def definition(self) -> ToolDefinition:
        """What the runtime sees of this tool."""
        return ToolDefinition(
            name=self.name,
            input_schema=self.input_schema,
            description=self.description,
            concurrency_safe=self.concurrency_safe,
            cancels_siblings=self.cancels_siblings,
            cancellable=self.cancellable,
            safe_when=None if self.concurrency_safe_when is None
            else self.concurrency_safe_when.predicate(),
        )


def _unresolved_references(schema: dict[str, Any]) -> list[FieldProblem]:
    """A problem for each `$ref` that does not resolve within `schema`, located at it.

    jsonschema resolves a reference when a validation first reaches it: one pointing nowhere
    would raise during a run, and one to a URL would be fetched from the network, which a
    deterministic offline simulation must not do.
    """
    specification = referencing.jsonschema.specification_with(
        schema.get("$schema", ""), default=referencing.jsonschema.DRAFT202012
    )
    # No retrieval: what is not in the schema is not found.
    resolver = referencing.Registry().resolver_with_root(specification.create_resource(schema))
    problems = []
    for loc, ref in _references(schema):
        try:
            resolver.lookup(ref)
        except referencing.exceptions.Unresolvable:
            reason = (
                "points nowhere in the schema"
                if ref.startswith("#")
                else "is outside the schema: only references within it (#...) resolve, "
                "nothing is fetched"
            )
            problems.append(FieldProblem(loc, f"{ref!r} {reason}", ref))
    return problems


def _references(schema: dict[str, Any]) -> Iterator[tuple[Location, str]]:
    """The location and value of each `$ref` of `schema`."""
    # (location, value, whether the value maps names to schemas)
    pending: list[tuple[Location, Any, bool]] = [((), schema, False)]
    while pending:
        loc, value, is_map = pending.pop()
        if isinstance(value, list):
            pending.extend(((*loc, index), item, False) for index, item in enumerate(value))
        elif isinstance(value, dict):
            for key, child in value.items():
                if is_map:
                    pending.append(((*loc, key), child, False))
                elif key == "$ref" and isinstance(child, str):
                    yield (*loc, key), child
                elif key not in _DATA_KEYWORDS:
                    pending.append(((*loc, key), child, key in _SCHEMA_MAPS))
