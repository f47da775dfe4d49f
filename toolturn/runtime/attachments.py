"""Attachments: content that arrives for the model while a turn is running.

Queued user input, notifications and file changes are not tool results. They wait until the
whole batch of tool_results is in, and are appended after it, in arrival order, in the same user
message, so they can never split the batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any


class AttachmentKind(str, Enum):
    """What an attachment is: input the user queued, a notification, a file that changed."""

    QUEUED_USER_INPUT = "queued_user_input"
    NOTIFICATION = "notification"
    FILE_CHANGE = "file_change"


@dataclass(frozen=True, slots=True)
class Attachment:
    """One attachment: its kind, its content block and when it arrived."""

    kind: AttachmentKind
    # A user content block in API shape, usually {"type": "text", "text": ...}.
    block: dict[str, Any]
    arrived_ns: int
