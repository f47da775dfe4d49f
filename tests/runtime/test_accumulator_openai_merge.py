"""`merge_delta`, the Chat Completions accumulator's merge of the fields it has no fast path for,
against the openai SDK's own `accumulate_delta` on random deltas: the same result, or both
refuse."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from openai.lib.streaming._deltas import accumulate_delta

from toolturn.runtime.openai.merge import merge_delta

keys = st.sampled_from(["role", "name", "id", "index", "type", "data", "n", "f"])
leaves = st.none() | st.text(max_size=4) | st.integers(-5, 5) | st.booleans()
indexed_entries = st.lists(
    st.fixed_dictionaries({"index": st.integers(0, 2)}, optional={"text": st.text(max_size=3)}),
    max_size=3,
)
values = st.recursive(
    leaves | indexed_entries | st.lists(st.integers(0, 9), max_size=3),
    lambda children: st.dictionaries(keys, children, max_size=3),
    max_leaves=6,
)
deltas = st.lists(st.dictionaries(keys, values, max_size=4), min_size=1, max_size=5)


def merged(merge: Any, sequence: list[dict[str, Any]]) -> Any:
    acc: dict[str, Any] = {}
    try:
        for delta in sequence:
            result = merge(acc, copy.deepcopy(delta))
            acc = acc if result is None else result
    except (TypeError, RuntimeError):
        return "refused"
    return acc


@settings(max_examples=300, deadline=None)
@given(deltas)
def test_merge_delta_is_the_sdks_accumulate_delta(sequence: list[dict[str, Any]]) -> None:
    assert merged(merge_delta, sequence) == merged(accumulate_delta, sequence)


def test_merge_delta_copies_what_it_keeps() -> None:
    delta: dict[str, Any] = {"f": {"name": "a"}}
    acc: dict[str, Any] = {}
    merge_delta(acc, delta)
    merge_delta(acc, {"f": {"name": "b"}})
    assert acc == {"f": {"name": "ab"}} and delta == {"f": {"name": "a"}}
