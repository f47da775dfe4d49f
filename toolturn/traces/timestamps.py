"""Log timestamps to milliseconds since the Unix epoch.

Accepted: an ISO 8601 string (`2026-12-01T15:39:31.977Z`, any offset; without one it is read as
UTC), or a number of seconds since the epoch (what `time.time()` writes). Anything else is a
`ValueError` naming what it got, for the reader to report against the line.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any


def epoch_ms(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError(f"timestamp must be an ISO 8601 string or epoch seconds, not {value!r}")
    if isinstance(value, int | float):
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"timestamp {value!r} is not a time")
        return float(value) * 1000.0
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"timestamp {value!r} is not ISO 8601") from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.timestamp() * 1000.0
    raise ValueError(
        f"timestamp must be an ISO 8601 string or epoch seconds, not {type(value).__name__}"
    )
