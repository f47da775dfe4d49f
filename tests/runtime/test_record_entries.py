"""The record's entries (toolturn/runtime/record.py): one immutable class per kind, each beginning
with the time, turn and attempt that `Record.add` stamps (rules 1 and 2)."""

from __future__ import annotations

import typing

import pytest

from toolturn.runtime.outcomes import CallOutcome
from toolturn.runtime.record import Record, RecordEntry, ToolEnded, ToolStarted, TurnEnd

KINDS = typing.get_args(RecordEntry)


def test_every_kind_begins_with_time_turn_and_attempt() -> None:
    assert len(KINDS) == len(set(KINDS)) == 24
    for kind in KINDS:
        assert kind._fields[:3] == ("time_ns", "turn", "attempt"), kind


def test_add_stamps_the_current_turn_and_attempt() -> None:
    record = Record()
    record.turn, record.attempt = 3, 2
    record.add(ToolStarted, 100, "t1", "Read")
    record.attempt = 3
    record.add(ToolEnded, 200, "t1", "Read", CallOutcome.SUCCESS)
    assert record.entries == [
        ToolStarted(100, 3, 2, "t1", "Read"),
        ToolEnded(200, 3, 3, "t1", "Read", CallOutcome.SUCCESS),
    ]
    assert record.entries[1].outcome is CallOutcome.SUCCESS


def test_an_entry_cannot_be_changed() -> None:
    entry = TurnEnd(5, 1, 1, "end_turn", 2)
    with pytest.raises(AttributeError):
        entry.stop_reason = "max_tokens"  # type: ignore[misc]


def test_of_kind_picks_one_class_in_order() -> None:
    record = Record()
    record.add(ToolStarted, 1, "a", "Read")
    record.add(TurnEnd, 2, "end_turn", 1)
    record.add(ToolStarted, 3, "b", "Grep")
    assert [entry.tool_use_id for entry in record.of_kind(ToolStarted)] == ["a", "b"]
    assert record.of_kind(TurnEnd) == [TurnEnd(2, 0, 0, "end_turn", 1)]
