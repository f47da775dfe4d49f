"""Log timestamps to milliseconds since the Unix epoch.

Accepted: an ISO 8601 string (`2026-12-01T15:39:31.977Z`, any offset; without one it is read as
UTC), or a number of seconds since the epoch (what `time.time()` writes), from 2000-01-01 to
2100-01-01 UTC. Anything else is a `ValueError` naming what it got, for the reader to report
against the line: a number far outside that range (`1e308`, `5`) is no time a log was written
at, and taken as one it would make think times and delays of centuries (or of nothing).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
LATEST = datetime(2100, 1, 1, tzinfo=UTC)
_EARLIEST_S = EARLIEST.timestamp()
_LATEST_S = LATEST.timestamp()


def epoch_ms(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError(f"timestamp must be an ISO 8601 string or epoch seconds, not {value!r}")
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise ValueError(f"timestamp {value!r} is not a time")
        return _in_range(float(value), repr(value))
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"timestamp {value!r} is not ISO 8601") from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return _in_range(moment.timestamp(), repr(value))
    raise ValueError(
        f"timestamp must be an ISO 8601 string or epoch seconds, not {type(value).__name__}"
    )


def _in_range(seconds: float, shown: str) -> float:
    if not _EARLIEST_S <= seconds < _LATEST_S:
        raise ValueError(f"timestamp {shown} is out of range (epoch seconds from "
                         f"{_EARLIEST_S:.0f} ({EARLIEST:%Y-%m-%d}) to {_LATEST_S:.0f} "
                         f"({LATEST:%Y-%m-%d}))")
    return seconds * 1000.0
