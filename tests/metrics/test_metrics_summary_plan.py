"""One summary plan (`toolturn.metrics.summary_plan`) over two arm sources: a run's whole tables
in memory (`TableSource`) and its folder read arm by arm (`FolderSource`) give the plan the same
levels, arms, folds and paired differences, so the summary is made once, whatever its source."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from tests.engine.test_run_parts import in_memory, metadata, two_profile_sweep
from toolturn.metrics.arm_fold import DISTRIBUTION_COLUMNS
from toolturn.metrics.paired import PAIRED_COLUMNS
from toolturn.metrics.summary import TableSource, categories
from toolturn.metrics.summary_files import FolderSource
from toolturn.metrics.summary_plan import ArmSource, Categories, metric_rows
from toolturn.metrics.writer import write_run


def test_the_two_arm_sources_give_the_plan_the_same_rows(tmp_path: Path) -> None:
    scenario = two_profile_sweep()
    tables = in_memory(scenario, "r")
    write_run(tmp_path / "run", tables, metadata(scenario))
    in_tables: ArmSource = TableSource(
        {name: table for name, table in tables.items() if isinstance(table, pa.Table)}
    )
    in_files: ArmSource = FolderSource(tmp_path / "run", {})
    found = Categories(
        categories(tables["turns"], "outcome"), categories(tables["repairs"], "kind"),
        categories(tables["tools"], "synthetic_cause"), categories(tables["requests"], "status"),
        faults_ran=True,
    )
    levels = in_tables.levels()
    assert len(levels) == 2 and in_files.levels() == levels
    for level, _ in levels:
        arms = in_tables.arms_at(level)
        assert len(arms) == 4 and in_files.arms_at(level) == arms
        for arm in sorted(arms):
            memory, files = in_tables.fold(level, arm, True), in_files.fold(level, arm, True)
            assert memory.rows == files.rows and memory.sums == files.sums
            assert memory.rows["turns"] > 0
            for table, column in DISTRIBUTION_COLUMNS:
                assert np.array_equal(memory.values(table, column), files.values(table, column))
            # What the plan reads of a fold: its metric rows.
            assert metric_rows(arm[1], memory, found) == metric_rows(arm[1], files, found)
        for treatment, baseline in (
            (("default", "streaming"), ("default", "at_message_stop")),
            (("claude-code", "streaming"), ("default", "streaming")),
        ):
            memory_pairs = in_tables.differences(level, treatment, baseline)
            file_pairs = in_files.differences(level, treatment, baseline)
            for column in PAIRED_COLUMNS:
                assert memory_pairs(column).size > 0
                assert np.array_equal(memory_pairs(column), file_pairs(column))
