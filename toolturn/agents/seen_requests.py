"""What the mock model saw of one agent session's requests, as it answered them: the only view of
a user's runtime the harness has besides its `call_tool` calls.

`SeenRequest` is one request, filled in by `toolturn.agents.mock_transport` as its answer goes out:
its turn (from 1, as every table counts turns), attempt (counted by the mock from the session's
earlier requests of that turn), the pairing check's violations on arrival, the fault injected,
the events sent (their count, first time, tokens, message_stop) and each tool_use block sent with
the time its `content_block_stop` went out. Times are the virtual clock's.

The turn is the mock's turn index (from the transcript or `x-sim-turn`, from 0) plus 1, until the
session's process crashes (`SeenSession.restart`): a restarted agent's transcript is whatever it
persisted, so its indices may repeat the crashed turn's or earlier ones. After a restart the
first request's turn follows the last turn seen, and later ones count on from it by the mock's
index, so the session's turns never merge across a crash.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from toolturn.metrics.request_log import PENDING

# `status` of a request whose reader went away before its answer was over (the agent cancelled
# it: an interrupt, its own timeout).
CANCELLED = "cancelled"


@dataclass(slots=True)
class SentCall:
    """A tool_use block the mock sent: its id, name, input and when its block stopped."""

    tool_use_id: str
    name: str
    input: dict[str, Any]
    block_stop_ns: int
    # The Responses API's id of its function_call item (`toolturn.wire.openai_responses`: `fc_`,
    # the message id's suffix, the block's index), which an agent on that API may name it by.
    item_id: str = ""
    # Set when `call_tool` claimed it (`toolturn.agents.session`).
    claimed: bool = False


@dataclass(slots=True)
class SeenRequest:
    request_index: int  # from 1, in arrival order within the session
    turn_index: int  # from 1 (module docstring)
    attempt: int  # from 1
    model: str
    sent_ns: int
    violations: tuple[str, ...] = ()
    status: str = PENDING
    fault: str | None = None
    first_event_ns: int | None = None
    message_stop_ns: int | None = None
    end_ns: int | None = None
    n_events: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    stop_reason: str | None = None
    calls: list[SentCall] = field(default_factory=list)
    message_id: str = ""
    # Open tool_use blocks by their index in the message: (id, name, input JSON so far).
    _open: dict[int, tuple[str, str, list[str]]] = field(default_factory=dict)

    def sent_event(self, event: dict[str, Any], now_ns: int) -> None:
        """One stream event went out at `now_ns`."""
        if self.n_events == 0:
            self.first_event_ns = now_ns
        self.n_events += 1
        kind = event.get("type")
        if kind == "message_start":
            usage = event["message"].get("usage") or {}
            self.input_tokens = int(usage.get("input_tokens") or 0)
            self.message_id = str(event["message"].get("id", ""))
        elif kind == "content_block_start" and event["content_block"].get("type") == "tool_use":
            block = event["content_block"]
            self._open[event["index"]] = (block["id"], block["name"], [])
        elif kind == "content_block_delta" and event["index"] in self._open:
            self._open[event["index"]][2].append(event["delta"].get("partial_json", ""))
        elif kind == "content_block_stop" and event["index"] in self._open:
            tool_use_id, name, parts = self._open.pop(event["index"])
            item_id = f"fc_{self.message_id.removeprefix('msg_')}_{event['index']}"
            self.calls.append(SentCall(tool_use_id, name, _parsed("".join(parts)), now_ns,
                                       item_id))
        elif kind == "message_delta":
            usage = event.get("usage") or {}
            self.output_tokens = int(usage.get("output_tokens") or 0)
            self.stop_reason = (event.get("delta") or {}).get("stop_reason")
        elif kind == "message_stop":
            self.message_stop_ns = now_ns

    def ended(self, status: str | None, now_ns: int) -> None:
        """The answer is over at `now_ns`; `status` None keeps the one it has. The first end
        counts."""
        if self.end_ns is not None:
            return
        if status is not None:
            self.status = status
        self.end_ns = now_ns


def _parsed(text: str) -> dict[str, Any]:
    """A block's input as the client will parse it ({} when empty, as the API's SDKs read it;
    {} too for JSON a fault broke, which no call can match)."""
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


@dataclass(slots=True)
class SeenSession:
    """Every request of one session, in arrival order."""

    session_id: int
    requests: list[SeenRequest] = field(default_factory=list)
    # Told of each request on arrival, and of its first event (the simulated user's cues).
    on_arrival: Callable[[SeenRequest], None] | None = None
    on_first_event: Callable[[SeenRequest], None] | None = None
    # Told of each streamed answer as it is admitted: the request, its events and their end
    # (ns from admission), and the admission's time (the session's crash draws).
    on_stream: Callable[[SeenRequest, list[dict[str, Any]], int, int], None] | None = None
    # Since the last restart: the turns before it, and the mock's index of its first request
    # (None until one came).
    _turns_before: int = 0
    _first_index: int | None = None
    _restarted: bool = False

    def restart(self) -> None:
        """The agent's process crashed: the turns from here on follow the last one seen."""
        self._turns_before = self.requests[-1].turn_index if self.requests else 0
        self._first_index, self._restarted = None, True

    def arrived(self, mock_turn_index: int, attempt: int, model: str, now_ns: int,
                violations: tuple[str, ...]) -> SeenRequest:
        """A request the mock keyed as turn `mock_turn_index` (from 0) arrived."""
        if not self._restarted:
            turn = mock_turn_index + 1
        else:
            if self._first_index is None:
                self._first_index = mock_turn_index
            turn = self._turns_before + 1 + max(0, mock_turn_index - self._first_index)
        request = SeenRequest(len(self.requests) + 1, turn, attempt, model, now_ns, violations)
        self.requests.append(request)
        if self.on_arrival is not None:
            self.on_arrival(request)
        return request

    def sent_event(self, request: SeenRequest, event: dict[str, Any], now_ns: int) -> None:
        request.sent_event(event, now_ns)
        if request.n_events == 1 and self.on_first_event is not None:
            self.on_first_event(request)
