"""`toolturn compare`: the exact gate (exit 0/1), tolerances, wall-clock
metrics, bad input (exit 2)."""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from rich.console import Console

from tests.helpers.metrics_support import collect, handmade_rows, metadata, turn
from toolturn.cli import main
from toolturn.commands.compare import changes_table, comparison_json, pairings_table
from toolturn.errors import UserError
from toolturn.metrics import read_run, write_run
from toolturn.metrics.paired import paired_stats
from toolturn.report.compare import (
    MetricChange,
    RunPairing,
    compare_runs,
    parse_tolerances,
    tolerance_for,
)


def write(
    folder: Path,
    rows=None,
    speed: float | None = None,
    scenario: str = "handmade",
    sha256: str = "0" * 64,
) -> Path:
    tables = collect(rows if rows is not None else handmade_rows(), scenario=scenario).tables()
    speeds = None if speed is None else {("default", "streaming", 0, "anthropic"): speed}
    write_run(folder, tables, metadata(scenario, sha256), events_per_wall_s=speeds)
    return folder


def slower_rows() -> list:
    """The hand-made run with one streaming turn 10% slower (latency_ns.p50 300 -> 330)."""
    rows = handmade_rows()
    rows[2] = ("turns", turn("streaming", 1, 0, sent=0, ttfts=30, latency=330))
    return rows


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write(tmp_path_factory.mktemp("compare") / "base", speed=100.0)


def test_identical_runs_pass(
    base: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", str(base), str(write(tmp_path / "new", speed=100.0))]) == 0
    assert "0 moved, 0 beyond tolerance" in capsys.readouterr().out


def test_any_simulated_change_fails_by_default(
    base: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = write(tmp_path / "new", slower_rows(), speed=100.0)
    assert main(["compare", str(base), str(new)]) == 1
    out = capsys.readouterr().out
    assert "turn latency p50" in out and "FAIL" in out and "+10.00%" in out


def test_a_tolerance_lets_a_metric_move_that_far(base: Path, tmp_path: Path) -> None:
    new = write(tmp_path / "new", slower_rows(), speed=100.0)
    assert main(["compare", str(base), str(new), "--tolerance", "latency_ns.p50=0.1"]) == 0
    assert main(["compare", str(base), str(new), "--tolerance", "latency_ns.*=0.099"]) == 1


def test_wall_clock_metrics_are_shown_but_never_gate(
    base: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", str(base), str(write(tmp_path / "new", speed=55.0))]) == 0
    out = capsys.readouterr().out
    assert "harness speed (wall clock)" in out and "not gated" in out
    assert "1 moved, 0 beyond tolerance" in out


def test_row_count_changes_fail(base: Path, tmp_path: Path) -> None:
    repair = {
        "policy": "serial",
        "profile": "default",
        "protocol": "anthropic",
        "load_level": 0,
        "session_id": 0,
        "turn_index": 0,
        "request_index": 0,
        "kind": "missing_result",
    }
    rows = [*handmade_rows(), ("repairs", repair)]
    changes = compare_runs(read_run(base), read_run(write(tmp_path / "new", rows, speed=100.0)))
    failed = {(c.policy, c.metric) for c in changes if c.beyond_tolerance}
    assert ("serial", "rows.repairs") in failed
    assert ("serial", "repairs_per_1k_requests.missing_result") in failed


def test_a_metric_only_one_run_has_fails(base: Path, tmp_path: Path) -> None:
    rows = handmade_rows()
    rows[4] = ("turns", turn("serial", 0, 0, sent=0, ttfts=None, latency=1_000_000_000))
    changes = compare_runs(read_run(base), read_run(write(tmp_path / "new", rows, speed=100.0)))
    gone = [c for c in changes if c.policy == "serial" and c.metric == "ttfts_ns.p50"]
    assert gone[0].new is None and gone[0].beyond_tolerance


@pytest.mark.parametrize(
    ("scenario", "sha256", "message"),
    [("other", "0" * 64, "scenario 'other' differs"), ("handmade", "f" * 64, "scenario_sha256")],
)
def test_runs_of_different_scenarios_are_bad_input(
    base: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    scenario: str,
    sha256: str,
    message: str,
) -> None:
    new = write(tmp_path / "new", scenario=scenario, sha256=sha256)
    assert main(["compare", str(base), str(new)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_missing_folder_is_bad_input(
    base: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", str(base), str(tmp_path / "absent")]) == 2
    assert "no such run folder" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["latency_ns.p50", "=0.1", "x=-1", "x=fast", "x=inf"])
def test_malformed_tolerances_are_bad_input(text: str) -> None:
    with pytest.raises(UserError, match="METRIC=REL"):
        parse_tolerances([text])


def test_a_tolerance_that_matches_no_metric_is_bad_input(base: Path) -> None:
    with pytest.raises(UserError, match="matches no metric"):
        compare_runs(read_run(base), read_run(base), {"latency.p50": 0.1})


def test_exact_tolerance_beats_the_longest_glob() -> None:
    tolerances = {"*": 0.5, "latency_ns.*": 0.1, "latency_ns.p99": 0.0}
    assert tolerance_for("latency_ns.p99", tolerances) == 0.0
    assert tolerance_for("latency_ns.p50", tolerances) == 0.1
    assert tolerance_for("ttfts_ns.p50", tolerances) == 0.5
    assert tolerance_for("ttfts_ns.p50", {}) == 0.0


def with_summary_value(folder: Path, metric: str, value: float) -> Path:
    """The run folder with one summary value overwritten (every policy's), as a hand edit or a
    bug in the summary would leave it."""
    path = folder / "summary.parquet"
    table = pq.read_table(path)
    values = pc.if_else(pc.equal(table["metric"], metric), value, table["value"])
    column = table.schema.get_field_index("value")
    pq.write_table(table.set_column(column, table.schema.field(column), values), path)
    return folder


def change(base: float | None, new: float | None, tolerance: float = 0.0) -> MetricChange:
    return MetricChange("streaming", "latency_ns.p99", "ns", base, new, tolerance, False)


@pytest.mark.parametrize(
    ("base", "new", "moved", "fails"),
    [
        (math.nan, 300.0, True, True),
        (300.0, math.nan, True, True),
        (math.nan, math.nan, False, False),
        (math.inf, 300.0, True, True),
        (300.0, -math.inf, True, True),
        (0.0, math.inf, True, True),
        (math.inf, math.inf, False, False),
        (math.nan, None, True, True),
    ],
)
def test_a_value_that_is_not_a_finite_number_fails_unless_both_runs_agree(
    base: float | None, new: float | None, moved: bool, fails: bool
) -> None:
    for tolerance in (0.0, 0.5, 1e9):
        compared = change(base, new, tolerance)
        assert (compared.moved, compared.beyond_tolerance) == (moved, fails)
        assert compared.relative is None


def test_compare_fails_on_a_nan_in_the_new_run_and_says_why(
    base: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = with_summary_value(write(tmp_path / "new", speed=100.0), "latency_ns.p90", math.nan)
    args = ["compare", str(base), str(new), "--tolerance", "latency_ns.*=0.5"]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "turn latency p90" in out and "not finite" in out and "FAIL (not" in out
    assert "2 beyond tolerance" in out  # both policies
    nan_both = with_summary_value(base, "latency_ns.p90", math.nan)
    assert main(["compare", str(nan_both), str(new)]) == 0


@pytest.mark.parametrize(
    ("metadata", "field", "kind"),
    [
        (None, "metadata", "null"),
        ([], "metadata", "an array"),
        ("run", "metadata", "a string"),
        (7, "metadata", "a number"),
        ({"versions": "sim 0.1"}, "metadata.versions", "a string"),
        ({"versions": 3}, "metadata.versions", "a number"),
        ({"versions": ["sim"]}, "metadata.versions", "an array"),
    ],
)
def test_a_run_json_with_malformed_metadata_is_bad_input(
    base: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    metadata: object, field: str, kind: str,
) -> None:
    new = write(tmp_path / "new")
    run_json = new / "run.json"
    content = json.loads(run_json.read_text())
    content["metadata"] = metadata
    run_json.write_text(json.dumps(content))
    for command in (["compare", str(base), str(new)], ["report", str(new)]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1
        assert f"{run_json}: field {field} must be an object, not {kind}" in err


def test_runs_of_other_sessions_policies_or_levels_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "tiny.toml"
    scenario.write_text(TINY_SWEEP)
    runs = {}
    for name, extra in (
        ("base", []),
        ("sessions", ["--sessions", "3"]),
        ("policies", ["--policy", "streaming"]),
        ("profiles", ["--profile", "default,claude-code"]),
    ):
        runs[name] = tmp_path / name
        args = ["run", str(scenario), "--out", str(runs[name]), "--no-report", *extra]
        assert main(args) == 0
    capsys.readouterr()
    for name, message in (
        ("sessions", "sessions [3] differ from"),
        ("policies", "policies [streaming] differ from"),
        ("profiles", "profiles [claude-code, default] differ from"),
    ):
        assert main(["compare", str(runs["base"]), str(runs[name])]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
    # Levels: the same scenario file cannot differ in them, a hand-edited table can.
    levels = tmp_path / "levels"
    shutil.copytree(runs["base"], levels)
    sessions = pq.read_table(levels / "sessions.parquet")
    index = sessions.schema.get_field_index("load_level")
    moved = pc.add(sessions["load_level"], 5)
    pq.write_table(
        sessions.set_column(index, sessions.schema.field(index), moved),
        levels / "sessions.parquet",
    )
    assert main(["compare", str(runs["base"]), str(levels)]) == 2
    assert "load levels [5 (load 1), 6 (load 2)] differ from" in capsys.readouterr().err


def test_json_output_and_paired_turns_between_two_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, new = two_runs(tmp_path)
    capsys.readouterr()
    # One turn of streaming at level 1 made 1 ms slower in `new`: the pairing finds exactly it.
    turns = pq.read_table(new / "turns.parquet")
    latency = turns["latency_ns"].to_pylist()
    target = next(
        i for i, (p, level) in enumerate(
            zip(turns["policy"].to_pylist(), turns["load_level"].to_pylist(), strict=True)
        ) if p == "streaming" and level == 1
    )
    latency[target] += 1_000_000
    index = turns.schema.get_field_index("latency_ns")
    field = turns.schema.field(index)
    pq.write_table(
        turns.set_column(index, field, pa.array(latency, pa.int64())).replace_schema_metadata(
            turns.schema.metadata
        ),
        new / "turns.parquet",
    )
    assert main(["compare", str(base), str(new), "--json"]) == 0  # the summary is unchanged
    document = json.loads(capsys.readouterr().out)
    assert document["beyond_tolerance"] == 0 and document["compared"] == len(document["changes"])
    assert {c["load_level"] for c in document["changes"]} == {0, 1}
    moved = [
        p for p in document["paired_new_minus_base"] if p["column"] == "latency_ns" and p["mean"]
    ]
    assert len(moved) == 1
    assert (moved[0]["policy"], moved[0]["load_level"], moved[0]["p90"] >= 0) == (
        "streaming", 1, True
    )
    assert moved[0]["mean"] == pytest.approx(1_000_000 / moved[0]["pairs"])
    assert main(["compare", str(base), str(new)]) == 0
    assert "Paired per turn: new minus base" in capsys.readouterr().out


def test_two_runs_of_two_profiles_compare_arm_by_arm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, new = two_runs(tmp_path, "--profile", "default,claude-code")
    capsys.readouterr()
    assert main(["compare", str(base), str(new), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["beyond_tolerance"] == 0
    assert all(c["wall_clock"] for c in document["changes"] if c["moved"])  # harness speed only
    arms = {(c["profile"], c["policy"]) for c in document["changes"]}
    assert arms == {
        (profile, policy)
        for profile in ("default", "claude-code")
        for policy in ("streaming", "serial")
    }
    assert {p["profile"] for p in document["paired_new_minus_base"]} == {"default", "claude-code"}
    versus = {(c["metric"].split(".")[0], c["versus"]) for c in document["changes"] if c["versus"]}
    assert versus == {("paired", "serial"), ("paired_profile", "default")}
    assert main(["compare", str(base), str(new)]) == 0
    assert "over 4 policies and 2 load levels" in capsys.readouterr().out


def two_runs(tmp_path: Path, *extra: str) -> tuple[Path, Path]:
    """`base` and `new`: two runs of the same sweep and seed, with `extra` options."""
    scenario = tmp_path / "tiny.toml"
    scenario.write_text(TINY_SWEEP)
    base, new = tmp_path / "base", tmp_path / "new"
    for folder in (base, new):
        assert main(["run", str(scenario), "--out", str(folder), "--no-report", *extra]) == 0
    return base, new


TINY_SWEEP = """
name = "tiny_sweep"
seed = 5
[load]
mode = "closed"
sessions = 4
sweep = [1, 2]
[session]
think_time = { kind = "fixed", ms = 100 }
[runtime]
policies = ["streaming", "serial"]
[model.script]
kind = "generated"
end_probability = 0.3
tool_calls = { kind = "uniform", low = 1, high = 2 }
"""


def test_runs_of_several_protocols_name_each_rows_protocol() -> None:
    stats = paired_stats(np.array([-5, 0, 5]))
    pairings = [RunPairing("streaming", 0, 2.0, "ttfts_ns", stats, protocol=protocol)
                for protocol in ("anthropic", "openai-chat")]
    changes = [replace(change(300.0, 330.0), protocol=pairing.protocol) for pairing in pairings]
    console = Console(width=200, record=True, color_system=None)
    console.print(changes_table(changes), pairings_table(pairings))
    out = console.export_text()
    assert out.count("streaming · anthropic") == 2 and out.count("streaming · openai-chat") == 2
    document = comparison_json(Path("a"), Path("b"), changes, pairings)
    assert [c["protocol"] for c in document["changes"]] == ["anthropic", "openai-chat"]
    assert [p["protocol"] for p in document["paired_new_minus_base"]] == [
        "anthropic", "openai-chat"]
    # One protocol: the rows and the JSON as they were.
    single = comparison_json(Path("a"), Path("b"), changes[:1], pairings[:1])
    assert "protocol" not in single["changes"][0]
    console.print(changes_table(changes[:1]))
    assert " · " not in console.export_text()
