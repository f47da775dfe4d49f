"""Speed-up of 16 simulations on this machine's cores, serial against the local pool and a Dask
LocalCluster (issue 20: at least 1.8x on 2 cores), and each backend's overhead per simulation.

The speed-up runs 16 units (8 load levels x 2 policies of an open loop, the same sessions each)
serially, with `--jobs`-style local workers and on Dask, each `--repeat` times in turn, and
prints the median wall times and their ratios, and the median CPU time of each way (its whole
process, workers included) against serial's. The overhead runs 16 units of one session each: a
backend's wall and CPU time minus the serial one's, per unit.

Every timed run is a fresh process, as a user's `toolturn run` is: it pays the start of the local
pool's forkserver or of the Dask cluster (`toolturn.engine.forking`) each time, where runs in one
process would share the first one's server. The time is taken inside that process around
`run_scenario` alone (from before the workers or the cluster start to after the last task), so
the interpreter's own start and the imports, the same for every way, are not in it.

    python bench/backends.py [--jobs 2] [--sessions 80] [--repeat 3]

Not part of `make test`: several minutes on this machine.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from toolturn.engine.runner import run_scenario, units_of
from toolturn.scenario.loader import load_scenario
from toolturn.scenario.schema import Scenario

SCENARIO = Path(__file__).parent / "scenarios" / "open_unlimited.toml"
LEVELS = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0]


def sixteen_units(sessions: int) -> Scenario:
    data = load_scenario(SCENARIO).model_dump(mode="python", exclude_unset=True)
    data["load"] = {"mode": "open", "sessions": sessions, "sweep": LEVELS}
    data["runtime"]["policies"] = ["streaming", "serial"]
    scenario = Scenario.model_validate(data)
    assert len(units_of(scenario)) == 16
    return scenario


def timed(sessions: int, backend: str, jobs: int) -> tuple[float, float]:
    """Wall seconds of one run in a fresh process (module docstring), and the CPU seconds of
    that whole process with its workers (reaped through it: the forkserver reaps its forks)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    output = subprocess.run(
        [sys.executable, __file__, "--one", json.dumps([sessions, backend, jobs])],
        check=True, capture_output=True, text=True,
    ).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return float(output.split()[-1]), cpu


def one(sessions: int, backend: str, jobs: int) -> float:
    scenario = sixteen_units(sessions)
    start = time.perf_counter()
    run_scenario(scenario, jobs=jobs, backend=backend)
    return time.perf_counter() - start


def medians(sessions: int, jobs: int, repeat: int) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) seconds per way of running, the ways taken in turn `repeat` times."""
    ways = {"serial": ("local", 1), "local": ("local", jobs), "dask": ("dask", jobs)}
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
    for _ in range(repeat):
        for name, (backend, workers) in ways.items():
            runs[name].append(timed(sessions, backend, workers))
            wall, cpu = runs[name][-1]
            print(f"    {name:<7} wall {wall:7.2f} s  cpu {cpu:7.2f} s", flush=True)
    return {
        name: (
            statistics.median(wall for wall, _ in values),
            statistics.median(cpu for _, cpu in values),
        )
        for name, values in runs.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--sessions", type=int, default=80)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a timed run: [sessions, backend, jobs]
    args = parser.parse_args()
    if args.one is not None:
        print(f"{one(*json.loads(args.one)):.6f}")
        return 0
    print(f"16 units of {args.sessions} sessions, --jobs {args.jobs}, each run:")
    speed = medians(args.sessions, args.jobs, args.repeat)
    print(f"medians of {args.repeat} (CPU: the whole process, workers included):")
    serial_wall, serial_cpu = speed["serial"]
    for name, (wall, cpu) in speed.items():
        print(
            f"  {name:<7} wall {wall:7.2f} s  speed-up {serial_wall / wall:4.2f}x  "
            f"cpu {cpu:7.2f} s  {cpu / serial_cpu:4.2f}x serial's"
        )
    print("16 units of 1 session, each run:")
    tiny = medians(1, args.jobs, args.repeat)
    print("overhead per unit (medians, minus serial's, per unit):")
    for name in ("local", "dask"):
        wall = (tiny[name][0] - tiny["serial"][0]) / 16 * 1000
        cpu = (tiny[name][1] - tiny["serial"][1]) / 16 * 1000
        print(f"  {name:<7} wall {wall:5.0f} ms  cpu {cpu:5.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
