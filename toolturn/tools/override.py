"""Partial overrides of catalogue tools (`[tools.override.Bash]` in a scenario).

An override changes only the keys it gives. Sub-tables merge key by key, so
`failures = { error = 0.5 }` keeps the tool's other failure probabilities and
`duration = { median_ms = 200 }` keeps the distribution's kind and sigma; a table that gives its
own `kind` replaces the distribution whole, and `input_schema` is always replaced whole (merging two
schemas rarely means what it looks like).

    [tools.override.Bash]
    duration = { kind = "fixed", ms = 50 }
    failures = { error = 0.3 }
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from toolturn.field_problems import raise_at
from toolturn.tools.spec import ToolSpec

# Fields whose value is data of its own, replaced rather than merged.
_REPLACED_WHOLE = frozenset({"input_schema"})


def apply_override(spec: ToolSpec, override: Mapping[str, Any]) -> ToolSpec:
    """`spec` with `override` merged in, validated again.

    Raises pydantic's ValidationError located relative to the tool (`duration.median_ms`), including
    for an attempt to rename it.
    """
    if "name" in override:
        raise_at("ToolOverride", ("name",), "an override cannot rename a tool; define a new one")
    merged = _merge(spec.model_dump(), override, top_level=True)
    return ToolSpec.model_validate(merged)


def _merge(
    base: Mapping[str, Any], override: Mapping[str, Any], *, top_level: bool
) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        current = merged.get(key)
        replace_whole = (
            (top_level and key in _REPLACED_WHOLE)
            or not isinstance(value, Mapping)
            or not isinstance(current, Mapping)
            or "kind" in value
        )
        # Not replaced whole: both are mappings (the checker cannot narrow through the flag).
        merged[key] = (
            value
            if replace_whole
            else _merge(cast(Mapping[str, Any], current), value, top_level=False)
        )
    return merged
