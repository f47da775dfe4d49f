"""A run's rows written as they come (toolturn.metrics.parts), its tables assembled in fixed row
groups (toolturn.metrics.assemble), its summary read back arm by arm
(toolturn.metrics.summary_files), its blocks of independent sessions (toolturn.engine.blocks) and a
resumed run's parts."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from tests.golden.regenerate import golden_scenario
from toolturn.engine import blocks
from toolturn.engine import task as tasks
from toolturn.engine.plan import Task
from toolturn.engine.recorder import TABLE_NAMES
from toolturn.engine.runner import run_scenario, tasks_of, units_of
from toolturn.engine.simulation import simulate
from toolturn.engine.task import TaskStats
from toolturn.errors import UserError
from toolturn.experiment.points import Point
from toolturn.metrics import assemble, parts
from toolturn.metrics.collector import RunCollector
from toolturn.metrics.row_columns import with_constants
from toolturn.metrics.schema import TABLES
from toolturn.metrics.summary import summarize
from toolturn.metrics.summary_files import summarize_folder
from toolturn.metrics.writer import RunMetadata, write_run, write_run_from_parts
from toolturn.scenario.loader import load_scenario, with_overrides
from toolturn.scenario.schema import Scenario

GOLDEN = Path(__file__).parents[1] / "golden"


def in_memory(scenario: Scenario, run_id: str) -> dict[str, object]:
    """The tables the way they were made before rows were written as they come: every unit's rows
    kept, then sorted at once."""
    collector = RunCollector(run_id=run_id, scenario=scenario.name, seed=scenario.seed)
    for unit in units_of(scenario):
        result = simulate(
            scenario, unit.policy, unit.load, load_level=unit.load_level, profile=unit.profile
        )
        for name in TABLE_NAMES:
            collector.add_columns(name, with_constants(result.rows[name], result.columns))
    return dict(collector.tables())


def metadata(scenario: Scenario) -> RunMetadata:
    return RunMetadata(
        run_id="r", scenario=scenario.name, scenario_sha256="0" * 64, seed=scenario.seed,
        versions={}, git_commit=None,
    )


def two_profile_sweep() -> Scenario:
    scenario = load_scenario(GOLDEN / "open_sweep.toml")
    return with_overrides(scenario, profiles=["default", "claude-code"])


def test_rows_written_as_they_come_are_the_tables_kept_in_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Row groups of two sessions: sessions end out of order, so some wait for an older one.
    monkeypatch.setattr(parts, "FLUSH_SESSIONS", 2)
    scenario = two_profile_sweep()
    result = run_scenario(scenario)
    folder, constants = result.parts_in_order()[0]
    # A plain scenario: no point columns; the unit's own columns are constants of its parts.
    assert constants == {"seed": scenario.seed, "policy": "at_message_stop",
                         "profile": "claude-code", "protocol": "anthropic", "load_level": 0,
                         "load": 0.5}
    part_file = pq.ParquetFile(folder / "sessions.0.parquet")
    assert part_file.num_row_groups == 6  # 12 sessions, flushed every 2
    # The engine's rows do not carry them (issue 32: added once, at assembly).
    assert not set(constants) & set(part_file.schema_arrow.names)
    assert result.tables("r") == in_memory(scenario, "r")


def test_a_long_unit_rolls_its_part_files_and_the_run_folder_is_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = two_profile_sweep()
    whole = run_scenario(scenario)
    write_run_from_parts(tmp_path / "one", whole.parts_in_order(), metadata(scenario))
    # A row group every 2 sessions, a new part file every 2 row groups: 12 sessions, 3 files.
    monkeypatch.setattr(parts, "FLUSH_SESSIONS", 2)
    monkeypatch.setattr(parts, "GROUPS_PER_FILE", 2)
    rolled = run_scenario(scenario)
    folder, _ = rolled.parts_in_order()[0]
    files = parts.part_files(folder, "sessions")
    assert [pq.ParquetFile(path).num_row_groups for path in files] == [2, 2, 2]
    assert sorted(path.name for path in folder.glob("sessions.*")) == [path.name for path in files]
    write_run_from_parts(tmp_path / "rolled", rolled.parts_in_order(), metadata(scenario))
    for spec in TABLES:
        name = f"{spec.name}.parquet"
        assert (tmp_path / "rolled" / name).read_bytes() == (tmp_path / "one" / name).read_bytes()
    assert rolled.tables("r") == whole.tables("r")


def test_the_summary_read_arm_by_arm_is_the_summary_of_the_whole_tables(tmp_path: Path) -> None:
    scenario = two_profile_sweep()
    tables = in_memory(scenario, "r")
    speeds = {("claude-code", "serial", 1, "anthropic"): 5.0,
              ("default", "streaming", 0, "anthropic"): 7.0}
    whole = write_run(tmp_path / "run", tables, metadata(scenario), events_per_wall_s=speeds)
    assert len({row.profile for row in whole}) == 2 and len({row.load_level for row in whole}) == 2
    assert summarize_folder(tmp_path / "run", events_per_wall_s=speeds) == whole
    assert whole == summarize(tables, events_per_wall_s=speeds)


def test_the_summary_read_arm_by_arm_has_the_session_fault_rows(tmp_path: Path) -> None:
    scenario = with_overrides(golden_scenario("resume_storm"), sessions=6)
    tables = in_memory(scenario, "r")
    whole = write_run(tmp_path / "run", tables, metadata(scenario))
    assert any(row.metric.startswith("repairs_by_cause_per_1k_requests.") for row in whole)
    assert summarize_folder(tmp_path / "run") == whole


def test_row_groups_have_a_fixed_size_whatever_the_units(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(assemble, "ROW_GROUP_ROWS", 7)
    scenario = two_profile_sweep()
    result = run_scenario(scenario)
    write_run_from_parts(tmp_path / "run", result.parts_in_order(), metadata(scenario))
    turns = pq.ParquetFile(tmp_path / "run" / "turns.parquet")
    sizes = [turns.metadata.row_group(i).num_rows for i in range(turns.num_row_groups)]
    assert len(sizes) > 3 and set(sizes[:-1]) == {7} and 0 < sizes[-1] <= 7
    assert plain(pq.read_table(tmp_path / "run" / "turns.parquet")) == plain(
        result.tables("r")["turns"]
    )


def plain(table: pa.Table) -> pa.Table:
    """`table` with its dictionary columns decoded (a file's row groups each have their own)."""
    return pa.table(
        {
            name: column.cast(column.type.value_type)
            if pa.types.is_dictionary(column.type) else column
            for name, column in zip(table.column_names, table.columns, strict=True)
        }
    )


def open_unlimited(sessions: int) -> Scenario:
    """Open-loop arrivals, an endpoint without a capacity: sessions independent."""
    scenario = load_scenario(GOLDEN / "open_sweep.toml")
    data = scenario.model_dump(mode="python", exclude_unset=True)
    data["load"]["sessions"] = sessions
    data["model"]["endpoint"] = {}
    return Scenario.model_validate(data)


def test_blocks_of_independent_sessions_give_the_tables_of_the_whole_simulation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = open_unlimited(14)
    whole = in_memory(scenario, "r")
    monkeypatch.setattr(blocks, "BLOCK_SESSIONS", 5)
    tasks = tasks_of(scenario)
    assert [task.block for task in tasks[:3]] == [range(0, 5), range(5, 10), range(10, 14)]
    assert len(tasks) == 3 * len(units_of(scenario))
    serial = run_scenario(scenario)
    assert serial.tables("r") == whole
    parallel = run_scenario(scenario, jobs=2)
    for name, result in (("serial", serial), ("parallel", parallel)):
        write_run_from_parts(tmp_path / name, result.parts_in_order(), metadata(scenario))
    for spec in TABLES:
        file = f"{spec.name}.parquet"
        serial_bytes = (tmp_path / "serial" / file).read_bytes()
        assert serial_bytes == (tmp_path / "parallel" / file).read_bytes()


def test_closed_loops_and_endpoints_with_a_capacity_are_never_split(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(blocks, "BLOCK_SESSIONS", 5)
    assert blocks.session_blocks(load_scenario(GOLDEN / "open_sweep.toml")) == [None]  # capacity
    closed = with_overrides(load_scenario(GOLDEN / "closed_faults.toml"), sessions=20)
    assert blocks.session_blocks(closed) == [None]
    assert len(blocks.session_blocks(open_unlimited(20))) == 4


def test_a_resumed_run_runs_only_the_tasks_without_finished_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = two_profile_sweep()
    folder = tmp_path / "parts"
    first = run_scenario(scenario, parts=folder)
    expected = first.tables("r")
    unfinished, _ = first.parts_in_order()[3]
    (unfinished / parts.DONE_FILE).unlink()  # as if interrupted in that task
    ran: list[str] = []
    real = tasks.run_task

    def counting(scenario: Scenario, task: Task, *args: object) -> TaskStats:
        ran.append(task.name)
        return real(scenario, task, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(tasks, "run_task", counting)
    again = run_scenario(scenario, parts=folder)
    assert ran == [unfinished.name]
    assert again.tables("r") == expected
    kept = {t.name: s for t, s in zip(first.tasks, first.stats, strict=True)}
    kept.pop(unfinished.name)
    assert kept.items() < {t.name: s for t, s in zip(again.tasks, again.stats, strict=True)}.items()


def test_parts_of_another_run_are_refused(tmp_path: Path) -> None:
    scenario = load_scenario(GOLDEN / "open_sweep.toml")
    run_scenario(scenario, parts=tmp_path / "parts")
    with pytest.raises(UserError, match="another run"):
        run_scenario(with_overrides(scenario, seed=3), parts=tmp_path / "parts")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "file").write_text("x")
    with pytest.raises(UserError, match="not a parts folder"):
        run_scenario(scenario, parts=tmp_path / "other")


def two_points() -> list[Point]:
    """Two hand-made points: the same scenario at two concurrencies, the second's seed its own."""
    base = with_overrides(load_scenario(GOLDEN / "closed_faults.toml"), sessions=4)
    other = Scenario.model_validate(
        {**base.model_dump(mode="python", exclude_unset=True), "seed": base.seed + 1,
         "load": {"mode": "closed", "sessions": 4, "concurrency": 1}}
    )
    return [
        Point(0, (("load.concurrency", 2),), 0, base),
        Point(1, (("load.concurrency", 1), ("model.profile", "haiku")), 1, other),
    ]


def test_every_point_is_simulated_and_its_rows_carry_its_columns(tmp_path: Path) -> None:
    points = two_points()
    result = run_scenario(points[0].scenario, points=points, jobs=2)
    assert {unit.point for unit in result.units} == {0, 1}
    assert "(load.concurrency=1, model.profile=haiku, replication 1)" in result.units[-1].label
    tables = result.tables("r")
    for spec in TABLES:
        names = tables[spec.name].column_names
        assert names[names.index("point") : names.index("point") + 3] == [
            "point", "replication", "point_key",
        ]
    sessions = tables["sessions"]
    keys = sorted(set(zip(sessions["point"].to_pylist(), sessions["replication"].to_pylist(),
                          sessions["point_key"].to_pylist(), strict=True)))
    assert keys == [
        (0, 0, "load.concurrency=2"),
        (1, 1, 'load.concurrency=1;model.profile="haiku"'),
    ]
    assert sessions["point"].to_pylist() == sorted(sessions["point"].to_pylist())  # point first
    # Each point's rows are the rows of its scenario run alone.
    for point in points:
        alone = in_memory(point.scenario, "r")
        mine = tables["turns"].filter(pc.equal(tables["turns"]["point"], point.index))
        assert plain(mine.drop_columns(["point", "replication", "point_key"])) == plain(
            alone["turns"]  # type: ignore[arg-type]
        )
    summary = write_run_from_parts(
        tmp_path / "run", result.parts_in_order(), metadata(points[0].scenario),
        points=result.point_columns(),
    )
    written = pq.read_table(tmp_path / "run" / "turns.parquet")
    assert plain(written) == plain(tables["turns"])
    # The summary read from the files is `summarize`'s: point by point, each row naming its
    # point, then the rows over each key's replications.
    assert summary == summarize(tables)
    assert {(row.point, row.point_key) for row in summary if row.replication is not None} == {
        (0, "load.concurrency=2"), (1, 'load.concurrency=1;model.profile="haiku"'),
    }
    serial = run_scenario(points[0].scenario, points=points)
    assert serial.tables("r") == tables


def test_a_plain_scenario_is_one_point_without_point_columns() -> None:
    scenario = load_scenario(GOLDEN / "closed_faults.toml")
    result = run_scenario(with_overrides(scenario, sessions=2))
    assert [point.key for point in result.points] == [()]
    assert "point" not in result.tables("r")["turns"].column_names


def test_sim_run_resume_after_an_interrupt_runs_only_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from toolturn.cli import main

    scenario = str(GOLDEN / "open_sweep.toml")
    fresh, out = tmp_path / "fresh" / "run", tmp_path / "resumed" / "run"  # one run_id
    assert main(["run", scenario, "--no-report", "-q", "--out", str(fresh)]) == 0
    real = tasks.run_task
    ran: list[int] = []

    def interrupted_at_2(scenario: Scenario, task: Task, *args: object) -> TaskStats:
        if task.unit_index == 2:
            raise KeyboardInterrupt
        ran.append(task.unit_index)
        return real(scenario, task, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(tasks, "run_task", interrupted_at_2)
    command = ["run", scenario, "--no-report", "-q", "--resume", "--out", str(out)]
    assert main(command) == 130
    assert ran == [0, 1]
    parts_folder = out.parent / ".run.parts"
    assert not out.exists() and sum(map(parts.is_complete, parts_folder.iterdir())) == 2
    ran.clear()
    monkeypatch.setattr(tasks, "run_task", lambda *a: (ran.append(a[1].unit_index), real(*a))[1])
    assert main(command) == 0
    assert ran == [2, 3]  # the two finished units are not simulated again
    assert not parts_folder.exists()
    for spec in TABLES:
        name = f"{spec.name}.parquet"
        assert (fresh / name).read_bytes() == (out / name).read_bytes()
