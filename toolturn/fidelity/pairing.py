"""Live turns paired with their simulated twins, and the error per metric.

A twin is the turn with the same (policy, load, session, turn index) in the other run (a tool
call: the same tool_use id as well), which the shared keying of draws makes the same turn: the
same request bodies, the same calls, the same plans. Pairing says how many turns had a twin and
how many twins agree on what happened (attempts, tool calls, outcome): only then does a
difference of times measure the real path and not a different story.

Metrics, each a value per turn (per call for start lag), in the scenario's time scale:

- `ttfts_ms`: time to first tool start; `start_lag_ms`: a call's start minus its block's stop;
  `latency_ms`: the turn's latency; `first_event_ms`: from the turn's first request to its first
  stream event; `requests_per_turn`: the turn's attempts.

For each policy and metric: the median and p95 of each side (numpy's "higher" percentile, as the
run summary's), the relative error of live against simulated ((live - sim) / sim), and the paired
differences live - sim over the turns both define (median, p95). A metric is within tolerance
when both relative errors are within theirs, or the values differ by at most `absolute_ms` (a
simulated median of 0, as start lag under `streaming`, has no relative error to speak of).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from toolturn.fidelity.settings import Tolerances
from toolturn.metrics.frames import table_frame

NS_PER_MS = 1_000_000
TURN_KEY = ["profile", "policy", "load", "session_id", "turn_index"]
TOOL_KEY = [*TURN_KEY, "tool_use_id"]
# The turn facts twins must share to be the same story.
STORY = ["n_attempts", "n_tool_calls", "outcome"]
METRICS = ("ttfts_ms", "start_lag_ms", "latency_ms", "first_event_ms", "requests_per_turn")


@dataclass(frozen=True, slots=True)
class MetricError:
    policy: str
    metric: str
    pairs: int
    sim_median: float
    sim_p95: float
    live_median: float
    live_p95: float
    diff_median: float
    diff_p95: float

    @property
    def error_median(self) -> float:
        return relative_error(self.live_median, self.sim_median)

    @property
    def error_p95(self) -> float:
        return relative_error(self.live_p95, self.sim_p95)

    def within(self, tolerances: Tolerances) -> bool:
        """Whether both the median and the p95 are within `tolerances` (see the docstring)."""
        absolute = tolerances.absolute_ms if self.metric.endswith("_ms") else 0.0
        return _close(self.live_median, self.sim_median, tolerances.median, absolute) and _close(
            self.live_p95, self.sim_p95, tolerances.p95, absolute
        )


@dataclass(frozen=True, slots=True)
class Pairing:
    sim_turns: int
    live_turns: int
    paired: int
    same_story: int
    # The turns without a twin ("live only: ..." or "simulated only: ..."), and the twins whose
    # stories differ, each named with what differs.
    unpaired: tuple[str, ...] = ()
    other_story: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        """Every turn of each run paired with a twin of the same story: only then do the
        metrics compare the same turns."""
        return self.sim_turns == self.live_turns == self.paired == self.same_story


def relative_error(live: float, sim: float) -> float:
    """(live - sim) / sim; 0 when both are 0, infinite when only sim is."""
    if sim == 0:
        return 0.0 if live == 0 else math.copysign(math.inf, live)
    return (live - sim) / abs(sim)


def _close(live: float, sim: float, relative: float, absolute: float) -> bool:
    if math.isnan(live) and math.isnan(sim):
        return True
    return abs(live - sim) <= absolute or abs(relative_error(live, sim)) <= relative


def plain_frame(table: pa.Table) -> pd.DataFrame:
    """`table` as a frame with its dictionary-encoded columns decoded (each run encodes a text
    column with the values it met, in the order it met them, and pandas refuses to compare two
    categoricals whose categories differ: a live call with another outcome than its twin's), and
    its integers kept integers (`toolturn.metrics.frames.table_frame`: a nullable ns column as
    `Int64`, not float64, which rounds nanoseconds above 2**53)."""
    for index, column in enumerate(table.schema):
        if pa.types.is_dictionary(column.type):
            decoded = pc.cast(table.column(index), column.type.value_type)
            table = table.set_column(index, column.name, decoded)
    return table_frame(table)


def _same(sim: pd.Series, live: pd.Series) -> np.ndarray:
    """Whether each pair of values agrees (two nulls agree; a null and a value do not)."""
    both_null: np.ndarray = (sim.isna() & live.isna()).to_numpy(dtype=bool)
    equal: np.ndarray = (sim == live).fillna(False).to_numpy(dtype=bool)
    same: np.ndarray = both_null | equal
    return same


def pair_turns(sim: pa.Table, live: pa.Table) -> tuple[pd.DataFrame, Pairing]:
    """The turns both runs have, side by side (columns `<name>_sim`, `<name>_live`), and the
    column `same_story`: whether the twins agree on `STORY`."""
    sim_df, live_df = plain_frame(sim), plain_frame(live)
    for frame in (sim_df, live_df):
        frame["load"] = frame["load"].fillna(-1.0)  # a trace's null load still pairs
    both = sim_df.merge(live_df, on=TURN_KEY, suffixes=("_sim", "_live"))
    same = np.ones(len(both), dtype=bool)
    for column in STORY:
        same &= _same(both[f"{column}_sim"], both[f"{column}_live"])
    pairing = Pairing(len(sim_df), len(live_df), len(both), int(same.sum()),
                      _unpaired(sim_df, live_df), _other_stories(both[~same]))
    return both, pairing


def _turn_name(row: pd.Series) -> str:
    load = "" if row["load"] == -1.0 else f" load {row['load']:g}"
    return (f"{row['profile']} {row['policy']}{load} session {row['session_id']} "
            f"turn {row['turn_index']}")


def _unpaired(sim_df: pd.DataFrame, live_df: pd.DataFrame) -> tuple[str, ...]:
    keys = sim_df[TURN_KEY].merge(live_df[TURN_KEY], how="outer", on=TURN_KEY, indicator=True)
    sides = {"left_only": "simulated only", "right_only": "live only"}
    return tuple(f"{sides[str(row['_merge'])]}: {_turn_name(row)}"
                 for _, row in keys[keys["_merge"] != "both"].iterrows())


def _other_stories(differing: pd.DataFrame) -> tuple[str, ...]:
    names = []
    for _, row in differing.iterrows():
        changes = [f"{column} {row[f'{column}_sim']} (sim) / {row[f'{column}_live']} (live)"
                   for column in STORY if row[f"{column}_sim"] != row[f"{column}_live"]]
        names.append(f"{_turn_name(row)}: {', '.join(changes)}")
    return tuple(names)


def pair_tools(sim: pa.Table, live: pa.Table) -> pd.DataFrame:
    """The calls both runs have, side by side. (A tools table without a load column, as older
    runs wrote, pairs on the rest of the key.)"""
    sim_df, live_df = plain_frame(sim), plain_frame(live)
    key = [column for column in TOOL_KEY if column in sim_df.columns]
    for frame in (sim_df, live_df):
        if "load" in frame.columns:
            frame["load"] = frame["load"].fillna(-1.0)
    return sim_df.merge(live_df, on=key, suffixes=("_sim", "_live"))


def metric_values(turns: pd.DataFrame, tools: pd.DataFrame, metric: str, side: str) -> pd.Series:
    """The metric's value per paired row on `side` ("sim" or "live"), NaN where undefined."""
    if metric == "ttfts_ms":
        return turns[f"ttfts_ns_{side}"].astype("float64") / NS_PER_MS
    if metric == "latency_ms":
        return turns[f"latency_ns_{side}"].astype("float64") / NS_PER_MS
    if metric == "first_event_ms":
        # The difference in integer ns first: floats would round each time above 2**53.
        waited = turns[f"first_event_ns_{side}"] - turns[f"request_sent_ns_{side}"]
        return waited.astype("float64") / NS_PER_MS
    if metric == "requests_per_turn":
        return turns[f"n_attempts_{side}"].astype("float64")
    if metric == "start_lag_ms":
        return tools[f"start_lag_ns_{side}"].astype("float64") / NS_PER_MS
    raise ValueError(f"unknown metric {metric!r}")


def _percentile(values: np.ndarray, q: float) -> float:
    if values.size == 0:
        return math.nan
    return float(np.percentile(values, q, method="higher"))


def metric_errors(
    sim_tables: dict[str, pa.Table], live_tables: dict[str, pa.Table]
) -> tuple[list[MetricError], Pairing]:
    """Every policy's error per metric over the paired turns (and calls), policies in the
    simulated run's order."""
    turns, pairing = pair_turns(sim_tables["turns"], live_tables["turns"])
    tools = pair_tools(sim_tables["tools"], live_tables["tools"])
    policies = list(dict.fromkeys(sim_tables["turns"].column("policy").to_pylist()))
    errors = []
    for policy in policies:
        mine_turns = turns[turns["policy"] == policy]
        mine_tools = tools[tools["policy"] == policy]
        for metric in METRICS:
            sim_values = metric_values(mine_turns, mine_tools, metric, "sim").to_numpy()
            live_values = metric_values(mine_turns, mine_tools, metric, "live").to_numpy()
            sim_defined = sim_values[~np.isnan(sim_values)]
            live_defined = live_values[~np.isnan(live_values)]
            both = ~np.isnan(sim_values) & ~np.isnan(live_values)
            diffs = live_values[both] - sim_values[both]
            errors.append(MetricError(
                policy=policy, metric=metric, pairs=int(both.sum()),
                sim_median=_percentile(sim_defined, 50), sim_p95=_percentile(sim_defined, 95),
                live_median=_percentile(live_defined, 50), live_p95=_percentile(live_defined, 95),
                diff_median=_percentile(diffs, 50), diff_p95=_percentile(diffs, 95),
            ))
    return errors, pairing
