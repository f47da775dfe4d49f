"""`[experiment]`: a grid or a list of points over dotted paths, replications, each point's
scenario validated and seeded from its key (toolturn.experiment.points), and `toolturn validate`."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from toolturn.cli import main
from toolturn.engine.runner import run_scenario
from toolturn.errors import UserError
from toolturn.experiment.points import key_text, point_seed, points_of, settings_text
from toolturn.scenario.loader import load_scenario
from toolturn.scenario.schema import Scenario

BASE = """
name = "sweep"
seed = 7
[load]
mode = "closed"
sessions = 4
concurrency = 2
[runtime]
policies = ["streaming", "serial"]
"""
# The issue's example.
ISSUE_EXAMPLE = """
[experiment]
replications = 2
[experiment.grid]
"load.concurrency" = [4, 16]
"model.profile" = ["haiku", "sonnet"]
"""


def scenario_of(text: str, tmp_path: Path) -> Scenario:
    path = tmp_path / "s.toml"
    path.write_text(text)
    return load_scenario(path)


def test_a_scenario_without_experiment_is_its_one_point(tmp_path: Path) -> None:
    scenario = scenario_of(BASE, tmp_path)
    (point,) = points_of(scenario)
    assert (point.index, point.key, point.replication) == (0, (), 0)
    assert point.scenario is scenario
    assert key_text(point) == ""


def test_the_issue_example_gives_the_grid_in_order_with_replications(tmp_path: Path) -> None:
    points = points_of(scenario_of(BASE + ISSUE_EXAMPLE, tmp_path))
    assert [p.index for p in points] == list(range(8))
    assert [(key_text(p), p.replication) for p in points] == [
        ('load.concurrency=4;model.profile="haiku"', 0),
        ('load.concurrency=4;model.profile="haiku"', 1),
        ('load.concurrency=4;model.profile="sonnet"', 0),
        ('load.concurrency=4;model.profile="sonnet"', 1),
        ('load.concurrency=16;model.profile="haiku"', 0),
        ('load.concurrency=16;model.profile="haiku"', 1),
        ('load.concurrency=16;model.profile="sonnet"', 0),
        ('load.concurrency=16;model.profile="sonnet"', 1),
    ]
    for point in points:
        settings = dict(point.key)
        assert point.scenario.load.concurrency == settings["load.concurrency"]
        assert point.scenario.model.profile == settings["model.profile"]
        assert point.scenario.experiment is None
        # Unset values stay unset: the model's name still follows its profile.
        assert point.scenario.model.name is None
        assert point.scenario.load.sessions == 4
    assert len({p.scenario.seed for p in points}) == 8


def test_every_path_of_the_issue_is_supported(tmp_path: Path) -> None:
    text = (
        BASE
        + """
[experiment]
[[experiment.points]]
"runtime.policies" = ["serial"]
"model.faults.http_529" = 0.25
"tools.override.Bash.duration.median_ms" = 123
[[experiment.points]]
"model.profile" = "opus"
"""
    )
    first, second = points_of(scenario_of(text, tmp_path))
    assert first.scenario.runtime.policies == ["serial"]
    assert first.scenario.model.faults.http_529 == 0.25
    bash = next(s for s in first.scenario.tool_specs if s.name == "Bash")
    assert bash.duration.median_ms == 123  # type: ignore[union-attr]
    # The override merged: Bash's other duration fields are the catalogue's.
    catalogue_bash = next(s for s in second.scenario.tool_specs if s.name == "Bash")
    assert bash.duration.kind == catalogue_bash.duration.kind
    assert second.scenario.model.profile == "opus"
    assert second.scenario.runtime.policies == ["streaming", "serial"]


def test_an_open_loop_arrival_rate_can_vary(tmp_path: Path) -> None:
    text = (
        BASE.replace('mode = "closed"', 'mode = "open"').replace(
            "concurrency = 2", "arrival_rate_per_s = 1.0"
        )
        + '[experiment.grid]\n"load.arrival_rate_per_s" = [0.5, 8]\n'
    )
    points = points_of(scenario_of(text, tmp_path))
    assert [p.scenario.load.arrival_rate_per_s for p in points] == [0.5, 8]
    assert [key_text(p) for p in points] == [
        "load.arrival_rate_per_s=0.5",
        "load.arrival_rate_per_s=8",
    ]


def test_replications_alone_repeat_the_scenario_on_other_seeds(tmp_path: Path) -> None:
    points = points_of(scenario_of(BASE + "[experiment]\nreplications = 3\n", tmp_path))
    assert [(p.key, p.replication) for p in points] == [((), 0), ((), 1), ((), 2)]
    assert len({p.scenario.seed for p in points}) == 3


def test_adding_or_reordering_points_changes_no_other_points_seed(tmp_path: Path) -> None:
    small = points_of(scenario_of(BASE + ISSUE_EXAMPLE.replace("[4, 16]", "[4]"), tmp_path))
    large = points_of(scenario_of(BASE + ISSUE_EXAMPLE.replace("[4, 16]", "[16, 8, 4]"), tmp_path))
    seeds = {(key_text(p), p.replication): p.scenario.seed for p in large}
    for point in small:
        assert seeds[key_text(point), point.replication] == point.scenario.seed
    # ...and the point's whole scenario, hence its draws, is the same.
    same = {(key_text(p), p.replication): p.scenario for p in large}
    for point in small:
        assert same[key_text(point), point.replication].model_dump() == point.scenario.model_dump()


def test_adding_a_point_changes_no_other_points_tables(tmp_path: Path) -> None:
    text = BASE.replace("sessions = 4", "sessions = 2") + '[experiment.grid]\n"load.concurrency" = '
    small = points_of(scenario_of(text + "[1]\n", tmp_path))
    large = points_of(scenario_of(text + "[3, 1]\n", tmp_path))
    (alone,) = small
    beside = large[1]
    assert key_text(alone) == key_text(beside) == "load.concurrency=1"

    def tables(scenario: Scenario) -> dict[str, pa.Table]:
        return run_scenario(scenario).tables("r")

    first, second = tables(alone.scenario), tables(beside.scenario)
    for name in ("turns", "requests", "tools", "sessions"):
        assert first[name].num_rows > 0
        assert first[name].equals(second[name])
    assert not tables(large[0].scenario)["turns"].equals(first["turns"])


def test_the_seed_derives_from_root_key_and_replication() -> None:
    key = (("load.concurrency", 4),)
    assert point_seed(1, key, 0) == point_seed(1, key, 0)
    assert (
        len(
            {
                point_seed(1, key, 0),
                point_seed(2, key, 0),
                point_seed(1, key, 1),
                point_seed(1, (("load.concurrency", 5),), 0),
            }
        )
        == 4
    )
    assert 0 <= point_seed(1, key, 0) < 2**63
    # 4 and 4.0 are written differently, so they are different points.
    assert settings_text((("a", 4),)) != settings_text((("a", 4.0),))


@pytest.mark.parametrize(
    ("experiment", "message"),
    [
        (
            '[experiment.grid]\n"load.concurrency" = [4, 0]\n',
            "experiment point load.concurrency=0: load.concurrency: should be greater than or "
            "equal to 1 (got 0)",
        ),
        (
            '[experiment.grid]\n"load.concurency" = [4]\n',
            "experiment point load.concurency=4: load.concurency: unknown key (did you mean "
            "'concurrency'?)",
        ),
        (
            '[experiment.grid]\n"model.profile" = ["haiku", "gpt"]\n',
            'experiment point model.profile="gpt": model.profile: must be one of',
        ),
        (
            '[experiment.grid]\n"tools.override.Bsh.duration.median_ms" = [5]\n',
            "tools.override.Bsh: no catalogue tool by this name",
        ),
        (
            '[experiment.grid]\n"load.concurrency.x" = [5]\n',
            "load.concurrency.x: load.concurrency holds a value, not a table",
        ),
    ],
)
def test_a_value_wrong_at_its_path_names_the_point_path_and_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], experiment: str, message: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(BASE + experiment)
    with pytest.raises(UserError) as raised:
        points_of(load_scenario(path), source=str(path))
    assert str(raised.value).startswith(f"{path}: experiment point ")
    assert message in str(raised.value)
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("experiment", "message"),
    [
        ('[experiment.grid]\n"seed" = [1, 2]\n', "experiment.grid.seed: each point's seed"),
        ('[experiment.grid]\n"load..x" = [1]\n', "not a dotted path"),
        ('[experiment.grid]\n"load.concurrency" = []\n', "at least 1 item"),
        ('[experiment.grid]\n"load.concurrency" = [4, 4]\n', "values listed more than once: 4"),
        (
            '[experiment.grid]\n"load" = [{}]\n"load.concurrency" = [4]\n',
            "is inside load, which this point also sets",
        ),
        (
            '[[experiment.points]]\n"load.concurrency" = 4\n'
            '[[experiment.points]]\n"load.concurrency" = 4\n',
            "experiment.points[1]: the same point as points[0]",
        ),
        (
            '[experiment]\nreplications = 2\n[experiment.grid]\n"a" = [1]\n'
            '[[experiment.points]]\n"b" = 2\n',
            "give grid or points, not both",
        ),
        ("[experiment]\nreplications = 0\n", "experiment.replications: should be greater"),
        ("[experiment]\nreplications = 20000\n", "less than or equal to 10000"),
        ('[experiment.grid]\n"load.concurrency" = [1979-05-27]\n', "not a JSON value"),
        ("[experiment]\nrepetitions = 2\n", "unknown key (did you mean 'replications'?)"),
    ],
)
def test_a_malformed_experiment_table_is_refused_when_the_file_is_read(
    tmp_path: Path, experiment: str, message: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(BASE + experiment)
    with pytest.raises(UserError) as raised:
        load_scenario(path)
    assert message in str(raised.value)


def test_too_many_points_are_refused(tmp_path: Path) -> None:
    grid = ", ".join(str(n) for n in range(1, 101))
    text = BASE + "[experiment]\nreplications = 2\n[experiment.grid]\n"
    text += f'"load.concurrency" = [{grid}]\n'
    text += f'"load.sessions" = [{grid}]\n'
    with pytest.raises(UserError, match="20000 points with replications, more than 10000"):
        scenario_of(text, tmp_path)


def test_validate_reports_the_points(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "sweep.toml"
    path.write_text(BASE + ISSUE_EXAMPLE)
    assert main(["validate", str(path)]) == 0
    assert capsys.readouterr().out == (
        f"{path}: ok (sweep, 8 tools, policies streaming, serial, 8 points: 4 keys x 2 "
        "replications)\n"
        '  point load.concurrency=4;model.profile="haiku"\n'
        '  point load.concurrency=4;model.profile="sonnet"\n'
        '  point load.concurrency=16;model.profile="haiku"\n'
        '  point load.concurrency=16;model.profile="sonnet"\n'
    )
