"""A task that fails on the local backend, serially and with `--jobs 2`: the other tasks still
run, `TasksFailed` names every failed one with its error, their parts are kept for `--resume`,
and `toolturn run` writes no run folder and exits 1 naming each. A failure that stops the run (an
OSError) ends it at once, as before; a worker process that dies is named as such, not as
the disk's fault. The Dask backend's failures: tests/engine/test_backends.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers import failing_tasks
from toolturn.cli import main
from toolturn.engine import task as tasks
from toolturn.engine.backends import local
from toolturn.engine.runner import TasksFailed, run_scenario
from toolturn.metrics.parts import is_complete
from toolturn.metrics.schema import TABLES
from toolturn.scenario.loader import load_scenario

GOLDEN = Path(__file__).parents[1] / "golden"
SCENARIO = GOLDEN / "open_sweep.toml"  # 4 units of one task each: 2 policies x 2 load levels
# Units 1 and 2 (failing_tasks.FAILING_UNITS), with their keys.
FAILED = ["at_message_stop @ 0.5", "streaming @ 2"]


def failing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Units 1 and 2 fail in this process and in spawned workers."""
    monkeypatch.setattr(tasks, "run_task", failing_tasks.run_task)
    monkeypatch.setattr(local, "_work", failing_tasks.work)


def complete(parts: Path) -> list[str]:
    return sorted(folder.name for folder in parts.iterdir() if is_complete(folder))


@pytest.mark.parametrize("jobs", [1, 2])
def test_failed_tasks_are_named_and_the_others_run_and_are_kept(
    jobs: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = load_scenario(SCENARIO)
    failing(monkeypatch)
    parts = tmp_path / "parts"
    with pytest.raises(TasksFailed) as raised:
        run_scenario(scenario, jobs=jobs, parts=parts)
    failures = raised.value.failures
    assert [failure.label for failure in failures] == FAILED
    assert all(failure.error == "ValueError: a broken unit" for failure in failures)
    assert all("a broken unit" in failure.traceback for failure in failures)
    assert raised.value.tasks == 4
    # Units 0 and 3, including the one after both failures.
    assert complete(parts) == [
        "point0.default.anthropic.at_message_stop.level1.from0",
        "point0.default.anthropic.streaming.level0.from0",
    ]
    monkeypatch.undo()
    resumed = run_scenario(scenario, parts=parts)  # runs the two failed units alone
    assert resumed.tables("r") == run_scenario(scenario).tables("r")


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_failure_that_stops_the_run_ends_it_at_once(
    jobs: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tasks, "run_task", failing_tasks.stopping_run_task)
    monkeypatch.setattr(local, "_work", failing_tasks.work_stopping)
    parts = tmp_path / "parts"
    with pytest.raises(OSError, match="No space left"):
        run_scenario(load_scenario(SCENARIO), jobs=jobs, parts=parts)
    if jobs == 1:  # serially nothing after unit 1 ran; in parallel unit 2 may have begun
        assert complete(parts) == ["point0.default.anthropic.streaming.level0.from0"]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_sim_run_names_the_failed_units_writes_no_folder_and_resumes_them(
    jobs: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fresh, out = tmp_path / "fresh" / "run", tmp_path / "failed" / "run"  # one run_id
    common = ["run", str(SCENARIO), "--no-report", "-q"]
    assert main([*common, "--out", str(fresh)]) == 0
    failing(monkeypatch)
    capsys.readouterr()
    assert main([*common, "--jobs", jobs, "--out", str(out)]) == 1  # not --resume
    err = capsys.readouterr().err
    assert "Traceback" in err and "ValueError: a broken unit" in err  # the first failure's
    lines = err.splitlines()
    failed_lines = [line for line in lines if line.startswith("toolturn run: failed: ")]
    assert failed_lines == [
        f"toolturn run: failed: {key}: ValueError: a broken unit" for key in FAILED
    ]
    parts_folder = out.parent / ".run.parts"
    assert lines[-1] == (
        f"toolturn run: 2 of 4 tasks failed; no run folder written; the others' rows are kept in "
        f"{parts_folder}: the same command with --out {out} --resume runs only the failed ones"
    )
    assert not out.exists() and len(complete(parts_folder)) == 2
    monkeypatch.undo()
    ran: list[int] = []
    real = tasks.run_task
    monkeypatch.setattr(tasks, "run_task", lambda *a: (ran.append(a[1].unit_index), real(*a))[1])
    assert main([*common, "--out", str(out), "--resume"]) == 0
    assert ran == list(failing_tasks.FAILING_UNITS)  # the two kept units are not run again
    assert not parts_folder.exists()
    for spec in TABLES:
        name = f"{spec.name}.parquet"
        assert (fresh / name).read_bytes() == (out / name).read_bytes()


def test_a_worker_that_dies_is_reported_as_such_not_as_a_write_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Its pipe then raised ConnectionResetError (or gave EOF): that OSError was reported as
    # "cannot write the run's rows", exit 2, and the EOF as a RuntimeError's traceback.
    monkeypatch.setattr(local, "_work", failing_tasks.work_dying)
    out = tmp_path / "run"
    assert main(["run", str(SCENARIO), "--no-report", "-q", "--jobs", "2", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert re.fullmatch(
        r"toolturn run: a worker process ended (before it took its task|without its task's result) "
        r"\(exit status 3\); no run folder written\n",
        err,
    ), err
    assert list(tmp_path.iterdir()) == []
