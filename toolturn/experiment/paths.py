"""Putting a value at a dotted path of a scenario's data, as if the file had written it there.

`set_path(data, "tools.override.Bash.duration.median_ms", 200)` walks the keys `tools`,
`override`, `Bash`, `duration` and sets `median_ms`. A table on the way that the data leaves out
starts empty (so the value means what the same key in the file would: an override merges, a
distribution needs its `kind`); a key on the way that holds a value, not a table, is an error
naming it. Whether the key is one the scenario knows is for the schema to say, when the data is
validated again.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from toolturn.errors import UserError


def with_settings(data: dict[str, Any], settings: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """A deep copy of `data` with every (path, value) of `settings` set; `data` is unchanged."""
    result = copy.deepcopy(data)
    for path, value in settings:
        set_path(result, path, copy.deepcopy(value))
    return result


def set_path(data: dict[str, Any], path: str, value: Any) -> None:
    """Set `value` at the dotted `path` of `data` in place; raises UserError naming the key of
    `path` that holds a value where a table is needed."""
    *parents, last = path.split(".")
    table = data
    for depth, key in enumerate(parents):
        child = table.setdefault(key, {})
        if not isinstance(child, dict):
            inside = ".".join(parents[: depth + 1])
            raise UserError(f"{path}: {inside} holds a value, not a table to set a key in")
        table = child
    table[last] = value


def without_path(data: dict[str, Any], path: str) -> None:
    """Remove the value at the dotted `path` of `data` in place, if there is one."""
    *parents, last = path.split(".")
    table: Any = data
    for key in parents:
        table = table.get(key) if isinstance(table, dict) else None
    if isinstance(table, dict):
        table.pop(last, None)
