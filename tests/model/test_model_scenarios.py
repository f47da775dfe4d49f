"""The mock model of every shipped scenario answers with legal streams, faults and all."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.model_support import MESSAGES, feed_ours
from toolturn.model.model import MockModel
from toolturn.model.response import HttpError, StreamResponse, Turn
from toolturn.model.tool_inputs import tool_inputs
from toolturn.scenario.loader import load_scenario
from toolturn.wire.sse import SSEDecoder, encode_stream

SCENARIOS = sorted((Path(__file__).parents[2] / "scenarios").glob("*.toml"))


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda path: path.stem)
def test_shipped_scenarios_produce_legal_responses(path: Path) -> None:
    scenario = load_scenario(path)
    model = MockModel(scenario.model, scenario.seed, tool_inputs(scenario.tool_specs))
    request = {"model": model.name, "max_tokens": 16_384, "messages": MESSAGES}
    for session in range(40):
        response = model.respond(request, Turn(session, 1))
        if isinstance(response, HttpError):
            assert response.body["type"] == "error"
            continue
        assert isinstance(response, StreamResponse)
        events = response.events
        accumulator = feed_ours(events)
        assert accumulator.finished == (response.ending == "complete")
        assert SSEDecoder().feed(encode_stream(events)) == events
