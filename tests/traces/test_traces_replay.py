"""`toolturn traces replay`: a logged session as an explicit script, its logged
tool runs scripted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolturn.cli import main
from toolturn.scenario.loader import load_scenario
from toolturn.traces.replay import CHAIN_CUT_TEXT, replay_scenario, replay_session, run_policy
from toolturn.traces.sources import read_logs

FIXTURES = Path(__file__).parents[1] / "fixtures" / "traces"
CLAUDE = FIXTURES / "claude-code"


@pytest.mark.parametrize("policy", ["serial", "streaming"])
def test_replay_reproduces_the_logged_tool_sequence_and_durations(policy: str) -> None:
    for session in read_logs([str(CLAUDE)]).sessions:
        scenario = replay_scenario(session, None, 1)
        outcome = run_policy(scenario, policy)
        logged = [(call.name, call.duration_ms) for call in session.tool_calls]
        assert outcome.tool_sequence == logged
        # The real inputs are what the model calls the tools with.
        scripted = [
            block.input
            for response in scenario.model.script.responses  # type: ignore[union-attr]
            for block in response.blocks
            if block.type == "tool_use"
        ]
        assert scripted == [call.input for call in session.tool_calls]
        assert outcome.outcomes == {"completed": len(session.steps)}


def test_a_chain_the_log_ends_on_a_call_gets_a_closing_answer(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    lines = [
        {"type": "user", "sessionId": "s", "timestamp": "2026-01-01T00:00:00Z",
         "message": {"role": "user", "content": "go"}},
        {"type": "assistant", "sessionId": "s", "timestamp": "2026-01-01T00:00:01Z",
         "message": {"id": "m1", "role": "assistant", "stop_reason": "tool_use",
                     "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
                                  "input": {"command": "make"}}]}},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (session,) = read_logs([str(path)]).sessions
    scenario = replay_scenario(session, None, 1)
    last = scenario.model.script.responses[-1].blocks  # type: ignore[union-attr]
    assert [b.type for b in last] == ["text"]
    assert last[0].text == CHAIN_CUT_TEXT  # type: ignore[union-attr]
    # The call never got a result: it runs for 0 ms in the replay.
    assert run_policy(scenario, "serial").tool_sequence == [("Bash", 0.0)]


def test_replay_with_a_scenario_takes_its_faults_and_load(tmp_path: Path) -> None:
    base = tmp_path / "base.toml"
    base.write_text(
        'name = "b"\nseed = 3\n[load]\nmode = "closed"\nsessions = 1\nconcurrency = 4\n'
        "[model.faults]\ncut_after_tool_use_stop = 1.0\n"
    )
    sessions = read_logs([str(CLAUDE)]).sessions
    (session,) = [s for s in sessions if s.session_id.startswith("7a")]
    report = replay_session(session, load_scenario(base), 1)
    streaming = report["policies"]["streaming"]
    # Four copies at once, each first stream cut after its first tool_use: the default loop
    # ends that prompt with a stream error, in every copy.
    assert streaming["turns"] == 4
    assert streaming["turn_outcomes"] == {"stream_error": 4}
    assert set(report["early_start_saved_ms"]) == {"at_message_stop", "serial"}


def test_replay_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["traces", "replay", str(CLAUDE), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert len(report["sessions"]) == 2
    for session in report["sessions"]:
        assert set(session["policies"]) == {"streaming", "at_message_stop", "serial"}
    # Deterministic: the same logs and seed give the same report.
    assert main(["traces", "replay", str(CLAUDE), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == report
    assert main(["traces", "replay", str(CLAUDE)]) == 0
    assert "early start saved" in capsys.readouterr().out


def test_replay_table_shows_the_fault_paths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = tmp_path / "base.toml"
    base.write_text(
        'name = "b"\nseed = 3\n[load]\nmode = "closed"\nsessions = 1\nconcurrency = 1\n'
        "[model.faults]\ncut_after_tool_use_stop = 1.0\n"
    )
    assert main(["traces", "replay", str(CLAUDE), "--scenario", str(base)]) == 0
    assert "streaming: turn outcomes stream_error 1" in capsys.readouterr().out


def test_the_model_remembers_only_scripted_runs_and_forgets_them_with_the_session() -> None:
    from toolturn.model.config import ModelConfig
    from toolturn.model.model import MockModel
    from toolturn.model.response import StreamResponse, Turn

    script = {"kind": "explicit", "responses": [{"blocks": [
        {"type": "tool_use", "name": "Bash", "input": {"command": "ls"}, "duration_ms": 610,
         "result": "a.py"},
        {"type": "tool_use", "name": "Read", "input": {"file_path": "a.py"}},
    ]}]}
    model = MockModel(ModelConfig.model_validate({"script": script}), 1)
    body = {"model": model.name, "max_tokens": 1000,
            "messages": [{"role": "user", "content": "go"}]}
    response = model.respond(body, Turn(3, 0, 0))
    assert isinstance(response, StreamResponse)
    starts = [e["content_block"] for e in response.events if e["type"] == "content_block_start"]
    bash, read = (block["id"] for block in starts)
    scripted = model.scripted_call(3, bash)
    assert scripted is not None and scripted.duration_ms == 610 and scripted.result == "a.py"
    assert model.scripted_call(3, read) is None  # not scripted: the tool's draws decide
    model.forget_session(3)
    assert model.scripted_call(3, bash) is None


def test_odd_logged_calls_neither_crash_calibrate_nor_replay(tmp_path: Path) -> None:
    from toolturn.limits import MAX_JSON_DEPTH
    from toolturn.traces.calibrate import calibrated_scenario
    from toolturn.traces.sources import read_logs as read

    deep: dict[str, object] = {}
    for _ in range(MAX_JSON_DEPTH + 2):
        deep = {"a": deep}

    def call(mid: str, tid: str, name: str, given: dict[str, object]) -> dict[str, object]:
        return {"type": "assistant", "sessionId": "s", "timestamp": "2026-01-01T00:00:01Z",
                "message": {"id": mid, "role": "assistant", "stop_reason": "tool_use",
                            "content": [{"type": "tool_use", "id": tid, "name": name,
                                         "input": given}]}}

    def result(tid: str) -> dict[str, object]:
        return {"type": "user", "sessionId": "s", "timestamp": "2026-01-01T00:00:02Z",
                "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": tid, "content": "ok"}]}}

    lines = [
        {"type": "user", "sessionId": "s", "timestamp": "2026-01-01T00:00:00Z",
         "message": {"role": "user", "content": "go"}},
        call("m1", "t1", "Bash", {"command": "ls", "timeout": None}),  # TOML has no null
        result("t1"),
        call("m2", "t2", "my.tool", {"x": 1}),  # not a name the API takes
        result("t2"),
    ]
    path = tmp_path / "odd.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    logs = read([str(path)])
    text = calibrated_scenario(logs, "odd", 1)
    assert '# "my.tool" left out: not a valid API tool name' in text
    assert "examples" not in text  # the only Bash input holds a null
    (session,) = logs.sessions
    sequence = run_policy(replay_scenario(session, None, 1), "serial").tool_sequence
    # my.tool is answered as an unknown tool: never started, so no duration.
    assert sequence == [("Bash", 1000.0), ("my.tool", None)]
    # An input nested past what a scenario holds: the session is reported, not replayed.
    session.steps[0].tool_calls[0].input = deep
    report = replay_session(session, None, 1)
    assert report["error"].startswith("cannot be replayed:") and "policies" not in report


def test_the_model_remembers_scripted_runs_of_a_bounded_number_of_sessions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import toolturn.model.model as model_module
    from toolturn.model.config import ModelConfig
    from toolturn.model.model import MockModel
    from toolturn.model.response import StreamResponse, Turn

    monkeypatch.setattr(model_module, "SCRIPTED_RUN_SESSIONS", 2)
    script = {"kind": "explicit", "responses": [{"blocks": [
        {"type": "tool_use", "name": "Bash", "input": {}, "duration_ms": 5}]}]}
    model = MockModel(ModelConfig.model_validate({"script": script}), 1)
    body = {"model": model.name, "max_tokens": 100, "messages": [{"role": "user", "content": "x"}]}
    ids = {}
    for session in (1, 2, 3):  # as toolturn serve sees unnamed requests: never forgotten
        response = model.respond(body, Turn(session, 0, 0))
        assert isinstance(response, StreamResponse)
        ids[session] = next(e["content_block"]["id"] for e in response.events
                            if e["type"] == "content_block_start")
    assert model.scripted_call(1, ids[1]) is None
    assert model.scripted_call(2, ids[2]) is not None and model.scripted_call(3, ids[3]) is not None


def test_replay_runs_every_profile_of_the_scenario(tmp_path: Path) -> None:
    base = tmp_path / "base.toml"
    base.write_text(
        'name = "b"\nseed = 3\n[load]\nmode = "closed"\nsessions = 1\nconcurrency = 4\n'
        '[runtime]\nprofiles = ["default", "claude-code"]\n'
        "[model.faults]\ncut_after_tool_use_stop = 1.0\n"
    )
    sessions = read_logs([str(CLAUDE)]).sessions
    (session,) = [s for s in sessions if s.session_id.startswith("7a")]
    report = replay_session(session, load_scenario(base), 1)
    assert list(report["policies"]) == [
        "streaming", "at_message_stop", "serial",
        "streaming [claude-code]", "at_message_stop [claude-code]", "serial [claude-code]",
    ]
    default, claude = report["policies"]["streaming"], report["policies"]["streaming [claude-code]"]
    assert default["turn_outcomes"] == {"stream_error": 4}
    # The same cut under claude-code keeps the completed tool_use and goes on.
    assert claude["turn_outcomes"] != default["turn_outcomes"]
    assert claude["synthetic_results"] == 0
