"""The one keying of a tool call's plan: `stream(root_seed, "tool", session, tool_use_id)`.

The simulator's tool runs, its permission answers and the live driver's simulated tools all draw
a call's plan here, so the same call of the same session (tool_use ids are the same under every
policy and over the wire, `sim.model.ids`) plays the same way in virtual and in real time.
"""

from __future__ import annotations

from sim.randomness import stream
from sim.tools.execution import CallPlan, sample_call
from sim.tools.spec import ToolSpec


def call_plan(spec: ToolSpec, root_seed: int, session_id: int, tool_use_id: str) -> CallPlan:
    """The plan of call `tool_use_id` of tool `spec` in session `session_id`."""
    return sample_call(spec, stream(root_seed, "tool", session_id, tool_use_id))
