"""The simulator's fidelity on the default scenario: `toolturn fidelity` at speed 1 (20 sessions)
and at speed 10 (10 sessions, the target: within the default tolerances, every turn paired, on an
idle 2-core host), every policy; the verdicts and errors recorded in bench/fidelity_default.json.

    .venv/bin/python bench/fidelity.py            # or: make bench-fidelity
    .venv/bin/python bench/fidelity.py --speed 10 # that speed only, its entry replaced

It takes real time (the scenario's sessions at speed 1 run for minutes: think times of 15 s and
more, three policies one after another). Each run's full folder (both runs' tables, fidelity.json,
fidelity.png) goes to results/fidelity-bench-speed<X>/; the summary of both is written here.
Every verdict is recorded (exit 0 within tolerance, 1 beyond, 3 turns unpaired, 4 the live run
could not keep up: then the host, not the simulator, was measured; its load average is noted).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = "scenarios/default.toml"
# Sessions per speed.
SESSIONS = {10.0: 10, 1.0: 20}
SPEEDS = tuple(SESSIONS)
# The exit statuses of a fidelity run that wrote its verdict.
VERDICTS = (0, 1, 3, 4)
RECORD = ROOT / "bench" / "fidelity_default.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speed", dest="speeds", type=float, action="append",
                        help="run only this speed (repeatable), keeping the others' entries")
    speeds = tuple(parser.parse_args().speeds or SPEEDS)
    kept = []
    if RECORD.exists() and speeds != SPEEDS:
        kept = [run for run in json.loads(RECORD.read_text())["runs"]
                if run["speed"] not in speeds]
    runs = []
    for speed in speeds:
        out = ROOT / "results" / f"fidelity-bench-speed{speed:g}"
        sessions = SESSIONS.get(speed, SESSIONS[10.0])
        command = [sys.executable, "-m", "toolturn.cli", "fidelity", SCENARIO, "--sessions",
                   str(sessions), "--speed", f"{speed:g}", "--out", str(out), "--force"]
        load_before = os.getloadavg()[0]
        started = time.monotonic()
        status = subprocess.run(command, cwd=ROOT, check=False).returncode
        if status not in VERDICTS:
            print(f"bench/fidelity.py: {' '.join(command)} exited {status}", file=sys.stderr)
            return status
        report = json.loads((out / "fidelity.json").read_text())
        runs.append({
            "measured": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "command": f"toolturn fidelity {SCENARIO} --sessions {sessions} --speed {speed:g}",
            "exit_status": status,
            "wall_s": round(time.monotonic() - started, 1),
            "load_average_before": round(load_before, 2),
            **report,
        })
    record = {
        "machine": f"{os.cpu_count()} cores, shared host",
        "reproduce": ".venv/bin/python bench/fidelity.py",
        "runs": sorted(kept + runs, key=lambda run: run["speed"]),
    }
    RECORD.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    print(f"wrote {RECORD}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
