"""Who is asking: the `Turn` (session, turn, attempt) that keys the mock model's draws for a
request arriving over HTTP.

- Session: the `x-sim-session` header, if given. A decimal number is used as the session id
  itself (so `x-sim-session: 7` gets the draws the simulator gives session 7); any other text
  is hashed to a stable id. Without the header, each request is a session of its own, numbered
  1, 2, ... in order of arrival.
- Turn index: the number of assistant messages in the request (0 for the first turn), which is
  how many turns the conversation has had; or the `x-sim-turn` header, a decimal number, when a
  client counts its turns itself (`sim live` does: a turn interrupted before any block completed
  leaves no assistant message, so the count would give the next turn the interrupted one's index).
- Attempt: 1 plus how many earlier requests of the same session had the same turn index, so
  that a retry gets fresh draws instead of replaying the failure it retries. Counted from 1 as
  the simulator's loop counts them (`SendRequest.attempt`), so a served request gets the draws
  of its simulated twin. Only sessions named by the header are tracked; an unnamed request is
  always attempt 1. Only each session's latest turn
  is remembered (a request for an earlier turn starts its count again), and only the
  `TRACKED_SESSIONS` sessions heard from most recently: a server that runs for days keeps
  bounded memory, and a session silent for that many others' requests starts again at 1.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Any

from sim.model.response import Turn

SESSION_HEADER = "x-sim-session"
TURN_HEADER = "x-sim-turn"
TRACKED_SESSIONS = 100_000
# The attempt number of a turn's first request (the loop's: retries are 2, 3, ...).
FIRST_ATTEMPT = 1


def session_id_from_header(value: str) -> int:
    """The session id a header value names: its number, or a stable 63-bit hash of its text."""
    text = value.strip()
    if text.isdecimal() and text.isascii():
        return int(text)
    digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
    # A hashed id has the top bit set, so it never equals a plain number below 2**63.
    return int.from_bytes(digest, "big") | (1 << 63)


def assistant_messages(messages: Any) -> int:
    """How many messages of a request's `messages` list are the assistant's."""
    if not isinstance(messages, list):
        return 0
    return sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")


class TurnIdentities:
    """Hands each request its `Turn`; remembers the attempts of header-named sessions."""

    def __init__(self, tracked_sessions: int = TRACKED_SESSIONS) -> None:
        self._unnamed = 0
        self._tracked = tracked_sessions
        # session id -> (its latest turn index, its latest attempt), least recent first
        self._attempts: OrderedDict[int, tuple[int, int]] = OrderedDict()

    def turn_for(
        self, session_header: str | None, messages: Any, turn_header: str | None = None
    ) -> Turn:
        """The identity of a request carrying `session_header` and `turn_header` (None: absent)
        and `messages`."""
        turn_text = (turn_header or "").strip()
        if turn_text.isdecimal() and turn_text.isascii():
            turn_index = int(turn_text)
        else:
            turn_index = assistant_messages(messages)
        if session_header is None:
            self._unnamed += 1
            return Turn(self._unnamed, turn_index, FIRST_ATTEMPT)
        session_id = session_id_from_header(session_header)
        latest = self._attempts.pop(session_id, None)
        same_turn = latest is not None and latest[0] == turn_index
        attempt = latest[1] + 1 if latest is not None and same_turn else FIRST_ATTEMPT
        self._attempts[session_id] = (turn_index, attempt)
        if len(self._attempts) > self._tracked:
            self._attempts.popitem(last=False)
        return Turn(session_id, turn_index, attempt)
