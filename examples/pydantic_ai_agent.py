"""A pydantic-ai agent (`pydantic-ai-slim[anthropic]`) as an agent under `toolturn run --agent`: its
Anthropic model on the session's SDK client, the scenario's tools as pydantic-ai tools from their
JSON schemas, each run by `session.call_tool`.

    toolturn run default --agent examples.pydantic_ai_agent:agent

The adapter is the two functions below; the framework does the rest (its requests, its tool
calls, its message history across the session's prompts).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic_ai import Agent, Tool
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.providers.anthropic import AnthropicProvider

from toolturn.agents import AgentSession


def _runner(session: AgentSession, name: str) -> Callable[..., Awaitable[Any]]:
    async def run(**input: Any) -> Any:
        result = await session.call_tool(name, input)
        if result.is_error:
            raise ToolFailed(str(result.content))
        return result.content

    return run


def _tools(session: AgentSession) -> list[Tool[Any]]:
    return [
        Tool.from_schema(_runner(session, tool["name"]), tool["name"], tool.get("description"),
                         tool["input_schema"])
        for tool in session.tools
    ]


async def agent(session: AgentSession) -> None:
    model = AnthropicModel(session.model_name,
                           provider=AnthropicProvider(anthropic_client=session.client))
    framework_agent = Agent(model, tools=_tools(session))
    history: list[ModelMessage] = []
    async for prompt in session.prompts():
        result = await framework_agent.run(prompt, message_history=history)
        history = result.all_messages()
