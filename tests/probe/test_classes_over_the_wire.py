"""Every class of `toolturn.wire.next_step`, reached over the wire: a scripted HTTP client (a
real process, run by the probe's runner against the case's `toolturn serve`) does one thing
about a faulted answer, and both the recording's `recoveries` row and the probe's class name
it, the same (one classifier, issue 30)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from toolturn.probe.runner import run_case
from toolturn.probe.scorecard import score
from toolturn.probe.suite import PACKAGED_SUITE, Suite, load_suite
from toolturn.wire.next_step import CLASSES

# A client that asks once (streaming), reads the answer, then does what its first argument
# says. Its session is named (`x-sim-session`), so a rewritten transcript stays one session.
CLIENT = r'''
import http.client, json, os, sys
mode = sys.argv[1]
host, port = os.environ["ANTHROPIC_BASE_URL"].rsplit("/", 1)[1].split(":")
HEADERS = {"content-type": "application/json", "x-api-key": "x", "x-sim-session": "1"}
TOOLS = [{"name": n, "description": n, "input_schema": {"type": "object", "properties": {
    f: {"type": "string"}}, "required": [f]}} for n, f in (("Bash", "command"),
                                                          ("Read", "file_path"))]
PROMPT = [{"role": "user", "content": "Look at this project."}]

def body(messages, **extra):
    return json.dumps({"model": "claude-sonnet-4-6", "max_tokens": 1000, "tools": TOOLS,
                       "messages": messages, "stream": True, **extra}).encode()

def ask(raw, leave_after_text=False):
    """The answer's content blocks; with leave_after_text, leave once the text block stops."""
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    connection.request("POST", "/v1/messages", raw, HEADERS)
    response = connection.getresponse()
    blocks = {}
    try:
        for line in response:
            if not line.startswith(b"data: "):
                continue
            event = json.loads(line[6:])
            kind, index = event.get("type"), event.get("index")
            if kind == "content_block_start":
                blocks[index] = dict(event["content_block"])
            elif kind == "content_block_delta" and event["delta"]["type"] == "text_delta":
                blocks[index]["text"] += event["delta"]["text"]
            elif kind == "content_block_stop" and leave_after_text and index == 0:
                break
    except (http.client.HTTPException, OSError):
        pass  # a cut: what came is what the client has
    connection.close()
    return [blocks[i] for i in sorted(blocks)]

def send(messages, **extra):
    if messages is not None:
        ask(body(messages, **extra))

first = body(PROMPT)
blocks = ask(first, leave_after_text=mode in ("resumed", "moved_on"))
text = [b for b in blocks if b["type"] == "text"]
calls = [{**b, "input": b.get("input") or {}} for b in blocks if b["type"] == "tool_use"]

def results(kept, is_error=False):
    return [{"type": "tool_result", "tool_use_id": c["id"], "content": "ok",
             "is_error": is_error} for c in kept]

def turn(kept, answered=None, is_error=False):
    return PROMPT + [{"role": "assistant", "content": text + kept},
                     {"role": "user", "content": results(kept if answered is None
                                                         else answered, is_error)}]

GO_ON = {"role": "user", "content": "Please go on from where you stopped."}
if mode == "identical_retry":
    ask(first)
elif mode == "non_streaming_retry":
    send(PROMPT, stream=False)
elif mode == "modified_retry":
    send(PROMPT, max_tokens=999)
elif mode == "calls_answered":
    send(turn(calls))
elif mode == "calls_answered_with_errors":
    send(turn(calls, is_error=True))
elif mode == "some_calls_dropped":
    send(turn(calls[:1]))
elif mode == "broken_transcript":
    send(turn(calls, answered=calls[:1]))  # a call kept without its result: our 400
elif mode in ("calls_dropped_resumed", "resumed"):
    send(PROMPT + [{"role": "assistant", "content": text}, GO_ON])
elif mode in ("calls_dropped", "moved_on"):
    send(PROMPT + [{"role": "assistant", "content": text}])
elif mode == "transcript_rewritten":
    send([{"role": "user", "content": "Summarise this conversation in one line."}])
'''

# Two complete calls said with `end_turn` (every class about calls can be reached from it);
# a stall after the text that the client leaves (the call planned after it never went out).
SUITE_TOML = f"""
speed = 200
timeout_s = 30
give_up_s = 2

[[case]]
name = "two_calls"
scenario = "{PACKAGED_SUITE / 'two_calls_clean.toml'}"
fault = {{ kind = "end_turn_with_tool_use" }}

[[case]]
name = "stall"
scenario = "{PACKAGED_SUITE / 'stall_after_text.toml'}"
fault = {{ kind = "stall_after_block", block = 0, stall_s = 600 }}
"""
ON_TWO_CALLS = [c for c in CLASSES if c not in ("resumed", "moved_on")]


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Suite, Path]:
    folder = tmp_path_factory.mktemp("suite")
    (folder / "suite.toml").write_text(SUITE_TOML, encoding="utf-8")
    client = folder / "client.py"
    client.write_text(CLIENT, encoding="utf-8")
    return load_suite(folder), client


@pytest.mark.parametrize(("case", "mode"), [("two_calls", mode) for mode in ON_TWO_CALLS]
                         + [("stall", "resumed"), ("stall", "moved_on")])
def test_each_class_over_the_wire_is_the_recordings_and_the_scorecards(
    suite: tuple[Suite, Path], case: str, mode: str
) -> None:
    loaded, client = suite
    [chosen] = [c for c in loaded.cases if c.name == case]
    run = run_case(chosen, loaded, [sys.executable, str(client), mode])
    assert run.exit_status == 0, run.output_tail
    recoveries = run.tables["recoveries"].to_pylist()
    assert [r["recovery"] for r in recoveries] == [mode]
    assert score(run)["class"] == mode
    if case == "stall":
        # The next request came while the stalled answer was open: compared, not given up.
        assert recoveries[0]["next_request_index"] == 1 and recoveries[0]["delay_ns"] < 0
