"""Repair speed: damaged transcripts of 100, 1,000 and 10,000 messages, to show linear growth.

    .venv/bin/pytest bench/bench_repair.py --benchmark-only

Each transcript is a realistic agent session (user text, assistant text with two tool calls and a
web search, user results) with about one damage per 25 messages (a missing result, an orphan, a
duplicate result, a result after text, a duplicated tool_use). Each benchmark prints its minimum
time per run and per message: linear growth means a flat per-message cost. Target (issue 6):
10,000 messages in under 50 ms.

Wall-clock time on a shared machine moves by tens of percent, so a reference runs in the same
process: `json.dumps` of the same 10,000-message transcript, the serialisation every request
pays right after the repair. The repair's cost is also printed as a ratio to it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolturn.runtime.repair import check_pairing, ensure_tool_result_pairing

SIZES = (100, 1_000, 10_000)
TARGET_SECONDS_AT_10K = 0.050
DAMAGE_EVERY_TURNS = 8  # a turn is about three messages: one damage per ~25 messages


def session(message_count: int) -> list[dict[str, Any]]:
    """A deterministic transcript of exactly `message_count` messages, lightly damaged."""
    messages: list[dict[str, Any]] = []
    turn = 0
    while len(messages) < message_count:
        first, second, search = f"toolu_{turn}a", f"toolu_{turn}b", f"srvtoolu_{turn}"
        damage = turn % DAMAGE_EVERY_TURNS == DAMAGE_EVERY_TURNS - 1
        kind = (turn // DAMAGE_EVERY_TURNS) % 5
        messages.append({"role": "user", "content": f"step {turn}: look at the logs"})
        assistant_blocks: list[dict[str, Any]] = [
            {"type": "text", "text": "Searching, then reading two files."},
            {
                "type": "server_tool_use",
                "id": search,
                "name": "web_search",
                "input": {"query": "q"},
            },
            {"type": "web_search_tool_result", "tool_use_id": search, "content": []},
            {"type": "tool_use", "id": first, "name": "read", "input": {"path": "a.log"}},
            {"type": "tool_use", "id": second, "name": "read", "input": {"path": "b.log"}},
        ]
        results: list[dict[str, Any]] = [
            {"type": "tool_result", "tool_use_id": first, "content": "alpha"},
            {"type": "tool_result", "tool_use_id": second, "content": "beta"},
        ]
        if damage and kind == 0:
            results.pop()  # missing result
        elif damage and kind == 1:
            results.append({"type": "tool_result", "tool_use_id": "toolu_gone", "content": "x"})
        elif damage and kind == 2:
            results.append(dict(results[0]))  # duplicate result
        elif damage and kind == 3:
            results.insert(0, {"type": "text", "text": "interrupted"})  # result after text
        elif damage and kind == 4:
            assistant_blocks.append(dict(assistant_blocks[3]))  # duplicate tool_use id
        messages.append({"role": "assistant", "content": assistant_blocks})
        messages.append({"role": "user", "content": results})
        messages.append({"role": "assistant", "content": [{"type": "text", "text": "Noted."}]})
        turn += 1
    del messages[message_count:]
    return messages


_reference_seconds: list[float] = []


def report(name: str, size: int, benchmark: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """Print the minimum time per run and per message, past pytest's output capture."""
    if benchmark.stats is None:  # --benchmark-disable: run once, nothing measured
        return
    seconds = benchmark.stats.stats.min
    benchmark.extra_info["messages"] = size
    benchmark.extra_info["ns_per_message"] = round(seconds / size * 1e9)
    line = (
        f"{name:<24} {size:>6} messages {seconds * 1e3:8.3f} ms "
        f"{seconds / size * 1e9:6.0f} ns/message"
    )
    if size == 10_000 and name.startswith("repair"):
        verdict = "met" if seconds < TARGET_SECONDS_AT_10K else "MISSED"
        line += f"  (target < {TARGET_SECONDS_AT_10K * 1e3:.0f} ms: {verdict})"
        if _reference_seconds:
            line += f"  {seconds / _reference_seconds[0]:.2f}x json.dumps"
    with capsys.disabled():
        print(f"\n  {line}", end="")


def test_reference_json_dumps_10000(benchmark: Any, capsys: pytest.CaptureFixture[str]) -> None:
    # Runs first (file order) so that the repair lines can print their ratio to it.
    body = benchmark(json.dumps, session(10_000))
    assert body.startswith("[")
    if benchmark.stats is not None:
        _reference_seconds.append(benchmark.stats.stats.min)
    report("reference json.dumps", 10_000, benchmark, capsys)


@pytest.mark.parametrize("size", SIZES)
def test_repair_damaged_session(
    benchmark: Any, capsys: pytest.CaptureFixture[str], size: int
) -> None:
    messages = session(size)
    repaired, repairs = benchmark(ensure_tool_result_pairing, messages)
    assert repairs, "the benchmark transcript must need repairs"
    assert check_pairing(repaired) == []
    report("repair (damaged)", size, benchmark, capsys)


def test_repair_valid_session_10000(benchmark: Any, capsys: pytest.CaptureFixture[str]) -> None:
    messages, _ = ensure_tool_result_pairing(session(10_000))
    _, repairs = benchmark(ensure_tool_result_pairing, messages)
    assert repairs == []
    report("repair (valid)", 10_000, benchmark, capsys)


def test_check_pairing_damaged_session_10000(
    benchmark: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    violations = benchmark(check_pairing, session(10_000))
    assert violations
    report("check_pairing (damaged)", 10_000, benchmark, capsys)
