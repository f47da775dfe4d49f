"""The Responses API's rules for tool pairing in a request's `input` items, and a checker worded
as the API.

The input is a list of items: `message` items (`type: "message"`, or no type with a `role`:
user, assistant, system, developer), `function_call` items (`call_id`, `name`, `arguments`),
`function_call_output` items (`call_id`, `output`), `reasoning` items and the other types the API
knows. Only calls and outputs pair (`function_call` with `function_call_output`, and
`custom_tool_call` with `custom_tool_call_output`, the freeform tools Codex uses for
`apply_patch`); every other item is passed over. The API accepts the input only if:

1. every `function_call_output` answers a `function_call` with its `call_id` EARLIER in the input
   ("No tool call found for function call output with call_id CALL.");
2. every `function_call` is answered by an output ("No tool output found for function call
   CALL."): the API counts an output anywhere in the input, even one before the call that rule 1
   refuses. A custom tool call likewise ("No tool output found for custom tool call CALL.",
   diegosouzapw/OmniRoute#8946), by an output of its own type.

These two are the wire server's rules for function calls
(`toolturn.wire.openai_responses_request.pairing`), and `check_responses_pairing` words them the
same way in the same order. Two more are ours: the API says nothing about them, but a history
that breaks them is not "every call answered once":

3. call ids are unique in the input (a second `function_call` with a used `call_id`);
4. a call has one output (a second output for an answered call).

`classify_responses` yields each violation as a `Finding` whose kind names its repair
(`toolturn.runtime.openai.responses_repair`), so that the check and the repair cannot disagree.
Input that is not a list of items (an item that is not an object, a call or output without a
string `call_id`, an item with neither `type` nor `role`) raises
`toolturn.runtime.pairing.TranscriptShapeError` naming the place, e.g. `input[3]: ...`.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolturn.runtime.pairing import TranscriptShapeError

__all__ = [
    "OUTPUT_OF",
    "Finding",
    "FindingKind",
    "check_responses_pairing",
    "classify_responses",
    "item_type",
]

# Each call type, with the output type that answers it.
OUTPUT_OF = {"function_call": "function_call_output", "custom_tool_call": "custom_tool_call_output"}
_CALL_OF = {output: call for call, output in OUTPUT_OF.items()}
# What the API calls each call type in its messages.
_NAME = {"function_call": "function call", "custom_tool_call": "custom tool call"}

# The API's words (and the wire server's: toolturn/wire/openai_responses_request.py). For
# custom tool calls, NO_OUTPUT is seen (OmniRoute#8946); NO_CALL is ours, by analogy.
NO_CALL = "No tool call found for {name} output with call_id {call_id}."
NO_OUTPUT = "No tool output found for {name} {call_id}."
# No real sample: the API does not refuse these. Our wording, in its style.
DUPLICATE_CALL = (
    "Duplicate {name} with call_id {call_id} (input[{index}]): each tool call must have its "
    "own call_id."
)
DUPLICATE_OUTPUT = (
    "Duplicate {name} output for call_id {call_id} (input[{index}]): each tool call must have "
    "exactly one output."
)


class FindingKind(enum.Enum):
    """A broken rule, with what the repair does about it."""

    # Rule 3: the later call is removed (the first call with the id stays).
    DUPLICATE_CALL = "duplicate_call"
    # Rule 1, no call with the id anywhere: the output is removed.
    ORPHAN_OUTPUT = "orphan_output"
    # Rule 1, the call comes later and has no output after it: the output moves right after it.
    EARLY_OUTPUT = "early_output"
    # Rule 1, the call comes later and is answered otherwise: the output is removed.
    EARLY_DUPLICATE = "early_duplicate"
    # Rule 4: the later output is removed (the first after the call stays).
    DUPLICATE_OUTPUT = "duplicate_output"
    # Rule 2: an error output is inserted right after the call. `index` is the call's.
    MISSING_OUTPUT = "missing_output"


@dataclass(frozen=True, slots=True)
class Finding:
    """One violation: its kind, the index of the item it is about, the call id, and the type of
    the call the id belongs to (`function_call` for an output without one: what its type says)."""

    kind: FindingKind
    index: int
    call_id: str
    call_type: str


def item_type(item: object, index: int) -> str:
    """The type of `input[index]` (`message` for a typeless item with a role), after checking
    the item is an object, and that a call or an output carries a string `call_id`."""
    if type(item) is not dict and not isinstance(item, Mapping):
        raise TranscriptShapeError(
            f"input[{index}]: an item must be an object, not {type(item).__name__}"
        )
    kind = item.get("type")
    if kind is None:
        if "role" not in item:
            raise TranscriptShapeError(f"input[{index}]: item has no 'type'")
        return "message"
    if not isinstance(kind, str):
        raise TranscriptShapeError(
            f"input[{index}].type: must be a string, not {type(kind).__name__}"
        )
    if (kind in OUTPUT_OF or kind in _CALL_OF) and not isinstance(item.get("call_id"), str):
        raise TranscriptShapeError(f"input[{index}]: `{kind}` item has no string 'call_id'")
    return kind


def _check_list(items: object) -> Sequence[Mapping[str, Any]]:
    if isinstance(items, (str, bytes, bytearray)) or not isinstance(items, Sequence):
        raise TranscriptShapeError(
            f"input: must be a list of items, not {type(items).__name__} "
            "(a string input holds no tool calls to pair)"
        )
    return items  # its items are checked one by one by item_type


def classify_responses(items: Sequence[Mapping[str, Any]]) -> list[Finding]:
    """Every violation of `items`: the findings about single items in item order, then each
    call left without an output, in call order. Linear in the number of items."""
    items = _check_list(items)
    types = [item_type(item, index) for index, item in enumerate(items)]
    first_call: dict[str, int] = {}
    at: list[Finding | None] = [None] * len(items)
    for index, kind in enumerate(types):
        if kind in OUTPUT_OF:
            call_id = items[index]["call_id"]
            if call_id in first_call:
                at[index] = Finding(FindingKind.DUPLICATE_CALL, index, call_id, kind)
            else:
                first_call[call_id] = index
    answered: set[str] = set()  # by an output after the call
    early: list[tuple[int, str, str]] = []
    for index, kind in enumerate(types):
        call_type = _CALL_OF.get(kind)
        if call_type is None:
            continue
        call_id = items[index]["call_id"]
        call = first_call.get(call_id)
        if call is None or types[call] != call_type:  # an output answers a call of its own type
            at[index] = Finding(FindingKind.ORPHAN_OUTPUT, index, call_id, call_type)
        elif index < call:
            early.append((index, call_id, call_type))
        elif call_id in answered:
            at[index] = Finding(FindingKind.DUPLICATE_OUTPUT, index, call_id, call_type)
        else:
            answered.add(call_id)
    # An output before its call is kept (moved) only if nothing answers the call after it.
    for index, call_id, call_type in early:
        kind_of = FindingKind.EARLY_DUPLICATE if call_id in answered else FindingKind.EARLY_OUTPUT
        at[index] = Finding(kind_of, index, call_id, call_type)
        answered.add(call_id)
    findings = [finding for finding in at if finding is not None]
    findings += [
        Finding(FindingKind.MISSING_OUTPUT, index, call_id, types[index])
        for call_id, index in first_call.items()
        if call_id not in answered
    ]
    return findings


def _wording(finding: Finding) -> str:
    kind, name, call_id = finding.kind, _NAME[finding.call_type], finding.call_id
    if kind is FindingKind.MISSING_OUTPUT:
        return NO_OUTPUT.format(name=name, call_id=call_id)
    if kind is FindingKind.DUPLICATE_CALL:
        return DUPLICATE_CALL.format(name=name, call_id=call_id, index=finding.index)
    if kind is FindingKind.DUPLICATE_OUTPUT:
        return DUPLICATE_OUTPUT.format(name=name, call_id=call_id, index=finding.index)
    return NO_CALL.format(name=name, call_id=call_id)


def check_responses_pairing(items: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every way `items` breaks the pairing rules, one line each, worded as the API; an empty
    list if the input passes. Raises `TranscriptShapeError` if it is not a list of items."""
    return [_wording(finding) for finding in classify_responses(items)]
