"""`toolturn capacity`: objectives parsed (bad ones exit 2), the search's answer on endpoints whose
capacity is known in closed form, goodput and the saturation point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolturn.capacity.search import Search, saturation_load, search_capacity
from toolturn.capacity.slo import parse_slo
from toolturn.cli import main
from toolturn.engine.runner import run_scenario
from toolturn.errors import UserError
from toolturn.scenario.loader import load_scenario

# An Erlang loss system: Poisson arrivals, one request per session (no tools, no retries), an
# endpoint of 4 slots that refuses beyond them. The share refused is Erlang's B formula of the
# offered load (arrival rate x mean service time), whatever the service time's distribution.
ERLANG = """
name = "erlang"
seed = 3
[load]
mode = "open"
sessions = 1000
arrival_rate_per_s = 2.0
[runtime]
policies = ["streaming"]
[runtime.retries]
max_retries = 0
[model.latency]
ttft = { kind = "fixed", ms = 1000 }
[model.script]
kind = "explicit"
[[model.script.responses]]
blocks = [{ type = "text", text = "ok" }]
[model.endpoint]
capacity = 4
overflow = "refuse"
[tools]
catalogue = "none"
"""
# A closed loop of N sessions, one request each, on an endpoint of 3 slots that queues beyond
# them with a fixed service time: up to 3 at once nobody waits; a fourth waits a whole service.
QUEUE = """
name = "queue"
seed = 9
[load]
mode = "closed"
sessions = 40
concurrency = 2
[runtime]
policies = ["streaming", "serial"]
[model.latency]
ttft = { kind = "fixed", ms = 1000 }
[model.script]
kind = "explicit"
[[model.script.responses]]
blocks = [{ type = "text", text = "ok" }]
[model.endpoint]
capacity = 3
overflow = "queue"
[tools]
catalogue = "none"
"""


def erlang_b(servers: int, offered: float) -> float:
    blocking = 1.0
    for k in range(1, servers + 1):
        blocking = offered * blocking / (k + offered * blocking)
    return blocking


def offered_load_at(blocking: float, servers: int) -> float:
    low, high = 0.0, 100.0
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if erlang_b(servers, middle) < blocking else (low, middle)
    return low


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_objectives_parse_with_units_and_aliases() -> None:
    slo = parse_slo("ttfts.p99 < 5s")
    assert (slo.metric, slo.op, slo.threshold) == ("ttfts_ns.p99", "<", 5e9)
    assert slo.met(4.9e9) and not slo.met(5e9) and not slo.met(None)
    assert parse_slo("latency.p95<=30000ms").threshold == 3e10
    assert parse_slo(" start_lag.p50 >= 2us ").threshold == 2000.0
    rate = parse_slo("status_per_1k_requests.529 < 10")
    assert (rate.metric, rate.threshold, rate.turn_column) == (
        "status_per_1k_requests.529",
        10.0,
        None,
    )
    assert parse_slo("throughput.turns_per_s > 1.5").met(2.0)
    assert parse_slo("latency.p99 < 1s").turn_column == "latency_ns"
    # A turn without a value of the column (no tool: no TTFTS) meets a per-turn test.
    assert parse_slo("ttfts.p99 < 1s").turn_met(None)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ttfts.p99 5s", "expected METRIC OP THRESHOLD"),
        ("ttfts.p99 < 5", "is a duration: give its threshold a unit"),
        ("ttfts.p99 < 5 hours", "is a duration: give its threshold a unit"),
        ("ttfs.p99 < 5s", 'no summary metric "ttfs.p99"'),
        ("ttfts.p98 < 5s", 'no summary metric "ttfts_ns.p98"'),
        ("throughput.turns_per_s > 2s", "is not a duration: give a plain number"),
        ("status_per_1k_requests. < 2", "no summary metric"),
    ],
)
def test_a_malformed_objective_is_refused(text: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        parse_slo(text)


def test_a_malformed_objective_exits_2_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, QUEUE)
    assert main(["capacity", str(path), "--slo", "ttfts.p99 < 5"]) == 2
    err = capsys.readouterr().err
    assert "ttfts_ns.p99 is a duration" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_trace_of_arrivals_has_no_load_to_search(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = ERLANG.replace("arrival_rate_per_s = 2.0", "trace_ms = [0, 10, 20]").replace(
        "sessions = 1000", "sessions = 3"
    )
    assert main(["capacity", str(write(tmp_path, text)), "--slo", "latency.p99 < 5s"]) == 2
    assert "load.trace_ms fixes the arrival times" in capsys.readouterr().err


def test_the_closed_loop_capacity_is_the_endpoints_slots(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, QUEUE))
    search = Search(slos=[parse_slo("latency.p99 < 1.5s")], replications=2)
    results = search_capacity(scenario, [()], search)
    assert [result.arm for result in results] == [
        ("default", "streaming"),
        ("default", "serial"),
    ]
    for result in results:
        assert result.capacity == 3 and result.bounded
        assert [(p.load, p.met) for p in result.probes] == [(2.0, True), (3.0, True), (4.0, False)]
        # Nobody waits at 3: every turn meets the objective, goodput is throughput.
        at = result.probe_at(3.0)
        assert at is not None and at.goodput.mean == at.throughput.mean > 0


def test_the_open_loop_capacity_is_erlangs_within_its_tolerance(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, ERLANG))
    # The mean service time, measured: about 1 s of time to first token, then "ok".
    requests = (
        run_scenario(
            load_scenario(
                write(tmp_path, ERLANG.replace("sessions = 1000", "sessions = 50"), "d.toml")
            )
        )
        .tables("d")["requests"]
    )
    service_s = (
        (sum(requests["end_ns"].to_pylist()) - sum(requests["sent_ns"].to_pylist()))
        / requests.num_rows
        / 1e9
    )
    expected = offered_load_at(0.05, servers=4) / service_s  # about 1.49 sessions/s
    search = Search(
        slos=[parse_slo("status_per_1k_requests.529 < 50")], replications=2, tolerance=0.1
    )
    (result,) = search_capacity(scenario, [()], search)
    assert result.capacity is not None and result.bounded
    # The bracket is within 10% (the search's tolerance); 2,000 sessions estimate a 5% refusal
    # share to about ±0.5 points (one standard error), about ±4% of the rate.
    assert expected * (1 - 0.10 - 0.08) <= result.capacity <= expected * 1.08
    failed_above = [p.load for p in result.probes if not p.met and p.load > result.capacity]
    assert min(failed_above) <= result.capacity * 1.1


def test_saturation_is_where_throughput_stops_growing() -> None:
    sweep = [(1.0, 1.0), (2.0, 1.9), (4.0, 3.0), (8.0, 3.1), (16.0, 3.05)]
    assert saturation_load(sweep) == 4.0
    # Throughput still growing at the highest load probed: not saturated.
    assert saturation_load([(1.0, 1.0), (2.0, 2.0)]) is None
    assert saturation_load([(1.0, 1.0)]) is None


def test_the_command_answers_per_arm_and_marks_capacity_and_saturation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Sweep the closed loop well past the endpoint: throughput stops growing at its 3 slots.
    text = QUEUE.replace("concurrency = 2", "sweep = [1, 3, 6]")
    path = write(tmp_path, text)
    assert main(["capacity", str(path), "--slo", "latency.p99 < 1.5s", "-r", "1"]) == 0
    out = capsys.readouterr()
    assert "probing at load 1 (1 replications)" in out.err
    lines = out.out.splitlines()
    streaming = next(line for line in lines if "│ streaming" in line)
    cells = [cell.strip() for cell in streaming.split("│")]
    assert cells[2] == "3" and cells[-2] == "3"  # capacity and saturation
    marked = next(line for line in lines if line.strip().startswith("│") and "*S" in line)
    assert marked.split("│")[1].strip() == "3"
    assert main(["capacity", str(path), "--slo", "latency.p99 < 1.5s", "-r", "1", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    first = document["results"][0]
    assert (first["policy"], first["capacity"], first["saturation"]) == ("streaming", 3.0, 3.0)
    assert [p["load"] for p in first["probes"]] == [1.0, 3.0, 4.0, 6.0]


def test_experiment_keys_are_searched_one_by_one(tmp_path: Path) -> None:
    text = (
        QUEUE
        + '[experiment]\nreplications = 1\n[experiment.grid]\n"model.endpoint.capacity" = [2, 3]\n'
    )
    scenario = load_scenario(write(tmp_path, text))
    search = Search(slos=[parse_slo("latency.p99 < 1.5s")], replications=1)
    results = search_capacity(scenario, scenario.experiment.keys, search)  # type: ignore[union-attr]
    assert [(r.key, r.arm[1], r.capacity) for r in results] == [
        ("model.endpoint.capacity=2", "streaming", 2.0),
        ("model.endpoint.capacity=2", "serial", 2.0),
        ("model.endpoint.capacity=3", "streaming", 3.0),
        ("model.endpoint.capacity=3", "serial", 3.0),
    ]


def test_where_no_load_meets_the_answer_is_none_with_the_least_loads_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Every request takes about 1 s: no load has a p99 under half a second.
    path = write(tmp_path, QUEUE)
    assert main(["capacity", str(path), "--slo", "latency.p99 < 500ms", "-r", "1"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if "│ streaming" in line)
    cells = [cell.strip() for cell in row.split("│")]
    assert cells[2] == "none"
    assert cells[3].endswith(" s") and 1.0 <= float(cells[3].split()[0]) < 1.1


def test_out_writes_the_answer_and_a_page_of_goodput_against_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, QUEUE.replace("concurrency = 2", "sweep = [1, 3, 6]"))
    out = tmp_path / "capacity"
    argv = ["capacity", str(path), "--slo", "latency.p99 < 1.5s", "-r", "1", "--out", str(out)]
    assert main(argv) == 0
    assert f"wrote {out / 'capacity.html'}" in capsys.readouterr().err
    document = json.loads((out / "capacity.json").read_text())
    assert [r["capacity"] for r in document["results"]] == [3.0, 3.0]
    page = (out / "capacity.html").read_text(encoding="utf-8")
    assert "<code>latency.p99 &lt; 1.5s</code>" in page
    assert page.count('id="capacity-0"') == 1
    for name in ("streaming: goodput", "streaming: capacity", "serial: saturation"):
        assert name in page
    # Written once: a second run needs --force, and refuses what is not a capacity folder.
    assert main(argv) == 2
    assert "exists" in capsys.readouterr().err
    assert main([*argv, "--force"]) == 0
    other = tmp_path / "notes"
    other.mkdir()
    (other / "mine.txt").write_text("x")
    assert main([*argv[:-1], str(other), "--force"]) == 2
    assert (other / "mine.txt").exists()
