"""A load sweep's tables: every row names its load level, every table joins one to one to
`sessions`, and the summary and the gate are per level (issue 14, section 1).

Before the fix, `requests`, `tools` and `repairs` had no load column and `session_id` restarted
at each level: a join to `sessions` fanned out once per level, and the summary pooled levels.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from tests.helpers.metrics_support import metadata
from toolturn.engine.runner import run_scenario
from toolturn.metrics import read_run, write_run
from toolturn.metrics.schema import SESSION_KEY, TABLES
from toolturn.metrics.summary import summarize
from toolturn.report.compare import compare_runs
from toolturn.scenario.loader import load_scenario

SWEEP = Path(__file__).parents[1] / "golden" / "open_sweep.toml"
# Besides the session key, what names a row of each table uniquely.
ROW_KEYS = {
    "turns": ("turn_index",),
    "tools": ("turn_index", "block_stop_ns", "tool_use_id"),
    "repairs": ("turn_index", "request_index", "kind", "tool_use_id"),
    "requests": ("turn_index", "request_index", "attempt"),
    "sessions": (),
}


@pytest.fixture(scope="module")
def tables() -> dict[str, pa.Table]:
    return run_scenario(load_scenario(SWEEP)).tables("sweep")


def _keys(table: pa.Table, columns: tuple[str, ...]) -> list[tuple[object, ...]]:
    data = table.select(list(columns)).to_pylist()
    return [tuple(str(row[c]) if c == "policy" else row[c] for c in columns) for row in data]


def test_the_sweep_has_two_levels_whose_session_ids_overlap(tables: dict[str, pa.Table]) -> None:
    # The fixture is a real sweep: the same session numbers recur at each level.
    sessions = tables["sessions"].to_pylist()
    assert {(row["load_level"], row["load"]) for row in sessions} == {(0, 0.5), (1, 2.0)}
    by_level = [{row["session_id"] for row in sessions if row["load_level"] == n} for n in (0, 1)]
    assert by_level[0] & by_level[1]


@pytest.mark.parametrize("name", [spec.name for spec in TABLES])
def test_every_table_joins_one_to_one_to_sessions(tables: dict[str, pa.Table], name: str) -> None:
    table = tables[name]
    assert table.num_rows > 0 or name == "repairs"
    sessions = tables["sessions"]
    session_keys = _keys(sessions, SESSION_KEY)
    assert len(set(session_keys)) == len(session_keys), "the session key is unique in the run"
    loads = {key: row["load"] for key, row in zip(session_keys, sessions.to_pylist(), strict=True)}
    keys = _keys(table, SESSION_KEY)
    # Every row finds exactly one session (no fan-out, none missing), with the same load.
    assert all(key in loads for key in keys)
    assert [row["load"] for row in table.select(["load"]).to_pylist()] == [loads[k] for k in keys]
    joined = table.join(sessions.select(list(SESSION_KEY)), keys=list(SESSION_KEY))
    assert joined.num_rows == table.num_rows
    rows = _keys(table, SESSION_KEY + ROW_KEYS[name])
    assert len(set(rows)) == len(rows), f"{name}: its key is unique in the run"


def test_the_summary_is_per_load_level(tables: dict[str, pa.Table]) -> None:
    summary = summarize(tables)
    counts = {
        (row.policy, row.load_level, row.load): row.value
        for row in summary
        if row.metric == "latency_ns.count"
    }
    turns = tables["turns"].to_pylist()
    for (policy, level, load), count in counts.items():
        mine = [t for t in turns if t["policy"] == policy and t["load_level"] == level]
        assert count == len(mine) and all(t["load"] == load for t in mine)
    assert {level for _, level, _ in counts} == {0, 1}
    assert sum(counts.values()) == len(turns)


def test_the_gate_fails_a_change_at_one_level_and_names_it(
    tables: dict[str, pa.Table], tmp_path: Path
) -> None:
    base = tmp_path / "base"
    write_run(base, tables, metadata())
    # One turn of level 1 twice as slow: only level 1's metrics may move.
    turns = tables["turns"]
    latency = turns["latency_ns"].to_pylist()
    levels = turns["load_level"].to_pylist()
    target = levels.index(1)
    latency[target] *= 2
    index = turns.schema.get_field_index("latency_ns")
    field = turns.schema.field(index)
    changed = dict(tables, turns=turns.set_column(index, field, pa.array(latency, pa.int64())))
    new = tmp_path / "new"
    write_run(new, changed, metadata())
    failed = [c for c in compare_runs(read_run(base), read_run(new)) if c.beyond_tolerance]
    assert failed and {change.load_level for change in failed} == {1}
