"""`make bench` keeps each run's pytest-benchmark JSON (--benchmark-autosave) and compares with a
saved run on request (COMPARE=NUM, --benchmark-compare). One small benchmark, twice: ~20 s."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SMALL = ("-k reference_json_dumps --benchmark-max-time=0.01 --benchmark-min-rounds=1 "
         "--benchmark-warmup=off")


def _make_bench(storage: Path, *variables: str) -> str:
    done = subprocess.run(
        ["make", "-s", "bench", f"BENCH_STORAGE={storage}", f"BENCH_FLAGS={SMALL}", *variables],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout + done.stderr  # pytest-benchmark says what it compares with on stderr


def test_make_bench_saves_its_json_and_compares_with_a_saved_run(tmp_path: Path) -> None:
    storage = tmp_path / "benchmarks"
    _make_bench(storage)
    (first,) = storage.glob("*/0001_*.json")
    saved = json.loads(first.read_text())
    assert [b["name"] for b in saved["benchmarks"]] == ["test_reference_json_dumps_10000"]

    out = _make_bench(storage, "COMPARE=0001")
    assert f"Comparing against benchmarks from: {first.parent.name}/{first.name}" in out
    assert "test_reference_json_dumps_10000 (0001_" in out and "(NOW)" in out
    assert len(list(storage.glob("*/0002_*.json"))) == 1
