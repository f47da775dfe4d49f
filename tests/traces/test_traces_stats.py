"""`toolturn traces stats`: figures checked by hand on the small request-log
fixture; the command."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from toolturn.cli import main
from toolturn.traces.sources import read_logs
from toolturn.traces.stats import trace_stats

FIXTURES = Path(__file__).parents[1] / "fixtures" / "traces"
SMALL = FIXTURES / "requests" / "small.jsonl"


def test_stats_of_the_small_fixture_by_hand() -> None:
    f = trace_stats(read_logs([str(SMALL)]))
    # Session "a": 3 requests making 1, 2 and 0 calls; the plain-body session: 2 requests, the
    # first answered (by what the second holds) with 1 call, the second's answer not logged.
    assert (f["sessions"], f["requests"], f["tool_calls"]) == (2, 5, 4)
    assert (f["model_steps"], f["requests_without_response"]) == (4, 1)
    assert f["tool_calls_by_tool"] == {"Bash": 1, "Glob": 1, "Grep": 1, "Read": 1}
    per_step = f["tool_calls_per_step"]  # [1, 2, 0, 1]: sorted 0 1 1 2
    assert per_step["mean"] == 1.0 and per_step["p50"] == 1.0
    assert per_step["p90"] == pytest.approx(1.7) and per_step["max"] == 2.0
    assert f["parallel_share"] == pytest.approx(1 / 3)  # 1 of 3 steps with calls made 2
    # Bash: answered in the request sent at 1764591003.5 s, its response done at 1764591001.0 s.
    # Read: 1764591004.25 s - 1764591004.0 s. Grep's result never came; Glob's lines have no times.
    assert f["tool_duration_ms_by_tool"] == {
        "Bash": {"n": 1, "p50": 2500.0, "p90": 2500.0, "max": 2500.0},
        "Read": {"n": 1, "p50": 250.0, "p90": 250.0, "max": 250.0},
    }
    assert f["output_tokens_per_response"]["mean"] == pytest.approx(35 / 3)
    # The third request of "a" leaves Grep's t3 unanswered; the plain one answers t_orphan.
    assert f["repairs_by_kind"] == {"missing_result_inserted": 1, "orphan_result_removed": 1}
    assert f["repairs_per_1000_requests"] == {
        "missing_result_inserted": 200.0, "orphan_result_removed": 200.0
    }
    where = {(r["where"].rsplit(":", 1)[1], r["kind"], r["message_index"], r["tool_use_id"])
             for r in f["repair_locations"]}
    assert where == {("5", "missing_result_inserted", 4, "t3"),
                     ("8", "orphan_result_removed", 2, "t_orphan")}
    assert f["pairing_violations"] == 2
    assert f["skipped_lines"]["count"] == 3
    assert f["api_errors"] == 0 and f["think_time_ms"]["n"] == 0


def test_stats_json_has_the_named_keys_and_out_writes_parquet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tables"
    assert main(["traces", "stats", str(SMALL), str(FIXTURES / "claude-code"), "--json",
                 "--out", str(out)]) == 0
    captured = capsys.readouterr()
    figures = json.loads(captured.out)
    for key in ("sessions", "requests", "tool_calls", "tool_calls_by_tool",
                "tool_duration_ms_by_tool", "repairs_by_kind", "skipped_lines"):
        assert key in figures
    assert figures["sessions"] == 4 and figures["requests"] == 12
    assert f"{SMALL}:2: skipped: not JSON" in captured.err
    assert "skipped 3 lines" in captured.err
    assert pq.read_table(out / "tool_calls.parquet").num_rows == 10
    assert pq.read_table(out / "repairs.parquet").num_rows == 2
    assert pq.read_table(out / "skipped.parquet").column("line").to_pylist() == [2, 4, 6]
    # The folder exists now: not replaced without --force.
    assert main(["traces", "stats", str(SMALL), "--out", str(out)]) == 2


def test_stats_table_names_the_repairs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["traces", "stats", str(SMALL)]) == 0
    text = capsys.readouterr().out
    assert "missing_result_inserted" in text and "200.0 per 1,000 requests" in text
    assert f"at {SMALL}:5 (request 2, message 4)" in text


def test_a_missing_log_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["traces", "stats", "no/such.jsonl"]) == 2
    assert "no/such.jsonl: no such file or folder" in capsys.readouterr().err
