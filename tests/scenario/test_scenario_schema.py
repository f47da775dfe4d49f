"""The scenario's sections: their defaults, their cross-field rules, and tool resolution."""

from typing import Any

import pytest
from pydantic import ValidationError

from toolturn.counts import fixed_count
from toolturn.scenario.schema import ALL_POLICIES, Scenario


def scenario(**sections: Any) -> Scenario:
    data: dict[str, Any] = {
        "name": "t",
        "seed": 1,
        "load": {"mode": "closed", "sessions": 4, "concurrency": 2},
    }
    data.update(sections)
    return Scenario.model_validate(data)


def locations(error: pytest.ExceptionInfo[ValidationError]) -> set[tuple[Any, ...]]:
    return {tuple(detail["loc"]) for detail in error.value.errors()}


def test_defaults_follow_the_sdk_and_run_every_policy() -> None:
    s = scenario()
    assert tuple(s.runtime.policies) == ALL_POLICIES
    retries = s.runtime.retries
    assert (
        retries.max_retries,
        retries.initial_backoff_ns,
        retries.max_backoff_ns,
        retries.jitter,
    ) == (
        2,
        500_000_000,
        8_000_000_000,
        0.25,
    )
    assert s.load.levels == (2.0,)
    assert s.load.horizon_ns is None


def test_closed_load_needs_concurrency_and_rejects_open_fields() -> None:
    with pytest.raises(ValidationError) as error:
        scenario(load={"mode": "closed", "sessions": 4, "arrival_rate_per_s": 1.0})
    assert locations(error) == {("load", "arrival_rate_per_s"), ("load", "concurrency")}


def test_open_load_needs_a_rate_or_a_trace() -> None:
    with pytest.raises(ValidationError) as error:
        scenario(load={"mode": "open", "sessions": 4, "concurrency": 3})
    assert locations(error) == {("load", "concurrency"), ("load", "arrival_rate_per_s")}


def test_trace_is_used_in_ns_and_must_cover_the_sessions() -> None:
    s = scenario(load={"mode": "open", "sessions": 2, "trace_ms": [0, 1.5, 3]})
    assert s.load.trace_ns == (0, 1_500_000)
    assert s.load.levels == ()
    with pytest.raises(ValidationError) as error:
        scenario(load={"mode": "open", "sessions": 4, "trace_ms": [5, 1]})
    assert locations(error) == {("load", "trace_ms"), ("load", "sessions")}


def test_sweep_levels_and_horizon() -> None:
    s = scenario(load={"mode": "open", "sessions": 3, "sweep": [0.5, 2], "horizon_s": 1.5})
    assert s.load.levels == (0.5, 2.0)
    assert s.load.horizon_ns == 1_500_000_000
    with pytest.raises(ValidationError) as error:
        scenario(load={"mode": "closed", "sessions": 3, "sweep": [1, 2.5]})
    assert locations(error) == {("load", "sweep")}


def test_sweep_levels_are_distinct() -> None:
    # A run's rows are keyed by level: two runs at one level were merged as one.
    with pytest.raises(ValidationError) as error:
        scenario(load={"mode": "closed", "sessions": 3, "sweep": [2, 4, 2.0]})
    assert locations(error) == {("load", "sweep")}
    assert "levels listed more than once: 2" in str(error.value)


def test_the_shortest_horizon_is_a_nanosecond() -> None:
    load = {"mode": "closed", "sessions": 3, "concurrency": 1}
    assert scenario(load={**load, "horizon_s": 1e-9}).load.horizon_ns == 1
    with pytest.raises(ValidationError) as error:
        scenario(load={**load, "horizon_s": 4e-10})  # 0 ns: the run would end as it starts
    assert locations(error) == {("load", "horizon_s")}


def test_repeated_policy_is_rejected() -> None:
    with pytest.raises(ValidationError) as error:
        scenario(runtime={"policies": ["serial", "serial"]})
    assert "listed more than once: serial" in str(error.value)


def test_backoff_cap_below_initial_is_rejected() -> None:
    with pytest.raises(ValidationError) as error:
        scenario(runtime={"retries": {"initial_backoff_ms": 1000, "max_backoff_ms": 10}})
    assert locations(error) == {("runtime", "retries", "max_backoff_ms")}


def test_user_prompts_may_not_draw_zero() -> None:
    assert scenario(session={"user_prompts": 3}).session.user_prompts == fixed_count(3)
    with pytest.raises(ValidationError) as error:
        scenario(session={"user_prompts": {"kind": "uniform", "low": 0, "high": 2}})
    assert locations(error) == {("session", "user_prompts")}


def test_interrupts_need_a_phase_with_weight() -> None:
    with pytest.raises(ValidationError) as error:
        scenario(
            session={"interrupts": {"probability": 0.1, "phase": {"streaming": 0, "tools": 0}}}
        )
    assert locations(error) == {("session", "interrupts", "phase")}


def test_fallback_must_be_configured_on_both_sides() -> None:
    with pytest.raises(ValidationError) as error:
        scenario(runtime={"fallback_after_overloads": 3})
    assert locations(error) == {("runtime", "fallback_after_overloads")}
    with pytest.raises(ValidationError) as error:
        scenario(model={"faults": {"fallback": "haiku"}})
    assert locations(error) == {("model", "faults", "fallback")}
    both = scenario(
        runtime={"fallback_after_overloads": 3}, model={"faults": {"fallback": "haiku"}}
    )
    assert both.runtime.fallback_after_overloads == 3


def test_generated_script_needs_tools() -> None:
    with pytest.raises(ValidationError) as error:
        scenario(tools={"catalogue": "none"})
    assert locations(error) == {("model", "script")}


def test_tools_are_catalogue_then_defined_with_overrides_merged() -> None:
    s = scenario(
        tools={
            "define": [{"name": "Lint", "duration": {"kind": "fixed", "ms": 3}}],
            "override": {"Bash": {"duration": {"median_ms": 200}, "failures": {"error": 0.5}}},
        }
    )
    names = [spec.name for spec in s.tool_specs]
    assert names == ["Read", "Grep", "Glob", "Bash", "Edit", "Write", "WebFetch", "Task", "Lint"]
    bash = s.tool_specs[3]
    # Merged key by key: the kind, sigma and other failure probabilities are kept.
    assert (bash.duration.kind, bash.duration.median_ms, bash.duration.sigma) == (
        "lognormal",
        200,
        1.4,
    )
    assert (bash.failures.error, bash.failures.exception) == (0.5, 0.002)
    assert [d.name for d in s.tool_definitions()] == names


def test_override_with_a_kind_replaces_the_distribution() -> None:
    s = scenario(tools={"override": {"Read": {"duration": {"kind": "fixed", "ms": 7}}}})
    assert s.tool_specs[0].duration.sample_ns(None) == 7_000_000  # type: ignore[arg-type]


def test_override_cannot_rename_and_define_cannot_shadow() -> None:
    with pytest.raises(ValidationError) as error:
        scenario(
            tools={
                "override": {"Read": {"name": "Reader"}},
                "define": [{"name": "Grep", "duration": {"kind": "fixed", "ms": 1}}],
            }
        )
    assert locations(error) == {
        ("tools", "override", "Read", "name"),
        ("tools", "define", 0, "name"),
    }


def test_content_hash_without_a_file_is_stable() -> None:
    assert scenario().content_hash == scenario().content_hash
    assert scenario().content_hash != scenario(seed=2).content_hash
