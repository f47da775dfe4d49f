"""The recording says what went out on the socket (issue 30, section 1), with scripted clients
over real loopback sockets: an aborted stream keeps the blocks and calls it wrote, results are
matched to the block the client kept (two blocks of one id), and each request's first byte,
time to first byte and body bytes are the ones the client received."""

from __future__ import annotations

import dataclasses
import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from toolturn.model.response import Response, StreamResponse, Turn
from toolturn.probe.runner import WORKDIR_FILES
from toolturn.probe.sdk_agent import PROMPT, TOOLS
from toolturn.probe.suite import PACKAGED_SUITE, case_model, load_suite
from toolturn.wire.background import serve_in_thread
from toolturn.wire.client_tools import ClientTools
from toolturn.wire.recorder import Recorder
from toolturn.wire.server import MockServer

SUITE = load_suite(PACKAGED_SUITE)
CASES = {case.name: case for case in SUITE.cases}
SPEED = 50.0
FIRST = [{"role": "user", "content": PROMPT}]


@dataclasses.dataclass
class Answer:
    status: int
    body: bytes  # the body as the client decoded it (chunked framing off)

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line[6:]) for line in self.body.decode().splitlines()
                if line.startswith("data: ")]


def post(server: MockServer, body: dict[str, Any], stop_at: bytes | None = None) -> Answer:
    """One request on a fresh connection; with `stop_at`, the client closes the connection
    as soon as a whole chunk holding it has come (as the CLI does after `event: error`)."""
    data = json.dumps(body).encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as client:
        client.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: test\r\ncontent-type: "
                       b"application/json\r\ncontent-length: %d\r\n\r\n" % len(data) + data)
        reader = client.makefile("rb")
        status = int(reader.readline().split()[1])
        headers = {}
        while (line := reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            headers[name.lower()] = value.strip()
        if "content-length" in headers:
            return Answer(status, reader.read(int(headers["content-length"])))
        received = b""
        while size := int(reader.readline(), 16):
            received += reader.read(size)
            reader.readline()
            if stop_at is not None and stop_at in received:
                break
        return Answer(status, received)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    for name, text in WORKDIR_FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


@dataclasses.dataclass
class Served:
    server: MockServer
    recorder: Recorder

    def rows(self) -> dict[str, list[dict[str, Any]]]:
        self.recorder.give_up(None)  # the client is gone: the recording's end
        return {name: table.to_pylist() for name, table in self.recorder.tables().items()}


@contextmanager
def serve(case: str, workdir: Path, rewrite: Any = None) -> Iterator[Served]:
    recorder = Recorder()
    with serve_in_thread(case_model(CASES[case].scenario), speed=SPEED, log=lambda _: None,
                         client_tools=ClientTools({}, client_dir=str(workdir)),
                         recorder=recorder, rewrite=rewrite or CASES[case].fault) as server:
        yield Served(server, recorder)


def test_a_stream_the_client_leaves_after_its_error_event_keeps_what_it_sent(
    workdir: Path,
) -> None:
    plan = CASES["error_after_tool_use"].fault

    def silent_after_the_error(turn: Turn, response: Response) -> Response:
        # The server lingers after the `event: error` (as a server may before it closes), so
        # the answer is still open when the client goes: it ends `aborted`.
        changed = plan(turn, response)
        assert isinstance(changed, StreamResponse)
        return dataclasses.replace(changed, end_ns=changed.end_ns + 3_600 * 10**9)

    with serve("error_after_tool_use", workdir, silent_after_the_error) as run:
        answer = post(run.server, {"model": "m", "max_tokens": 4096, "messages": FIRST,
                                   "tools": TOOLS, "stream": True}, stop_at=b"event: error")
    rows = run.rows()
    sent = [e for e in answer.events() if e["type"] == "content_block_start"
            and e["content_block"]["type"] == "tool_use"]
    assert answer.status == 200 and sent and answer.events()[-1]["type"] == "error"
    [request] = rows["requests"]
    assert (request["status"], request["ending"]) == (200, "aborted")
    assert request["bytes_sent"] == len(answer.body)  # every byte the client decoded
    calls = rows["tool_calls"]
    assert [(c["tool_use_id"], c["block_index"]) for c in calls] == [
        (e["content_block"]["id"], e["index"]) for e in sent]
    assert all(c["block_stop_ns"] is not None and c["message_stop_ns"] is None for c in calls)
    assert [r["recovery"] for r in rows["recoveries"]] == ["stopped"]


def _response(answer: Answer) -> list[dict[str, Any]]:
    """The content blocks a client accumulates from a stream."""
    blocks: dict[int, dict[str, Any]] = {}
    inputs: dict[int, str] = {}
    for event in answer.events():
        if event["type"] == "content_block_start":
            blocks[event["index"]] = {**event["content_block"], "index": event["index"]}
            inputs[event["index"]] = ""
        elif event["type"] == "content_block_delta" and event["delta"]["type"] == (
                "input_json_delta"):
            inputs[event["index"]] += event["delta"]["partial_json"]
    for index, block in blocks.items():
        if block["type"] == "tool_use":
            block["input"] = json.loads(inputs[index] or "{}")
    return [blocks[i] for i in sorted(blocks)]


@pytest.mark.parametrize("kept", ["first", "second"])
def test_of_two_blocks_with_one_id_the_one_the_client_kept_has_the_result(
    kept: str, workdir: Path
) -> None:
    with serve("duplicate_tool_ids", workdir) as run:
        first = post(run.server, {"model": "m", "max_tokens": 4096, "messages": FIRST,
                                  "tools": TOOLS, "stream": True})
        uses = [b for b in _response(first) if b["type"] == "tool_use"]
        twins = [b for b in uses if [u["id"] for u in uses].count(b["id"]) == 2]
        assert len(twins) == 2 and twins[0]["input"] != twins[1]["input"]
        chosen = twins[0] if kept == "first" else twins[1]
        echo = {"role": "assistant", "content": [
            {k: chosen[k] for k in ("type", "id", "name", "input")}]}
        result = {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": chosen["id"], "content": "ok"}]}
        post(run.server, {"model": "m", "max_tokens": 4096, "messages": [*FIRST, echo, result],
                          "tools": TOOLS, "stream": True})
    calls = {c["block_index"]: c for c in run.rows()["tool_calls"] if c["request_index"] == 0}
    first_block, second_block = (calls[b["index"]] for b in twins)
    answered = first_block if kept == "first" else second_block
    lost = second_block if kept == "first" else first_block
    assert answered["result_request_index"] == 1 and answered["result_position"] == 0
    assert lost["result_request_index"] is None
    assert first_block["duplicate_id"] and second_block["duplicate_id"]


def test_first_byte_bytes_and_block_stops_are_the_ones_written(workdir: Path) -> None:
    with serve("two_calls_clean", workdir) as run:
        streamed = post(run.server, {"model": "m", "max_tokens": 4096, "messages": FIRST,
                                     "tools": TOOLS, "stream": True})
        whole = post(run.server, {"model": "m", "max_tokens": 4096, "messages": FIRST,
                                  "tools": TOOLS})
    rows = run.rows()
    stream_row, message_row = rows["requests"]
    assert stream_row["bytes_sent"] == len(streamed.body)
    assert message_row["bytes_sent"] == len(whole.body) and whole.status == 200
    for row in (stream_row, message_row):
        assert row["arrival_ns"] < row["first_byte_ns"] <= row["end_ns"]
        assert row["time_to_first_byte_ns"] == row["first_byte_ns"] - row["arrival_ns"]
    calls = [c for c in rows["tool_calls"] if c["request_index"] == 0]
    assert len(calls) == 2
    for call in calls:
        assert stream_row["first_byte_ns"] <= call["block_stop_ns"] <= call["message_stop_ns"]
        assert call["message_stop_ns"] <= stream_row["end_ns"]
    # The Message went out whole: its blocks stopped as its body was written.
    for call in (c for c in rows["tool_calls"] if c["request_index"] == 1):
        assert call["block_stop_ns"] == message_row["first_byte_ns"]
