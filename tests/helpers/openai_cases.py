"""What the OpenAI protocols' tests share: the fault cases, requests in each protocol, what the
server is to send for one (from the model and the codec, not from the wire), and a comparison
of the SDK's objects with ours."""

from __future__ import annotations

from typing import Any

from tests.helpers.model_support import TOOLS
from toolturn.model.config import ModelConfig
from toolturn.model.faults import ALL_FAULTS
from toolturn.model.faults import STALL as STALL_KIND
from toolturn.model.model import MockModel
from toolturn.model.response import Response, Turn
from toolturn.wire.codecs import CODECS
from toolturn.wire.side_endpoints import model_body

SEED = 11
RESPONSES = "/v1/responses"
CHAT = "/v1/chat/completions"
# Reasoning, text and two calls: one unit of every per-block and per-call fault, and a second
# call for the duplicate id to copy.
SCRIPT = {"kind": "explicit", "responses": [{"blocks": [
    {"type": "thinking", "thinking": "Two files to read.", "signature": "c2lnbmF0dXJl"},
    {"type": "text", "text": "Reading both files now, then a summary of ünïcödé text."},
    {"type": "tool_use", "name": "Read", "input": {"file_path": "/repo/a.py"}},
    {"type": "tool_use", "name": "Read", "input": {"file_path": "/repo/b.py", "limit": 20}},
]}]}
STALL = {"stall": 1.0, "stall_duration": {"kind": "fixed", "ms": 1000}}
# Every fault kind of the model (`ALL_FAULTS`, so that a new one cannot be left out), each
# alone at probability 1, and none; a stall both ways.
CASES: dict[str, dict[str, Any]] = {
    "clean": {},
    **{kind: {kind: 1.0} for kind in ALL_FAULTS if kind != STALL_KIND},
    "stall_resumes": {**STALL, "stall_resume_probability": 1.0},
    "stall_cuts": {**STALL, "stall_resume_probability": 0.0},
}
READ = {"type": "object", "properties": {"file_path": {"type": "string"},
                                         "limit": {"type": "integer"}},
        "required": ["file_path"]}
USER_TEXT = "Read both files."


def model_for(case: str) -> MockModel:
    faults = {"retry_after_ms": 2000, **CASES[case]}
    config = {"profile": "haiku", "script": SCRIPT, "faults": faults}
    return MockModel(ModelConfig.model_validate(config), SEED, TOOLS)


def request(path: str, model: MockModel, *, stream: bool) -> dict[str, Any]:
    """A first turn in the protocol of `path`, as the openai SDK sends it."""
    if path == RESPONSES:
        return {"model": model.name, "input": USER_TEXT, "stream": stream,
                "tools": [{"type": "function", "name": "Read", "parameters": READ}]}
    body: dict[str, Any] = {
        "model": model.name, "messages": [{"role": "user", "content": USER_TEXT}],
        "tools": [{"type": "function", "function": {"name": "Read", "parameters": READ}}],
        "stream": stream}
    if stream:
        body["stream_options"] = {"include_usage": True}
    return body


def expected(path: str, model: MockModel, body: dict[str, Any], session: int) -> Response:
    """The model's answer to `body`, sent as session `session`'s first request."""
    seen = model_body(CODECS[path].messages_body(body), model, False)
    return model.answer(seen, Turn(session, 0, 1))


def expected_bytes(path: str, response: Any, body: dict[str, Any]) -> bytes:
    """Every byte the stream is to carry (a cut one: up to the cut)."""
    frames = CODECS[path].frames(response, body)
    return b"".join(frames(event) for event in response.events)


def covers(theirs: Any, ours: Any, where: str = "") -> None:
    """Every value of `ours` that is not null is in `theirs`, the same (extra keys allowed: the
    SDK adds its parsed fields)."""
    if isinstance(ours, dict):
        assert isinstance(theirs, dict), where
        for key, value in ours.items():
            if value is not None:
                assert key in theirs, f"{where}.{key}"
                covers(theirs[key], value, f"{where}.{key}")
    elif isinstance(ours, list):
        assert isinstance(theirs, list) and len(theirs) == len(ours), where
        for index, (one, other) in enumerate(zip(theirs, ours, strict=True)):
            covers(one, other, f"{where}[{index}]")
    else:
        assert theirs == ours, f"{where}: {theirs!r} != {ours!r}"


def scripted(events: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The blocks the model's Messages events carry, read without any codec: each block's type,
    its text (thinking, text, or a call's raw argument JSON) and a call's id and name."""
    blocks: list[dict[str, str]] = []
    for event in events:
        if event["type"] == "content_block_start":
            block = event["content_block"]
            blocks.append({"type": block["type"], "text": "", "id": block.get("id", ""),
                           "name": block.get("name", "")})
        elif event["type"] == "content_block_delta":
            delta = event["delta"]
            blocks[-1]["text"] += delta.get("text", delta.get("thinking",
                                                               delta.get("partial_json", "")))
    return blocks


_DELTAS = ("response.output_text.delta", "response.reasoning_summary_text.delta",
           "response.function_call_arguments.delta")


def from_responses_events(events: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The same, accumulated from Responses events as the SDK decoded them."""
    kinds = {"message": "text", "reasoning": "thinking", "function_call": "tool_use"}
    blocks: list[dict[str, str]] = []
    for event in events:
        if event["type"] == "response.output_item.added":
            item = event["item"]
            blocks.append({"type": kinds[item["type"]], "text": "",
                           "id": item.get("call_id", ""), "name": item.get("name", "")})
        elif event["type"] in _DELTAS:
            blocks[event["output_index"]]["text"] += event["delta"]
    return blocks


def from_chat_chunks(chunks: list[dict[str, Any]]) -> tuple[str, list[dict[str, str]]]:
    """The text and the calls (id, name, arguments) accumulated from chunks as decoded."""
    text = ""
    calls: list[dict[str, str]] = []
    for chunk in chunks:
        for choice in chunk["choices"]:
            delta = choice["delta"]
            text += delta.get("content") or ""
            for call in delta.get("tool_calls") or ():
                if call["index"] == len(calls):
                    calls.append({"id": call["id"], "name": call["function"]["name"], "text": ""})
                calls[call["index"]]["text"] += call["function"].get("arguments") or ""
    return text, calls


def chat_view(blocks: list[dict[str, str]]) -> tuple[str, list[dict[str, str]]]:
    """What Chat Completions can carry of `blocks`: the text, and the calls (no reasoning)."""
    text = "".join(block["text"] for block in blocks if block["type"] == "text")
    calls = [{"id": b["id"], "name": b["name"], "text": b["text"]}
             for b in blocks if b["type"] == "tool_use"]
    return text, calls
