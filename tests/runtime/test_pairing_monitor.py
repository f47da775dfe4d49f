"""`PairingMonitor.check` says what `check_pairing` says, request after request, whether the
next transcript grows the last one, replaces its last message, shrinks, or is another one."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.transcripts import broken_transcripts, valid_transcripts
from toolturn.runtime.pairing import PairingMonitor, TranscriptShapeError, check_pairing

Message = dict[str, Any]
CALL = {"type": "tool_use", "id": "t1", "name": "x", "input": {}}
TRANSCRIPTS = st.one_of(valid_transcripts(), broken_transcripts())
STEPS = st.sampled_from(["grow", "replace_last", "other"])
REQUESTS = st.lists(st.tuples(STEPS, st.integers(0, 8)), min_size=1, max_size=6)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TRANSCRIPTS, REQUESTS, st.data())
def test_every_request_gets_check_pairings_verdict(
    first: list[Message], steps: list[tuple[str, int]], data: st.DataObject
) -> None:
    monitor = PairingMonitor()
    messages = list(first)
    assert monitor.check(messages) == check_pairing(messages)
    for how, size in steps:
        if how == "grow":
            # The same message objects, then the first messages of another transcript.
            messages = [*messages, *data.draw(TRANSCRIPTS)[:size]]
        elif how == "replace_last" and messages:
            messages = [*messages[:-1], *data.draw(TRANSCRIPTS)[: size % 3]]
        else:
            messages = data.draw(TRANSCRIPTS)
        assert monitor.check(messages) == check_pairing(messages)


def test_an_equal_copy_is_a_prefix_too() -> None:
    monitor = PairingMonitor()
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [CALL]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "k"}]},
    ]
    assert monitor.check(messages) == []
    again = [*copy.deepcopy(messages), {"role": "assistant", "content": [CALL]}]  # t1 again
    assert monitor.check(again) == check_pairing(again) != []


def test_a_shape_error_is_raised_and_forgotten() -> None:
    monitor = PairingMonitor()
    good = [{"role": "user", "content": "go"}, {"role": "assistant", "content": "done"}]
    assert monitor.check(good) == []
    with pytest.raises(TranscriptShapeError):
        monitor.check([*good, {"role": "user"}])
    assert monitor.check([*good, {"role": "user", "content": ""}]) == check_pairing(
        [*good, {"role": "user", "content": ""}]
    )
