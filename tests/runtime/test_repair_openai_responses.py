"""The Responses input repair: each finding's fix, where it is reported, strict mode, sharing,
and time linear in the input."""

from __future__ import annotations

import time
from typing import Any

import pytest

from toolturn.runtime.openai.responses_pairing import check_responses_pairing
from toolturn.runtime.openai.responses_repair import ensure_responses_pairing, missing_output
from toolturn.runtime.pairing import RepairKind, TranscriptShapeError
from toolturn.runtime.repair import MISSING_RESULT_TEXT, PairingError, Repair

USER = {"role": "user", "content": "hi"}
REASONING = {"type": "reasoning", "id": "rs_1", "summary": []}


def call(call_id: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": "f", "arguments": "{}"}


def output(call_id: str, text: str = "ok") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def test_a_paired_input_comes_back_equal_with_its_items_shared() -> None:
    items = [USER, REASONING, call("a"), output("a")]
    repaired, repairs = ensure_responses_pairing(items)
    assert repairs == []
    assert repaired == items and repaired is not items
    assert all(a is b for a, b in zip(repaired, items, strict=True))


def test_a_missing_output_is_inserted_right_after_its_call() -> None:
    items = [USER, call("a"), call("b"), output("a")]
    repaired, repairs = ensure_responses_pairing(items)
    assert repaired == [USER, call("a"), call("b"), missing_output("b"), output("a")]
    assert missing_output("b")["output"] == MISSING_RESULT_TEXT
    assert repairs == [Repair(RepairKind.MISSING_RESULT_INSERTED, 3, "b")]


def test_an_orphan_output_is_removed() -> None:
    repaired, repairs = ensure_responses_pairing([USER, output("z"), REASONING])
    assert repaired == [USER, REASONING]
    assert repairs == [Repair(RepairKind.ORPHAN_RESULT_REMOVED, 1, "z")]


def test_an_output_before_its_call_moves_right_after_it() -> None:
    early = output("a", "real")
    repaired, repairs = ensure_responses_pairing([USER, early, REASONING, call("a")])
    assert repaired == [USER, REASONING, call("a"), early]
    assert repaired[3] is early
    assert repairs == [Repair(RepairKind.RESULT_MOVED_TO_FRONT, 3, "a")]


def test_a_duplicate_call_and_a_second_output_are_removed_keeping_the_first() -> None:
    first, second = output("a", "first"), output("a", "second")
    items = [USER, call("a"), first, call("a"), second]
    repaired, repairs = ensure_responses_pairing(items)
    assert repaired == [USER, call("a"), first]
    assert repairs == [
        Repair(RepairKind.DUPLICATE_TOOL_USE_REMOVED, 3, "a"),
        Repair(RepairKind.DUPLICATE_RESULT_REMOVED, 3, "a"),
    ]


def test_an_early_output_beside_one_after_the_call_is_the_duplicate() -> None:
    after = output("a", "after")
    repaired, repairs = ensure_responses_pairing([output("a", "before"), call("a"), after])
    assert repaired == [call("a"), after]
    assert repairs == [Repair(RepairKind.DUPLICATE_RESULT_REMOVED, 0, "a")]


def test_the_repair_is_a_fixed_point_and_does_not_mutate_its_input() -> None:
    items = [output("b"), USER, call("a"), call("a"), call("b"), output("c")]
    frozen = [dict(item) for item in items]
    repaired, _ = ensure_responses_pairing(items)
    assert items == frozen
    assert check_responses_pairing(repaired) == []
    assert ensure_responses_pairing(repaired) == (repaired, [])


def test_strict_mode_raises_with_every_violation_and_repairs_nothing() -> None:
    with pytest.raises(PairingError) as raised:
        ensure_responses_pairing([USER, call("a"), output("b")], strict=True)
    assert raised.value.violations == [
        "No tool call found for function call output with call_id b.",
        "No tool output found for function call a.",
    ]
    items = [USER, call("a"), output("a")]
    assert ensure_responses_pairing(items, strict=True) == (items, [])


def test_input_that_is_not_a_list_of_items_raises_a_shape_error() -> None:
    with pytest.raises(TranscriptShapeError, match=r"input\[1\]: an item must be an object"):
        ensure_responses_pairing([USER, "call"])  # type: ignore[list-item]


def _seconds(items: list[dict[str, Any]]) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        ensure_responses_pairing(items)
        best = min(best, time.perf_counter() - start)
    return best


def test_the_repair_is_linear_in_the_input() -> None:
    def broken(rounds: int) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = [USER]
        for n in range(rounds):  # every round broken: an early output, a missing one, an orphan
            items += [output(f"e{n}"), call(f"e{n}"), call(f"m{n}"), output(f"o{n}"), REASONING]
        return items

    small, large = _seconds(broken(400)), _seconds(broken(4000))
    # Ten times the input: about ten times the time, far from the hundred of a quadratic pass.
    assert large < 30 * small + 0.05


def test_a_custom_tool_call_gets_a_custom_error_output() -> None:
    custom = {"type": "custom_tool_call", "call_id": "p", "name": "apply_patch", "input": "x"}
    repaired, repairs = ensure_responses_pairing([USER, custom, output("p")])
    assert repaired == [USER, custom, missing_output("p", "custom_tool_call")]
    assert repaired[2]["type"] == "custom_tool_call_output"
    assert repairs == [
        Repair(RepairKind.MISSING_RESULT_INSERTED, 2, "p"),
        Repair(RepairKind.ORPHAN_RESULT_REMOVED, 3, "p"),
    ]
