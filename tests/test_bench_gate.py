"""The wall-clock gate's verdicts (its measuring is exercised by `make bench-gate`, not here)."""

from tests.bench_modules import load_bench_module

gate = load_bench_module("gate")


def test_only_moves_beyond_the_fail_ratio_fail() -> None:
    base = {"a": 1.0, "b": 1.0, "c": 1.0, "gone": 1.0}
    new = {"a": 1.2, "b": 1.6, "c": 0.5, "fresh": 1.0}
    _, failures = gate.compare(base, new, fail_ratio=1.5, report_ratio=1.1)
    assert failures == ["b"]


def test_identical_timings_pass() -> None:
    _, failures = gate.compare({"a": 2.0}, {"a": 2.0}, fail_ratio=1.5, report_ratio=1.1)
    assert failures == []
