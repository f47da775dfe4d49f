"""The SDK agent's turns without I/O: its retry budget per turn, its turn limit and its end."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from toolturn.probe import sdk_agent
from toolturn.probe.sdk_agent import MAX_TURNS, STREAM_RETRIES, _Conversation


def _conversation(goes_on: bool = True) -> _Conversation:
    return _Conversation(lambda final: goes_on,
                         lambda history, final: [*history, {"role": "assistant", "n": final["n"]}])


def _broken() -> Exception:
    # What the openai SDK's stream helpers raise for a stream without its last event.
    return RuntimeError("stream ended early")


def test_a_broken_stream_is_retried_then_given_up(capsys: pytest.CaptureFixture[str]) -> None:
    conversation = _conversation()
    for _ in range(STREAM_RETRIES):
        conversation.take(_broken())
        assert conversation.status is None
    conversation.take(_broken())
    assert conversation.status == 1
    assert "sdk_agent: gave up: stream ended early" in capsys.readouterr().err


def test_an_answer_restores_the_retry_budget() -> None:
    conversation = _conversation()
    for turn in range(2):
        for _ in range(STREAM_RETRIES):
            conversation.take(_broken())
        conversation.take({"n": turn})
    assert conversation.status is None
    assert [message.get("n") for message in conversation.history] == [None, 0, 1]


def test_the_conversation_ends_after_max_turns_or_a_final_answer() -> None:
    conversation = _conversation()
    for turn in range(MAX_TURNS):
        assert conversation.status is None
        conversation.take({"n": turn})
    assert conversation.status == 0
    assert len(conversation.history) == MAX_TURNS + 1
    final = _conversation(goes_on=False)
    final.take({"n": 0})
    assert final.status == 0 and len(final.history) == 1


def test_settled_turns_a_broken_stream_into_a_value_and_lets_other_errors_through() -> None:
    error = _broken()

    def broken() -> Any:
        raise error

    async def broken_async() -> Any:
        raise error

    assert sdk_agent._settled(broken) is error
    assert asyncio.run(sdk_agent._settled_async(broken_async())) is error
    assert sdk_agent._settled(lambda: {"n": 1}) == {"n": 1}
    with pytest.raises(ZeroDivisionError):
        sdk_agent._settled(lambda: 1 // 0)
