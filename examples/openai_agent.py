"""A small tool loop on the official `openai` SDK, as a user on the OpenAI APIs would write it:
`session.openai` against the mock model, which answers the Responses and Chat Completions APIs
with the same draws as the Messages API.

    toolturn run default --agent examples.openai_agent:agent        (Responses, streamed)
    toolturn run default --agent examples.openai_agent:chat_agent   (Chat Completions, streamed)

Each prompt is one user message; the agent streams the model's answer, runs the function calls
it asked for concurrently (`session.call_tool`, matched by the call's `call_id`), sends their
outputs and asks again, until an answer asks for no tool. The whole history is sent each time
(the mock holds no server-side conversation: `store=False`).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from toolturn.agents import AgentSession, ToolResult

MAX_TOOL_ROUNDS = 30  # a bound on one prompt's requests, as real agents have


def _arguments(text: str) -> dict[str, Any]:
    # The model's arguments may be cut short by a fault: the tool then sees `{}`, and says so.
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _output(result: ToolResult) -> str:
    text = result.content if isinstance(result.content, str) else json.dumps(result.content)
    return f"Error: {text}" if result.is_error and not text.startswith("Error") else text


async def _run_calls(session: AgentSession, calls: list[tuple[str, str, str]]
                     ) -> list[ToolResult]:
    """Each (call_id, name, arguments) run by the session's simulated tools, concurrently."""
    return list(await asyncio.gather(*(
        session.call_tool(name, _arguments(arguments), tool_use_id=call_id)
        for call_id, name, arguments in calls)))


async def agent(session: AgentSession) -> None:
    """The Responses API: `responses.stream`, function calls from its final response."""
    tools = session.openai_tools("responses")
    history: list[Any] = []
    async for prompt in session.prompts():
        history.append({"role": "user", "content": prompt})
        for _ in range(MAX_TOOL_ROUNDS):
            async with session.openai.responses.stream(
                model=session.model_name, input=history, tools=tools, store=False,
                max_output_tokens=4096,
            ) as stream:
                response = await stream.get_final_response()
            history += [item.model_dump(exclude_none=True) for item in response.output]
            calls = [(item.call_id, item.name, item.arguments) for item in response.output
                     if item.type == "function_call"]
            if not calls:
                break
            results = await _run_calls(session, calls)
            history += [{"type": "function_call_output", "call_id": call_id,
                         "output": _output(result)}
                        for (call_id, _, _), result in zip(calls, results, strict=True)]


async def chat_agent(session: AgentSession) -> None:
    """Chat Completions: a streamed completion, its tool calls from the accumulated message."""
    tools = session.openai_tools("chat")
    history: list[Any] = []
    async for prompt in session.prompts():
        history.append({"role": "user", "content": prompt})
        for _ in range(MAX_TOOL_ROUNDS):
            async with session.openai.chat.completions.stream(
                model=session.model_name, messages=history, tools=tools, max_tokens=4096,
            ) as stream:
                completion = await stream.get_final_completion()
            message = completion.choices[0].message
            calls = [(call.id, call.function.name, call.function.arguments)
                     for call in message.tool_calls or () if call.type == "function"]
            history.append({"role": "assistant", "content": message.content or "",
                            **({"tool_calls": [call.model_dump(exclude_none=True)
                                               for call in message.tool_calls or ()]}
                               if calls else {})})
            if not calls:
                break
            results = await _run_calls(session, calls)
            history += [{"role": "tool", "tool_call_id": call_id, "content": _output(result)}
                        for (call_id, _, _), result in zip(calls, results, strict=True)]
