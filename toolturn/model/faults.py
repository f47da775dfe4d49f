"""Which faults fire for one response: independent draws per fault kind and unit.

Each fault has a unit (request, stream, text block, tool_use block, tool call) and a probability
per unit. Whether it fires for unit `u` is a uniform draw keyed by (root seed, kind, session,
turn, attempt, u), so turning one fault up never moves the draws of another, and the same turn
gets the same faults under every executor policy. A fault with probability 0 draws nothing.

The firing draw is a keyed hash (blake2b, 53 bits) rather than a generator: a response asks
every enabled fault kind, and building a numpy generator per kind per response cost more than
the rest of the response. Where and how a fault strikes, once it fires, comes from the kind's
own generator, `stream(root_seed, "fault", kind, session, turn, attempt)`.

A fault that fires but has nothing to act on (a duplicate id with no earlier id to copy, a
cut later than an earlier cut) has no effect and is not reported.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Final

import numpy as np

from toolturn.model.config import FaultsConfig
from toolturn.model.response import Turn
from toolturn.randomness import stream

# Per request, decided before streaming; the first that fires, in this order, is the answer.
HTTP_FAULTS: Final = {"http_429": 429, "http_529": 529, "http_500": 500}
# Per stream: an error event at a random point, and the error it carries.
ERROR_EVENT_FAULTS: Final = {
    "error_overloaded": ("overloaded_error", "Overloaded"),
    "error_api": ("api_error", "Internal server error"),
}
# Per tool call, applied to the content before streaming.
TOOL_CALL_FAULTS: Final = (
    "unknown_tool",
    "invalid_tool_input",
    "malformed_tool_json",
    "duplicate_tool_id",
    "tool_json_continues",
)
# Per stream with at least one tool call.
STOP_FAULTS: Final = ("max_tokens_mid_tool_use", "end_turn_with_tool_use")
# Where a cut or an error ends a stream; when several fire, the earliest point wins.
CUT_FAULTS: Final = (
    "cut_before_first_block",  # per stream
    "cut_mid_text",  # per text block
    "cut_mid_tool_json",  # per tool_use block
    "cut_after_tool_use_stop",  # per tool_use block
    "cut_before_message_stop",  # per stream
)
STALL: Final = "stall"  # per stream

ALL_FAULTS: Final = (
    *HTTP_FAULTS,
    *ERROR_EVENT_FAULTS,
    *TOOL_CALL_FAULTS,
    *STOP_FAULTS,
    *CUT_FAULTS,
    STALL,
)


_UNIT_INTERVAL = 2.0**-53


# The hash with its parameters set, copied per draw: a copy costs less than parsing them again.
_KEYED = hashlib.blake2b(digest_size=8, person=b"sim.fault")


def keyed_uniform(key: str) -> float:
    """A uniform draw in [0, 1) determined by `key` alone."""
    keyed = _KEYED.copy()
    keyed.update(key.encode())
    return (int.from_bytes(keyed.digest(), "little") >> 11) * _UNIT_INTERVAL


def fault_probabilities(config: FaultsConfig) -> dict[str, float]:
    """Each fault kind's probability per unit, as `FaultDice` takes them."""
    return {kind: float(getattr(config, kind)) for kind in ALL_FAULTS}


def faults_on(probabilities: Mapping[str, float]) -> frozenset[str]:
    """The kinds that can fire (probability above 0), as `FaultDice` takes them."""
    return frozenset(kind for kind, p in probabilities.items() if p > 0)


class FaultDice:
    """The draws of every fault kind for one response. `probabilities` maps every kind to its
    probability per unit (`fault_probabilities`: made once per model, as a response asks about
    every kind); `on` is `faults_on(probabilities)` (made once too, or here).

    `on` lets a caller skip, without a call, what a kind that cannot fire would answer: most
    kinds are off in most scenarios, and a response asks about each of them."""

    __slots__ = ("_probabilities", "_root_seed", "_streams", "_suffix", "_turn", "on")

    def __init__(
        self,
        root_seed: int,
        probabilities: Mapping[str, float],
        turn: Turn,
        on: frozenset[str] | None = None,
    ) -> None:
        self._root_seed = root_seed
        self._probabilities = probabilities
        self.on = faults_on(probabilities) if on is None else on
        self._turn = turn
        # The key of a firing draw is `{root}:{kind}:{session}:{turn}:{attempt}:{unit}`.
        self._suffix = f"{turn.session_id}:{turn.turn_index}:{turn.attempt}:"
        self._streams: dict[str, np.random.Generator] = {}

    def rng(self, kind: str) -> np.random.Generator:
        """The fault's own stream (for its firing draws, then where and how it strikes)."""
        rng = self._streams.get(kind)
        if rng is None:
            turn = self._turn
            rng = stream(
                self._root_seed, "fault", kind, turn.session_id, turn.turn_index, turn.attempt
            )
            self._streams[kind] = rng
        return rng

    def firing(self, kind: str, units: int) -> list[int]:
        """The units, of `units`, for which the fault fires, in order (a list of indices, so
        that a caller has nothing to test per unit where the kind is off: most kinds, mostly)."""
        p = self._probabilities[kind]
        if p <= 0 or units == 0:
            return []
        prefix = f"{self._root_seed}:{kind}:{self._suffix}"
        return [unit for unit in range(units) if keyed_uniform(prefix + str(unit)) < p]

    def fires_once(self, kind: str) -> bool:
        # Most kinds are off in most scenarios: answered without building a list.
        p = self._probabilities[kind]
        return p > 0 and keyed_uniform(f"{self._root_seed}:{kind}:{self._suffix}0") < p
