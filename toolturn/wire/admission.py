"""The mock model's endpoint under real concurrent connections: slots, a FIFO queue, refusals.

The decisions are the pure `toolturn.model.endpoint.Endpoint`'s, as in the simulator
(`toolturn.engine.endpoint`); this class keeps the count of requests being served across every
connection of the server and the queue of those waiting for a slot (first come, first served:
nobody overtakes the queue).
"""

from __future__ import annotations

import asyncio
from collections import deque

from toolturn.model.endpoint import Decision, Endpoint


class AsyncEndpoint:
    """One endpoint shared by every connection of a server (one asyncio event loop)."""

    def __init__(self, endpoint: Endpoint) -> None:
        self._endpoint = endpoint
        self.in_flight = 0
        self._waiting: deque[asyncio.Future[None]] = deque()

    async def acquire(self) -> bool:
        """Take a slot, waiting in line if the endpoint queues; False if the request is refused
        (it holds no slot then). A waiter that is cancelled leaves the line, or gives back the
        slot it was just granted."""
        decision = self._decision()
        if decision == "admit":
            self.in_flight += 1
            return True
        if decision == "refuse":
            return False
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(granted)
        try:
            await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():
                self.release()
            elif granted in self._waiting:  # release() may have skipped it already
                self._waiting.remove(granted)
            raise
        return True

    def would_wait(self) -> bool:
        """Whether a request arriving now waits in line (rather than being admitted or refused
        at once): the server then counts its times from the slot's grant, not from its sending."""
        return self._decision() == "queue"

    def _decision(self) -> Decision:
        if self._waiting and self._endpoint.config.overflow == "queue":
            return "queue"  # nobody overtakes the line
        return self._endpoint.admission(self.in_flight)

    def release(self) -> None:
        """A request stopped being served: its slot goes to the first one waiting."""
        while self._waiting:
            granted = self._waiting.popleft()
            if not granted.done():
                granted.set_result(None)
                return
        self.in_flight -= 1

    def utilisation(self) -> float:
        """Share of the capacity in use (what a refused request is told about)."""
        return self._endpoint.utilisation(self.in_flight)

    def utilisation_of_others(self) -> float:
        """Share of the capacity used by the other requests, for one holding a slot."""
        return self._endpoint.utilisation(self.in_flight - 1)
