"""The wall-clock gate's verdicts (its measuring is exercised by `make bench-gate`, not here)."""

import json
from pathlib import Path

import pytest

from tests.helpers.bench_modules import load_bench_module

gate = load_bench_module("gate")


def test_only_moves_beyond_the_fail_ratio_fail() -> None:
    base = {"a": 1.0, "b": 1.0, "c": 1.0, "gone": 1.0}
    new = {"a": 1.2, "b": 1.6, "c": 0.5, "fresh": 1.0}
    _, failures = gate.compare(base, new, fail_ratio=1.5, report_ratio=1.1)
    assert failures == ["b"]


def test_identical_timings_pass() -> None:
    _, failures = gate.compare({"a": 2.0}, {"a": 2.0}, fail_ratio=1.5, report_ratio=1.1)
    assert failures == []


def test_reference_benchmarks_are_reported_but_never_gated() -> None:
    names = [
        "bench_accumulator.py::test_sdk[large]",
        "bench_repair.py::test_reference_json_dumps_10000",
        "bench_runtime.py::test_executor_reference",
        "bench_accumulator.py::test_ours[large]",
    ]
    base = dict.fromkeys(names, 1.0)
    new = dict.fromkeys(names, 3.0)
    rows, failures = gate.compare(base, new, fail_ratio=1.5, report_ratio=1.1)
    assert failures == ["bench_accumulator.py::test_ours[large]"]
    verdicts = {row[0]: row[4] for row in rows}
    assert verdicts["bench_accumulator.py::test_sdk[large]"] == (
        "SLOWER beyond 1.50x (reference: not gated)"
    )
    assert not gate.is_reference("bench_simulator.py::test_bare_runtime")


def test_the_markdown_table_has_a_row_per_benchmark() -> None:
    rows, _ = gate.compare({"a.py::test_x": 1e-3, "b.py::test_y|z": 1e-3},
                           {"a.py::test_x": 2e-3}, fail_ratio=1.5, report_ratio=1.1)
    lines = gate.markdown_table(rows).splitlines()
    assert lines[2] == "| benchmark | base | new | new/base | verdict |"
    assert lines[4] == "| a.py::test_x | 1.000 ms | 2.000 ms | 2.00 | SLOWER beyond 1.50x |"
    assert lines[5] == "| b.py::test_y\\|z | 1.000 ms | - | - | removed |"


def test_main_keeps_the_json_and_appends_the_markdown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The measuring replaced: the base's run takes 1 ms, the new tree's 2 ms (a failure).
    def fake_run(tree: Path, json_path: Path, selection: str | None) -> None:
        seconds = 2e-3 if tree == gate.ROOT else 1e-3
        report = {"benchmarks": [{"fullname": "bench/a.py::test_x", "stats": {"min": seconds}}]}
        json_path.write_text(json.dumps(report))

    monkeypatch.setattr(gate, "checkout", lambda base, into: (into / "bench").mkdir(parents=True))
    monkeypatch.setattr(gate, "remove_checkout", lambda path: None)
    monkeypatch.setattr(gate, "run_benchmarks", fake_run)
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    kept = tmp_path / "json"
    status = gate.main(["--json-dir", str(kept), "--markdown", str(summary)])
    assert status == 1
    assert sorted(path.name for path in kept.iterdir()) == ["base.json", "new.json"]
    text = summary.read_text()
    assert text.startswith("earlier step\n### wall clock")
    assert "| a.py::test_x | 1.000 ms | 2.000 ms | 2.00 | SLOWER beyond 1.50x |" in text
    assert text.endswith("wall-clock gate FAILED: a.py::test_x slower than 1.5x the base\n")
