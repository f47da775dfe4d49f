"""What the client did about a probe case's fault, read from what it sent next (issue 30).

The request a fault struck (for a clean case: the first answer of the faulted turn) is set
beside the next request of the same session, and the pair gets one class of
`toolturn.wire.next_step` (`CLASSES`), from the calls the answer wrote to the socket: the
classifier of the recording's `recoveries` too, and for a faulted answer the recording's own
decision is the class, so the scorecard and the recording cannot disagree.

A run whose requests never reached the fault's turn is `fault_not_reached`.

A run's class is its struck requests' classes, distinct, in order, joined by `+`
(`identical_retry` for three 529s all retried alike). A run with no request at all is not
classed: it failed (`no_request`, with `no_request_reason` naming the variable it ignored).
"""

from __future__ import annotations

from collections.abc import Sequence

from toolturn.probe.exchanges import Exchange
from toolturn.wire.codecs import ANTHROPIC
from toolturn.wire.next_step import CLASSES as NEXT_STEPS
from toolturn.wire.next_step import next_step

CLASSES = (*NEXT_STEPS, "fault_not_reached")


def no_request_reason(protocol: str = ANTHROPIC) -> str:
    """Why a run that sent nothing failed, naming the variable the agent was to honour."""
    variable = "ANTHROPIC_BASE_URL" if protocol == ANTHROPIC else "OPENAI_BASE_URL"
    return f"the agent sent no request to the server (does it honour {variable}?)"


def run_class(exchanges: Sequence[Exchange]) -> str:
    """The class of one run (the module docstring)."""
    classes: list[str] = []
    for position, exchange in enumerate(exchanges):
        if not exchange.faulted:
            continue
        verdict = exchange.recovery
        if verdict is None:  # a struck answer without faults (a clean case): no row decided it
            following = next((later for later in exchanges[position + 1:]
                              if later.turn is not None and later.session == exchange.session),
                             None)
            verdict = next_step(exchange.asked(), exchange.written,
                                None if following is None else following.asked())
        if verdict not in classes:
            classes.append(verdict)
    return "+".join(classes) or "fault_not_reached"
