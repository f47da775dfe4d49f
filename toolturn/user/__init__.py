"""The simulated user (prompts, think time, interrupts, attachments, permission answers), shared
by the simulator's sessions and the live driver: model-free and clock-free."""

from toolturn.user.attachments import AttachmentArrivals, attachment_block
from toolturn.user.user import (
    PermissionAnswer,
    PlannedInterrupt,
    SimulatedUser,
    in_phase,
    permission_answer,
)

__all__ = [
    "AttachmentArrivals",
    "PermissionAnswer",
    "PlannedInterrupt",
    "SimulatedUser",
    "attachment_block",
    "in_phase",
    "permission_answer",
]
