"""The engine's loops share one input validation per set of tools for the whole process (the
marked speed place in toolturn/engine/loop_factory.py): simulations of the same tools compile their
schemas once; other tools get their own."""

from __future__ import annotations

from tests.helpers.engine_runs import ARITHMETIC, default_scenario, scenario_of
from toolturn.engine.loop_factory import LoopFactory, validation_for
from toolturn.runtime.tooldef import ToolDefinition


def test_simulations_of_the_same_tools_share_one_validation() -> None:
    scenario = default_scenario(2)
    tools = scenario.tool_definitions()
    first = LoopFactory(scenario, "streaming", "m", None)
    again = LoopFactory(default_scenario(3), "serial", "m", None, profile="claude-code")
    assert validation_for(tools) is validation_for(scenario.tool_definitions())
    assert first.new_loop(lambda _retry: 0.0)._validation is validation_for(tools)
    assert again.new_loop(lambda _retry: 0.0)._validation is validation_for(tools)
    assert validation_for(scenario_of(ARITHMETIC).tool_definitions()) is not validation_for(tools)


def test_a_changed_schema_gets_its_own_validation() -> None:
    read = ToolDefinition("Read", {"type": "object", "required": ["path"]})
    other = ToolDefinition("Read", {"type": "object", "required": ["file"]})
    assert validation_for([read]) is validation_for([read])
    assert validation_for([other]) is not validation_for([read])
    assert validation_for([other]).problem("Read", {"path": "/a"}) == (
        "'file' is a required property"
    )
