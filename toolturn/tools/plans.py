"""The one keying of a tool call's plan: `stream(root_seed, "tool", session, tool_use_id)`.

The simulator's tool runs, its permission answers and the live driver's simulated tools all draw
a call's plan here, so the same call of the same session (tool_use ids are the same under every
policy and over the wire, `toolturn.model.ids`) plays the same way in virtual and in real time.
"""

from __future__ import annotations

from toolturn.randomness import StreamPrefix
from toolturn.tools.execution import CallPlan, sample_call
from toolturn.tools.spec import ToolSpec


def call_streams(root_seed: int, session_id: int) -> StreamPrefix:
    """The keys every call of session `session_id` shares, hashed once (`planned_call`)."""
    return StreamPrefix(root_seed, "tool", session_id)


def call_plan(spec: ToolSpec, root_seed: int, session_id: int, tool_use_id: str) -> CallPlan:
    """The plan of call `tool_use_id` of tool `spec` in session `session_id`."""
    return planned_call(spec, call_streams(root_seed, session_id), tool_use_id)


def planned_call(spec: ToolSpec, streams: StreamPrefix, tool_use_id: str) -> CallPlan:
    """`call_plan` of a session whose `call_streams` are `streams`."""
    return sample_call(spec, streams.stream(tool_use_id))
