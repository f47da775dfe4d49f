"""What both OpenAI accumulators need beyond `toolturn.runtime.stream_events`: the one parse of
a call's arguments."""

from __future__ import annotations

from typing import Any

from toolturn.runtime.strict_json import NotAnObject, parse_json_object

__all__ = ["parse_arguments"]


def parse_arguments(raw: str) -> tuple[dict[str, Any] | None, str | None]:
    """A call's arguments text: (the object, None) or (None, why it is not a JSON object).
    Empty text is the empty object, as the Messages accumulator has it: models calling a function
    without parameters send nothing as often as ``{}``."""
    if not raw:
        return {}, None
    try:
        return parse_json_object(raw), None
    except NotAnObject as error:
        return None, f"arguments are {error}"
    except ValueError as error:
        return None, f"arguments are not valid JSON: {error}"
