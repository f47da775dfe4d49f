"""The one base class of the exceptions the runtime raises of its own: a caller can catch every
one of them (a broken stream, a transcript strict mode refuses or that is not a transcript at
all, a move the loop's phases do not allow, a call given to a closed batch) with one clause.
Each also keeps the built-in base it had (ValueError, RuntimeError), so existing handlers still
catch it."""

from __future__ import annotations

__all__ = ["ToolTurnError"]


class ToolTurnError(Exception):
    """Raised by the runtime (`toolturn.runtime`) itself."""
