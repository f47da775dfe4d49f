"""One scenario under every wire protocol (`[model] protocol`, issue 34 section 3): the same draws
(the same turns, calls and inputs), a `protocol` column in every table, and only the timing the
protocol changes: Responses as the Messages API, Chat Completions' implicit completion later."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tests.helpers.engine_runs import ARITHMETIC, scenario_of
from toolturn.engine import request_path
from toolturn.engine.runner import run_scenario, units_of
from toolturn.metrics.schema import TABLES
from toolturn.metrics.writer import RunMetadata, write_run_from_parts
from toolturn.runtime.protocol_timing import Retimed, retimed
from toolturn.scenario.schema import Scenario

PROTOCOLS = ["anthropic", "openai-responses", "openai-chat"]
# Two calls in one response, then text: under Chat Completions the first is known complete only
# when the second begins, the second only at finish_reason.
TWO_CALLS = ARITHMETIC.replace(
    '  { type = "tool_use", name = "Lint", input = { path = "a.py" } },\n',
    '  { type = "tool_use", name = "Lint", input = { path = "a.py" } },\n'
    '  { type = "text", text = "And the other file, to compare the two of them." },\n'
    '  { type = "tool_use", name = "Lint", input = { path = "b.py" } },\n',
)


def three_protocols(**overrides: Any) -> Scenario:
    return scenario_of(TWO_CALLS, **{"model.protocol": PROTOCOLS, **overrides})


def by_protocol(table: pa.Table, protocol: str, policy: str) -> list[dict[str, Any]]:
    mine = table.filter(pc.and_(pc.equal(table["protocol"].cast(pa.string()), protocol),
                                pc.equal(table["policy"].cast(pa.string()), policy)))
    return mine.to_pylist()


def test_the_protocols_are_arms_on_the_same_draws_with_a_protocol_column() -> None:
    scenario = three_protocols()
    assert {unit.protocol for unit in units_of(scenario)} == set(PROTOCOLS)
    tables = run_scenario(scenario).tables("r")
    for spec in TABLES:
        assert "protocol" in tables[spec.name].column_names, spec.name
    tools, turns = tables["tools"], tables["turns"]
    for policy in ("streaming", "at_message_stop", "serial"):
        story = {
            protocol: [(r["session_id"], r["turn_index"], r["tool_use_id"], r["tool_name"],
                        r["outcome"]) for r in by_protocol(tools, protocol, policy)]
            for protocol in PROTOCOLS
        }
        assert story["anthropic"] == story["openai-responses"] == story["openai-chat"]
        assert len(story["anthropic"]) == 2
        # Responses knows a call complete at its item's done event: the block stop's instant.
        assert by_protocol(tools, "openai-responses", policy) == [
            {**row, "protocol": "openai-responses"} for row in by_protocol(tools, "anthropic",
                                                                          policy)]
        assert by_protocol(turns, "openai-responses", policy) == [
            {**row, "protocol": "openai-responses"} for row in by_protocol(turns, "anthropic",
                                                                          policy)]


def test_chat_at_next_call_starts_later_than_streaming_on_the_messages_api() -> None:
    tables = run_scenario(three_protocols(**{"runtime.policies": ["streaming"]})).tables("r")
    messages = by_protocol(tables["tools"], "anthropic", "streaming")
    chat = by_protocol(tables["tools"], "openai-chat", "streaming")
    # The first call: known when the second begins; the second: at finish_reason.
    assert all(c["start_ns"] > m["start_ns"] for c, m in zip(chat, messages, strict=True))
    assert [c["block_stop_ns"] for c in chat] != [m["block_stop_ns"] for m in messages]
    turns = {r["protocol"]: r for r in tables["turns"].to_pylist() if r["turn_index"] == 1}
    assert turns["openai-chat"]["ttfts_ns"] > turns["anthropic"]["ttfts_ns"]
    assert turns["openai-chat"]["misfires"] == turns["anthropic"]["misfires"] == 0
    # Where the protocol makes no difference, nothing differs: the same inputs and draws.
    assert turns["openai-chat"]["n_tool_calls"] == turns["anthropic"]["n_tool_calls"] == 2
    assert turns["openai-chat"]["request_sent_ns"] == turns["anthropic"]["request_sent_ns"]


def test_at_parsed_json_starts_at_the_parse_before_the_block_ends() -> None:
    scenario = three_protocols(**{"runtime.policies": ["streaming"],
                                  "runtime.chat_start": "at_parsed_json"})
    tables = run_scenario(scenario).tables("r")
    messages = by_protocol(tables["tools"], "anthropic", "streaming")
    chat = by_protocol(tables["tools"], "openai-chat", "streaming")
    # The closing brace parses: as early as the block stop (here the same delta's instant).
    assert all(c["start_ns"] <= m["start_ns"] for c, m in zip(chat, messages, strict=True))


def test_a_protocol_sweep_is_the_same_bytes_serial_and_parallel(tmp_path: Path) -> None:
    scenario = three_protocols(**{"load.sessions": 2, "load.concurrency": 2})
    metadata = RunMetadata(run_id="r", scenario=scenario.name, scenario_sha256="0" * 64,
                           seed=scenario.seed, versions={}, git_commit=None)
    for name, jobs in (("serial", 1), ("parallel", 2)):
        write_run_from_parts(tmp_path / name, run_scenario(scenario, jobs=jobs).parts_in_order(),
                             metadata)
    for spec in TABLES:
        file = f"{spec.name}.parquet"
        assert (tmp_path / "serial" / file).read_bytes() == (tmp_path / "parallel" / file
                                                             ).read_bytes()


def test_a_misfire_reaches_the_turn_and_the_tool_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # The mock model never changes arguments after they parse: let the protocol's timing say the
    # first call of each Chat Completions response misfired, and follow it into the rows.
    def first_misfires(*args: Any) -> Retimed | None:
        out = retimed(*args)
        if out is None or not out.tool_stops:
            return out
        first = out.events[out.tool_stops[0]]["index"]
        ids = [e["content_block"]["id"] for e in out.events
               if e["type"] == "content_block_start" and e["index"] == first]
        return dataclasses.replace(out, misfired=tuple(ids))

    monkeypatch.setattr(request_path, "retimed", first_misfires)
    tables = run_scenario(three_protocols(**{"runtime.policies": ["streaming"]})).tables("r")
    turns = {r["protocol"]: r for r in tables["turns"].to_pylist() if r["turn_index"] == 1}
    assert turns["openai-chat"]["misfires"] == 1 and turns["anthropic"]["misfires"] == 0
    misfired = [(r["protocol"], r["tool_use_id"]) for r in tables["tools"].to_pylist()
                if r["misfired"]]
    chat = by_protocol(tables["tools"], "openai-chat", "streaming")
    assert misfired == [("openai-chat", chat[0]["tool_use_id"])]
