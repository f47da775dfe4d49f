"""The `codex` profile's unchecked duplicate ids in the simulator: the follow-up carries both
calls and both outputs of the id, as Codex sends them, and the simulated Messages API refuses it
(its 400 for a pairing violation, final), where every other profile's requests pass."""

from __future__ import annotations

from tests.helpers.engine_runs import default_scenario, dict_rows, run
from toolturn.runtime.recovery import PROFILES
from toolturn.scenario.schema import Scenario


def duplicated() -> Scenario:
    data = default_scenario(3).model_dump(mode="python", exclude_unset=True)
    data["model"]["script"]["tool_calls"] = {"kind": "fixed", "n": 2}
    data["model"]["faults"] = {"duplicate_tool_id": 1.0}
    return Scenario.model_validate(data)


def test_only_codex_sends_the_duplicate_and_meets_the_apis_400() -> None:
    scenario = duplicated()
    for profile in PROFILES:
        result = run(scenario, "streaming", profile=profile)
        refused = {(row["status"], row["fault"]) for row in dict_rows(result.rows["requests"])
                   if row["status"] == "400"}
        outcomes = {row["outcome"] for row in dict_rows(result.rows["turns"])}
        if profile == "codex":
            assert result.pairing_violations > 0
            assert refused == {("400", "pairing_violation")}
            assert "request_failed" in outcomes
        else:
            assert result.pairing_violations == 0 and refused == set(), profile
