"""A user's own asyncio agent runtime under the simulator, in virtual time (`toolturn run --agent`).

The user's `async def agent(session)` gets an `AgentSession` (`toolturn.agents.session`): an
official SDK client bound to the scenario's mock model over an in-memory transport, the
scenario's tools, the simulated user's prompts and interrupts. Everything runs on one
`VirtualLoop` (`toolturn.agents.virtual_loop`) whose clock jumps from timer to timer.
"""

from toolturn.agents.session import AgentSession, ToolResult

__all__ = ["AgentSession", "ToolResult"]
