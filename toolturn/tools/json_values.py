"""JSON values in a scenario: tool input schemas, example inputs, scripted tool_use inputs.

They travel as JSON (in the tools parameter, in tool_use blocks), but TOML has values JSON has
not: dates and times, and the floats inf and nan. Such a value would pass every check and fail
only when a run serialises it, so `JsonObject` refuses it when the file is read, at the value's
own path (`tools.define[0].examples[1].when`). It also bounds nesting (`MAX_JSON_DEPTH`): the
schema checks recurse through a value, and a hundred nested tables would exhaust Python's stack.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import AfterValidator

from toolturn.field_problems import FieldProblem, Location, raise_problems
from toolturn.limits import MAX_JSON_DEPTH


def json_problems(value: Any) -> list[FieldProblem]:
    """Why `value` (or a value inside it) is not JSON, located relative to `value`."""
    problems: list[FieldProblem] = []
    # A stack, not recursion: the point is to refuse values too deep to recurse through.
    pending: list[tuple[Any, Location]] = [(value, ())]
    while pending:
        item, loc = pending.pop()
        if isinstance(item, (dict, list)):
            if len(loc) >= MAX_JSON_DEPTH:
                problems.append(FieldProblem(loc, f"nested more than {MAX_JSON_DEPTH} levels deep"))
            elif isinstance(item, dict):
                pending.extend(((child, (*loc, key)) for key, child in item.items()))
            else:
                pending.extend(((child, (*loc, index)) for index, child in enumerate(item)))
        elif isinstance(item, float) and not math.isfinite(item):
            problems.append(FieldProblem(loc, f"{item} is not a JSON number", item))
        elif not isinstance(item, (str, int, float)) and item is not None:
            # TOML's other values: datetime, date and time.
            problems.append(
                FieldProblem(
                    loc,
                    f"a TOML {type(item).__name__} is not a JSON value (quote it: a string)",
                    item,
                )
            )
    return problems


def _json_only(value: dict[str, Any]) -> dict[str, Any]:
    # Raised as a ValidationError, pydantic prefixes the locations with the field's.
    raise_problems("JsonObject", json_problems(value))
    return value


JsonObject = Annotated[dict[str, Any], AfterValidator(_json_only)]
