"""Who is asking: the `Turn` (session, turn, attempt) that keys the mock model's draws for a
request arriving over HTTP.

1. Session, named by the client: the `x-sim-session` header. A decimal number below 2**63 is
   the session id itself (so `x-sim-session: 7` gets the draws the simulator gives session 7);
   any other text (a longer number included: Python refuses to read one of more than 4,300
   digits) is hashed to a stable id with the top bit set, which no plain number has.
2. Session, found from the conversation: without our header, the id is a hash of the client's
   own session header (`x-claude-code-session-id`, if sent), the request's `metadata.user_id`
   and its first user message (without `cache_control` markers, which a client moves from
   request to request). Every request of one conversation has the same first message, so it
   gets the same session; two conversations of one client session (a sub-agent beside its
   parent) start differently and do not mix.
2a. Client run: the `x-sim-run` header, any text, names the client run a request is part of
   (`toolturn live` sends its unit's label, `streaming [claude-code]`): two runs against one
   server (two policies, each with its sessions 0 to 3) are different sessions for the attempt
   count (rule 4) and the recording (`ServedTurn.recorded_session_id`, a hash of the run and
   the session), but the same for the draws: every run's session 7 gets the draws of the
   simulator's session 7, as every policy of a simulation does. Without the header the recorded
   session is the session.
3. Turn: the `Turn`'s `turn_index` is the model's key of the turn's draws, from 0, as the
   simulator keys them (its turn 1 is key 0). It is the number of assistant messages in the
   request (0 for the first turn), which is how many turns the conversation has had; or, when
   a client counts its turns itself, the `x-sim-turn` header's turn number, a decimal number
   from 1 as every table counts turns (`x-sim-turn: 1` is key 0; a value that is not such a
   number, 0 included, is not read). `toolturn live` sends it: a turn interrupted before any
   block completed leaves no assistant message, so the count would give the next turn the
   interrupted one's key. `turn_number` is the turn's number from 1, as the header, the
   recording and the server's log say it.
4. Attempt: 1 for the first request of a (recorded) session's turn, 2 for the next with the
   same turn index, and so on, as the simulator numbers attempts (`SendRequest.attempt`): a
   retry gets fresh draws instead of replaying the failure it retries, and a served request
   gets the draws of its simulated twin. Only each session's latest turn is remembered (a
   request for an earlier turn starts its count again), and only the `TRACKED_SESSIONS`
   sessions heard from most recently: a server that runs for days keeps bounded memory, and a
   session silent for that many others' requests starts again at 1.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolturn.model.response import Turn

SESSION_HEADER = "x-sim-session"
RUN_HEADER = "x-sim-run"
TURN_HEADER = "x-sim-turn"
CLIENT_SESSION_HEADER = "x-claude-code-session-id"
# Sessions whose attempts are remembered, least recent dropped first: far more than any client
# runs at once, and few enough that the map stops growing within a recording's first minutes
# (about 200 bytes a session: 100,000 of them grew a 20-minute recording by 10%).
TRACKED_SESSIONS = 10_000
FIRST_ATTEMPT = 1
FIRST_TURN = 1  # a turn's number (header, recording, log) for the model's key 0
_HASHED_BIT = 1 << 63


def _hashed(text: str) -> int:
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") | _HASHED_BIT


@dataclass(frozen=True, slots=True, eq=False)
class ServedTurn(Turn):
    """A served request's `Turn` (its fields key the model's draws) and the session the
    recording keeps it under: the session itself, or one per client run (rule 2a). It is
    the `Turn` of the same fields, equal to it: the recorded session is a label, no key."""

    recorded_session_id: int = 0

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Turn):
            return NotImplemented
        return (self.session_id, self.turn_index, self.attempt) == (
            other.session_id, other.turn_index, other.attempt)

    def __hash__(self) -> int:
        return hash((self.session_id, self.turn_index, self.attempt))


def turn_number(turn: Turn) -> int:
    """The turn's number from 1 (rule 3), as the recording and `x-sim-turn` count turns."""
    return turn.turn_index + FIRST_TURN


def recorded_session_id(turn: Turn) -> int:
    """The session a recording keeps `turn`'s request under (a plain `Turn`: its session)."""
    return turn.recorded_session_id if isinstance(turn, ServedTurn) else turn.session_id


def session_id_from_header(value: str) -> int:
    """The session id a header value names: its number, or a stable 63-bit hash of its text."""
    text = value.strip()
    # 19 digits hold every number below 2**63; only then is `int` asked (rule 1).
    if text.isdecimal() and text.isascii() and len(text) <= 19 and int(text) < _HASHED_BIT:
        return int(text)
    return _hashed(text)


def _without_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_cache_control(item) for item in value]
    return value


def conversation_session_id(headers: Mapping[str, str], body: Mapping[str, Any]) -> int:
    """The session id of a request without our header (rule 2)."""
    messages = body.get("messages")
    first = next(
        (m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == "user"),
        None,
    ) if isinstance(messages, list) else None
    metadata = body.get("metadata")
    user_id = metadata.get("user_id") if isinstance(metadata, dict) else None
    key = json.dumps(
        [headers.get(CLIENT_SESSION_HEADER, ""), user_id, _without_cache_control(first)],
        sort_keys=True, ensure_ascii=True, separators=(",", ":"),
    )
    return _hashed(key)


def assistant_messages(messages: Any) -> int:
    """How many messages of a request's `messages` list are the assistant's."""
    if not isinstance(messages, list):
        return 0
    return sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")


class TurnIdentities:
    """Hands each request its `Turn`; remembers the attempts of recent sessions."""

    def __init__(self, tracked_sessions: int = TRACKED_SESSIONS) -> None:
        self._tracked = tracked_sessions
        # session id -> (its latest turn index, requests seen for it), least recent first
        self._attempts: OrderedDict[int, tuple[int, int]] = OrderedDict()

    def session_for(self, headers: Mapping[str, str], body: Mapping[str, Any]) -> int:
        """The session a request belongs to (rules 1 and 2). `headers` in lower case."""
        named = headers.get(SESSION_HEADER)
        if named is not None:
            return session_id_from_header(named)
        return conversation_session_id(headers, body)

    def turn_for(self, headers: Mapping[str, str], body: Mapping[str, Any]) -> ServedTurn:
        """The identity of a request with these `headers` (names in lower case) and `body`."""
        session_id = self.session_for(headers, body)
        run = headers.get(RUN_HEADER)
        # Rule 2a: the run and the session as the client named them (a session found from
        # the conversation by its id), hashed as any named session is.
        recorded = session_id if run is None else _hashed(
            json.dumps([run, headers.get(SESSION_HEADER, str(session_id))], ensure_ascii=True)
        )
        return self.turn_of(session_id, body.get("messages"), headers.get(TURN_HEADER), recorded)

    def turn_of(
        self,
        session_id: int,
        messages: Any,
        turn_header: str | None = None,
        recorded_session: int | None = None,
    ) -> ServedTurn:
        """The identity of the next request of `session_id` carrying `messages` and the
        `x-sim-turn` header's value `turn_header` (a turn number from 1; None: absent; rule 3),
        recorded under
        `recorded_session` (None: `session_id`), whose attempts are counted (rule 4)."""
        turn_text = (turn_header or "").strip()
        if (turn_text.isdecimal() and turn_text.isascii() and len(turn_text) <= 19
                and int(turn_text) >= FIRST_TURN):
            turn_index = int(turn_text) - FIRST_TURN
        else:
            turn_index = assistant_messages(messages)
        recorded = session_id if recorded_session is None else recorded_session
        latest = self._attempts.pop(recorded, None)
        seen = latest[1] if latest is not None and latest[0] == turn_index else 0
        self._attempts[recorded] = (turn_index, seen + 1)
        if len(self._attempts) > self._tracked:
            self._attempts.popitem(last=False)
        return ServedTurn(session_id, turn_index, FIRST_ATTEMPT + seen, recorded)
