"""Retry settings and backoff for requests that fail before any stream event arrived.

The defaults are the official SDK's: 2 retries, a backoff of 0.5 s doubling up to 8 s, each
wait shortened by up to a quarter at random, and a server's `retry-after` obeyed as given.
The random part is injected (`jitter`) so that runs are reproducible: by default there is none;
the SDK's own is a draw from [0, 0.25), taken off the wait; `jitter_adds` adds it instead (Claude
Code's backoff). `factor` is the growth per retry (the SDK's and Claude Code's: 2).
Which failures are retried is the SDK's rule too: 408, 409, 429, every 5xx, and a connection
that failed without a status.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


def no_jitter(retry: int) -> float:
    """The default jitter: none, so every wait is the full backoff."""
    return 0.0


@dataclass(frozen=True, slots=True)
class RetrySettings:
    """How a failed request is retried: how many times, and the exponential backoff between
    tries (capped, with jitter)."""

    max_retries: int = 2
    initial_delay_ns: int = 500_000_000
    max_delay_ns: int = 8_000_000_000
    # retry number (1 for the first retry) -> the fraction of the backoff to cut, in [0, 1).
    jitter: Callable[[int], float] = no_jitter
    factor: int = 2
    # The jitter's fraction is added to the backoff rather than cut from it.
    jitter_adds: bool = False

    def delay_ns(self, retry: int, retry_after_ns: int | None = None) -> int:
        """How long to wait before retry number `retry` (1-based)."""
        if retry_after_ns is not None and retry_after_ns > 0:
            return retry_after_ns
        # int ** int is typed Any (a negative power is a float); retries count from 1.
        backoff: int = min(self.initial_delay_ns * self.factor ** (retry - 1), self.max_delay_ns)
        # Integer arithmetic on the jitter's fraction keeps every wait a whole number of ns.
        part = int(backoff * self.jitter(retry))
        return backoff + part if self.jitter_adds else backoff - part


def is_retryable(status: int | None) -> bool:
    """Whether a request that failed with this HTTP status (None: no response at all) is
    retried."""
    return status is None or status in (408, 409, 429) or status >= 500
