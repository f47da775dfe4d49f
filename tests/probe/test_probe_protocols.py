"""The probe suite in every protocol: the official `openai` SDK (Responses and Chat Completions,
sync and async, `stream(...)` and `create(stream=True)`) as the client of every shipped probe
case through `toolturn.probe.sdk_agent`, in this process, classed by the same rules as the
Anthropic suite; and `toolturn probe --protocol` end to end, with the environment it sets."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from tests.probe.test_probe_cases import CASES, FAST, SDK_CLASSES
from toolturn.cli import main
from toolturn.probe import sdk_agent
from toolturn.probe.runner import WORKDIR_FILES, CaseRun, agent_env, serve_case
from toolturn.probe.scorecard import score
from toolturn.wire.codecs import ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES

OPENAI = (OPENAI_RESPONSES, OPENAI_CHAT)
# Where a protocol's shape (or its SDK) makes the same plain agent do otherwise than on the
# Messages API: (protocol, case, "stream" / "create" or None for both) -> class.
DIFFERENT: dict[tuple[str, str, str | None], str] = {
    # A body that ends cleanly without its last event: no response.completed (both ways, a
    # broken stream), no finish_reason (our chunk joiner's word; the SDK's chat stream helper
    # takes the partial completion as final, without tool_calls, and stops, as on Messages).
    (OPENAI_RESPONSES, "cut_after_tool_use_clean_eof", None): "identical_retry",
    (OPENAI_CHAT, "cut_after_tool_use_clean_eof", "create"): "identical_retry",
    # Two calls of one id: the Responses stream helper refuses the stream (RuntimeError, a
    # retry); neither OpenAI API's checks here refuse the results of a duplicate id, so the
    # transcript is not broken and the calls are answered.
    (OPENAI_RESPONSES, "duplicate_tool_ids", "stream"): "identical_retry",
    (OPENAI_RESPONSES, "duplicate_tool_ids", "create"): "calls_answered",
    (OPENAI_CHAT, "duplicate_tool_ids", None): "calls_answered",
    # An OpenAI tool result has no error flag: a result saying the call failed is a result.
    **{(protocol, name, None): "calls_answered" for protocol in (OPENAI_RESPONSES, OPENAI_CHAT)
       for name in ("unknown_tool", "invalid_tool_input")},
    # Responses has no stop reason beside the calls: a completed response's calls are run.
    (OPENAI_RESPONSES, "end_turn_with_tool_use", None): "calls_answered",
    # max_output_tokens: `incomplete`, which the Responses stream helper raises on (a retry).
    (OPENAI_RESPONSES, "max_tokens_closed_tool_use", "stream"): "identical_retry",
    (OPENAI_RESPONSES, "max_tokens_open_tool_use", "stream"): "identical_retry",
}


def expected_class(protocol: str, name: str, mode: str) -> str:
    way = mode.rpartition("-")[2]
    for key in ((protocol, name, way), (protocol, name, None)):
        if key in DIFFERENT:
            return DIFFERENT[key]
    return SDK_CLASSES[name]


def run_agent(case_name: str, protocol: str, mode: str, workdir: Path,
              monkeypatch: pytest.MonkeyPatch) -> tuple[int, CaseRun]:
    for name, text in WORKDIR_FILES.items():
        (workdir / name).parent.mkdir(parents=True, exist_ok=True)
        (workdir / name).write_text(text)
    monkeypatch.chdir(workdir)
    case = CASES[case_name]
    with serve_case(case, FAST, workdir, lambda _: None) as (server, tap):
        for key, value in agent_env(server.base_url, workdir, case.name, protocol).items():
            if key.startswith(("OPENAI_", "ANTHROPIC_")):
                monkeypatch.setenv(key, value)
        model = sdk_agent.DEFAULT_MODELS[protocol]
        if mode.startswith("async"):
            status = asyncio.run(sdk_agent.run_async(mode, model, protocol))
        else:
            status = sdk_agent.run_sync(mode, model, protocol)
    return status, CaseRun(case, status, 0.0, tap.tables(), [], "", tuple(tap.exchanges))


@pytest.mark.parametrize("mode", sdk_agent.MODES)
@pytest.mark.parametrize("protocol", OPENAI)
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_openai_sdk_agent_against_every_probe_case(
    name: str, protocol: str, mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    status, run = run_agent(name, protocol, mode, tmp_path, monkeypatch)
    card = score(run)
    assert card["class"] == expected_class(protocol, name, mode)
    assert card["protocols"] == [protocol]
    requests = run.tables["requests"].to_pylist()
    assert requests[0]["turn_index"] == 1 and requests[0]["status"] in (200, 503, 529)
    if SDK_CLASSES[name] == "calls_answered" and name.startswith(("two_calls", "out_of")):
        assert status == 0 and len(requests) == 2 and card["lost"] == 0


def test_the_environment_of_each_protocol(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-key-of-the-caller")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "a-real-token")
    base = "http://127.0.0.1:9"
    anthropic_env = agent_env(base, tmp_path, "c", ANTHROPIC)
    assert anthropic_env["ANTHROPIC_BASE_URL"] == base
    assert "OPENAI_API_KEY" not in anthropic_env and "ANTHROPIC_AUTH_TOKEN" not in anthropic_env
    for protocol in OPENAI:
        env = agent_env(base, tmp_path, "c", protocol)
        assert env["OPENAI_BASE_URL"] == base + "/v1"
        assert env["OPENAI_API_KEY"] != "sk-real-key-of-the-caller"
        assert env["ANTHROPIC_BASE_URL"] == base  # as today: the Makefile's commands read it


def test_probe_protocol_end_to_end_names_it_in_the_scorecard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "probe"
    status = main(["probe", "--protocol", OPENAI_CHAT, "--out", str(out), "--case",
                   "two_calls_clean", "--", sys.executable, "-m", "toolturn.probe.sdk_agent",
                   "--protocol", OPENAI_CHAT, "--mode", "sync-create"])
    assert status == 0, capsys.readouterr().out
    card = json.loads((out / "scorecard.json").read_text())
    assert card["protocol"] == OPENAI_CHAT
    (entry,) = card["cases"]
    assert entry["rates"] == {"calls_answered": 1.0}
    assert entry["per_run"][0]["protocols"] == [OPENAI_CHAT]
    assert "toolturn probe: 1 cases in openai-chat" in capsys.readouterr().out


def test_an_unknown_protocol_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["probe", "--protocol", "grpc", "--", "true"])
    assert stop.value.code == 2 and "--protocol" in capsys.readouterr().err
