"""The official SDK's own tool-running helper (`client.beta.messages.tool_runner`) as an agent:
the scenario's tools wrapped as the SDK's runnable tools, each call run by `session.call_tool`.

    toolturn run default --agent examples.sdk_tool_runner:agent

The runner's tools see only their input, so `call_tool` matches each call to the block the mock
sent by name and input. The runner's own loop does the rest: its requests (streamed), its
parallel tool calls, its error results, the SDK's retries.
"""

from __future__ import annotations

from typing import Any

from anthropic.lib.tools import BetaAsyncBuiltinFunctionTool, ToolError

from toolturn.agents import AgentSession


class SessionTool(BetaAsyncBuiltinFunctionTool):
    """One scenario tool, run by the session's simulated tools."""

    def __init__(self, session: AgentSession, definition: dict[str, Any]) -> None:
        self._session = session
        self._definition = definition

    def to_dict(self) -> Any:
        return self._definition

    async def call(self, input: object) -> Any:
        assert isinstance(input, dict)
        result = await self._session.call_tool(self._definition["name"], input)
        if result.is_error:
            raise ToolError(result.content)
        return result.content


async def agent(session: AgentSession) -> None:
    tools = [SessionTool(session, definition) for definition in session.tools]
    runner = None
    async for prompt in session.prompts():
        message = {"role": "user", "content": prompt}
        if runner is None:
            runner = session.client.beta.messages.tool_runner(
                model=session.model_name, max_tokens=4096, messages=[message], tools=tools,
                # The mock holds no server-side thread: the runner sends the whole history.
                stream=True, thread=False,
            )
        else:
            runner.append_messages(message)
        await runner.until_done()
