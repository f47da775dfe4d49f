"""Events are shared and never changed: the rule of `toolturn.model.shared_events`, checked on whole
simulations of every policy and recovery profile over scenarios that hit every fault path
(cuts, error events, stalls, fallbacks, interrupts, fine-grained tool JSON)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from toolturn.engine.simulation import simulate
from toolturn.model import shared_events
from toolturn.model.model import MockModel
from toolturn.model.response import Response, StreamResponse, Turn
from toolturn.runtime.recovery import PROFILES
from toolturn.scenario.loader import load_scenario, with_overrides

SCENARIOS = Path(__file__).parents[2] / "scenarios"
POLICIES = ("streaming", "at_message_stop", "serial")


def _shared_tables() -> list[Any]:
    """Every event the shared tables hold."""
    return [
        shared_events.PING,
        shared_events.MESSAGE_STOP,
        list(shared_events._STOPS),
        dict(shared_events._EMPTY_STARTS),
        {key: dict(known) for key, known in shared_events._TEXT_DELTAS.items()},
    ]


@pytest.mark.parametrize("name", ["interrupt_storm", "fallback_storm", "fine_grained_tools"])
def test_no_event_changes_in_a_run_of_every_policy_and_profile(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = with_overrides(load_scenario(SCENARIOS / f"{name}.toml"), sessions=8)
    answered: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []
    original = MockModel.answer

    def answer(self: MockModel, body: Any, turn: Turn, *args: Any, **kwargs: Any) -> Response:
        response = original(self, body, turn, *args, **kwargs)
        if isinstance(response, StreamResponse):
            answered.append((response.events, copy.deepcopy(response.events)))
        return response

    monkeypatch.setattr(MockModel, "answer", answer)
    for profile in PROFILES:
        for policy in POLICIES:
            before = copy.deepcopy(_shared_tables())
            simulate(scenario, policy, scenario.load.levels[0], profile=profile, trace=True)
            # The tables' earlier events are as they were made (new ones may have been added).
            after = _shared_tables()
            assert after[:2] == before[:2]
            assert after[2][: len(before[2])] == before[2]
            assert all(after[3][key] == start for key, start in before[3].items())
            assert all(
                after[4][key][text] == event
                for key, known in before[4].items()
                for text, event in known.items()
                if text in after[4][key]
            )
    assert answered
    for sent, as_made in answered:
        assert sent == as_made
    # Shared, not copies: the same object for the same event, across responses.
    pings = [event for sent, _ in answered for event in sent if event["type"] == "ping"]
    assert pings and all(ping is shared_events.PING for ping in pings[:50])


def test_the_shared_tables_stay_bounded() -> None:
    pieces = [f" word{number}" for number in range(shared_events.SHARED_DELTAS_KEPT + 10)]
    made = shared_events.text_deltas("text", 3, pieces)
    assert [event["delta"]["text"] for event in made] == pieces
    # Checked per block: a table past the bound starts again with the next block.
    shared_events.text_deltas("text", 3, ["next"])
    assert list(shared_events._TEXT_DELTAS["text", 3]) == ["next"]
    late = shared_events.SHARED_BLOCKS
    again = shared_events.text_deltas("thinking", late, ["a", "a"])
    assert again[0] == again[1] and again[0] is not again[1]  # not shared past the bound
    assert ("thinking", late) not in shared_events._TEXT_DELTAS
    assert again[0] == {
        "type": "content_block_delta", "index": late,
        "delta": {"type": "thinking_delta", "thinking": "a"},
    }
