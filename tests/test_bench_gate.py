"""The wall-clock gate's verdicts (its measuring is exercised by `make bench-gate`, not here)."""

import importlib.util
from pathlib import Path

spec = importlib.util.spec_from_file_location(
    "bench_gate", Path(__file__).resolve().parent.parent / "bench" / "gate.py")
assert spec is not None and spec.loader is not None
gate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gate)


def test_only_moves_beyond_the_fail_ratio_fail() -> None:
    base = {"a": 1.0, "b": 1.0, "c": 1.0, "gone": 1.0}
    new = {"a": 1.2, "b": 1.6, "c": 0.5, "fresh": 1.0}
    _, failures = gate.compare(base, new, fail_ratio=1.5, report_ratio=1.1)
    assert failures == ["b"]


def test_identical_timings_pass() -> None:
    _, failures = gate.compare({"a": 2.0}, {"a": 2.0}, fail_ratio=1.5, report_ratio=1.1)
    assert failures == []
