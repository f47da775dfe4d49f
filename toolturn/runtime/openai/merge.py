"""The openai SDK's rule for merging a Chat Completions delta field into what came before
(``openai.lib.streaming._deltas.accumulate_delta``), for the fields `chat` has no fast path for:
strings and numbers add up, objects merge key by key, lists of indexed objects merge by their
``index``, other lists extend, ``index`` and ``type`` are replaced, and a null leaves the value.

Strings are joined by ``+``, as in the SDK: these fields (``role``, a call's ``id`` and ``name``,
the deprecated ``function_call``) come whole in one delta, not streamed in many pieces.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["merge_delta"]


def _indexed(value: Any) -> bool:
    return isinstance(value, list) and any(
        isinstance(entry, dict) and "index" in entry for entry in value
    )


def merge_delta(acc: dict[str, Any], delta: dict[str, Any]) -> None:
    """Merge `delta` into `acc` in place; `delta`'s values are copied, never kept."""
    for key, value in delta.items():
        old = acc.get(key)
        if old is None:
            if not _indexed(value):
                acc[key] = copy.deepcopy(value)
                continue
            old = acc[key] = []
        if key in ("index", "type"):
            acc[key] = copy.deepcopy(value)
        elif isinstance(old, str) and isinstance(value, str):
            acc[key] = old + value
        elif _number(old) and _number(value):
            acc[key] = old + value
        elif isinstance(old, dict) and isinstance(value, dict):
            merge_delta(old, value)
        elif isinstance(old, list) and isinstance(value, list):
            _merge_list(old, value)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float))


def _merge_list(old: list[Any], value: list[Any]) -> None:
    if all(isinstance(entry, (str, int, float)) for entry in old) and (
        old or not _indexed(value)
    ):
        old.extend(copy.deepcopy(value))
        return
    for entry in value:
        if not isinstance(entry, dict) or type(entry.get("index")) is not int:
            raise TypeError(f"a list delta entry without an integer index: {entry!r}")
        index = entry["index"]
        if index < len(old):
            if not isinstance(old[index], dict):
                raise TypeError(f"a list delta entry for an entry that is not an object: {entry!r}")
            merge_delta(old[index], entry)
        else:
            old.insert(index, copy.deepcopy(entry))
