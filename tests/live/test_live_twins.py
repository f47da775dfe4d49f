"""One keying of draws: a request served by `toolturn serve` and a live simulated tool get exactly
the draws of their simulated twins for the same (seed, session, turn, attempt).

The simulator is run on scenarios with retries and interrupts while every request its sessions
send to the mock model is kept with the `Turn` the engine gave it. Then the same bodies, session
by session in order, go to `toolturn serve`'s identity rule (and, for some, over HTTP with the SDK):
each gets the same `Turn` and so the same response. Each tool call the simulator ran is played by
the live driver's simulated tool: same outcome, same text.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import anthropic
import pytest

import toolturn.engine.simulation as simulation
from tests.helpers.engine_runs import dict_rows
from toolturn.engine.draws import SessionDraws
from toolturn.engine.simulation import simulate
from toolturn.live import LiveCall, ToolError, simulated_tools
from toolturn.model.model import MockModel
from toolturn.model.response import HttpError, Response, Turn
from toolturn.scenario.loader import load_scenario, with_overrides
from toolturn.scenario.schema import Scenario
from toolturn.wire.background import serve_in_thread
from toolturn.wire.identity import SESSION_HEADER, TURN_HEADER, TurnIdentities

# The storm scenarios' models are deprecated names, which the SDK warns about.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
Seen = list[tuple[Turn, dict[str, Any], Response]]


def simulated_requests(scenario: Scenario, monkeypatch: pytest.MonkeyPatch) -> Seen:
    """Every (turn, body, response) the engine's model answered, in the order asked."""
    seen: Seen = []

    class Recording(MockModel):
        # The engine asks `answer` for the loop's bodies (their pairing is the loop's verdict).
        def answer(self, body: dict[str, Any], turn: Turn, *args: Any, **kwargs: Any) -> Any:
            response = super().answer(body, turn, *args, **kwargs)
            seen.append((turn, body, response))
            return response

    monkeypatch.setattr(simulation, "MockModel", Recording)
    simulate(scenario, "streaming", float(scenario.load.concurrency or 1))
    assert seen
    return seen


def small(name: str, sessions: int) -> Scenario:
    return with_overrides(load_scenario(SCENARIOS / f"{name}.toml"), sessions=sessions)


@pytest.mark.parametrize("name", ["default", "interrupt_storm", "fallback_storm"])
def test_served_requests_get_the_turn_of_their_simulated_twin(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the session and turn headers `toolturn live` sends, every request is its twin."""
    seen = simulated_requests(small(name, 12), monkeypatch)
    identities = TurnIdentities()
    retries = 0
    for turn, body, _ in seen:
        headers = {SESSION_HEADER: str(turn.session_id), TURN_HEADER: str(turn.turn_index + 1)}
        served = identities.turn_for(headers, body)
        assert served == turn
        retries += turn.attempt > 1
    if name == "fallback_storm":
        assert retries > 0  # the storm did retry, so attempts past the first were compared


def test_without_a_turn_header_assistant_messages_count_turns_until_an_empty_interrupt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Counting assistant messages is right on the default scenario (a client like the CLI
    sends no turn header), and wrong after a turn interrupted before any block: why `toolturn live`
    sends `x-sim-turn`."""
    for name, all_twins in (("default", True), ("interrupt_storm", False)):
        identities = TurnIdentities()
        seen = simulated_requests(small(name, 12), monkeypatch)
        twins = [identities.turn_for({SESSION_HEADER: str(t.session_id)}, b) == t
                 for t, b, _ in seen]
        assert all(twins) is all_twins, name


def test_a_served_response_is_its_simulated_twin_over_http(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = small("fallback_storm", 4)
    seen = simulated_requests(scenario, monkeypatch)
    session = max({turn.session_id for turn, _, _ in seen},
                  key=lambda s: sum(t.session_id == s for t, _, _ in seen))
    mine = [(turn, body, response) for turn, body, response in seen if turn.session_id == session]
    model = MockModel(scenario.model, scenario.seed, simulation.tool_inputs(scenario.tool_specs))
    with serve_in_thread(model, speed=1000.0, log=lambda line: None) as server:
        client = anthropic.Anthropic(base_url=server.base_url, api_key="x", max_retries=0)
        for turn, body, response in mine:
            headers = {SESSION_HEADER: str(session), TURN_HEADER: str(turn.turn_index + 1)}
            if isinstance(response, HttpError):
                with pytest.raises(anthropic.APIStatusError) as failed:
                    client.messages.create(**body, extra_headers=headers)
                assert failed.value.status_code == response.status
                continue
            served: list[dict[str, Any]] = []
            try:
                with client.messages.create(**body, extra_headers=headers) as stream:
                    served.extend(event.to_dict() for event in stream)
            except (anthropic.APIStatusError, anthropic.APIConnectionError):
                pass  # an error event or a cut: the events before it are compared
            expected = [e for e in response.events if e["type"] not in ("ping", "error")]
            assert served == expected[: len(served)] and served, turn
        client.close()


def test_a_live_simulated_tool_plays_the_plan_of_its_simulated_twin() -> None:
    scenario = small("default", 6)
    result = simulate(scenario, "streaming", 6.0)
    specs = list(scenario.tool_specs)
    compared = 0

    async def play_all() -> None:
        nonlocal compared
        for row in dict_rows(result.rows["tools"]):
            if row["outcome"] not in ("success", "error", "exception"):
                continue
            if row["synthetic_cause"] is not None:
                continue
            session = row["session_id"]
            plan = SessionDraws(scenario, scenario.seed, session).tool_plan(
                row["tool_name"], row["tool_use_id"]
            )
            tools = simulated_tools(specs, scenario.seed, session=session, speed=1e9)
            call = LiveCall(row["tool_use_id"], row["tool_name"], {}, lambda _: None)
            try:
                text: Any = await tools[row["tool_name"]](call)
                outcome = "success"
            except ToolError as error:
                text, outcome = error.content, "error"
            except RuntimeError as error:
                text, outcome = str(error), "exception"
            assert (outcome, text) == (row["outcome"], plan.text)
            compared += 1

    asyncio.run(play_all())
    assert compared > 20
