"""`--record` in every protocol: the recorder sees each request as the Messages-shaped
conversation the model sees, so the calls sent and their results are paired by call id, and
each request's row names the protocol it came in (a refused body's too)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pyarrow.parquet as pq
import pytest

from tests.helpers.openai_cases import CHAT, RESPONSES, USER_TEXT, model_for, request
from tests.helpers.server import serving
from toolturn.wire.codecs import ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES
from toolturn.wire.identity import SESSION_HEADER
from toolturn.wire.record_files import open_recording, read_table, table_path, write_recording
from toolturn.wire.recorder import Recorder
from toolturn.wire.recording import REQUESTS


def _calls(path: str, text: str) -> list[tuple[str, str, str]]:
    """(id, name, arguments) of the calls a stream carried."""
    payloads = [json.loads(line[6:]) for line in text.splitlines()
                if line.startswith("data: {")]
    if path == RESPONSES:
        return [(p["item"]["call_id"], p["item"]["name"], p["item"]["arguments"])
                for p in payloads if p["type"] == "response.output_item.done"
                and p["item"]["type"] == "function_call"]
    calls: list[list[str]] = []
    for payload in payloads:
        for choice in payload["choices"]:
            for call in choice["delta"].get("tool_calls") or ():
                if "id" in call:
                    calls.append([call["id"], call["function"]["name"], ""])
                calls[call["index"]][2] += call["function"]["arguments"]
    return [(a, b, c) for a, b, c in calls]


def _follow_up(path: str, body: dict[str, Any], calls: list[tuple[str, str, str]]
               ) -> dict[str, Any]:
    if path == RESPONSES:
        return {**body, "input": [
            {"role": "user", "content": USER_TEXT},
            *({"type": "function_call", "call_id": i, "name": n, "arguments": a}
              for i, n, a in calls),
            *({"type": "function_call_output", "call_id": i, "output": "ok"}
              for i, _, _ in calls)]}
    return {**body, "messages": [
        {"role": "user", "content": USER_TEXT},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
            for i, n, a in calls]},
        *({"role": "tool", "tool_call_id": i, "content": "ok"} for i, _, _ in calls)]}


@pytest.mark.parametrize("path", [RESPONSES, CHAT])
def test_calls_and_results_are_paired_by_call_id(path: str) -> None:
    model = model_for("clean")
    recorder = Recorder()
    body = request(path, model, stream=True)
    with serving(model, recorder=recorder) as (server, _, _log):
        first = httpx2.post(server.base_url + path, json=body, timeout=20,
                            headers={SESSION_HEADER: "5"})
        calls = _calls(path, first.text)
        second = httpx2.post(server.base_url + path, json=_follow_up(path, body, calls),
                             timeout=20, headers={SESSION_HEADER: "5"})
    assert second.status_code == 200 and len(calls) == 2
    tables = recorder.tables()
    assert tables["requests"].column("turn_index").to_pylist() == [1, 2]  # from 1
    sent = tables["tool_calls"].to_pylist()
    first_turn = [row for row in sent if row["request_index"] == 0]
    assert [row["tool_use_id"] for row in first_turn] == [call_id for call_id, _, _ in calls]
    assert [row["result_request_index"] for row in first_turn] == [1, 1]
    assert [row["results_in_order"] for row in first_turn] == [True, True]
    expected = OPENAI_RESPONSES if path == RESPONSES else OPENAI_CHAT
    assert tables["requests"].column("protocol").to_pylist() == [expected, expected]


MESSAGES_PATH = "/v1/messages"
PROTOCOLS = {MESSAGES_PATH: ANTHROPIC, RESPONSES: OPENAI_RESPONSES, CHAT: OPENAI_CHAT}


def _messages_body(model_name: str) -> dict[str, Any]:
    return {"model": model_name, "max_tokens": 1024, "stream": True,
            "messages": [{"role": "user", "content": USER_TEXT}]}


def test_each_request_names_its_protocol_refused_ones_too() -> None:
    model = model_for("clean")
    recorder = Recorder()
    with serving(model, recorder=recorder) as (server, _, _log):
        for number, path in enumerate(PROTOCOLS):
            body = (_messages_body(model.name) if path == MESSAGES_PATH
                    else request(path, model, stream=True))
            answer = httpx2.post(server.base_url + path, json=body, timeout=20,
                                 headers={SESSION_HEADER: str(number + 1)})
            assert answer.status_code == 200
            refused = httpx2.post(server.base_url + path, content=b"{not json", timeout=20,
                                  headers={"content-type": "application/json"})
            assert refused.status_code == 400
    rows = recorder.tables()["requests"].to_pylist()
    assert [(row["ending"] == "refused", row["protocol"]) for row in rows] == [
        (refused, protocol) for protocol in PROTOCOLS.values() for refused in (False, True)]


def test_a_recording_made_before_the_protocol_column_reads_it_as_null(tmp_path: Path) -> None:
    recorder = Recorder()
    recorder.refused(5, 400, "body is not JSON", protocol=OPENAI_CHAT)
    folder = open_recording(tmp_path / "rec")
    write_recording(folder, recorder.tables(), {"scenario": "s"})
    assert read_table(folder, REQUESTS).column("protocol").to_pylist() == [OPENAI_CHAT]
    # The same folder as an older release wrote it: no protocol column in its part.
    for part in table_path(folder, REQUESTS).glob("part-*.parquet"):
        pq.write_table(pq.read_table(part).drop_columns(["protocol"]), part)
    assert read_table(folder, REQUESTS).column("protocol").to_pylist() == [None]
