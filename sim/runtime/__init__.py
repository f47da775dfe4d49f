"""The runtime: sans-I/O stream accumulator, tool executor, tool-turn loop and pairing repair.

Nothing in this package imports simpy, asyncio, threading, time or the rest of `sim`: time is
an integer (nanoseconds) passed in, and work to do is returned as data.
"""

from sim.runtime.accumulator import (
    BlockMessage,
    StreamAccumulator,
    StreamProtocolError,
    merge_block_messages,
)
from sim.runtime.pairing import TranscriptShapeError
from sim.runtime.repair import (
    PairingError,
    Repair,
    RepairKind,
    check_pairing,
    ensure_tool_result_pairing,
)
from sim.runtime.tooldef import ToolDefinition

__all__ = [
    "BlockMessage",
    "PairingError",
    "Repair",
    "RepairKind",
    "StreamAccumulator",
    "StreamProtocolError",
    "ToolDefinition",
    "TranscriptShapeError",
    "check_pairing",
    "ensure_tool_result_pairing",
    "merge_block_messages",
]
