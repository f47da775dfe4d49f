"""The API-boundary repair for a Responses API `input`: make it pass `check_responses_pairing`,
and say what changed, in the vocabulary of the Messages API's repair (`toolturn.runtime.repair`:
the same `Repair` and `RepairKind`, so that one report counts repairs of every protocol).

Every change is the repair of one finding of `classify_responses`:

- a call (`function_call`, `custom_tool_call`) whose `call_id` an earlier call already used is
  removed (`DUPLICATE_TOOL_USE_REMOVED`: the first call keeps the id);
- an output for a call id that no call of its type has is removed (`ORPHAN_RESULT_REMOVED`);
- an output after its call, for a call already answered after it, is removed
  (`DUPLICATE_RESULT_REMOVED`: the first output after the call stays); so is an output before
  its call when an output after it answers the call;
- an output before its call, when nothing after the call answers it, moves to right after the
  call (`RESULT_MOVED_TO_FRONT`: the result is real, only misplaced);
- a call left without an output gets an error output of its type right after it, whose text is
  `MISSING_RESULT_TEXT` (`MISSING_RESULT_INSERTED`).

Every other item (messages of every role, reasoning items, ...) is kept in its place. Why right
after the call for the inserted and moved outputs: the API accepts an output anywhere after its
call, and there the output cannot land before another item that needs the call's turn complete.

`Repair.message_index` is the index in the OUTPUT list of the item where the change shows: the
inserted or moved output, or, for a removal, the item that took the removed one's place. One
pass, linear in the number of items; an input that passes comes back equal, its items shared,
with no repairs; the input is never mutated; repairing the output again changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolturn.runtime.openai.responses_pairing import (
    OUTPUT_OF,
    FindingKind,
    check_responses_pairing,
    classify_responses,
)
from toolturn.runtime.pairing import RepairKind
from toolturn.runtime.repair import MISSING_RESULT_TEXT, PairingError, Repair

__all__ = ["ensure_responses_pairing", "missing_output"]

_REMOVAL = {
    FindingKind.DUPLICATE_CALL: RepairKind.DUPLICATE_TOOL_USE_REMOVED,
    FindingKind.ORPHAN_OUTPUT: RepairKind.ORPHAN_RESULT_REMOVED,
    FindingKind.EARLY_DUPLICATE: RepairKind.DUPLICATE_RESULT_REMOVED,
    FindingKind.DUPLICATE_OUTPUT: RepairKind.DUPLICATE_RESULT_REMOVED,
}


def missing_output(call_id: str, call_type: str = "function_call") -> dict[str, Any]:
    """The error output inserted for a call of `call_type` that has none."""
    return {"type": OUTPUT_OF[call_type], "call_id": call_id, "output": MISSING_RESULT_TEXT}


def ensure_responses_pairing(
    items: Sequence[Mapping[str, Any]], *, strict: bool = False
) -> tuple[list[Mapping[str, Any]], list[Repair]]:
    """Return `(repaired items, repairs)`; the items always pass `check_responses_pairing`.

    With `strict=True` nothing is repaired: items that pass come back as a new list of the same
    objects, any others raise `PairingError` listing every violation. Raises
    `toolturn.runtime.pairing.TranscriptShapeError` for input that is not a list of items.
    """
    findings = classify_responses(items)
    if strict and findings:
        raise PairingError(check_responses_pairing(items))
    if not findings:
        return list(items), []
    removed: dict[int, RepairKind] = {}
    moved: dict[str, Mapping[str, Any]] = {}  # call id -> its early output
    missing: set[str] = set()
    for finding in findings:
        if finding.kind is FindingKind.EARLY_OUTPUT:
            moved[finding.call_id] = items[finding.index]
        elif finding.kind is FindingKind.MISSING_OUTPUT:
            missing.add(finding.call_id)
        if finding.kind is not FindingKind.MISSING_OUTPUT:
            removed[finding.index] = _REMOVAL.get(finding.kind, RepairKind.RESULT_MOVED_TO_FRONT)
    out: list[Mapping[str, Any]] = []
    repairs: list[Repair] = []
    for index, item in enumerate(items):
        repair = removed.get(index)
        if repair is not None:
            if repair is not RepairKind.RESULT_MOVED_TO_FRONT:  # reported where it lands
                repairs.append(Repair(repair, len(out), item["call_id"]))
            continue
        out.append(item)
        # A call that is not removed here is the first with its id.
        call_type = item.get("type")
        if call_type not in OUTPUT_OF:
            continue
        call_id = item["call_id"]
        if call_id in moved:
            repairs.append(Repair(RepairKind.RESULT_MOVED_TO_FRONT, len(out), call_id))
            out.append(moved[call_id])
        elif call_id in missing:
            repairs.append(Repair(RepairKind.MISSING_RESULT_INSERTED, len(out), call_id))
            out.append(missing_output(call_id, call_type))
    return out, repairs
