"""Instructions per stream event of the simulator and its parts, counted by callgrind.

Wall-clock time on a shared host moves by 10% to 25% from run to run, more than most single
changes to the engine; the number of instructions the CPU executes does not move (the same code,
inputs and hash seed give the same count, whatever else the machine does). So a change is judged
here by its count, and the wall-clock benchmark (`bench/bench_simulator.py`) says what it is in
seconds.

    python bench/icount.py [--sessions 20]        # or: make bench-icount
    python bench/icount.py --base main            # or: make bench-icount-gate BASE=main

With `--base`, a checkout of that commit is counted the same way (with this script, and the
commit's own simulator and benchmark), then this tree; a part whose count grew by more than
`--fail-above` percent (default 2: the counts repeat within half a percent) fails the gate.

The parts are those of the wall-clock benchmark, on the same scenario (`scenarios/default.toml`,
policy `streaming`) cut to `--sessions` sessions:

- engine: the whole simulation;
- bare runtime: the runtime fed every input it received in an engine run, with no simulator;
- mock model: every request of an engine run asked again of a fresh model.

Every part is counted per stream event the engine fed, so the engine's count splits into the
bare runtime's, the model's and the rest (simpy, sessions, tools, user draws, rows).

Each part runs in a process under `valgrind --tool=callgrind`, once with one repetition and once
with two; the difference is one warm repetition, without the interpreter's start, the imports and
the recording that the bare runtime and the model are fed from. Needs valgrind (Debian: `apt-get
install valgrind`); the parts are counted side by side, one process per core.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from rich.console import Console
from rich.table import Table

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
PARTS = ("engine", "bare_runtime", "mock_model")
DEFAULT_SESSIONS = 20
DEFAULT_FAIL_ABOVE_PERCENT = 2.0
_COLLECTED = re.compile(r"^==\d+== Collected : (\d+)$", re.MULTILINE)
_EVENTS = re.compile(r"^events (\d+)$", re.MULTILINE)


class CountError(Exception):
    """A counting run failed or printed what callgrind and the worker do not."""


@dataclass(frozen=True, slots=True)
class Count:
    """What one run under callgrind executed, and the stream events of one repetition."""

    instructions: int
    events: int


def counted_run(part: str, repetitions: int, sessions: int, tree: Path = ROOT) -> Count:
    """Run `part` `repetitions` times in a fresh interpreter under callgrind, with the simulator
    and the benchmark of `tree` (a checkout with this script in its bench/)."""
    command = [
        "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
        sys.executable, str(tree / "bench" / "icount.py"),
        "--worker", part, str(repetitions), "--sessions", str(sessions),
    ]
    # A fixed hash seed: string hashing decides dict and set layouts, and so the count. One
    # OpenBLAS thread: numpy's import otherwise starts a pool whose threads spin for a while,
    # and the instructions they spin vary by millions from run to run.
    environment = dict(
        os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1"
    )
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(tree), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    done = subprocess.run(command, cwd=tree, env=environment, capture_output=True, text=True)
    collected, events = _COLLECTED.search(done.stderr), _EVENTS.search(done.stdout)
    if done.returncode != 0 or collected is None or events is None:
        raise CountError(
            f"{part} x{repetitions} (exit status {done.returncode}):\n"
            f"{done.stdout[-1500:]}{done.stderr[-1500:]}"
        )
    return Count(int(collected.group(1)), int(events.group(1)))


def per_event(part: str, sessions: int, tree: Path = ROOT) -> float:
    """Instructions of one warm repetition of `part`, per stream event."""
    once, twice = counted_run(part, 1, sessions, tree), counted_run(part, 2, sessions, tree)
    return (twice.instructions - once.instructions) / twice.events


def count_parts(sessions: int, tree: Path = ROOT) -> dict[str, float]:
    """Every part's instructions per stream event, side by side, one process per core."""
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        futures = {part: pool.submit(per_event, part, sessions, tree) for part in PARTS}
        return {part: future.result() for part, future in futures.items()}


def count_base(base: str, sessions: int) -> dict[str, float]:
    """`count_parts` of a checkout of commit `base` (removed afterwards)."""
    gate = _bench_module("gate")
    with tempfile.TemporaryDirectory(prefix="bench-icount-") as scratch:
        tree = Path(scratch) / "base"
        try:
            gate.checkout(base, tree)
        except subprocess.CalledProcessError as error:
            why = (error.stderr or b"").decode(errors="replace").strip()
            raise CountError(f"cannot check out {base}: {why}") from error
        try:
            if not (tree / "bench" / "bench_simulator.py").is_file():
                raise CountError(f"base {base} has no bench/bench_simulator.py to count")
            # This script counts the base too (it may predate it): the same method both sides.
            shutil.copyfile(Path(__file__), tree / "bench" / "icount.py")
            return count_parts(sessions, tree)
        finally:
            gate.remove_checkout(tree)


def _bench_module(name: str) -> ModuleType:
    """A module of this bench/ (not a package: it is put on the import path)."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module(name)


def work(part: str, repetitions: int, sessions: int) -> int:
    """The worker: prepare `part`, run it `repetitions` times, return the stream events the
    engine fed (every part is counted per those, so that the parts add up)."""
    if part not in PARTS:
        raise ValueError(f"unknown part {part!r} (one of {', '.join(PARTS)})")
    bench = _bench_module("bench_simulator")
    from toolturn.scenario.loader import with_overrides

    fixed = with_overrides(bench.scenario(), sessions=sessions)
    if part == "engine":
        return [bench.run_engine(fixed) for _ in range(repetitions)][-1]
    recording = bench.record(fixed)
    for _ in range(repetitions):
        if part == "bare_runtime":
            bench.replay(fixed, recording.tapes)
        else:
            bench.answer(fixed, recording.requests)
    return sum(tape.events_fed for tape in recording.tapes)


def table(counts: dict[str, float], sessions: int) -> Table:
    engine, bare, model = (counts[part] for part in PARTS)
    rows = [
        ("engine", engine),
        ("bare runtime", bare),
        ("mock model", model),
        ("the rest (simpy, sessions, tools, draws, rows)", engine - bare - model),
    ]
    result = Table(title=f"instructions per stream event, {sessions} sessions of default.toml")
    result.add_column("part")
    result.add_column("instructions", justify="right")
    result.add_column("of the engine", justify="right")
    for name, value in rows:
        result.add_row(name, f"{value:,.0f}", f"{value / engine:.0%}")
    return result


def compare(
    base: dict[str, float], new: dict[str, float], fail_above_percent: float
) -> tuple[Table, list[str]]:
    """This tree's counts against the base's; the parts that grew beyond the threshold."""
    result = Table(title="instructions per stream event: this tree against the base")
    for column in ("part", "base", "new", "change"):
        result.add_column(column, justify="left" if column == "part" else "right")
    result.add_column("verdict")
    failures = []
    for part in PARTS:
        change = (new[part] / base[part] - 1) * 100
        if change > fail_above_percent:
            verdict = f"MORE beyond +{fail_above_percent:g}%"
            failures.append(part)
        else:
            verdict = "fewer" if change < -fail_above_percent else "same (within the threshold)"
        result.add_row(
            part, f"{base[part]:,.0f}", f"{new[part]:,.0f}", f"{change:+.1f}%", verdict
        )
    return result, failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Instructions per stream event of the simulator and its parts (callgrind)."
    )
    parser.add_argument("--sessions", type=int, default=DEFAULT_SESSIONS)
    parser.add_argument("--base", help="also count this commit, and fail if a part grew")
    parser.add_argument(
        "--fail-above",
        type=float,
        default=DEFAULT_FAIL_ABOVE_PERCENT,
        metavar="PERCENT",
        help=f"with --base: the growth that fails (default {DEFAULT_FAIL_ABOVE_PERCENT:g})",
    )
    # Internal: the process that callgrind watches.
    parser.add_argument(
        "--worker", nargs=2, metavar=("PART", "REPETITIONS"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.sessions < 1:
        parser.error(f"--sessions: must be at least 1 (got {args.sessions})")
    if args.worker:
        part, repetitions = args.worker
        print(f"events {work(part, int(repetitions), args.sessions)}")
        return 0
    console = Console(stderr=True)
    if shutil.which("valgrind") is None:
        console.print("bench/icount.py: valgrind not found (Debian: apt-get install valgrind)")
        return 2
    try:
        base = None
        if args.base:
            with console.status(f"counting {args.base} under callgrind (minutes)"):
                base = count_base(args.base, args.sessions)
        with console.status(f"counting {', '.join(PARTS)} under callgrind (minutes)"):
            counts = count_parts(args.sessions)
    except CountError as error:
        console.print(f"bench/icount.py: a counting run failed: {error}", markup=False)
        return 1
    output = Console()
    output.print(table(counts, args.sessions))
    if base is None:
        return 0
    comparison, failures = compare(base, counts, args.fail_above)
    output.print(comparison)
    if failures:
        print(f"instruction gate FAILED: {', '.join(failures)} grew beyond {args.fail_above:g}%")
        return 1
    print("instruction gate passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
