"""bench/icount.py: the worker runs each part for real; the counting, the arithmetic and the
errors are checked against a stand-in `valgrind` (the real one takes minutes: `make
bench-icount`)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.helpers.bench_modules import load_bench_module

icount = load_bench_module("icount")

# A stand-in for valgrind: prints what callgrind and the worker would, for a run of PART repeated
# REPETITIONS times: a fixed start-up cost plus a per-part cost per repetition, over 50 events.
FAKE_VALGRIND = """#!/bin/sh
while [ "$1" != "--worker" ]; do shift; done
part=$2; repetitions=$3
case $part in engine) each=900;; bare_runtime) each=300;; mock_model) each=450;; *) exit 3;; esac
[ -n "$FAIL_PART" ] && [ "$part" = "$FAIL_PART" ] && { echo "boom" >&2; exit 1; }
# A base checkout (run in its own tree) costs BASE_PERCENT percent of this tree.
case $(pwd) in */base) each=$((each * ${BASE_PERCENT:-100} / 100));; esac
echo "events 50"
echo "==4242== Collected : $((100000 + each * repetitions))" >&2
"""


@pytest.fixture
def fake_valgrind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    script = tmp_path / "valgrind"
    script.write_text(FAKE_VALGRIND)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    return script


def test_the_worker_runs_each_part_per_the_events_the_engine_fed() -> None:
    engine = icount.work("engine", 1, 2)
    assert engine > 0
    assert icount.work("bare_runtime", 2, 2) == engine
    assert icount.work("mock_model", 1, 2) == engine
    with pytest.raises(ValueError, match="unknown part 'simpy'"):
        icount.work("simpy", 1, 2)


def test_per_event_is_one_repetition_over_its_events(fake_valgrind: Path) -> None:
    assert icount.per_event("engine", 3) == 900 / 50
    assert icount.per_event("bare_runtime", 3) == 300 / 50


def test_main_prints_each_part_and_the_rest(
    fake_valgrind: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert icount.main(["--sessions", "3"]) == 0
    out = capsys.readouterr().out
    for part in ("engine", "bare runtime", "mock model", "the rest"):
        assert part in out


def test_the_table_splits_the_engine() -> None:
    table = icount.table({"engine": 18.0, "bare_runtime": 6.0, "mock_model": 9.0}, 3)
    _, instructions, shares = ([str(cell) for cell in column.cells] for column in table.columns)
    assert instructions == ["18", "6", "9", "3"]  # the rest: 18 - 6 - 9
    assert shares == ["100%", "33%", "50%", "17%"]


def test_a_failed_run_is_reported(
    fake_valgrind: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FAIL_PART", "mock_model")
    assert icount.main([]) == 1
    assert "mock_model x1 (exit status 1)" in capsys.readouterr().err


def test_no_valgrind_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert icount.main([]) == 2
    assert "valgrind not found" in capsys.readouterr().err


def test_the_gate_passes_fewer_instructions_and_fails_more(
    fake_valgrind: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BASE_PERCENT", "200")  # the base cost twice as much: this tree is faster
    assert icount.main(["--base", "HEAD"]) == 0
    out = capsys.readouterr().out
    assert "-50.0%" in out and "instruction gate passed" in out
    monkeypatch.setenv("BASE_PERCENT", "97")  # this tree costs ~3% more than the base
    assert icount.main(["--base", "HEAD"]) == 1
    assert "instruction gate FAILED: engine, bare_runtime, mock_model" in capsys.readouterr().out
    assert icount.main(["--base", "HEAD", "--fail-above", "5"]) == 0


def test_a_base_that_cannot_be_checked_out_is_reported(
    fake_valgrind: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert icount.main(["--base", "no-such-commit"]) == 1
    assert "cannot check out no-such-commit" in capsys.readouterr().err


def test_compare_fails_only_growth_beyond_the_threshold() -> None:
    base = {"engine": 100.0, "bare_runtime": 100.0, "mock_model": 100.0}
    _, failures = icount.compare(
        base, {"engine": 101.5, "bare_runtime": 103.0, "mock_model": 90.0}, 2.0
    )
    assert failures == ["bare_runtime"]
