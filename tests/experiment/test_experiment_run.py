"""The runner simulates an experiment's points as each would run alone: a point's rows in the
experiment's tables are the rows of its scenario run by itself, with its point columns."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from tests.helpers.experiment_tables import SCENARIO, experiment_tables, points_run_alone
from toolturn.experiment.points import points_of
from toolturn.scenario.loader import load_scenario
from toolturn.scenario.schema import Scenario


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    path: Path = tmp_path_factory.mktemp("s") / "s.toml"
    path.write_text(SCENARIO)
    return load_scenario(path)


def _by_columns(table: pa.Table) -> dict[str, list[object]]:
    return {name: table[name].to_pylist() for name in sorted(table.column_names)}


def test_every_point_of_the_run_is_its_scenario_run_alone(scenario: Scenario) -> None:
    together = experiment_tables(scenario)
    alone = points_run_alone(scenario)
    assert together.keys() == alone.keys()
    for name, table in together.items():
        assert table.num_rows == alone[name].num_rows, name
        assert _by_columns(table) == _by_columns(alone[name]), name
    # Two keys by three replications, each point its own seed.
    assert sorted(set(together["sessions"]["point"].to_pylist())) == [0, 1, 2, 3, 4, 5]
    assert len({point.scenario.seed for point in points_of(scenario)}) == 6
