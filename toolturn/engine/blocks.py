"""Blocks of a simulation's sessions that can run apart (in other processes) with the same rows.

Every draw of a session is keyed by its id (`toolturn.engine.draws`, `toolturn.user.draws`, the
model's streams), so a session behaves the same whichever sessions run beside it, except through
what the sessions of one simulation share:

1. The arrival schedule. In a closed loop a session starts when an earlier one ends: its start
   depends on every session before it, so a closed loop is never split. An open loop's arrival
   times are drawn for the whole run at once (`arrivals.poisson_arrivals`) or given by a trace:
   a block takes its slice, the same times as in the whole run.
2. The endpoint. With a capacity, requests queue or are refused by how many are in flight, and
   latency grows with utilisation: sessions meet there, so such a simulation is not split. An
   endpoint without a capacity admits every request at once at the idle latency.

A splittable simulation is cut into blocks of `BLOCK_SESSIONS` consecutive session ids, a
function of the scenario alone (never of the number of workers), so that every way of running
a run simulates the same blocks.
"""

from __future__ import annotations

from toolturn.scenario.schema import Scenario

# Sessions per block: enough that a block's fixed cost (a mock model, a simpy environment) is
# small beside its sessions, few enough that two processes share even a short simulation.
BLOCK_SESSIONS = 250


def splittable(scenario: Scenario) -> bool:
    """Whether the sessions of a simulation of `scenario` are independent (module docstring)."""
    return scenario.load.mode == "open" and scenario.model.endpoint.capacity is None


def session_blocks(scenario: Scenario) -> list[range | None]:
    """The blocks one simulation of `scenario` runs as: [None] (whole) unless it is splittable
    and longer than a block."""
    sessions = scenario.load.sessions
    if not splittable(scenario) or sessions <= BLOCK_SESSIONS:
        return [None]
    return [
        range(start, min(start + BLOCK_SESSIONS, sessions))
        for start in range(0, sessions, BLOCK_SESSIONS)
    ]
