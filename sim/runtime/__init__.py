"""The runtime: sans-I/O stream accumulator, tool executor, tool-turn loop and pairing repair.

Nothing in this package imports simpy, asyncio, threading, time or the rest of `sim`: time is
an integer (nanoseconds) passed in, and work to do is returned as data.
"""

from sim.runtime.tooldef import ToolDefinition

__all__ = ["ToolDefinition"]
