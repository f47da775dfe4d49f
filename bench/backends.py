"""Speed-up of 16 simulations on this machine's cores, serial against the local pool and a Dask
LocalCluster (issue 20: at least 1.8x on 2 cores), and each backend's overhead per task.

The speed-up runs 16 units (8 load levels x 2 policies of an open loop, the same sessions each)
serially, with `--jobs`-style local workers and on Dask, each `--repeat` times in turn, and
prints the median wall times and their ratios. The overhead runs 16 units of one session each:
a backend's wall time minus the serial one's, per unit (start-up of workers or cluster included,
as a user pays it).

    python bench/backends.py [--jobs 2] [--sessions 40] [--repeat 3]

Not part of `make test`: a few minutes on this machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from sim.engine.runner import run_scenario, units_of
from sim.scenario.loader import load_scenario
from sim.scenario.schema import Scenario

SCENARIO = Path(__file__).parent / "scenarios" / "open_unlimited.toml"
LEVELS = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0]


def sixteen_units(sessions: int) -> Scenario:
    data = load_scenario(SCENARIO).model_dump(mode="python", exclude_unset=True)
    data["load"] = {"mode": "open", "sessions": sessions, "sweep": LEVELS}
    data["runtime"]["policies"] = ["streaming", "serial"]
    scenario = Scenario.model_validate(data)
    assert len(units_of(scenario)) == 16
    return scenario


def timed(scenario: Scenario, backend: str, jobs: int) -> float:
    start = time.perf_counter()
    run_scenario(scenario, jobs=jobs, backend=backend)
    return time.perf_counter() - start


def medians(scenario: Scenario, jobs: int, repeat: int) -> dict[str, float]:
    """Median wall seconds per way of running, the ways taken in turn `repeat` times."""
    ways = {"serial": ("local", 1), "local": ("local", jobs), "dask": ("dask", jobs)}
    walls: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(repeat):
        for name, (backend, workers) in ways.items():
            walls[name].append(timed(scenario, backend, workers))
    return {name: statistics.median(values) for name, values in walls.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    speed = medians(sixteen_units(args.sessions), args.jobs, args.repeat)
    print(f"16 units of {args.sessions} sessions, --jobs {args.jobs}, medians of {args.repeat}:")
    for name, wall in speed.items():
        print(f"  {name:<7} {wall:7.2f} s  speed-up {speed['serial'] / wall:4.2f}x")
    tiny = medians(sixteen_units(1), args.jobs, args.repeat)
    print("overhead per unit (16 units of 1 session, wall minus serial's, per unit):")
    for name in ("local", "dask"):
        print(f"  {name:<7} {(tiny[name] - tiny['serial']) / 16 * 1000:7.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
