"""Scenario files that passed `sim validate` and then crashed `sim run`, or were read as
something they do not say: each is refused by both commands, naming the field and the reason,
with exit status 2 and no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.cli import main

CLOSED = """
name = "t"
seed = 1
[load]
mode = "closed"
sessions = 3
concurrency = 2
"""
# One defined tool T, called by the generated script; the TOML of its table follows.
ONE_TOOL = (
    CLOSED
    + """
[model.script]
kind = "generated"
tool_mix = { T = 1 }
[tools]
catalogue = "none"
[[tools.define]]
name = "T"
duration = { kind = "fixed", ms = 10 }
"""
)

CASES = [
    # A horizon that rounds to 0 ns ended the run before it started.
    (CLOSED + "horizon_s = 1e-10\n", "load.horizon_s", "greater than or equal to"),
    # The results' int64 seed column could not hold it, after the whole simulation.
    (CLOSED.replace("seed = 1", "seed = 9223372036854775808"), "seed",
     "less than or equal to 9223372036854775807"),
    # Read as 1, True, True and 3.
    (CLOSED.replace("seed = 1", "seed = true"), "seed", "should be a valid integer"),
    (CLOSED + "[runtime]\nstrict = 'yes'\n", "runtime.strict", "should be a valid boolean"),
    (CLOSED + "[runtime]\nstrict = 'off'\n", "runtime.strict", "should be a valid boolean"),
    (CLOSED.replace("sessions = 3", "sessions = '3'"), "load.sessions",
     "should be a valid integer"),
    # Both levels' rows were merged under one load level.
    (CLOSED + "sweep = [2, 2]\n", "load.sweep", "levels listed more than once: 2"),
    # The running total overflowed, so every draw picked the last tool.
    (ONE_TOOL.replace("tool_mix = { T = 1 }", "tool_mix = { T = 1e308, U = 1e308 }")
     + "[[tools.define]]\nname = 'U'\nduration = { kind = 'fixed', ms = 10 }\n",
     "model.script.tool_mix", "the weights sum past the largest float"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "field", "reason"), CASES, ids=[f"{field}: {reason}" for _, field, reason in CASES]
)
def test_refused_by_validate_and_by_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, field: str, reason: str
) -> None:
    path = tmp_path / "s.toml"
    path.write_text(text)
    out = tmp_path / "out"
    for command in (["validate", str(path)], ["run", str(path), "--no-report", "--out", str(out)]):
        assert main(command) == 2
        error = capsys.readouterr().err
        assert f"{path}: {field}: " in error
        assert reason in error
        assert "Traceback" not in error
    assert not out.exists()


def test_a_seed_beyond_the_bound_on_the_command_line_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.toml"
    path.write_text(CLOSED)
    out = tmp_path / "out"
    assert main(["run", str(path), "--seed", str(2**63), "--no-report", "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert "seed: should be less than or equal to 9223372036854775807" in error
    assert not out.exists()


def test_the_largest_seed_and_the_shortest_horizon_run(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(CLOSED.replace("seed = 1", f"seed = {2**63 - 1}") + "horizon_s = 1e-9\n")
    assert main(["run", str(path), "--no-report", "--out", str(tmp_path / "out")]) == 0
