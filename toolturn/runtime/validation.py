"""Tool input against the tool's JSON schema (the executor's rule 1), and what makes it cheap.

`InputValidation(tools)` compiles one validator per tool and answers `problem(name, input)`:
why the input fails the tool's schema (its most relevant error), or None.

Who owns it: whoever builds loops. Checking a schema and building its validator costs
milliseconds, far more than a whole simulated turn, and a JSON-schema validation costs more than
the rest of a call's bookkeeping; a simulator builds thousands of loops (one per session) over a
few tools, whose calls repeat the same inputs again and again (the same file read, the same
search). So it builds one `InputValidation` and hands it to every loop
(`ToolTurnLoop(..., validation=...)`): each schema is compiled once and each verdict is
remembered across its sessions. A loop or executor given none makes its own. The object holds no
state but what it compiled and remembered: only the speed depends on who shares it.

Rules
-----
1. Tools with the same schema (equal as canonical JSON) share one validator and its verdicts.
2. A verdict is remembered by the input's JSON text: `input_json`, the text the input was parsed
   from, when given (the same text always parses to the same input); otherwise the input written
   out, and then only if it is exactly what that text says (it decodes back to an equal object).
   Any other input (a tuple, a key JSON cannot write, a NaN) is validated afresh every time.
3. At most `VERDICTS_PER_SCHEMA` verdicts are remembered per schema; past that they are
   forgotten all at once (a bound on memory, not a policy: the verdicts are the same).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import jsonschema.exceptions
import jsonschema.protocols
import jsonschema.validators

from toolturn.runtime.tooldef import ToolDefinition

__all__ = ["VERDICTS_PER_SCHEMA", "InputValidation", "validate"]

VERDICTS_PER_SCHEMA = 4096

# One encoder for every schema: `json.dumps` with an option builds a new encoder per call.
_CANONICAL_JSON = json.JSONEncoder(sort_keys=True).encode


class _Schema:
    """One compiled schema and the verdicts remembered for it: input JSON text -> why."""

    __slots__ = ("validator", "verdicts")

    def __init__(self, validator: jsonschema.protocols.Validator) -> None:
        self.validator = validator
        self.verdicts: dict[str, str | None] = {}


class InputValidation:
    """The schema validators of a set of tools, and the verdicts they gave (rules above).

    A malformed schema raises `jsonschema.exceptions.SchemaError` here, when it is built.
    """

    __slots__ = ("_schemas",)

    def __init__(self, tools: Iterable[ToolDefinition]) -> None:
        by_json: dict[str, _Schema] = {}
        self._schemas: dict[str, _Schema] = {}
        for tool in tools:
            schema_json = _CANONICAL_JSON(tool.input_schema)
            schema = by_json.get(schema_json)
            if schema is None:
                schema = by_json[schema_json] = _Schema(_compile(schema_json))
            self._schemas[tool.name] = schema

    def tool_names(self) -> frozenset[str]:
        """The names of the tools it validates the inputs of."""
        return frozenset(self._schemas)

    def validator(self, tool_name: str) -> jsonschema.protocols.Validator:
        """The compiled validator of a tool's schema; KeyError for a tool it does not know."""
        return self._schemas[tool_name].validator

    def problem(
        self, tool_name: str, tool_input: dict[str, Any], input_json: str | None = None
    ) -> str | None:
        """Why `tool_input` fails the schema of the tool `tool_name` (its most relevant
        error), or None; `input_json` is the text it was parsed from, if known (rule 2)."""
        schema = self._schemas[tool_name]
        if input_json is not None:
            key = input_json
        else:
            try:
                key = json.dumps(tool_input)
                exact = json.loads(key) == tool_input
            except (TypeError, ValueError):  # not JSON (a NaN, a key or value JSON cannot write)
                exact = False
            if not exact:
                return validate(schema.validator, tool_input)
        verdicts = schema.verdicts
        if key not in verdicts:
            if len(verdicts) >= VERDICTS_PER_SCHEMA:
                verdicts.clear()
            verdicts[key] = validate(schema.validator, tool_input)
        return verdicts[key]


def validate(validator: jsonschema.protocols.Validator, tool_input: dict[str, Any]) -> str | None:
    """A fresh validation, nothing remembered: the most relevant error's message (with the path
    into the input where it is), or None."""
    error = jsonschema.exceptions.best_match(validator.iter_errors(tool_input))
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path)
    return f"at {where!r}: {error.message}" if where else error.message


def _compile(schema_json: str) -> jsonschema.protocols.Validator:
    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator: jsonschema.protocols.Validator = cls(schema)
    return validator
