"""The raw-event trace (`toolturn run --trace`, the `events` table): a row per stream event fed to
the runtime, matching the requests table, only when asked for, the same bytes serially or in
parallel."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.helpers.engine_runs import ARITHMETIC, default_scenario, scenario_of
from tests.helpers.golden_runs import GOLDEN, write
from tests.helpers.scenarios import TINY
from toolturn.cli import main
from toolturn.engine.runner import run_scenario
from toolturn.engine.simulation import simulate
from toolturn.metrics.reader import read_run
from toolturn.metrics.schema import EVENTS, TABLES
from toolturn.scenario.loader import load_scenario
from toolturn.scenario.schema import Scenario

BLOCK_EVENTS = {"content_block_start", "content_block_delta", "content_block_stop"}


def traced_tables(scenario: Scenario) -> dict[str, pa.Table]:
    return run_scenario(scenario, trace=True).tables("traced")


def by_request(table: pa.Table) -> dict[tuple[Any, ...], list[dict[str, Any]]]:
    """Rows of `table` grouped by (policy, load, session, request), in the table's order."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for row in table.to_pylist():
        key = (row["policy"], row.get("load"), row["session_id"], row["request_index"])
        groups[key].append(row)
    return groups


def check_against_requests(tables: dict[str, pa.Table]) -> int:
    """Every request's events: as many as its n_events, numbered from 0, in time order, starting
    with message_start at its first_event_ns; returns the number of requests with events.

    The requests table has no load column: in a load sweep a (policy, session, request) names one
    request per load, so the two sides are compared as multisets per such key."""
    expected: dict[tuple[Any, ...], list[tuple[int, int, int]]] = defaultdict(list)
    for request in tables["requests"].to_pylist():
        if request["n_events"]:
            key = (request["policy"], request["session_id"], request["request_index"])
            expected[key].append(
                (request["n_events"], request["first_event_ns"], request["turn_index"])
            )
    found: dict[tuple[Any, ...], list[tuple[int, int, int]]] = defaultdict(list)
    for (policy, _, session_id, request_index), rows in by_request(tables["events"]).items():
        assert [row["event_index"] for row in rows] == list(range(len(rows)))
        times = [row["time_ns"] for row in rows]
        assert times == sorted(times)
        assert rows[0]["type"] == "message_start"
        assert len({row["turn_index"] for row in rows}) == 1
        found[(policy, session_id, request_index)].append(
            (len(rows), rows[0]["time_ns"], rows[0]["turn_index"])
        )
    assert {key: sorted(value) for key, value in found.items()} == {
        key: sorted(value) for key, value in expected.items()
    }
    return sum(len(value) for value in found.values())


def check_block_columns(table: pa.Table) -> None:
    for row in table.to_pylist():
        assert (row["block_index"] is not None) == (row["type"] in BLOCK_EVENTS), row
        assert (row["delta_type"] is not None) == (row["type"] == "content_block_delta"), row


def test_a_traced_run_has_a_row_per_event_fed_matching_the_requests_table() -> None:
    tables = traced_tables(default_scenario(4))
    assert tables["events"].schema == EVENTS.schema
    assert check_against_requests(tables) > 10
    check_block_columns(tables["events"])
    # Every policy is traced.
    assert set(tables["events"]["policy"].to_pylist()) == set(
        tables["requests"]["policy"].to_pylist()
    )


def test_the_trace_counts_what_the_engine_counts_and_changes_no_other_row() -> None:
    scenario = default_scenario(3)
    level = scenario.load.levels[0]
    plain = simulate(scenario, "streaming", level)
    traced = simulate(scenario, "streaming", level, trace=True)
    assert plain.trace is None
    assert traced.trace is not None
    assert len(traced.trace) == traced.events == plain.events
    assert traced.rows == plain.rows


def test_block_index_and_delta_type_follow_the_scripted_blocks() -> None:
    tables = traced_tables(scenario_of(ARITHMETIC, **{"runtime.policies": ["streaming"]}))
    events = tables["events"].to_pylist()
    check_against_requests(tables)
    check_block_columns(tables["events"])
    first = [row for row in events if row["request_index"] == 1]
    starts = [row["block_index"] for row in first if row["type"] == "content_block_start"]
    assert starts == [0, 1, 2]  # text, tool_use, text
    deltas = {row["block_index"]: row["delta_type"] for row in first if row["delta_type"]}
    assert deltas == {0: "text_delta", 1: "input_json_delta", 2: "text_delta"}
    kinds = [row["type"] for row in first]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"


def test_without_the_trace_no_events_are_kept() -> None:
    result = run_scenario(scenario_of(ARITHMETIC))
    assert list(result.parts.rglob("turns.*.parquet"))
    assert not list(result.parts.rglob("events.*parquet*"))  # no task wrote a trace
    assert "events" not in result.tables("plain")


def test_the_cli_writes_events_only_with_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tiny = tmp_path / "tiny.toml"
    tiny.write_text(TINY)
    plain, traced = tmp_path / "plain" / "run", tmp_path / "traced" / "run"  # one run_id
    assert main(["run", str(tiny), "--out", str(plain), "--no-report"]) == 0
    assert main(["run", str(tiny), "--out", str(traced), "--trace"]) == 0
    assert not (plain / "events.parquet").exists()
    assert (traced / "events.parquet").is_file()
    assert (traced / "report" / "report.html").is_file()
    run_json = json.loads((traced / "run.json").read_text())
    assert "events" not in json.loads((plain / "run.json").read_text())["row_counts"]
    folder = read_run(traced)
    assert folder.events is not None
    assert folder.events.num_rows == run_json["row_counts"]["events"] > 0
    assert set(folder.tables) == {spec.name for spec in TABLES}
    assert read_run(plain).events is None
    check_against_requests({**folder.tables, "events": folder.events})
    # The other tables are the same bytes with or without the trace.
    for spec in TABLES:
        name = f"{spec.name}.parquet"
        assert (plain / name).read_bytes() == (traced / name).read_bytes()
    # Report and compare work on a traced folder (and ignore the trace).
    capsys.readouterr()
    assert main(["report", str(traced)]) == 0
    assert main(["compare", str(plain), str(traced)]) == 0
    assert main(["compare", str(traced), str(traced)]) == 0


def test_traced_jobs_2_gives_the_same_events_file_as_a_serial_run(tmp_path: Path) -> None:
    scenario = load_scenario(GOLDEN / "open_sweep.toml")  # two policies at two loads, a horizon
    serial = run_scenario(scenario, trace=True)
    parallel = run_scenario(scenario, jobs=2, trace=True)
    write(serial, tmp_path / "serial")
    write(parallel, tmp_path / "parallel")
    for spec in (*TABLES, EVENTS):
        name = f"{spec.name}.parquet"
        serial_bytes = (tmp_path / "serial" / name).read_bytes()
        assert serial_bytes == (tmp_path / "parallel" / name).read_bytes()
    folder = read_run(tmp_path / "serial")
    assert folder.events is not None
    assert len(set(folder.events["load"].to_pylist())) == 2
    assert check_against_requests({**folder.tables, "events": folder.events}) > 0
