"""Field declarations the scenario's sections share."""

from __future__ import annotations

from typing import Any

from pydantic import Field

__all__ = ["chance"]


def chance(description: str, default: float = 0.0) -> Any:
    """A probability field: a float in [0, 1], by default 0 (the thing never happens). Named
    so as not to shadow the fields called `probability`."""
    return Field(default=default, ge=0, le=1, description=description)
