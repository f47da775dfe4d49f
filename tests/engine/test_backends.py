"""Executor backends (toolturn/engine/backends/): a real Dask LocalCluster gives the same tables
and files as a serial run; a failing task is named and the others kept; a backend not installed is
one line and exit 2. Ray is tested apart (`make test-ray`: its wheel is large)."""

from __future__ import annotations

import socket
import subprocess
import sys
import types
from collections.abc import Iterator
from concurrent.futures import Executor
from pathlib import Path

import pytest

from tests.helpers import failing_tasks, signal_masks
from toolturn.cli import main
from toolturn.engine import task as tasks
from toolturn.engine.backends import executor_for
from toolturn.engine.runner import TasksFailed, run_scenario
from toolturn.metrics.parts import is_complete
from toolturn.metrics.schema import TABLES
from toolturn.scenario.loader import load_scenario

distributed = pytest.importorskip("distributed")
dask = pytest.importorskip("dask")

from tests.helpers import dask_worker  # noqa: E402  (it imports distributed)

GOLDEN = Path(__file__).parents[1] / "golden"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A small real cluster in this process (worker threads: it starts in a second or two); its
    scheduler's address, as a user's `--address` would be."""
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0",
        silence_logs=50,
    ) as local:
        yield local.scheduler_address


def test_dask_gives_the_tables_of_a_serial_run(cluster: str) -> None:
    scenario = load_scenario(GOLDEN / "open_sweep.toml")
    reports: list[tuple[int, int]] = []
    on_dask = run_scenario(
        scenario, backend="dask", address=cluster, progress=lambda u, n: reports.append((u, n))
    )
    assert on_dask.tables("r") == run_scenario(scenario).tables("r")
    # Each unit's 12 sessions at the end, and its first session as it finished (a task reports
    # at once, then at most every REPORT_EVERY_S): progress per session, not per task.
    assert {unit: done for unit, done in reports} == {unit: 12 for unit in range(4)}
    assert all((unit, 1) in reports for unit in range(4)), reports


def test_sim_run_on_dask_writes_the_files_of_a_serial_run(cluster: str, tmp_path: Path) -> None:
    scenario = str(GOLDEN / "open_sweep.toml")
    common = ["run", scenario, "--no-report", "-q"]
    serial, dask = tmp_path / "serial" / "run", tmp_path / "dask" / "run"  # one run_id
    assert main([*common, "--out", str(serial)]) == 0
    assert main([*common, "--backend", "dask", "--address", cluster, "--out", str(dask)]) == 0
    for spec in TABLES:
        name = f"{spec.name}.parquet"
        assert (serial / name).read_bytes() == (dask / name).read_bytes()
    assert [path.name for path in dask.parent.iterdir()] == ["run"]  # no parts folder left


def test_a_failing_task_is_named_and_the_others_are_kept(
    cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As on the local backend (tests/engine/test_run_failures.py): the same TasksFailed, the
    # same parts.
    scenario = load_scenario(GOLDEN / "open_sweep.toml")
    # The cluster's workers are threads of this process: they see the patch.
    monkeypatch.setattr(tasks, "run_task", failing_tasks.run_task)
    parts = tmp_path / "parts"
    with pytest.raises(TasksFailed) as raised:
        run_scenario(scenario, backend="dask", address=cluster, parts=parts)
    failures = raised.value.failures
    assert [failure.label for failure in failures] == ["at_message_stop @ 0.5", "streaming @ 2"]
    assert all(failure.error == "ValueError: a broken unit" for failure in failures)
    done = sorted(folder.name for folder in parts.iterdir() if is_complete(folder))
    assert done == [
        "point0.default.anthropic.at_message_stop.level1.from0",
        "point0.default.anthropic.streaming.level0.from0",
    ]
    monkeypatch.undo()
    resumed = run_scenario(scenario, parts=parts)  # runs the missing units alone
    assert resumed.tables("r") == run_scenario(scenario).tables("r")


def test_a_failure_that_stops_the_run_is_raised_as_itself(
    cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tasks, "run_task", failing_tasks.stopping_run_task)
    with pytest.raises(OSError, match="No space left"):
        run_scenario(
            load_scenario(GOLDEN / "open_sweep.toml"), backend="dask", address=cluster,
            parts=tmp_path / "parts",
        )


@pytest.mark.parametrize(("backend", "module"), [("dask", "distributed"), ("ray", "ray")])
def test_a_backend_not_installed_is_one_line_and_exit_2(
    backend: str, module: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # import fails as if it were not installed
    out = tmp_path / "run"
    args = ["run", str(GOLDEN / "open_sweep.toml"), "--backend", backend, "--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"pip install 'toolturn-sim[{backend}]'" in err
    assert list(tmp_path.iterdir()) == []


def test_address_without_a_cluster_backend_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["run", str(GOLDEN / "open_sweep.toml"), "--address", "tcp://127.0.0.1:1"]
    assert main([*args, "--out", str(tmp_path / "run")]) == 2
    assert "--address: only with --backend dask or ray" in capsys.readouterr().err


@pytest.fixture(scope="module")
def made(cluster: str) -> Iterator[Executor]:
    """The executor of a cluster made as a run makes it (no --address), of one worker. After
    the user's `cluster`: while a run's cluster lives, this process's Dask configuration is the
    run's, and a cluster started meanwhile would take it."""
    with executor_for("dask", jobs=1) as (executor, _):
        yield executor


def test_the_workers_of_a_cluster_made_for_a_run_never_see_a_ctrl_c(made: Executor) -> None:
    # Its worker processes were spawned from the cluster's event-loop thread, whose mask was
    # open: a Ctrl-C reached them and one printed its CancelledError traceback as the cluster
    # closed (tests/engine/test_run_interrupt.py). Forked from a server started with SIGINT blocked,
    # they keep the mask.
    assert made.submit(signal_masks.sigint_blocked).result() is True


def test_a_cluster_made_for_a_run_runs_no_periodic_work_nobody_sees(made: Executor) -> None:
    # Dask's defaults woke each worker every 10 ms (profiler) and 20 ms (tick): CPU beyond a
    # serial run's that grew with the run (toolturn/engine/backends/, QUIET).
    assert made.submit(dask_worker.periodic_work).result() == {
        "profile": None, "tick": 1000, "monitor": 5000, "memory_monitor": 1000
    }


def test_a_cluster_at_address_keeps_its_own_configuration(cluster: str) -> None:
    with executor_for("dask", jobs=1, address=cluster) as (executor, _):
        assert executor.submit(dask_worker.periodic_work).result() == {
            "profile": 10, "tick": 20, "monitor": 500, "memory_monitor": 100
        }


def test_a_wrong_address_says_it_cannot_reach_the_scheduler(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 29: the client's connect timeout (an OSError) was reported as the disk's ("cannot
    # write the run's rows"). A port nothing listens on, and a second of connect timeout.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = tmp_path / "run"
    args = ["run", str(GOLDEN / "open_sweep.toml"), "--backend", "dask", "--out", str(out)]
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        assert main([*args, "--address", f"tcp://127.0.0.1:{port}"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err
        assert f"--address tcp://127.0.0.1:{port}: cannot reach the Dask scheduler" in err
        assert "cannot write" not in err
        assert main([*args, "--address", "127.0.0.1"]) == 2  # no port: not an address
    assert "not a Dask scheduler address" in capsys.readouterr().err
    assert not out.exists()


def test_ctrl_c_while_the_cluster_starts_is_one_line_and_exit_130(tmp_path: Path) -> None:
    # Issue 29: interrupted while its nannies started, the run exited 130 after ~260 lines of
    # tracebacks (the half-started cluster cannot be closed); the Ctrl-C now waits for the
    # start, then closes the whole cluster.
    out = tmp_path / "run"
    process = subprocess.run(
        [sys.executable, "-m", "tests.helpers.dask_start_interrupt", "run",
         str(GOLDEN / "open_sweep.toml"), "--backend", "dask", "--jobs", "1", "--no-report",
         "--out", str(out)],
        capture_output=True, text=True, cwd=ROOT, start_new_session=True, timeout=60,
    )
    assert process.returncode == 130
    # The run's own line alone (with its --resume hint), no process's traceback.
    assert process.stderr.startswith("toolturn run: interrupted")
    assert process.stderr.count("\n") == 1 and "Traceback" not in process.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_wrong_ray_address_says_it_cannot_reach_the_cluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ray (not installed here) raises ConnectionError for a cluster it cannot find; a stand-in
    # module that does so, as `ray.init(address=...)` does.
    ray = types.ModuleType("ray")

    def init(**settings: object) -> None:
        raise ConnectionError(f"Could not find any running Ray instance at {settings['address']}")

    ray.init = init  # type: ignore[attr-defined]
    queue = types.ModuleType("ray.util.queue")
    queue.Queue = object  # type: ignore[attr-defined]
    for name, module in (("ray", ray), ("ray.util", types.ModuleType("ray.util")),
                         ("ray.util.queue", queue)):
        monkeypatch.setitem(sys.modules, name, module)
    out = tmp_path / "run"
    args = ["run", str(GOLDEN / "open_sweep.toml"), "--backend", "ray", "--out", str(out)]
    assert main([*args, "--address", "10.0.0.1:6379"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--address 10.0.0.1:6379: cannot reach the Ray cluster" in err
    assert not out.exists()
