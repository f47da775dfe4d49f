"""`toolturn probe` end to end with a scripted agent (a small stdlib script, issue 30): repeats and
rates beside the claude-code profile's class, a relative path in the command, an agent that
never reaches the server failing its case, `probe compare` and its exit statuses, cut endings
checked in the suite, and `toolturn report` drawing a probe folder."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from toolturn.cli import main
from toolturn.commands.probe import split_words
from toolturn.errors import UserError
from toolturn.model.response import StreamResponse
from toolturn.probe.endings import end_cut
from toolturn.probe.suite import PACKAGED_SUITE, load_suite

# Asks without streaming, answers each call, stops after its second answer.
AGENT = '''
import json, os, urllib.request
url = os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages"
tools = [{"name": n, "description": n, "input_schema": {"type": "object", "properties": {
    f: {"type": "string"}}, "required": [f]}} for n, f in (("Bash", "command"),
                                                          ("Read", "file_path"))]
messages = [{"role": "user", "content": "Look at this project."}]
for _ in range(4):
    body = {"model": "claude-sonnet-4-6", "max_tokens": 1000, "messages": messages,
            "tools": tools}
    request = urllib.request.Request(url, json.dumps(body).encode(),
                                     {"content-type": "application/json", "x-api-key": "x"})
    answer = json.load(urllib.request.urlopen(request, timeout=30))
    if answer["stop_reason"] != "tool_use":
        break
    messages += [{"role": "assistant", "content": answer["content"]},
                 {"role": "user", "content": [
                     {"type": "tool_result", "tool_use_id": b["id"], "content": "ok"}
                     for b in answer["content"] if b["type"] == "tool_use"]}]
'''


def suite(folder: Path, case: str = "two_calls_clean", extra: str = "") -> Path:
    folder.mkdir()
    scenario = PACKAGED_SUITE / f"{case}.toml"
    (folder / "suite.toml").write_text(
        f'speed = 200\ntimeout_s = 30\ngive_up_s = 2\n\n[[case]]\nname = "{case}"\n'
        f'scenario = "{scenario}"\nfault = {{ kind = "none" }}\n{extra}', encoding="utf-8")
    return folder


def test_repeats_give_rates_beside_the_profile_and_a_relative_agent_path_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    folder = suite(tmp_path / "suite")
    status = main(["probe", str(folder), "--out", "out", "--repeat", "2", "--",
                   sys.executable, "./agent.py"])
    assert status == 0, capsys.readouterr()
    card = json.loads((tmp_path / "out" / "scorecard.json").read_text())
    [entry] = card["cases"]
    assert (entry["runs"], entry["rates"], entry["profile"], entry["agreement"]) == (
        2, {"calls_answered": 1.0}, "calls_answered", 1.0)
    assert entry["failed"] is None and card["repeat"] == 2
    assert [run["requests"] for run in entry["per_run"]] == [2, 2]
    assert card["command"][1] == str(tmp_path / "agent.py")
    for number in (1, 2):
        assert (tmp_path / "out" / "two_calls_clean" / f"run-{number}" / "requests.parquet"
                ).exists()  # a Parquet file or a folder of parts: the recorder's to say
    out = capsys.readouterr().out
    assert "| two_calls_clean | 2    | calls_answered | calls_answered | yes" in out
    assert main(["report", "out"]) == 0
    page = (tmp_path / "out" / "report" / "report.html").read_text()
    assert "two_calls_clean" in page and "calls_answered 100%" in page


def test_an_agent_that_never_reaches_the_server_fails_its_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = suite(tmp_path / "suite")
    out = tmp_path / "out"
    assert main(["probe", str(folder), "--out", str(out), "--", sys.executable, "-c",
                 "pass"]) == 1
    [entry] = json.loads((out / "scorecard.json").read_text())["cases"]
    assert entry["rates"] == {"no_request": 1.0} and "ANTHROPIC_BASE_URL" in entry["failed"]
    printed = capsys.readouterr().out
    assert "two_calls_clean (FAILED)" in printed and "1 cases failed: two_calls_clean" in printed


def card(path: Path, cases: dict[str, dict[str, float]]) -> Path:
    path.write_text(json.dumps({"cases": [{"case": name, "runs": 5, "rates": rates}
                                          for name, rates in cases.items()]}))
    return path


def test_compare_is_quiet_within_the_tolerance_and_names_the_cases_that_moved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = card(tmp_path / "old.json", {"a": {"calls_answered": 0.8, "calls_dropped_resumed": 0.2},
                                       "b": {"identical_retry": 1.0}})
    near = card(tmp_path / "near.json", {"a": {"calls_answered": 1.0},
                                         "b": {"identical_retry": 1.0}})
    far = card(tmp_path / "far.json", {"a": {"calls_answered": 0.2, "calls_dropped_resumed": 0.8},
                                       "b": {"identical_retry": 1.0}, "c": {"stopped": 1.0}})
    assert main(["probe", "compare", str(old), str(near)]) == 0
    assert "all 2 cases within 0.2" in capsys.readouterr().out
    assert main(["probe", "compare", str(old), str(near), "--tolerance", "0.1"]) == 1
    assert main(["probe", "compare", str(old), str(far)]) == 1
    out = capsys.readouterr().out
    assert "a: calls_answered 0.80 -> 0.20, calls_dropped_resumed 0.20 -> 0.80" in out
    assert "only in NEW (not compared): c" in out and "1 cases moved beyond 0.2: a" in out
    assert "b:" not in out
    only = card(tmp_path / "only.json", {"b": {"identical_retry": 0.9, "stopped": 0.1}})
    assert main(["probe", "compare", str(old), str(only)]) == 0
    assert "only in OLD (not compared): a" in capsys.readouterr().out


@pytest.mark.parametrize(("text", "problem"), [
    (None, "no such file"), ("{", "not a probe scorecard"), ('{"runs": 1}', "no \"cases\" list"),
    ('{"cases": [{"case": "a", "recovery": "x"}]}', "cases[0]: needs \"case\" and \"rates\""),
])
def test_compare_of_something_else_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | None, problem: str
) -> None:
    bad = tmp_path / "bad.json"
    if text is not None:
        bad.write_text(text)
    good = card(tmp_path / "good.json", {"a": {"stopped": 1.0}})
    assert main(["probe", "compare", str(good), str(bad)]) == 2
    assert problem in capsys.readouterr().err
    assert main(["probe", "compare", str(good), str(good), "--tolerance", "2"]) == 2


def test_a_suite_folder_named_compare_is_written_dot_slash_compare(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["probe", "./compare", "--", sys.executable, "-c", "pass"]) == 2
    assert "compare/suite.toml: no such file" in capsys.readouterr().err


@pytest.mark.parametrize(("extra", "problem"), [
    ('ending = "late_cut"\n', "ending 'late_cut' needs a cut fault"),
    ('ending = "fin"\nlate_cut_ms = 100\n', "late_cut_ms is for ending = \"late_cut\" only"),
    ('ending = "rst"\n', "ending"),
])
def test_a_cut_ending_is_checked_when_the_suite_is_read(
    tmp_path: Path, extra: str, problem: str
) -> None:
    with pytest.raises(UserError, match=problem):
        load_suite(suite(tmp_path / "suite", extra=extra))


def test_the_endings_of_a_cut() -> None:
    cut = StreamResponse(times=[0, 5_000_000], events=[{"type": "message_start"}, {}],
                         end_ns=5_000_000, ending="cut", message_id="msg_1", model="m",
                         tool_stops=())
    assert end_cut(cut, "fin", 200.0, 10.0) is cut
    assert end_cut(cut, "clean_eof", 200.0, 10.0).ending == "clean_eof"
    # 200 ms of wall clock at speed 10 is 2 s of the model's time after the last event.
    late = end_cut(cut, "late_cut", 200.0, 10.0)
    assert (late.ending, late.end_ns) == ("cut", 5_000_000 + 2_000_000_000)
    complete = StreamResponse(times=[0], events=[{}], end_ns=0, ending="complete",
                              message_id="m", model="m", tool_stops=())
    assert end_cut(complete, "late_cut", 200.0, 10.0) is complete


def test_the_default_suite_is_the_packaged_one() -> None:
    shipped = load_suite(PACKAGED_SUITE)
    endings = {case.name: case.ending for case in shipped.cases}
    assert endings["cut_after_tool_use_late_cut"] == "late_cut"
    assert endings["cut_after_tool_use_clean_eof"] == "clean_eof"
    assert PACKAGED_SUITE.parent.parent.name == "toolturn"


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_probe_claude_with_a_cli_of_ones_own_installs_nothing() -> None:
    root = Path(__file__).resolve().parents[2]
    planned = subprocess.run(
        ["make", "-n", "-C", str(root), "probe-claude", "CLAUDE=/opt/claude", "BIN=/opt/venv/bin",
         "PROBE_REPEAT=3"], capture_output=True, text=True, check=True).stdout
    assert "npm" not in planned and "pip" not in planned and "venv" not in planned.replace(
        "/opt/venv/bin", "")
    assert "/opt/claude --version" in planned and "--repeat 3" in planned


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_the_make_targets_probe_each_in_its_protocol() -> None:
    root = Path(__file__).resolve().parents[2]

    def planned(*words: str) -> str:
        return subprocess.run(["make", "-n", "-C", str(root), *words, "BIN=/opt/venv/bin"],
                              capture_output=True, text=True, check=True).stdout

    sdk = planned("probe-sdk")
    assert "for protocol in anthropic openai-responses openai-chat" in sdk
    assert "--protocol $protocol" in sdk and "sdk_agent --protocol $protocol" in sdk
    codex = planned("probe-codex", "CODEX=/opt/codex")
    assert "probe --protocol openai-responses" in codex and '$OPENAI_BASE_URL' in codex
    qwen = planned("probe-qwen", "QWEN=/opt/qwen")
    assert "probe --protocol openai-chat" in qwen and '"$OPENAI_BASE_URL"' in qwen


def test_only_the_program_and_words_that_look_like_paths_are_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "README.md").write_text("# here")
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "ask.txt").write_text("look")
    (tmp_path / "agent").write_text("#!/bin/sh\n")
    (tmp_path / "agent").chmod(0o755)
    monkeypatch.chdir(tmp_path)
    _, command = split_words(["--", "./agent", "-p", "README.md", "prompts/ask.txt",
                              "--file=./prompts/ask.txt", "--name=README.md", "missing/x"])
    assert command == [str(tmp_path / "agent"), "-p", "README.md",
                       str(tmp_path / "prompts" / "ask.txt"),
                       f"--file={tmp_path / 'prompts' / 'ask.txt'}", "--name=README.md",
                       "missing/x"]
