"""The model endpoint under load (pure): admit, queue or refuse a request; latency at a load.

    endpoint = Endpoint(EndpointConfig(capacity=8, overflow="refuse", latency_growth=0.5))
    endpoint.admission(in_flight=3)     # "admit"
    endpoint.admission(in_flight=8)     # "refuse": answer with endpoint.refusal(request_id, at_ns)
    endpoint.latency_factor(0.5)        # 1.25

The simulator owns the count of requests in flight; this only decides.
"""

from __future__ import annotations

from typing import Literal

from toolturn.distributions import ms_to_ns
from toolturn.model.api_errors import STATUS_ERRORS, error_body
from toolturn.model.config import EndpointConfig
from toolturn.model.response import HttpError

Decision = Literal["admit", "queue", "refuse"]


class Endpoint:
    def __init__(self, config: EndpointConfig) -> None:
        self.config = config

    def admission(self, in_flight: int) -> Decision:
        """What happens to a request arriving while `in_flight` requests are being served."""
        capacity = self.config.capacity
        if capacity is None or in_flight < capacity:
            return "admit"
        return "queue" if self.config.overflow == "queue" else "refuse"

    def utilisation(self, in_flight: int) -> float:
        """Share of the capacity in use; 0 for an unlimited endpoint."""
        capacity = self.config.capacity
        return 0.0 if capacity is None else in_flight / capacity

    def latency_factor(self, utilisation: float) -> float:
        """How much slower every latency is at `utilisation` (1 when idle)."""
        return 1.0 + self.config.latency_growth * utilisation

    def refusal(self, request_id: str, at_ns: int) -> HttpError:
        """The answer to a refused request: 429 or 529 with retry-after, worded as the API."""
        status = self.config.refuse_status
        error_type, message = STATUS_ERRORS[status]
        return HttpError(
            status=status,
            body=error_body(error_type, message, request_id),
            at_ns=at_ns,
            retry_after_ns=ms_to_ns(self.config.retry_after_ms),
        )
