"""The agent arm's speed (`toolturn run --agent`, toolturn/agents/): sessions per wall second of
the project's own runtime run as a user's agent (examples/own_runtime.py: the live driver over
the SDK's real HTTP and SSE path, on the virtual-time loop) against the simulator (the DES) on
the same scenario, and the virtual time it covers per wall second (its speed against real time,
which `toolturn live` at speed 1 runs at by definition).

    .venv/bin/pytest bench/bench_agents.py --benchmark-only     # as part of `make bench`
    .venv/bin/python bench/bench_agents.py [--sessions N]       # the numbers, printed
    .venv/bin/python bench/bench_agents.py --examples [--sessions 20]   # the examples' table
    .venv/bin/python bench/bench_agents.py --live        # against `toolturn live` at speed 1
    .venv/bin/python bench/bench_agents.py --memory      # peak memory at 10, 50, 200 sessions

`make bench` prints, after this module, the agent's and the DES's minimum round, their ratio and
the agent's speed against real time (the virtual span it covered per wall second: `toolturn live`
at speed 1 covers about one, `--live` measures it on `LIVE_SESSIONS` sessions).

The fixed scenario is `scenarios/default.toml` cut to `SESSIONS` sessions, policy `streaming`.
Targets (issue 35): within 10x of the DES, and at least 100x faster than real time.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # examples/ is not installed: it is found from the tree

from examples.own_runtime import agent  # noqa: E402
from toolturn.agents.arm import AgentArm, LevelStats  # noqa: E402
from toolturn.engine.arrivals import load_levels  # noqa: E402
from toolturn.engine.simulation import simulate  # noqa: E402
from toolturn.scenario.loader import load_scenario, with_overrides  # noqa: E402
from toolturn.scenario.schema import Scenario  # noqa: E402

SESSIONS = 40
SMOKE_SESSIONS = 3
POLICY = "streaming"
SCENARIO = ROOT / "scenarios" / "default.toml"
TARGET_OF_DES = 10.0
TARGET_OF_REAL_TIME = 100.0
LIVE_SESSIONS = 3
MEMORY_SESSIONS = (10, 50, 200)
T = TypeVar("T")


def fixed(sessions: int = SESSIONS) -> Scenario:
    return with_overrides(load_scenario(SCENARIO), sessions=sessions, policies=[POLICY])


def run_agent(scenario: Scenario) -> LevelStats:
    with tempfile.TemporaryDirectory(prefix="bench-agents-") as scratch:
        arm = AgentArm(scenario, agent, "agent:examples.own_runtime:agent", say=lambda line: None)
        return arm.run_level(0, Path(scratch) / "agent-0")


def run_des(scenario: Scenario) -> float:
    """The DES's wall seconds for the same sessions."""
    level = load_levels(scenario.load)[0]
    start = time.perf_counter()
    simulate(scenario, POLICY, level)
    return time.perf_counter() - start


def _sessions(benchmark: Any) -> int:
    # Unmeasured (tests/bench/test_bench_smoke.py runs every benchmark once), a few sessions
    # show that it runs; measured, the fixed size.
    return SMOKE_SESSIONS if benchmark.disabled else SESSIONS


# What the two benchmarks measured: their minimum round (s); the agent's virtual span (s).
_measured: dict[str, float] = {}


@pytest.fixture(scope="module", autouse=True)
def ratio_table(request: pytest.FixtureRequest) -> Iterator[None]:
    """After the module, the agent against the DES and against real time."""
    yield
    reporter = request.config.pluginmanager.getplugin("terminalreporter")
    capture = request.config.pluginmanager.getplugin("capturemanager")
    if reporter is None or capture is None or not {"agent", "des"} <= set(_measured):
        return
    with capture.global_and_fixture_disabled():  # teardown output is captured otherwise
        reporter.write_line("")
        for line in ratio_lines(_measured["agent"], _measured["des"], _measured["virtual"]):
            reporter.write_line(line)


def ratio_lines(agent_s: float, des_s: float, virtual_s: float) -> list[str]:
    of_des, of_real = agent_s / des_s, virtual_s / agent_s
    return [
        f"agent arm (examples/own_runtime.py), default scenario, {SESSIONS} sessions, {POLICY}, "
        "minimum of 3 rounds, wall clock:",
        f"  agent {agent_s:.3f} s, DES {des_s:.3f} s: x {of_des:.1f} the DES (target <= "
        f"{TARGET_OF_DES:g}: {'met' if of_des <= TARGET_OF_DES else 'MISSED'})",
        f"  virtual span {virtual_s:.1f} s: {of_real:.0f}x real time (target >= "
        f"{TARGET_OF_REAL_TIME:g}x: {'met' if of_real >= TARGET_OF_REAL_TIME else 'MISSED'}; "
        "toolturn live at speed 1 runs at about 1x: --live measures it)",
    ]


def test_agent_own_runtime(benchmark: Any) -> None:
    sessions = _sessions(benchmark)
    stats = benchmark.pedantic(run_agent, args=(fixed(sessions),), rounds=3, iterations=1)
    assert stats.sessions == sessions and not stats.errors
    if benchmark.stats is not None:  # --benchmark-disable: run once, nothing measured
        _measured["agent"] = benchmark.stats.stats.min
        _measured["virtual"] = stats.virtual_ns / 1e9


def test_des_same_sessions(benchmark: Any) -> None:
    benchmark.pedantic(run_des, args=(fixed(_sessions(benchmark)),), rounds=3, iterations=1)
    if benchmark.stats is not None:
        _measured["des"] = benchmark.stats.stats.min


def live_reference() -> None:
    """`toolturn live` at speed 1 on `LIVE_SESSIONS` sessions against the agent arm on the same
    sessions: real time's own speed, measured rather than assumed."""
    from toolturn.cli import main as toolturn

    scenario = fixed(LIVE_SESSIONS)
    stats, agent_s, _ = _timed(run_agent, scenario)
    with tempfile.TemporaryDirectory(prefix="bench-live-") as scratch:
        start = time.perf_counter()
        code = toolturn(["live", str(SCENARIO), "--sessions", str(LIVE_SESSIONS), "--policy",
                         POLICY, "--out", str(Path(scratch) / "live"), "--no-report"])
        live_s = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"toolturn live: exit {code}")
    virtual_s = stats.virtual_ns / 1e9
    print(f"default scenario, {LIVE_SESSIONS} sessions, {POLICY}: virtual span {virtual_s:.1f} s")
    print(f"  toolturn live at speed 1: {live_s:8.1f} s wall = {virtual_s / live_s:.2f}x real time")
    print(f"  agent arm:                {agent_s:8.2f} s wall = {virtual_s / agent_s:.0f}x real "
          f"time, {live_s / agent_s:.0f}x toolturn live")


def peak_memory() -> None:
    """Each of `MEMORY_SESSIONS` in a process of its own: its peak resident memory."""
    for sessions in MEMORY_SESSIONS:
        child = subprocess.run([sys.executable, __file__, "--peak-of", str(sessions)],
                               check=True, capture_output=True, text=True)
        print(f"  {sessions:4} sessions: peak {child.stdout.strip()} MB")


def _peak_of(sessions: int) -> None:
    stats = run_agent(fixed(sessions))
    assert stats.sessions == sessions
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)  # KB on Linux


def _timed(run: Callable[[Scenario], T], scenario: Scenario) -> tuple[T, float, float]:
    """`run(scenario)`, its wall and CPU seconds. On a machine shared with other work the CPU
    seconds are the steadier measure: the wall clock also counts the time others ran."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = run(scenario)
    return result, time.perf_counter() - wall, time.process_time() - cpu


# The examples (examples/) beside the policies: docs/your-agent-in-virtual-time.md's table.
EXAMPLES = ("own_runtime:agent", "sdk_tool_runner:agent", "pydantic_ai_agent:agent",
            "openai_agent:agent")
_COLUMNS = (("ttfts_ns.p50", "TTFTS p50 (ms)", 1e-6), ("latency_ns.p50", "turn latency p50 (ms)",
            1e-6), ("throughput.turns_per_s", "turns/s", 1.0))


def examples_table(sessions: int) -> str:
    """A markdown row per policy of the default scenario and per example agent: TTFTS p50,
    turn latency p50, completed turns per simulated second, agent_error sessions."""
    from toolturn.cli import main as toolturn

    rows: dict[str, dict[str, float]] = {}
    errors: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="bench-examples-") as scratch:
        for example in EXAMPLES:
            out = Path(scratch) / example.replace(":", "-")
            code = toolturn(["run", str(SCENARIO), "--sessions", str(sessions), "--agent",
                             f"examples.{example}", "--out", str(out), "--no-report", "--quiet"])
            if code != 0:
                raise SystemExit(f"toolturn run --agent examples.{example}: exit {code}")
            summary = pq.read_table(out / "summary.parquet").to_pylist()
            for row in summary:
                if row["versus"] is None and row["load_level"] == 0:
                    rows.setdefault(row["policy"], {})[row["metric"]] = row["value"]
            for row in pq.read_table(out / "sessions.parquet",
                                     columns=["policy", "outcome"]).to_pylist():
                errors.setdefault(row["policy"], 0)
                errors[row["policy"]] += row["outcome"] == "agent_error"
    lines = ["| arm | " + " | ".join(title for _, title, _ in _COLUMNS) + " | agent_error |",
             "|---" * (len(_COLUMNS) + 2) + "|"]
    for policy, metrics in rows.items():
        cells = [f"{metrics[name] * scale:.{2 if scale == 1.0 else 0}f}" if name in metrics else "-"
                 for name, _, scale in _COLUMNS]
        lines.append(f"| `{policy}` | " + " | ".join(cells) + f" | {errors.get(policy, 0)} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--examples", action="store_true",
                        help="the examples beside every policy (a markdown table) instead")
    parser.add_argument("--live", action="store_true",
                        help=f"against toolturn live at speed 1 ({LIVE_SESSIONS} sessions) instead")
    parser.add_argument("--memory", action="store_true",
                        help="peak memory at 10, 50 and 200 sessions instead")
    parser.add_argument("--peak-of", type=int, help=argparse.SUPPRESS)  # one --memory child
    args = parser.parse_args()
    if args.peak_of is not None:
        _peak_of(args.peak_of)
        return
    extra = {"examples": lambda: print(examples_table(args.sessions)), "live": live_reference,
             "memory": peak_memory}
    for name, run in extra.items():
        if getattr(args, name):
            run()
            return
    scenario = fixed(args.sessions)
    run_agent(fixed(2))  # the SDK's first-use cost, paid before any round is timed
    # Paired rounds, each the agent and then the DES back to back: a shared machine's load
    # drifts between rounds more than within one, so the ratio is taken per pair.
    pairs = [(_timed(run_agent, scenario), _timed(run_des, scenario)) for _ in range(args.rounds)]
    print(f"default scenario, {args.sessions} sessions, policy {POLICY}, "
          f"{args.rounds} paired rounds, medians:")
    for clock, at in (("wall", 1), ("CPU", 2)):
        agent_s = statistics.median(agent[at] for agent, _ in pairs)
        des_s = statistics.median(des[at] for _, des in pairs)
        ratios = sorted(agent[at] / des[at] for agent, des in pairs)
        print(f"  {clock:4} DES:        {des_s:8.3f} s  {args.sessions / des_s:8.1f} sessions/s")
        print(f"  {clock:4} agent:      {agent_s:8.3f} s  {args.sessions / agent_s:8.1f} "
              f"sessions/s")
        print(f"  {clock:4} agent/DES:  x {statistics.median(ratios):.1f} median of pairs "
              f"({', '.join(f'{ratio:.1f}' for ratio in ratios)}; target <= {TARGET_OF_DES:g})")
    median = sorted((agent for agent, _ in pairs), key=lambda agent: agent[1])[len(pairs) // 2]
    stats, wall_s = median[0], median[1]
    virtual_s = stats.virtual_ns / 1e9
    print(f"  virtual span:    {virtual_s:8.1f} s      = {virtual_s / wall_s:.0f}x real time "
          f"(wall; toolturn live at speed 1 takes the span itself; target >= "
          f"{TARGET_OF_REAL_TIME:g}x)")
    print(f"  virtual steps:   {stats.steps.steps} (real time per step: mean "
          f"{stats.steps.mean_real_ns / 1e6:.3f} ms, max {stats.steps.max_real_ns / 1e6:.1f} ms)")


if __name__ == "__main__":
    main()
