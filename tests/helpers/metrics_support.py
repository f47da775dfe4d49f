"""A small hand-made run whose summary is worked out by hand, shared by the metrics tests.

Policy ``streaming``: sessions 0 and 1, two turns each.
  ttfts_ns   10, 20, 30 and one turn without tools          -> p50 20, p90 30 (method "higher")
  latency_ns 100, 200, 300, 1_999_999_000                   -> p50 300, p90 1_999_999_000
  start_lag  0, 0, 5, 7 and one synthetic (never started)   -> p50 5, p90 7
  5 requests (one turn retried on a fallback model), 100 output tokens each
  repairs: 2 missing_result, 1 orphan_removed               -> 400 + 200 = 600 per 1k requests
  synthetic: 1 user_interrupt                               -> 200 per 1k requests
  span 0 .. 2_000_000_000 ns, 3 completed turns             -> 1.5 turns/s, 250 tokens/s
Policy ``serial``: one session, one turn: ttfts 50, latency 1e9, lag 40, 1 request of 10 tokens.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from toolturn.metrics import RunCollector, RunMetadata

SCENARIO = "handmade"
SEED = 7


def turn(
    policy: str,
    session: int,
    index: int,
    sent: int,
    ttfts: int | None,
    latency: int,
    outcome: str = "completed",
    load: float | None = None,
    load_level: int = 0,
) -> dict[str, Any]:
    return {
        "policy": policy,
        "profile": "default",
        "protocol": "anthropic",
        "load_level": load_level,
        "load": load,
        "session_id": session,
        "turn_index": index,
        "model": "claude-test",
        "request_sent_ns": sent,
        "first_event_ns": sent + 1,
        "message_stop_ns": sent + 2,
        "first_tool_start_ns": None if ttfts is None else sent + ttfts,
        "ttfts_ns": ttfts,
        "turn_end_ns": sent + latency,
        "latency_ns": latency,
        "n_attempts": 1,
        "n_tool_calls": 0 if ttfts is None else 1,
        "n_synthetic_results": 0,
        "n_repairs": 0,
        "misfires": 0,
        "input_tokens": 5,
        "output_tokens": 100,
        "stop_reason": "tool_use",
        "outcome": outcome,
    }


def tool(
    policy: str,
    session: int,
    index: int,
    tool_id: str,
    block_stop: int,
    lag: int | None,
    cause: str | None = None,
    load_level: int = 0,
    load: float | None = None,
) -> dict[str, Any]:
    start = None if lag is None else block_stop + lag
    return {
        "policy": policy,
        "profile": "default",
        "protocol": "anthropic",
        "load_level": load_level,
        "load": load,
        "session_id": session,
        "turn_index": index,
        "tool_use_id": tool_id,
        "tool_name": "Read",
        "block_stop_ns": block_stop,
        "queued_ns": block_stop,
        "start_ns": start,
        "end_ns": None if start is None else start + 50,
        "start_lag_ns": lag,
        "outcome": "success" if cause is None else "cancelled",
        "synthetic_cause": cause,
        "misfired": False,
    }


def request(
    policy: str,
    session: int,
    index: int,
    attempt: int = 0,
    tokens: int = 100,
    sent: int = 0,
    load_level: int = 0,
    load: float | None = None,
) -> dict[str, Any]:
    return {
        "policy": policy,
        "profile": "default",
        "protocol": "anthropic",
        "load_level": load_level,
        "load": load,
        "session_id": session,
        "turn_index": index,
        "request_index": 0,
        "attempt": attempt,
        "model": "claude-test" if attempt == 0 else "claude-fallback",
        "status": "ok" if attempt else "529",
        "retries": attempt,
        "fault": None,
        "sent_ns": sent,
        "first_event_ns": sent + 1,
        "end_ns": sent + 2,
        "input_tokens": 5,
        "output_tokens": tokens,
        "n_events": 12,
    }


def repair(
    policy: str,
    session: int,
    index: int,
    kind: str,
    tool_id: str,
    load_level: int = 0,
    load: float | None = None,
) -> dict[str, Any]:
    return {
        "policy": policy,
        "profile": "default",
        "protocol": "anthropic",
        "load_level": load_level,
        "load": load,
        "session_id": session,
        "turn_index": index,
        "request_index": 0,
        "kind": kind,
        "tool_use_id": tool_id,
    }


def session(
    policy: str, session_id: int, n_turns: int, load: float | None = None, load_level: int = 0
) -> dict[str, Any]:
    return {
        "policy": policy,
        "profile": "default",
        "protocol": "anthropic",
        "load_level": load_level,
        "load": load,
        "session_id": session_id,
        "arrival_ns": 0,
        "start_ns": 0,
        "end_ns": 2_000_000_000,
        "n_turns": n_turns,
        "outcome": "completed",
        "n_interrupts": 0,
        "n_compactions": 0,
        "n_calls_lost": 0,
    }


def handmade_rows() -> list[tuple[str, dict[str, Any]]]:
    """(table, row) pairs of the hand-made run, in an arbitrary but fixed order."""
    s = "streaming"
    return [
        ("turns", turn(s, 0, 0, sent=0, ttfts=10, latency=100)),
        ("turns", turn(s, 0, 1, sent=500, ttfts=20, latency=200)),
        ("turns", turn(s, 1, 0, sent=0, ttfts=30, latency=300)),
        (
            "turns",
            turn(s, 1, 1, sent=1_000, ttfts=None, latency=1_999_999_000, outcome="interrupted"),
        ),
        ("turns", turn("serial", 0, 0, sent=0, ttfts=50, latency=1_000_000_000)),
        ("tools", tool(s, 0, 0, "toolu_a", block_stop=10, lag=0)),
        ("tools", tool(s, 0, 1, "toolu_b", block_stop=510, lag=0)),
        ("tools", tool(s, 0, 1, "toolu_c", block_stop=512, lag=5)),
        ("tools", tool(s, 1, 0, "toolu_d", block_stop=23, lag=7)),
        ("tools", tool(s, 1, 1, "toolu_e", block_stop=1_020, lag=None, cause="user_interrupt")),
        ("tools", tool("serial", 0, 0, "toolu_f", block_stop=10, lag=40)),
        ("requests", request(s, 0, 0)),
        ("requests", request(s, 0, 1, sent=500)),
        ("requests", request(s, 1, 0)),
        ("requests", request(s, 1, 0, attempt=1)),
        ("requests", request(s, 1, 1, sent=1_000)),
        ("requests", request("serial", 0, 0, tokens=10)),
        ("repairs", repair(s, 0, 1, "missing_result", "toolu_b")),
        ("repairs", repair(s, 1, 1, "missing_result", "toolu_e")),
        ("repairs", repair(s, 1, 1, "orphan_removed", "toolu_z")),
        ("sessions", session(s, 0, 2)),
        ("sessions", session(s, 1, 2)),
        ("sessions", session("serial", 0, 1)),
    ]


def collect(rows: list[tuple[str, dict[str, Any]]], scenario: str = SCENARIO) -> RunCollector:
    collector = RunCollector(run_id="run-1", scenario=scenario, seed=SEED)
    for table, row in rows:
        collector.add(table, row)
    return collector


def handmade_tables() -> dict[str, pa.Table]:
    return collect(handmade_rows()).tables()


def metadata(scenario: str = SCENARIO, sha256: str = "0" * 64) -> RunMetadata:
    """Fixed metadata (no versions or commit read from this machine), for byte-exact tests."""
    return RunMetadata(
        run_id="run-1",
        scenario=scenario,
        scenario_sha256=sha256,
        seed=SEED,
        versions={"sim": "0.1.0", "numpy": "x", "pyarrow": "x", "simpy": "x", "anthropic": "x"},
        git_commit=None,
    )
