"""Property tests: valid transcripts pass untouched; broken ones are repaired to a fixed point.

Valid transcripts are generated turn by turn (user text, assistant text / tool_use / server tool
pairs, user tool_results in any order, optional trailing text), then broken at random by the
ways real transcripts break: a block or message dropped, duplicated or moved, blocks or
messages reordered, the transcript truncated or started mid-turn, content emptied, a role flipped.
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings

from tests.helpers.transcripts import (
    Message,
    broken_transcripts,
    valid_transcripts,
)
from toolturn.runtime.repair import PairingError, check_pairing, ensure_tool_result_pairing

PROPERTY_SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@PROPERTY_SETTINGS
@given(valid_transcripts())
def test_a_valid_transcript_passes_and_comes_back_unchanged(messages: list[Message]) -> None:
    snapshot = copy.deepcopy(messages)
    assert check_pairing(messages) == []
    repaired, repairs = ensure_tool_result_pairing(messages)
    assert repairs == []
    assert repaired == snapshot
    assert messages == snapshot
    assert ensure_tool_result_pairing(messages, strict=True) == (snapshot, [])


@PROPERTY_SETTINGS
@given(broken_transcripts())
def test_repair_output_passes_the_check(messages: list[Message]) -> None:
    repaired, _ = ensure_tool_result_pairing(messages)
    assert check_pairing(repaired) == []


@PROPERTY_SETTINGS
@given(broken_transcripts())
def test_repair_is_a_fixed_point(messages: list[Message]) -> None:
    repaired, _ = ensure_tool_result_pairing(messages)
    again, repairs = ensure_tool_result_pairing(repaired)
    assert repairs == []
    assert again == repaired


@PROPERTY_SETTINGS
@given(broken_transcripts())
def test_repair_never_mutates_its_input(messages: list[Message]) -> None:
    snapshot = copy.deepcopy(messages)
    ensure_tool_result_pairing(messages)
    assert messages == snapshot


@PROPERTY_SETTINGS
@given(broken_transcripts())
def test_the_check_and_the_repair_agree_on_what_is_broken(messages: list[Message]) -> None:
    violations = check_pairing(messages)
    _, repairs = ensure_tool_result_pairing(messages)
    assert bool(violations) == bool(repairs)
    if violations:
        with pytest.raises(PairingError) as error:
            ensure_tool_result_pairing(messages, strict=True)
        assert error.value.violations == violations


@PROPERTY_SETTINGS
@given(broken_transcripts())
def test_every_tool_use_kept_is_answered_first_in_the_next_message(
    messages: list[Message],
) -> None:
    repaired, _ = ensure_tool_result_pairing(messages)
    for index, message in enumerate(repaired):
        if message["role"] != "assistant" or isinstance(message["content"], str):
            continue
        use_ids = [b["id"] for b in message["content"] if b["type"] == "tool_use"]
        if not use_ids:
            continue
        following = repaired[index + 1]["content"]
        leading = following[: len(use_ids)]
        assert sorted(b["tool_use_id"] for b in leading) == sorted(use_ids)
        assert all(b["type"] == "tool_result" for b in leading)
