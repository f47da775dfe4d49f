"""Log timestamps to milliseconds since the Unix epoch.

Accepted: an ISO 8601 string (`2026-12-01T15:39:31.977Z`, any offset; without one it is read as
UTC), or a number since the epoch: seconds (what `time.time()` writes) or milliseconds (what
JavaScript's `Date.now()` writes), from 2000-01-01 to 2100-01-01 UTC. The two ranges do not meet
(seconds 946,684,800 to 4,102,444,800; milliseconds a thousand times that), so a number is read
in the unit whose range holds it. Anything else is a `ValueError` naming what it got, for the
reader to report against the line: a number outside both ranges (`1e308`, `5`) is no time a log
was written at, and taken as one it would make think times and delays of centuries (or of
nothing).
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
        raise ValueError(f"timestamp must be an ISO 8601 string or a number since the epoch, "
                         f"not {value!r}")
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise ValueError(f"timestamp {value!r} is not a time")
        if _EARLIEST_S * 1000.0 <= value < _LATEST_S * 1000.0:
            return float(value)  # epoch milliseconds
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
        f"timestamp must be an ISO 8601 string or a number since the epoch, "
        f"not {type(value).__name__}"
    )


def _in_range(seconds: float, shown: str) -> float:
    if not _EARLIEST_S <= seconds < _LATEST_S:
        raise ValueError(f"timestamp {shown} is out of range (epoch seconds from "
                         f"{_EARLIEST_S:.0f} ({EARLIEST:%Y-%m-%d}) to {_LATEST_S:.0f} "
                         f"({LATEST:%Y-%m-%d}), or milliseconds from {_EARLIEST_S * 1000:.0f} "
                         f"to {_LATEST_S * 1000:.0f})")
    return seconds * 1000.0
