"""The runtime: sans-I/O stream accumulator, tool executor, tool-turn loop and pairing repair.

Nothing in this package imports simpy, asyncio, threading, time or the rest of `toolturn`: time is
an integer (nanoseconds) passed in, and work to do is returned as data.
"""

from toolturn.runtime.accumulator import (
    BlockMessage,
    StreamAccumulator,
    StreamProtocolError,
    merge_block_messages,
)
from toolturn.runtime.attachments import AttachmentKind
from toolturn.runtime.commands import (
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
from toolturn.runtime.errors import ToolTurnError
from toolturn.runtime.executor import CallRecord, ExecutorClosedError, ToolExecutor
from toolturn.runtime.loop import EndReason, PhaseError, ToolTurnLoop
from toolturn.runtime.outcomes import CallOutcome, SyntheticCause, ToolOutcome
from toolturn.runtime.pairing import PairingMonitor, TranscriptShapeError
from toolturn.runtime.permission import PermissionDecision
from toolturn.runtime.policy import ExecutorPolicy
from toolturn.runtime.record import Record, RecordEntry
from toolturn.runtime.recovery import (
    CLAUDE_CODE,
    CODEX,
    DEFAULT,
    PROFILES,
    InputPattern,
    RecoveryPolicy,
)
from toolturn.runtime.repair import (
    PairingError,
    Repair,
    RepairKind,
    check_pairing,
    ensure_tool_result_pairing,
)
from toolturn.runtime.results import ErrorTexts
from toolturn.runtime.retry import RetrySettings
from toolturn.runtime.tooldef import ToolDefinition
from toolturn.runtime.validation import InputValidation

__all__ = [
    "CLAUDE_CODE",
    "CODEX",
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
    "ExecutorClosedError",
    "ExecutorPolicy",
    "InputPattern",
    "InputValidation",
    "PairingError",
    "PairingMonitor",
    "PermissionDecision",
    "PhaseError",
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
    "ToolTurnError",
    "ToolTurnLoop",
    "TranscriptShapeError",
    "TurnEnded",
    "WaitUntil",
    "check_pairing",
    "ensure_tool_result_pairing",
    "merge_block_messages",
]
