"""Issue 31, section 2: a session resumed after a stall replays both of its turns. The response
the log saw cut off is scripted as a cut (`ScriptedResponse.cut`), so a runtime that resumes
after a cut (`claude-code`) sends the resumed request, which the log's next response answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from toolturn.model.config import ModelConfig, ScriptedResponse
from toolturn.model.model import MockModel
from toolturn.model.response import StreamResponse, Turn
from toolturn.scenario.loader import load_scenario
from toolturn.traces.replay import replay_session, scripted_responses
from toolturn.traces.sources import read_logs

SHAPES = Path(__file__).parents[1] / "fixtures" / "traces" / "claude-code-shapes"
CUT = SHAPES / "cut_and_resumed.jsonl"
BASE = (
    'name = "b"\nseed = 3\n[load]\nmode = "closed"\nsessions = 1\nconcurrency = 1\n'
    '[runtime]\nprofiles = ["default", "claude-code"]\n'
)


def test_the_cut_response_is_scripted_as_a_cut_after_its_logged_silence() -> None:
    (session,) = read_logs([str(CUT)]).sessions
    responses = scripted_responses(session)
    assert [r.get("cut") for r in responses] == [None, "cut_before_message_stop", None]
    # The log's text block stopped at 10:00:02.000, the error line came at 10:00:22.189.
    assert responses[1]["cut_silence_ms"] == pytest.approx(20189.0)
    assert responses[1]["blocks"] == [{"type": "text", "text": "The notes say"}]


def test_a_resumed_session_replays_both_turns_under_a_profile_that_resumes(
    tmp_path: Path,
) -> None:
    base = tmp_path / "base.toml"
    base.write_text(BASE)
    (session,) = read_logs([str(CUT)]).sessions
    report = replay_session(session, load_scenario(base), 1)
    claude = report["policies"]["streaming [claude-code]"]
    # The Read turn, the cut one, the resumed one: the log's three requests.
    assert claude["turns"] == 3
    assert claude["turn_outcomes"] == {"completed": 2, "stream_error": 1}
    # The default profile ends the session at the cut, as its rules say.
    default = report["policies"]["streaming"]
    assert default["turns"] == 2 and default["turn_outcomes"] == {
        "completed": 1, "stream_error": 1}
    # The 20 s silence before the connection closed is in both spans.
    assert default["session_span_ms"] > 20189.0 and claude["session_span_ms"] > 20189.0


def test_a_replay_of_the_cut_session_is_the_same_every_time(tmp_path: Path) -> None:
    base = tmp_path / "base.toml"
    base.write_text(BASE)
    (session,) = read_logs([str(CUT)]).sessions
    scenario = load_scenario(base)
    assert replay_session(session, scenario, 1) == replay_session(session, scenario, 1)


def _model(*responses: dict[str, Any]) -> MockModel:
    config = ModelConfig.model_validate(
        {"profile": "sonnet", "script": {"kind": "explicit", "responses": list(responses)}}
    )
    return MockModel(config, 7)


def _answer(model: MockModel, turn: Turn) -> StreamResponse:
    body = {"model": model.name, "max_tokens": 1000, "messages": [{"role": "user", "content": "x"}]}
    response = model.respond(body, turn)
    assert isinstance(response, StreamResponse)
    return response


TEXT = {"blocks": [{"type": "text", "text": "The notes say"}]}


def test_a_scripted_cut_keeps_every_block_and_cuts_the_first_attempt_only() -> None:
    model = _model({**TEXT, "cut": "cut_before_message_stop", "cut_silence_ms": 20000})
    whole = _model(TEXT)
    cut, complete = _answer(model, Turn(0, 0, 1)), _answer(whole, Turn(0, 0, 1))
    assert cut.ending == "cut" and cut.faults == ("cut_before_message_stop",)
    types = [e["type"] for e in cut.events]
    assert types[-2:] == ["content_block_stop", "message_delta"]
    # The same draws as the whole response, less message_stop, then 20 s of silence, no ping.
    assert cut.events == complete.events[:-1]
    assert cut.end_ns == complete.times[-1] + 20_000_000_000
    # A retry streams whole; and so does the script's last response once the script runs out.
    assert _answer(model, Turn(0, 0, 2)).ending == "complete"
    assert _answer(model, Turn(0, 1, 1)).ending == "complete"


def test_a_scripted_cut_before_the_first_block_sends_no_block() -> None:
    model = _model({**TEXT, "cut": "cut_before_first_block"})
    response = _answer(model, Turn(3, 0, 1))
    assert response.ending == "cut" and response.faults == ("cut_before_first_block",)
    assert [e["type"] for e in response.events if e["type"] != "ping"] == ["message_start"]


def test_a_silence_without_a_cut_is_refused() -> None:
    with pytest.raises(ValidationError, match="cut_silence_ms is set but cut is not"):
        ScriptedResponse.model_validate({**TEXT, "cut_silence_ms": 5})
    with pytest.raises(ValidationError, match="cut"):
        ScriptedResponse.model_validate({**TEXT, "cut": "cut_mid_text"})
