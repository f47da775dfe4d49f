"""Permission: whether a call may run, decided by a driver-supplied policy.

The policy answers synchronously for each call when the executor admits it: `ALLOW` starts
the call, `DENY` ends it with an error result, `ASK` makes the executor emit `AskPermission`
and wait (the user may take minutes) for the driver's `permission_decided`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any

from toolturn.runtime.tooldef import ToolDefinition


class PermissionDecision(str, Enum):
    """A permission policy's answer for one call: run it, refuse it, or ask the user."""

    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"


PermissionPolicy = Callable[[ToolDefinition, Mapping[str, Any]], PermissionDecision]


def allow_all(tool: ToolDefinition, tool_input: Mapping[str, Any]) -> PermissionDecision:
    """The default policy: every call may run."""
    return PermissionDecision.ALLOW
