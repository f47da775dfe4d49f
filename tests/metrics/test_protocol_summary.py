"""The summary of a protocol sweep (issue 34 section 3): each protocol's arms summarised alone
(the rows name their protocol; nothing pools across protocols), misfire rows on Chat
Completions, the same rows in memory and from the run folder, and the terminal's and the report's
answer per protocol."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from tests.engine.test_protocols import three_protocols
from toolturn.engine.runner import run_scenario
from toolturn.metrics.summary import summarize
from toolturn.metrics.summary_table import summary_renderables
from toolturn.metrics.writer import RunMetadata, write_run_from_parts
from toolturn.report.html import by_protocol


def test_each_protocol_is_summarised_alone_in_memory_and_from_files(tmp_path: Path) -> None:
    scenario = three_protocols()
    result = run_scenario(scenario)
    in_memory = summarize(result.tables("r"))
    metadata = RunMetadata(run_id="r", scenario=scenario.name, scenario_sha256="0" * 64,
                           seed=scenario.seed, versions={}, git_commit=None)
    from_files = write_run_from_parts(tmp_path / "r", result.parts_in_order(), metadata)
    assert [row.key for row in from_files] == [row.key for row in in_memory]
    assert [row.value for row in from_files if not row.wall_clock] == [
        row.value for row in in_memory if not row.wall_clock]
    assert list(dict.fromkeys(row.protocol for row in in_memory)) == [
        "anthropic", "openai-chat", "openai-responses"]
    # One session of one prompt per arm: each protocol's turn count is its own, never pooled.
    alone = summarize(run_scenario(three_protocols(**{"model.protocol": "openai-chat"}))
                      .tables("r"))
    counts = {(row.protocol, row.policy): row.value for row in in_memory
              if row.metric == "latency_ns.count"}
    assert counts[("openai-chat", "streaming")] == next(
        row.value for row in alone
        if row.metric == "latency_ns.count" and row.policy == "streaming")
    misfires = {row.protocol for row in in_memory if row.metric.startswith("misfires.")}
    assert misfires == {"openai-chat"}
    assert {row.protocol for row in alone} == {"openai-chat"}


def test_the_terminal_and_the_report_answer_per_protocol() -> None:
    summary = summarize(run_scenario(three_protocols()).tables("r"))
    console = Console(width=200, record=True)
    console.print(summary_renderables(summary))
    text = console.export_text()
    for protocol in ("anthropic", "openai-responses", "openai-chat"):
        assert f"on {protocol}: streaming vs at_message_stop" in text
    chat_line = next(line for line in text.splitlines() if line.startswith("on openai-chat"))
    assert "misfires 0.0 per 1k calls" in chat_line
    assert [lead for lead, _ in by_protocol(summary)] == [
        "on anthropic: ", "on openai-chat: ", "on openai-responses: "]
    one = [row for row in summary if row.protocol == "anthropic"]
    assert [lead for lead, _ in by_protocol(one)] == [""]  # one protocol: the page as before


def test_each_protocols_arms_get_their_own_harness_speed(tmp_path: Path) -> None:
    # The speed is measured per simulation, and a protocol's arms are simulations of their own:
    # pooled, every protocol showed one number for all of them.
    scenario = three_protocols()
    result = run_scenario(scenario)
    speeds = result.events_per_wall_s()
    assert {key[3] for key in speeds} == {"anthropic", "openai-chat", "openai-responses"}
    speeds = {key: 1000.0 * (index + 1) for index, key in enumerate(sorted(speeds))}
    metadata = RunMetadata(run_id="r", scenario=scenario.name, scenario_sha256="0" * 64,
                           seed=scenario.seed, versions={}, git_commit=None)
    for rows in (summarize(result.tables("r"), events_per_wall_s=speeds),
                 write_run_from_parts(tmp_path / "r", result.parts_in_order(), metadata,
                                      events_per_wall_s=speeds)):
        shown = {(row.profile, row.policy, row.load_level, row.protocol): row.value
                 for row in rows if row.metric == "harness.events_per_wall_s"}
        assert shown == speeds
