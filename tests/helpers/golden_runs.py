"""Golden scenarios' runs written as run folders, for the tests of parallel and serial runs."""

from __future__ import annotations

from pathlib import Path

from toolturn.engine.runner import RunResult
from toolturn.metrics.writer import RunMetadata, write_run

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def write(result: RunResult, out: Path) -> None:
    metadata = RunMetadata.collect(
        run_id="same-run", scenario=result.scenario.name, scenario_sha256="0" * 64,
        seed=result.scenario.seed,
    )
    write_run(
        out, result.tables("same-run"), metadata,
        events_per_wall_s=result.events_per_wall_s(),
    )
