"""`python -m toolturn.wire.tool_turns`: a recording's completed tool turns, the check behind
`make codex-turn` (it fails unless the client completed one)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.helpers.openai_cases import RESPONSES, USER_TEXT, model_for, request
from tests.helpers.server import serving
from toolturn.wire.identity import SESSION_HEADER
from toolturn.wire.record_files import open_recording, write_recording
from toolturn.wire.recorder import Recorder
from toolturn.wire.tool_turns import EXIT_DONE, EXIT_NONE, EXIT_UNREADABLE, main


def _calls(text: str) -> list[dict[str, Any]]:
    payloads = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: {")]
    return [p["item"] for p in payloads if p["type"] == "response.output_item.done"
            and p["item"]["type"] == "function_call"]


def _recorded_session(folder: Path, answer: bool) -> Path:
    """A Responses session: a request whose answer calls tools, then the next request, which
    carries the calls' outputs (`answer`) or not (a 400)."""
    model = model_for("clean")
    recorder = Recorder()
    body = request(RESPONSES, model, stream=True)
    with serving(model, recorder=recorder) as (server, _, _log):
        first = httpx2.post(server.base_url + RESPONSES, json=body, timeout=20,
                            headers={SESSION_HEADER: "3"})
        calls = [{"type": "function_call", "call_id": item["call_id"], "name": item["name"],
                  "arguments": item["arguments"]} for item in _calls(first.text)]
        outputs = [{"type": "function_call_output", "call_id": call["call_id"], "output": "ok"}
                   for call in calls] if answer else []
        second = httpx2.post(server.base_url + RESPONSES, timeout=20, headers={
            SESSION_HEADER: "3"}, json={**body, "input": [
                {"role": "user", "content": USER_TEXT}, *calls, *outputs]})
    assert calls and second.status_code == (200 if answer else 400)
    write_recording(open_recording(folder), recorder.tables(), {"scenario": "s"})
    return folder


def test_a_call_answered_by_its_output_is_a_completed_tool_turn(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _recorded_session(tmp_path / "rec", answer=True)
    assert main([str(folder), "--protocol", "openai-responses"]) == EXIT_DONE
    assert "2 call(s) (Read, Read) answered by request 1" in capsys.readouterr().out
    # The same session counted in another protocol: none.
    assert main([str(folder), "--protocol", "openai-chat"]) == EXIT_NONE


def test_calls_left_without_outputs_are_no_tool_turn(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _recorded_session(tmp_path / "rec", answer=False)
    assert main([str(folder)]) == EXIT_NONE
    assert "no tool turn completed: 2 requests (status 200, 400" in capsys.readouterr().err


def test_a_folder_that_is_not_a_recording_exits_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path)]) == EXIT_UNREADABLE
    assert "not a recording" in capsys.readouterr().err
