"""Scenario files that passed `toolturn validate` and then crashed `toolturn run`, or crashed
`toolturn validate` itself, or were read as something they do not say: each is refused by both
commands, naming the field and the reason, with exit status 2 and no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolturn.cli import main

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
EXPLICIT = CLOSED + '[model.script]\nkind = "explicit"\n[[model.script.responses]]\n'
SCHEMA = "input_schema = { type = 'object', properties = { a = %s }, required = ['a'] }\n"
DEFINED = "tools.define[0]"

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
    # TOML dates and times are not JSON: the run failed serialising them.
    (ONE_TOOL + "examples = [ { a = 1979-05-27T07:32:00Z } ]\n", f"{DEFINED}.examples[0].a",
     "a TOML datetime is not a JSON value"),
    (ONE_TOOL + SCHEMA % "{ const = { b = 1979-05-27T07:32:00Z } }",
     f"{DEFINED}.input_schema.properties.a.const.b", "a TOML datetime is not a JSON value"),
    (ONE_TOOL + SCHEMA % "{ enum = [07:32:00] }",
     f"{DEFINED}.input_schema.properties.a.enum[0]", "a TOML time is not a JSON value"),
    (EXPLICIT + "blocks = [ { type = 'tool_use', name = 'Read', input = { zz = 1979-05-27 } "
     "} ]\n", "model.script.responses[0].blocks[0].input.zz", "a TOML date is not a JSON"),
    # Crashed `validate` with a TypeError, an IndexError, an OverflowError, a RecursionError,
    # or a jsonschema referencing error.
    (ONE_TOOL + SCHEMA % "false", f"{DEFINED}.input_schema.properties.a",
     "the schema false accepts no value"),
    (ONE_TOOL + SCHEMA % "{ enum = [] }", f"{DEFINED}.input_schema.properties.a.enum",
     "an empty enum accepts no value"),
    (ONE_TOOL + SCHEMA % "{ type = 'number', maximum = inf }",
     f"{DEFINED}.input_schema.properties.a.maximum", "inf is not a JSON number"),
    (ONE_TOOL + SCHEMA % "{ type = 'number', minimum = nan }",
     f"{DEFINED}.input_schema.properties.a.minimum", "nan is not a JSON number"),
    (ONE_TOOL + SCHEMA % "{ '$ref' = '#/nope' }" + "examples = [ { a = 1 } ]\n",
     f'{DEFINED}.input_schema.properties.a."$ref"', "'#/nope' points nowhere in the schema"),
    (ONE_TOOL + SCHEMA % "{ '$ref' = 'http://127.0.0.1:9/x.json' }"
     + "examples = [ { a = 1 } ]\n", f'{DEFINED}.input_schema.properties.a."$ref"',
     "is outside the schema"),
    (ONE_TOOL + "input_schema = " + "{ type = 'object', properties = { a = " * 40
     + "{ type = 'string' }" + " } }" * 40 + "\n",
     f"{DEFINED}.input_schema" + ".properties.a" * 32, "nested more than 64 levels deep"),
    # Ran out of memory, or took minutes, building the inputs.
    (ONE_TOOL + SCHEMA % "{ type = 'array', minItems = 100000000 }",
     f"{DEFINED}.input_schema.properties.a", "could hold 100,000,004 values and characters"),
    (ONE_TOOL + SCHEMA % "{ type = 'string', minLength = 1000000000 }",
     f"{DEFINED}.input_schema.properties.a", "(at most 1,000,000)"),
    # Both levels' rows were merged under one load level.
    (CLOSED + "sweep = [2, 2]\n", "load.sweep", "levels listed more than once: 2"),
    # The running total overflowed, so every draw picked the last tool.
    (ONE_TOOL.replace("tool_mix = { T = 1 }", "tool_mix = { T = 1e308, U = 1e308 }")
     + "[[tools.define]]\nname = 'U'\nduration = { kind = 'fixed', ms = 10 }\n",
     "model.script.tool_mix", "the weights sum past the largest float"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "field", "reason"), CASES, ids=[f"{f[:60]}: {r}" for _, f, r in CASES]
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
