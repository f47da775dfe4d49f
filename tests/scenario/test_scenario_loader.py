"""Loading scenario files: each error path names the file, the field as TOML spells it, and why."""

from pathlib import Path

import pytest

from tests.helpers.scenarios import MINIMAL
from toolturn.errors import UserError
from toolturn.scenario.loader import load_scenario, with_overrides

SCENARIOS = Path(__file__).parents[2] / "scenarios"


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def error_of(path: Path) -> str:
    with pytest.raises(UserError) as info:
        load_scenario(path)
    return str(info.value)


def test_minimal_file_loads_with_defaults(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, MINIMAL))
    assert scenario.name == "t"
    assert scenario.runtime.policies == ["streaming", "at_message_stop", "serial"]
    assert [spec.name for spec in scenario.tool_specs][:3] == ["Read", "Grep", "Glob"]


def test_content_hash_is_sha256_of_the_file_bytes(tmp_path: Path) -> None:
    import hashlib

    path = write(tmp_path, MINIMAL)
    assert load_scenario(path).content_hash == hashlib.sha256(path.read_bytes()).hexdigest()
    # A comment changes the bytes, so the hash, though not the scenario.
    other = write(tmp_path, MINIMAL + "# note\n", "other.toml")
    assert load_scenario(other).content_hash != load_scenario(path).content_hash


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "absent.toml"
    assert error_of(path) == f"{path}: no such file"


def test_directory_is_not_a_file(tmp_path: Path) -> None:
    assert "is a directory" in error_of(tmp_path)


def test_toml_syntax_error_names_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "t"\nseed = \n')
    message = error_of(path)
    assert message.startswith(f"{path}: invalid TOML:")
    assert "line 2, column 8" in message


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_bytes(b'name = "\xff"\n')
    assert "not UTF-8" in error_of(path)


def test_a_byte_order_mark_is_read_past(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_bytes(b"\xef\xbb\xbf" + MINIMAL.encode())
    assert load_scenario(path).name == "t"
    # Bytes are still counted from the start of the file.
    path.write_bytes(b'\xef\xbb\xbfname = "\xff"\n')
    assert error_of(path) == f"{path}: not UTF-8 text (byte 11)"


def test_arrays_nested_past_the_parser_are_invalid_toml(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL + "x = " + "[" * 2000 + "]" * 2000 + "\n")
    assert error_of(path) == f"{path}: invalid TOML: arrays or tables nested too deeply"


def test_unknown_key_is_named_with_a_suggestion(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL.replace("concurrency = 2", "concurrency = 2\nconcurency = 3"))
    assert error_of(path) == f"{path}: load.concurency: unknown key (did you mean 'concurrency'?)"


def test_unknown_top_level_table_lists_allowed_keys(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, MINIMAL + "[xyzzy]\na = 1\n"))
    assert (
        "xyzzy: unknown key "
        "(allowed: description, experiment, load, model, name, runtime, seed, session, "
        "tools)" in message
    )


def test_wrong_type(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, MINIMAL.replace("sessions = 4", 'sessions = "many"')))
    assert "load.sessions: should be a valid integer" in message
    assert "(got 'many')" in message


def test_missing_required_key(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, MINIMAL.replace("seed = 1\n", "")))
    assert message.endswith("seed: required, but missing")


def test_bad_distribution_in_the_model_section(tmp_path: Path) -> None:
    text = MINIMAL + '[model.latency]\nttft = { kind = "lognormal", median_ms = -5, sigma = 0.3 }\n'
    message = error_of(write(tmp_path, text))
    assert message.endswith("model.latency.ttft.median_ms: should be greater than 0 (got -5)")


def test_unknown_distribution_kind(tmp_path: Path) -> None:
    text = MINIMAL + '[session]\nthink_time = { kind = "gamma", ms = 3 }\n'
    message = error_of(write(tmp_path, text))
    assert "session.think_time: unknown kind 'gamma' (expected one of 'fixed'" in message


def test_bad_policy_name(tmp_path: Path) -> None:
    text = MINIMAL + '[runtime]\npolicies = ["streaming", "fast"]\n'
    message = error_of(write(tmp_path, text))
    assert message.endswith(
        "runtime.policies[1]: "
        "must be one of 'streaming', 'at_message_stop' or 'serial' (got 'fast')"
    )


def test_bad_json_schema_in_a_defined_tool(tmp_path: Path) -> None:
    text = (
        MINIMAL
        + """
[[tools.define]]
name = "A"
duration = { kind = "fixed", ms = 1 }
[[tools.define]]
name = "B"
duration = { kind = "fixed", ms = 1 }
[[tools.define]]
name = "C"
duration = { kind = "fixed", ms = 1 }
input_schema = { type = "object", properties = { p = { type = "strin" } } }
"""
    )
    message = error_of(write(tmp_path, text))
    assert "tools.define[2].input_schema: not a valid JSON schema" in message
    assert "properties/p/type" in message


def test_bad_distribution_in_a_defined_tool(tmp_path: Path) -> None:
    text = (
        MINIMAL
        + '[[tools.define]]\nname = "A"\nduration = { kind = "uniform", low_ms = 5, high_ms = 1 }\n'
    )
    message = error_of(write(tmp_path, text))
    assert message.endswith("tools.define[0].duration: high_ms (1.0) is below low_ms (5.0)")


def test_several_errors_give_a_summary_then_one_per_line(tmp_path: Path) -> None:
    text = (
        MINIMAL.replace("sessions = 4", "sessions = 0")
        + '[runtime]\nstrict = "maybe"\npolicies = []\n'
    )
    path = write(tmp_path, text)
    lines = error_of(path).splitlines()
    assert lines[0] == f"{path}: 3 errors"
    assert [line.split(":")[0].strip() for line in lines[1:]] == [
        "load.sessions",
        "runtime.policies",
        "runtime.strict",
    ]


def test_override_errors_are_located_in_the_override(tmp_path: Path) -> None:
    text = (
        MINIMAL
        + """
[tools.override.Bash]
duration = { median_ms = 0 }
failurs = 1
[tools.override.Nope]
x = 1
"""
    )
    message = error_of(write(tmp_path, text))
    assert "tools.override.Bash.duration.median_ms: should be greater than 0 (got 0)" in message
    assert "tools.override.Bash.failurs: unknown key (did you mean 'failures'?)" in message
    assert "tools.override.Nope: no catalogue tool by this name" in message


def test_an_override_error_in_a_catalogue_value_names_its_key(tmp_path: Path) -> None:
    # The new schema refuses the catalogue's examples, which the file does not spell out.
    text = MINIMAL + "[tools.override.Read]\ninput_schema = { type = 'object', required = ['x'] }\n"
    message = error_of(write(tmp_path, text))
    assert "tools.override.Read.examples[0]: does not match input_schema" in message


def test_cross_section_error_names_the_field(tmp_path: Path) -> None:
    text = MINIMAL + '[model.script]\nkind = "generated"\ntool_mix = { Read = 1, read_file = 2 }\n'
    message = error_of(write(tmp_path, text))
    assert message.endswith("model.script.tool_mix.read_file: no tool by this name in [tools]")


def test_overrides_are_applied_and_keep_the_file_hash(tmp_path: Path) -> None:
    original = load_scenario(write(tmp_path, MINIMAL))
    changed = with_overrides(original, seed=9, sessions=7, policies=["serial"])
    assert (changed.seed, changed.load.sessions, changed.runtime.policies) == (9, 7, ["serial"])
    assert changed.content_hash == original.content_hash
    assert with_overrides(original) == original


def test_bad_override_is_a_user_error_naming_the_field(tmp_path: Path) -> None:
    original = load_scenario(write(tmp_path, MINIMAL))
    with pytest.raises(UserError) as info:
        with_overrides(original, sessions=0, policies=["fast"])
    lines = str(info.value).splitlines()
    assert lines[0] == "t (overridden): 2 errors"
    assert lines[1].strip().startswith("load.sessions: should be greater than or equal to 1")
    assert lines[2].strip().startswith("runtime.policies[0]: must be one of")


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.toml")), ids=lambda p: p.name)
def test_shipped_scenarios_survive_a_round_trip(path: Path) -> None:
    # with_overrides re-validates a dump: every section must dump to what it was read from.
    scenario = load_scenario(path)
    assert with_overrides(scenario) == scenario
