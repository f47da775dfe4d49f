"""`toolturn fidelity` end to end on a small scenario at a high speed: a live run that could not
keep up and fails is exit 4 with how much and a suggestion, and a comparison that fails leaves
both runs written. No test asserts a wall-clock figure (the limits are set far below or above
any host)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import toolturn.commands.fidelity as fidelity_command
from tests.commands.test_cmd_live import SMALL, SPEED
from toolturn.cli import main
from toolturn.metrics import read_run


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("scenario") / "small.toml"
    path.write_text(SMALL)
    return path


def test_a_live_run_past_its_cpu_limit_is_exit_4_with_a_suggestion(
    small: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "hot"
    # Any live run uses more than a thousandth of a percent of a core, and no live run is
    # within a tolerance of 0 (a run that passes is a pass, saturated or not).
    argv = ["fidelity", str(small), "--speed", SPEED, "--out", str(out), "--max-cpu", "0.001",
            "--max-lag-ms", "1e6", "--tolerance-median", "0", "--tolerance-p95", "0",
            "--tolerance-ms", "0"]
    assert main(argv) == 4
    printed = capsys.readouterr().out
    assert "the live run could not keep up: live process at" in printed
    assert "Try --speed " in printed and "verdict: live run could not keep up" in printed
    report = json.loads((out / "fidelity.json").read_text())
    saturation = report["saturation"]
    assert report["verdict"] == "live run could not keep up" and saturation["saturated"]
    assert saturation["suggested_speed"] < float(SPEED)
    assert saturation["limits"] == {"lag_p95_ms": 1e6, "cpu_percent": 0.001}


def test_a_failing_comparison_leaves_both_runs_written(
    small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object) -> None:
        raise RuntimeError("comparison broke")

    monkeypatch.setattr(fidelity_command, "_compare", broken)
    out = tmp_path / "kept"
    with pytest.raises(RuntimeError, match="comparison broke"):
        main(["fidelity", str(small), "--speed", SPEED, "--out", str(out)])
    for run in ("simulated", "live"):
        assert (out / run / "run.json").is_file()
        assert (out / run / "turns.parquet").is_file()
    assert not (out / "fidelity.json").exists()


@pytest.mark.parametrize("option", ["--max-cpu", "--max-lag-ms"])
def test_a_bad_limit_is_one_line_and_exit_2(
    small: Path, tmp_path: Path, option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["fidelity", str(small), option, "0", "--out", str(tmp_path / "f")]) == 2
    assert f"{option}: must be a positive number" in capsys.readouterr().err
    assert not (tmp_path / "f").exists()


def test_both_runs_go_through_the_one_write_path_and_are_compared_as_written(
    small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 32: the simulated run is written from the engine's part files, the live run's rows
    through part files (`write_run_from_rows`, as `toolturn live`'s), never from tables in
    memory; the comparison reads the folders written."""
    calls: list[str] = []
    real_parts, real_rows = fidelity_command.write_run_from_parts, \
        fidelity_command.write_run_from_rows

    def parts(out_dir: Path, *args: object, **kwargs: object) -> object:
        calls.append(f"parts {Path(out_dir).name}")
        return real_parts(out_dir, *args, **kwargs)  # type: ignore[arg-type]

    def rows(out_dir: Path, *args: object, **kwargs: object) -> object:
        calls.append(f"rows {Path(out_dir).name}")
        return real_rows(out_dir, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(fidelity_command, "write_run_from_parts", parts)
    monkeypatch.setattr(fidelity_command, "write_run_from_rows", rows)
    out = tmp_path / "one-path"
    main(["fidelity", str(small), "--speed", SPEED, "--out", str(out), "--max-lag-ms", "1e6",
          "--max-cpu", "1e6"])
    assert calls == ["parts simulated", "rows live"]
    report = json.loads((out / "fidelity.json").read_text())
    written = {run: read_run(out / run).tables["turns"].num_rows for run in ("simulated", "live")}
    assert (report["pairing"]["sim_turns"], report["pairing"]["live_turns"]) == (
        written["simulated"], written["live"])
    assert read_run(out / "live").metadata["run_id"] == "live"
