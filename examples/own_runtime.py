"""The project's own runtime driven as a user would drive it: `toolturn.live`'s driver (the
tool-turn loop over the official SDK) as an agent under `toolturn run --agent`.

    toolturn run default --agent examples.own_runtime:agent

Its tables pair turn by turn with the simulator's `streaming` arm on the same scenario and seed
(tests/agents/test_agents_examples.py): the same loop, the same draws, but the SDK's real HTTP
and SSE path and asyncio in place of simpy: a fidelity measurement with no wall-clock noise at
all.
"""

from __future__ import annotations

from toolturn.agents import AgentSession
from toolturn.engine.draws import SessionDraws
from toolturn.engine.loop_factory import LoopFactory
from toolturn.live.session import run_session
from toolturn.live.tools import LiveCall, LiveTool, ToolError
from toolturn.runtime.commands import AskPermission
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.runtime.results import ToolContent
from toolturn.user import PermissionAnswer

POLICY = "streaming"


def _tool(session: AgentSession) -> LiveTool:
    async def tool(call: LiveCall) -> ToolContent:
        # The loop asked permission already (below): the session must not ask again.
        result = await session.call_tool(call.name, call.input, tool_use_id=call.tool_use_id,
                                         asked=True)
        if result.is_error:
            raise ToolError(result.content)
        return result.content

    return tool


async def agent(session: AgentSession) -> None:
    scenario = session.scenario
    draws = SessionDraws(scenario, scenario.seed, session.session_id)
    factory = LoopFactory(scenario, POLICY, session.model_name, session.fallback_name)
    holder: list[ToolTurnLoop] = []
    loop = factory.new_loop(lambda retry: draws.retry_jitter(holder[0].turn, retry),
                            lambda retry: draws.retry_unit(holder[0].turn, retry))
    holder.append(loop)
    tool = _tool(session)
    tools = {spec.name: tool for spec in scenario.tool_specs}

    def answer(ask: AskPermission) -> PermissionAnswer:
        return session.permission(ask.name, ask.tool_use_id)

    # The driver plays the simulated user's interrupts itself, as `toolturn live` does.
    user = session.simulated_user()
    client = session.client.with_options(max_retries=0)  # the loop does its own retries
    async for prompt in session.prompts():
        # No tool timeout of the driver's: the session's simulated tools time out themselves.
        await run_session(client, loop, prompt, tools, origin_ns=0, user=user,
                          permission_answers=answer, turn_header=True, tool_timeout_ns=None)
