"""Capacity search: the highest load at which every objective (toolturn.capacity.slo) holds, per
arm (recovery profile x executor policy) and per experiment key, by bisection with
replications; goodput against load; the saturation point of the loads probed.

Rules:

1. The load is the scenario's knob: `load.concurrency` for a closed loop (whole numbers),
   `load.arrival_rate_per_s` for an open one. A trace of arrivals has no knob (UserError).
2. A probe is the scenario at one load, each replication a point of toolturn.experiment.points with
   the key's settings and the load's (`load.concurrency=8`), so its seed derives from the root
   seed, the key and the replication: every arm of a probe runs on the same draws (common
   random numbers), and the probe of a load is the same whatever else was probed. Every arm runs
   in every probe (`run_scenario(..., jobs=...)`); probes are kept, so no load runs twice.
3. An arm meets the objectives at a load when the mean over the replications of each objective's
   metric meets it (the t interval is reported beside it, not tested).
4. The bracket: the scenario's own load levels (its sweep, or its one level) are probed first.
   From the highest level that meets (or, if none does, halving the lowest at most
   `MAX_HALVINGS` times, down to the knob's least value), loads double until one fails or
   `max_load` is reached; then bisection between the highest load that met and the lowest
   above it that failed, until they are one apart
   (closed loop) or within `tolerance` of each other relative to the lower (open loop). Meeting
   is assumed to fall with load (it does for percentiles of queueing latency); a load that meets
   above a failing one is reported, not searched around.
5. Goodput at a load: completed turns meeting every per-turn objective (toolturn.capacity.slo rule
   4) per simulated second, mean over the replications. Throughput likewise with every completed
   turn.
6. Saturation: among an arm's probes in load order, the lowest load whose throughput is within
   `SATURATION_SHARE` of the highest throughput any probe reached, provided some higher load was
   probed (else the probes never reached saturation: None).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from toolturn.capacity.slo import CATEGORY_PREFIXES, Slo
from toolturn.engine.runner import run_scenario
from toolturn.errors import UserError
from toolturn.experiment.points import Setting, point_scenario, settings_text
from toolturn.limits import MIN_RATE_PER_S
from toolturn.metrics.intervals import Interval, t_interval
from toolturn.metrics.schema import COMPLETED
from toolturn.metrics.summary import NS_PER_S, SummaryRow, summarize
from toolturn.scenario.schema import Scenario

SATURATION_SHARE = 0.05
# Doublings above the scenario's levels before giving up on a bracket, and halvings below them
# (an objective no sixteenth of the scenario's load meets is not a matter of load).
MAX_STEPS = 12
MAX_HALVINGS = 4
CLOSED_KNOB = "load.concurrency"
OPEN_KNOB = "load.arrival_rate_per_s"
Arm = tuple[str, str]


@dataclass(frozen=True)
class Probe:
    """One arm at one load, over the replications: each objective's metric, goodput and
    throughput (means with their intervals), and whether every objective was met (rule 3)."""

    load: float
    values: dict[str, Interval | None]
    goodput: Interval
    throughput: Interval
    met: bool


@dataclass
class ArmCapacity:
    """The search's answer for one arm of one key: `capacity` the highest load probed that met
    every objective with a failing load above it (None: even the least load failed), `bounded`
    False when the highest load tried still met (the capacity is at least that)."""

    key: str
    arm: Arm
    capacity: float | None = None
    bounded: bool = True
    probes: list[Probe] = field(default_factory=list)

    @property
    def saturation(self) -> float | None:
        """Rule 6."""
        return saturation_load([(p.load, p.throughput.mean) for p in self.probes])

    def probe_at(self, load: float | None) -> Probe | None:
        return next((p for p in self.probes if p.load == load), None)


@dataclass(frozen=True)
class Search:
    """What to search: the objectives, replications per probe, worker processes, the open
    loop's relative tolerance, the highest load to try (None: no limit but MAX_STEPS), and a
    callback told of each probe (load, key) before it runs."""

    slos: Sequence[Slo]
    replications: int = 2
    jobs: int = 1
    tolerance: float = 0.05
    max_load: float | None = None
    on_probe: Callable[[str, float], None] | None = None


def knob_of(scenario: Scenario) -> str:
    """Rule 1."""
    load = scenario.load
    if load.mode == "closed":
        return CLOSED_KNOB
    if load.trace_ms is not None:
        raise UserError(
            f"{scenario.name}: load.trace_ms fixes the arrival times; capacity needs an arrival "
            "rate (load.arrival_rate_per_s) or a closed loop (load.concurrency) to vary"
        )
    return OPEN_KNOB


def saturation_load(points: Sequence[tuple[float, float]]) -> float | None:
    """Rule 6 over (load, throughput) pairs."""
    ordered = sorted(points)
    if len(ordered) < 2:
        return None
    best = max(throughput for _, throughput in ordered)
    for index, (load, throughput) in enumerate(ordered):
        if throughput >= best * (1 - SATURATION_SHARE):
            return load if index < len(ordered) - 1 else None
    return None


def search_capacity(
    scenario: Scenario, keys: Sequence[tuple[Setting, ...]], search: Search
) -> list[ArmCapacity]:
    """Rules 2 to 4 for every key (settings of the scenario, such as an experiment's keys; `()`
    for the scenario itself) and every arm; in key order, then the arms' order."""
    knob = knob_of(scenario)
    results: list[ArmCapacity] = []
    for key in keys:
        if any(path.startswith("load") for path, _ in key):
            raise UserError(
                f"{scenario.name}: experiment point {settings_text(key)} sets the load, which "
                "toolturn capacity varies itself; give other paths in [experiment]"
            )
        prober = _Prober(scenario, key, knob, search)
        results += [_bisect(prober, arm, search) for arm in _arms(scenario)]
    return results


class _Prober:
    """Runs and keeps the probes of one key (rule 2)."""

    def __init__(self, scenario: Scenario, key: tuple[Setting, ...], knob: str, search: Search):
        self.scenario = scenario
        self.key = key
        self.knob = knob
        self.search = search
        self.closed = knob == CLOSED_KNOB
        self._probes: dict[float, dict[Arm, Probe]] = {}

    @property
    def least(self) -> float:
        return 1.0 if self.closed else MIN_RATE_PER_S

    def start_levels(self) -> list[float]:
        levels = [float(level) for level in self.scenario.load.levels]
        return sorted(self.fit(level) for level in levels) or [self.least]

    def fit(self, load: float) -> float:
        load = max(load, self.least)
        if self.search.max_load is not None:
            load = min(load, self.search.max_load)
        return float(round(load)) if self.closed else load

    def probes_of(self, arm: Arm) -> list[Probe]:
        """The arm's probes so far, by load."""
        found = (probes[arm] for probes in self._probes.values() if arm in probes)
        return sorted(found, key=lambda probe: probe.load)

    def at(self, load: float, arm: Arm) -> Probe:
        load = self.fit(load)
        if load not in self._probes:
            if self.search.on_probe is not None:
                self.search.on_probe(settings_text(self.key), load)
            self._probes[load] = self._run(load)
        return self._probes[load][arm]

    def _run(self, load: float) -> dict[Arm, Probe]:
        value: Any = int(load) if self.closed else load
        settings = (*self.key, (self.knob, value))
        per_arm: dict[Arm, list[tuple[list[SummaryRow], float, float]]] = {}
        for replication in range(self.search.replications):
            scenario = point_scenario(self.scenario, settings, replication, drop=("load.sweep",))
            tables = run_scenario(scenario, jobs=self.search.jobs).tables("capacity")
            summary = summarize(tables)
            for profile, policy in _arms(scenario):
                rows = [
                    r
                    for r in summary
                    if r.versus is None and (r.profile, r.policy) == (profile, policy)
                ]
                goodput, throughput = _turn_rates(tables["turns"], (profile, policy), self.search)
                per_arm.setdefault((profile, policy), []).append((rows, goodput, throughput))
        return {arm: self._probe(load, runs) for arm, runs in per_arm.items()}

    def _probe(self, load: float, runs: list[tuple[list[SummaryRow], float, float]]) -> Probe:
        values: dict[str, Interval | None] = {}
        for slo in self.search.slos:
            found = [
                next((r.value for r in rows if r.metric == slo.metric), None) for rows, _, _ in runs
            ]
            present = [value for value in found if value is not None]
            # A replication without the metric cannot show the objective holds (slo rule 3).
            values[slo.metric] = t_interval(present) if len(present) == len(found) else None
        met = all(
            (interval := values[slo.metric]) is not None and slo.met(interval.mean)
            for slo in self.search.slos
        )
        return Probe(
            load=load,
            values=values,
            goodput=t_interval([goodput for _, goodput, _ in runs]),
            throughput=t_interval([throughput for _, _, throughput in runs]),
            met=met,
        )


def _value_of(metric: str, rows: list[SummaryRow]) -> float | None:
    """The metric's value; a category the run never saw counts 0 (it happened 0 times)."""
    value = next((row.value for row in rows if row.metric == metric), None)
    if value is None and metric.startswith(CATEGORY_PREFIXES) and rows:
        return 0.0
    return value


def _arms(scenario: Scenario) -> list[Arm]:
    return [(pr, po) for pr in scenario.runtime.profiles for po in scenario.runtime.policies]


def _bisect(prober: _Prober, arm: Arm, search: Search) -> ArmCapacity:
    """Rule 4 for one arm."""
    result = ArmCapacity(key=settings_text(prober.key), arm=arm)
    met: float | None = None
    failed: float | None = None
    for level in prober.start_levels():
        if not prober.at(level, arm).met:
            failed = level
            break
        met = level
    if met is None:
        low = prober.start_levels()[0]
        for _ in range(MAX_HALVINGS):
            if low <= prober.least:
                break
            low = prober.fit(low / 2)
            if prober.at(low, arm).met:
                met = low
                break
            failed = low
    if met is not None and failed is None:
        high = met
        for _ in range(MAX_STEPS):
            nxt = prober.fit(high * 2)
            if nxt == high:
                break
            high = nxt
            if not prober.at(high, arm).met:
                failed = high
                break
            met = high
    if met is not None and failed is not None:
        while not _close(met, failed, prober.closed, search.tolerance):
            middle = prober.fit((met + failed) / 2)
            if middle in (met, failed):
                break
            if prober.at(middle, arm).met:
                met = middle
            else:
                failed = middle
    result.capacity = met
    result.bounded = met is None or failed is not None
    result.probes = prober.probes_of(arm)
    return result


def _close(low: float, high: float, closed: bool, tolerance: float) -> bool:
    if closed:
        return high - low <= 1
    return high - low <= tolerance * low


def _turn_rates(turns: pa.Table, arm: Arm, search: Search) -> tuple[float, float]:
    """Goodput and throughput of one arm's turns (rule 5), per simulated second."""
    profile, policy = arm
    mine = turns.filter(
        pc.and_(
            pc.equal(turns["profile"].cast(pa.string()), profile),
            pc.equal(turns["policy"].cast(pa.string()), policy),
        )
    )
    if mine.num_rows == 0:
        return 0.0, 0.0
    span_ns = pc.max(mine["turn_end_ns"]).as_py() - pc.min(mine["request_sent_ns"]).as_py()
    if span_ns <= 0:
        return 0.0, 0.0
    completed = mine.filter(pc.equal(mine["outcome"].cast(pa.string()), COMPLETED))
    good = 0
    columns = {slo.turn_column for slo in search.slos} - {None}
    values = {column: completed[column].to_pylist() for column in columns if column}
    for index in range(completed.num_rows):
        if all(
            slo.turn_met(values[slo.turn_column][index])
            for slo in search.slos
            if slo.turn_column is not None
        ):
            good += 1
    return good * NS_PER_S / span_ns, completed.num_rows * NS_PER_S / span_ns
