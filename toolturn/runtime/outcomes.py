"""How a tool call ended: what the driver reports, what the executor records, and why a result
was made up by the runtime rather than returned by a tool."""

from __future__ import annotations

from enum import Enum


class ToolOutcome(str, Enum):
    """What a driver reports when a tool stops running."""

    SUCCESS = "success"
    # The tool ran and returned an error result of its own (exit status 1, file not found, ...).
    ERROR = "error"
    # The tool crashed: the driver caught an exception while running it.
    EXCEPTION = "exception"
    # The tool stopped because the driver cancelled it.
    CANCELLED = "cancelled"


class CallOutcome(str, Enum):
    """How a call ended, as the executor records it."""

    SUCCESS = "success"
    ERROR = "error"
    EXCEPTION = "exception"
    CANCELLED = "cancelled"
    UNKNOWN_TOOL = "unknown_tool"
    INVALID_INPUT = "invalid_input"
    PERMISSION_DENIED = "permission_denied"
    # The runtime ended the call itself; the record's synthetic cause says why.
    SYNTHETIC = "synthetic"


class SyntheticCause(str, Enum):
    """Why the runtime, not a tool, produced a call's result."""

    # A call of the same batch whose tool cancels its siblings failed.
    SIBLING_ERROR = "sibling_error"
    USER_INTERRUPT = "user_interrupt"
    # The response stream broke (cut connection, `error` event) after the call's block completed.
    STREAM_ERROR = "stream_error"
    # The attempt was abandoned to retry it or to fall back to another model.
    DISCARDED = "discarded"
    FALLBACK = "fallback"
    # The agent's process died while the call was in flight (loop rule 16): running tools die
    # with it.
    CRASH = "crash"
    # The user rewound the conversation to an earlier message while the call was in flight.
    REWIND = "rewind"
    # The call was started speculatively (its arguments so far parsed as a JSON object) and its
    # arguments then changed: the start misfired and the call was withdrawn (executor rule 14).
    MISFIRE = "misfire"
