"""The model endpoint in simulated time: requests in flight, a FIFO queue, refusals.

The decisions are the pure `toolturn.model.endpoint.Endpoint`'s; this class keeps the count of
requests being served and the queue of those waiting for a slot. A request that is admitted at
once costs no simpy event; only a queued one waits on an event, which `release` triggers when a
slot frees (first come, first served).
"""

from __future__ import annotations

from collections import deque

import simpy

from toolturn.engine.clock import Clock
from toolturn.model.endpoint import Decision, Endpoint


class SimEndpoint:
    """One endpoint shared by every session of a simulation."""

    def __init__(self, env: Clock, endpoint: Endpoint) -> None:
        self._env = env
        self._endpoint = endpoint
        self.in_flight = 0
        self._waiting: deque[simpy.Event] = deque()

    def decide(self) -> Decision:
        """What happens to a request arriving now (`admit`, `queue` or `refuse`)."""
        if self._waiting and self._endpoint.config.overflow == "queue":
            return "queue"  # Nobody overtakes the queue.
        return self._endpoint.admission(self.in_flight)

    def utilisation(self) -> float:
        """Share of the capacity used by the requests already in flight."""
        return self._endpoint.utilisation(self.in_flight)

    def utilisation_of_others(self) -> float:
        """Share of the capacity used by the other requests in flight (for one holding a slot)."""
        return self._endpoint.utilisation(self.in_flight - 1)

    def admit(self) -> None:
        """Take a slot now (after `decide` said `admit`)."""
        self.in_flight += 1

    def enqueue(self) -> simpy.Event:
        """Wait for a slot; the event fires when the request holds one."""
        event = self._env.event()
        self._waiting.append(event)
        return event

    def withdraw(self, event: simpy.Event) -> None:
        """A queued request gave up (user interrupt); if it was granted meanwhile, free the slot."""
        if event.triggered:
            self.release()
        else:
            self._waiting.remove(event)

    def release(self) -> None:
        """A request stopped being served: its slot goes to the first waiting request."""
        if self._waiting:
            self._waiting.popleft().succeed()
        else:
            self.in_flight -= 1
