"""The runtime for real: `ToolTurnLoop` driven with asyncio over the official anthropic SDK."""

from toolturn.live.session import SessionResult, run_session
from toolturn.live.simulated_tools import simulated_tools
from toolturn.live.tools import LiveCall, LiveTool, ToolError

__all__ = ["LiveCall", "LiveTool", "SessionResult", "ToolError", "run_session", "simulated_tools"]
