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
from sim.runtime.attachments import AttachmentKind
from sim.runtime.commands import (
    AskPermission,
    CancelRequest,
    CancelTool,
    Command,
    DiscardedResult,
    ResultReady,
    SendRequest,
    SessionEnded,
    StartTool,
    ToolProgress,
    TurnEnded,
    WaitUntil,
)
from sim.runtime.executor import CallRecord, ToolExecutor
from sim.runtime.loop import EndReason, ToolTurnLoop
from sim.runtime.outcomes import CallOutcome, SyntheticCause, ToolOutcome
from sim.runtime.pairing import PairingMonitor, TranscriptShapeError
from sim.runtime.permission import PermissionDecision
from sim.runtime.policy import ExecutorPolicy
from sim.runtime.record import Record, RecordEntry
from sim.runtime.recovery import CLAUDE_CODE, DEFAULT, PROFILES, InputPattern, RecoveryPolicy
from sim.runtime.repair import (
    PairingError,
    Repair,
    RepairKind,
    check_pairing,
    ensure_tool_result_pairing,
)
from sim.runtime.results import ErrorTexts
from sim.runtime.retry import RetrySettings
from sim.runtime.tooldef import ToolDefinition
from sim.runtime.validation import InputValidation

__all__ = [
    "CLAUDE_CODE",
    "DEFAULT",
    "PROFILES",
    "AskPermission",
    "AttachmentKind",
    "BlockMessage",
    "CallOutcome",
    "CallRecord",
    "CancelRequest",
    "CancelTool",
    "Command",
    "DiscardedResult",
    "EndReason",
    "ErrorTexts",
    "ExecutorPolicy",
    "InputPattern",
    "InputValidation",
    "PairingError",
    "PairingMonitor",
    "PermissionDecision",
    "Record",
    "RecordEntry",
    "RecoveryPolicy",
    "Repair",
    "RepairKind",
    "ResultReady",
    "RetrySettings",
    "SendRequest",
    "SessionEnded",
    "StartTool",
    "StreamAccumulator",
    "StreamProtocolError",
    "SyntheticCause",
    "ToolDefinition",
    "ToolExecutor",
    "ToolOutcome",
    "ToolProgress",
    "ToolTurnLoop",
    "TranscriptShapeError",
    "TurnEnded",
    "WaitUntil",
    "check_pairing",
    "ensure_tool_result_pairing",
    "merge_block_messages",
]
