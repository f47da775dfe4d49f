"""Rows of a run's tables kept in memory: one cheap ``add`` call per turn, tool, repair, request,
session, for hand-made runs and tests (no command uses it: every driver writes its rows to part
files, ``toolturn.metrics.parts``; ``write_run`` writes the same bytes from these tables).

One collector serves a whole run, every policy included (``policy`` is a column). The run-wide
columns (``run_id``, and ``scenario`` and ``seed`` of turns) are filled by the collector. A
collector made with ``trace=True`` also has the ``events`` table (``schema.EVENTS``), whose rows
come column by column (``add_columns``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from toolturn.metrics.schema import (
    EVENTS,
    TABLES,
    TableSpec,
)
from toolturn.metrics.tables import MetricsError, TableBuilder


class RunCollector:
    """Accumulates the rows of a run's tables; ``tables()`` checks and builds them.

    >>> run = RunCollector(run_id="r1", scenario="default", seed=7)
    >>> run.add("sessions", dict(policy="streaming", profile="default", protocol="anthropic",
    ...         load_level=0, session_id=0, arrival_ns=0, n_turns=0, outcome="completed",
    ...         n_interrupts=0, n_compactions=0, n_calls_lost=0))
    >>> run.tables()["sessions"].num_rows
    1

    A column left out that may not be null is named (a nullable one is null):

    >>> run.add("sessions", dict(policy="streaming", profile="default", protocol="anthropic",
    ...         load_level=0, session_id=1, arrival_ns=0, n_turns=0, outcome="completed",
    ...         n_interrupts=0, n_compactions=0))
    >>> run.tables()
    Traceback (most recent call last):
    ...
    toolturn.metrics.tables.MetricsError: sessions.n_calls_lost: row 1: missing value (not nullable)
    """

    def __init__(self, *, run_id: str, scenario: str, seed: int, trace: bool = False) -> None:
        specs = (*TABLES, EVENTS) if trace else TABLES
        self._builders: dict[str, TableBuilder] = {
            spec.name: TableBuilder(spec, self._constants(spec, run_id, scenario, seed))
            for spec in specs
        }

    @staticmethod
    def _constants(spec: TableSpec, run_id: str, scenario: str, seed: int) -> dict[str, Any]:
        run_wide = {"run_id": run_id, "scenario": scenario, "seed": seed}
        return {name: value for name, value in run_wide.items() if name in spec.column_names}

    def add(self, table: str, fields: dict[str, Any]) -> None:
        """One row of the table named `table` (for rows that arrive tagged with their table)."""
        self._builder(table).append(fields)

    def add_columns(self, table: str, columns: Mapping[str, Sequence[Any]]) -> None:
        """Rows of the table named `table` given column by column (all of one length)."""
        self._builder(table).extend(columns)

    def _builder(self, table: str) -> TableBuilder:
        builder = self._builders.get(table)
        if builder is None:
            raise MetricsError(f"no table {table!r}; the tables are {sorted(self._builders)}")
        return builder

    def row_counts(self) -> dict[str, int]:
        """Rows collected so far, by table."""
        return {name: len(builder) for name, builder in self._builders.items()}

    def tables(self) -> dict[str, pa.Table]:
        """Every table (``events`` last, with a trace), checked against its schema and sorted;
        raises ``MetricsError``."""
        return {name: builder.build() for name, builder in self._builders.items()}
