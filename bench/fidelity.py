"""The simulator's fidelity on the default scenario: `toolturn fidelity` at speed 1 (20 sessions)
and at speed 10 (10 sessions, the target: within the default tolerances, every turn paired, on an
idle 2-core host), every policy; the verdicts and errors recorded in bench/fidelity_default.json.

    .venv/bin/python bench/fidelity.py            # or: make bench-fidelity
    .venv/bin/python bench/fidelity.py --speed 10 # that speed only, its entry replaced

It takes real time (the scenario's sessions at speed 1 run for minutes: think times of 15 s and
more, three policies one after another). Each run's full folder (both runs' tables, fidelity.json,
fidelity.png) goes to results/fidelity-bench-speed<X>/; the summary of both is written here.
Every verdict is recorded, with its `outcome`: `met` (exit 0, within tolerance and every turn
paired), `missed` (exit 1 beyond tolerance, 3 turns unpaired or with another story), or `host
could not keep up` (exit 4: the host, not the simulator, was measured; its load average is
noted). The script's own exit status: 0 when every run met its target, 1 when one missed it, 4
when none missed but the host could not keep up in one; a run that wrote no verdict (a crash,
bad input) stops it with that run's status, the record unchanged.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = "scenarios/default.toml"
# Sessions per speed.
SESSIONS = {10.0: 10, 1.0: 20}
SPEEDS = tuple(SESSIONS)
RECORD = ROOT / "bench" / "fidelity_default.json"
# `toolturn fidelity`'s exit statuses that wrote a verdict, and what each says of the target.
MET, MISSED, HOST = "met", "missed", "host could not keep up"
OUTCOMES = {0: MET, 1: MISSED, 3: MISSED, 4: HOST}
# The script's exit status per worst outcome.
EXIT = {MET: 0, MISSED: 1, HOST: 4}
# Runs one `toolturn fidelity` command in ROOT; returns its exit status.
Runner = Callable[[list[str]], int]


def run_command(command: list[str]) -> int:
    return subprocess.run(command, cwd=ROOT, check=False).returncode


def measure(speed: float, runner: Runner, results: Path) -> tuple[int, dict[str, Any] | None]:
    """One speed's fidelity run: its exit status and its record (None: no verdict written)."""
    out = results / f"fidelity-bench-speed{speed:g}"
    sessions = SESSIONS.get(speed, SESSIONS[10.0])
    command = [sys.executable, "-m", "toolturn.cli", "fidelity", SCENARIO, "--sessions",
               str(sessions), "--speed", f"{speed:g}", "--out", str(out), "--force"]
    load_before = os.getloadavg()[0]
    started = time.monotonic()
    status = runner(command)
    if status not in OUTCOMES:
        print(f"bench/fidelity.py: {' '.join(command)} exited {status}", file=sys.stderr)
        return status, None
    report = json.loads((out / "fidelity.json").read_text())
    return status, {
        "measured": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": f"toolturn fidelity {SCENARIO} --sessions {sessions} --speed {speed:g}",
        "exit_status": status,
        "outcome": OUTCOMES[status],
        "wall_s": round(time.monotonic() - started, 1),
        "load_average_before": round(load_before, 2),
        **report,
    }


def worst(statuses: list[int]) -> int:
    """The script's exit status for these runs' statuses (the module docstring)."""
    outcomes = {OUTCOMES[status] for status in statuses}
    return next((EXIT[outcome] for outcome in (MISSED, HOST) if outcome in outcomes), 0)


def bench(speeds: tuple[float, ...], runner: Runner = run_command, record: Path = RECORD,
          results: Path = ROOT / "results") -> int:
    kept = []
    if record.exists() and speeds != SPEEDS:
        kept = [run for run in json.loads(record.read_text())["runs"]
                if run["speed"] not in speeds]
    runs, statuses = [], []
    for speed in speeds:
        status, run = measure(speed, runner, results)
        if run is None:
            return status
        runs.append(run)
        statuses.append(status)
        print(f"speed {speed:g}: {run['outcome']} (exit {status})")
    document = {
        "machine": f"{os.cpu_count()} cores, shared host",
        "reproduce": ".venv/bin/python bench/fidelity.py",
        "runs": sorted(kept + runs, key=lambda run: run["speed"]),
    }
    record.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    print(f"wrote {record}")
    return worst(statuses)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speed", dest="speeds", type=float, action="append",
                        help="run only this speed (repeatable), keeping the others' entries")
    return bench(tuple(parser.parse_args().speeds or SPEEDS))


if __name__ == "__main__":
    sys.exit(main())
