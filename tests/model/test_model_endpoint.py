"""The endpoint's admission and overload answers (pure decisions, no simulator)."""

from __future__ import annotations

from tests.helpers.model_support import make_model
from toolturn.model.config import EndpointConfig
from toolturn.model.endpoint import Endpoint
from toolturn.model.response import Turn


def test_unlimited_endpoint_admits_everything() -> None:
    endpoint = Endpoint(EndpointConfig())
    assert endpoint.admission(10_000) == "admit" and endpoint.utilisation(10_000) == 0.0


def test_beyond_capacity_requests_queue_or_are_refused() -> None:
    queueing = Endpoint(EndpointConfig(capacity=4, overflow="queue"))
    refusing = Endpoint(EndpointConfig(capacity=4, overflow="refuse"))
    assert [queueing.admission(n) for n in (0, 3, 4, 9)] == ["admit", "admit", "queue", "queue"]
    assert [refusing.admission(n) for n in (3, 4)] == ["admit", "refuse"]
    assert refusing.utilisation(3) == 0.75


def test_latency_grows_linearly_with_utilisation() -> None:
    endpoint = Endpoint(EndpointConfig(capacity=8, latency_growth=0.5))
    assert [endpoint.latency_factor(u) for u in (0.0, 0.5, 1.0)] == [1.0, 1.25, 1.5]


def test_refusals_are_429_or_529_with_retry_after_worded_as_the_api() -> None:
    for status, error_type in ((429, "rate_limit_error"), (529, "overloaded_error")):
        endpoint = {
            "capacity": 1,
            "overflow": "refuse",
            "refuse_status": status,
            "retry_after_ms": 3000,
        }
        model = make_model(endpoint=endpoint)
        refusal = model.refuse(Turn(3, 2, 1))
        assert refusal.status == status and refusal.retry_after_ns == 3_000_000_000
        assert refusal.body["type"] == "error" and refusal.body["error"]["type"] == error_type
        assert refusal.body["request_id"] == model.request_id(Turn(3, 2, 1))
        assert refusal.at_ns > 0 and refusal.faults == ()
