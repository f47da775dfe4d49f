"""`make bench-fidelity` (bench/fidelity.py) fails when a verdict misses its target: exit 1 for
a run beyond tolerance or with unpaired turns, 4 (recorded as "host could not keep up") when
none missed but the host could not keep up, 0 when every run met it; each run's outcome is
recorded with its verdict. `toolturn fidelity` is stubbed: no live run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.bench_modules import load_bench_module

fidelity = load_bench_module("fidelity")


def stub(statuses: dict[str, int]) -> object:
    """A runner answering each speed's command with its status, writing the fidelity.json a
    real run would (its verdict), and recording the commands it was given."""
    verdicts = {0: "within tolerance, all turns paired", 1: "beyond tolerance",
                3: "turns unpaired or with another story", 4: "live run could not keep up"}

    def runner(command: list[str]) -> int:
        speed = command[command.index("--speed") + 1]
        out = Path(command[command.index("--out") + 1])
        status = statuses[speed]
        if status in verdicts:
            out.mkdir(parents=True, exist_ok=True)
            (out / "fidelity.json").write_text(json.dumps(
                {"speed": float(speed), "verdict": verdicts[status], "passed": status == 0}))
        runner.commands.append(command)  # type: ignore[attr-defined]
        return status

    runner.commands = []  # type: ignore[attr-defined]
    return runner


@pytest.mark.parametrize(("statuses", "expected", "outcomes"), [
    ({"1": 0, "10": 0}, 0, ["met", "met"]),
    ({"1": 0, "10": 1}, 1, ["met", "missed"]),
    ({"1": 3, "10": 0}, 1, ["missed", "met"]),
    ({"1": 0, "10": 4}, 4, ["met", "host could not keep up"]),
    ({"1": 1, "10": 4}, 1, ["missed", "host could not keep up"]),
])
def test_the_script_fails_when_a_verdict_misses_its_target(
    tmp_path: Path, statuses: dict[str, int], expected: int, outcomes: list[str]
) -> None:
    record = tmp_path / "fidelity_default.json"
    runner = stub(statuses)
    assert fidelity.bench((10.0, 1.0), runner, record, tmp_path / "results") == expected
    runs = json.loads(record.read_text())["runs"]
    assert [run["outcome"] for run in runs] == outcomes  # sorted by speed: 1, then 10
    assert [run["verdict"] for run in runs] and all("exit_status" in run for run in runs)
    assert all(run["command"].startswith("toolturn fidelity ") for run in runs)


def test_a_run_without_a_verdict_stops_it_and_keeps_the_record(tmp_path: Path) -> None:
    record = tmp_path / "fidelity_default.json"
    record.write_text('{"runs": []}\n')
    assert fidelity.bench((10.0, 1.0), stub({"10": 2, "1": 0}), record,
                          tmp_path / "results") == 2
    assert record.read_text() == '{"runs": []}\n'


def test_one_speed_replaces_its_entry_and_keeps_the_others(tmp_path: Path) -> None:
    record = tmp_path / "fidelity_default.json"
    record.write_text(json.dumps({"runs": [{"speed": 1.0, "old": True},
                                           {"speed": 10.0, "old": True}]}))
    assert fidelity.bench((10.0,), stub({"10": 4}), record, tmp_path / "results") == 4
    runs = json.loads(record.read_text())["runs"]
    assert runs[0] == {"speed": 1.0, "old": True}
    assert runs[1]["outcome"] == "host could not keep up" and "old" not in runs[1]
