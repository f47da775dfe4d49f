"""Issue 29: a log's numeric timestamps may be epoch milliseconds (JavaScript's `Date.now()`) as
well as epoch seconds; the two ranges (2000-2100) do not meet, so each number is read in the unit
whose range holds it, and anything outside both is still no time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolturn.traces.sources import read_logs
from toolturn.traces.timestamps import epoch_ms


def test_epoch_milliseconds_are_read_as_milliseconds() -> None:
    assert epoch_ms(1764591000500) == 1764591000500.0
    assert epoch_ms(1764591000500.25) == 1764591000500.25
    assert epoch_ms(1764591000.5) == epoch_ms(1764591000500)


@pytest.mark.parametrize("value", [4102444800 * 1000, 946684800 * 1000 - 1, 10**11])
def test_numbers_outside_both_ranges_are_no_time(value: int) -> None:
    with pytest.raises(ValueError, match="or milliseconds from"):
        epoch_ms(value)


def test_a_request_log_in_milliseconds_times_its_tool_calls(tmp_path: Path) -> None:
    request = {"model": "m", "messages": [{"role": "user", "content": "go"}]}
    answer = {"content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]}
    follow = {"model": "m", "messages": [
        {"role": "user", "content": "go"}, {"role": "assistant", "content": answer["content"]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": "ok"}]}]}
    path = tmp_path / "log.jsonl"
    path.write_text(
        json.dumps({"session": "s", "sent_at": 1764591000000, "done_at": 1764591000400,
                    "request": request, "response": answer}) + "\n"
        + json.dumps({"session": "s", "sent_at": 1764591000650, "request": follow}) + "\n")
    logs = read_logs([str(path)])
    assert len(logs.skipped) == 0
    (call,) = logs.sessions[0].tool_calls
    assert call.duration_ms == 250.0
