"""`field_problems.repeated`: what every "listed more than once" error names."""

from __future__ import annotations

from toolturn.field_problems import repeated


def test_each_value_named_once_sorted() -> None:
    assert repeated(["serial", "streaming", "serial", "serial", "at_message_stop",
                     "at_message_stop"]) == ["at_message_stop", "serial"]
    assert repeated([2.0, 1.0, 2.0]) == [2.0]
    assert repeated(["a", "b"]) == []
    assert repeated([]) == []
