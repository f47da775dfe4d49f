"""What a probe's client sent and what was written to it, request by request: the material the
probe's classes are read from (`toolturn.probe.verdicts`).

The recording (`toolturn.wire.recorder`) keeps tables, not bodies. A probe needs each request's
body whole (was the cut call kept? its result sent? a resume message? `stream: false`?) and the
calls its answer put on the socket (`toolturn.wire.sent`: what was written, not the plan: a
client that leaves a stall after the text never got the call planned behind it).
`ExchangeTap` is the server's recorder (the recording's rows go on as ever) and wraps the case's
rewrite, so it sees both without a hook of its own in the server; it keeps the recording's own
recovery class of each faulted request, so the scorecard and the recording say the same.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolturn.model.response import Response, Turn
from toolturn.wire.codecs import ANTHROPIC
from toolturn.wire.next_step import Asked, WrittenCall
from toolturn.wire.recorder import Recorder
from toolturn.wire.sent import SentCall

Rewrite = Callable[[Turn, Response], Response]


@dataclass(slots=True)
class Exchange:
    """One request to the model's endpoint and what was written back."""

    index: int  # the recording's request_index
    turn: Turn | None  # None: refused before the model saw it
    raw: bytes
    body: dict[str, Any]  # {} when the bytes were not a JSON object
    violations: tuple[str, ...]  # our pairing verdict: non-empty means a 400
    faulted: bool = False  # the case's fault struck this answer
    # The tool_use blocks the answer wrote, in order, and whether each block's stop went out.
    written: list[WrittenCall] = field(default_factory=list)
    recovery: str | None = None  # the recording's class of a faulted answer, once decided

    @property
    def streamed(self) -> bool:
        return self.body.get("stream") is True

    @property
    def session(self) -> int | None:
        return None if self.turn is None else self.turn.session_id

    def asked(self) -> Asked:
        """The request as the classes read it (its bytes stand for their digest)."""
        messages = self.body.get("messages")
        return Asked(self.raw, messages if isinstance(messages, list) else [], self.streamed,
                     bool(self.violations))


class ExchangeTap(Recorder):
    """A `Recorder` that also keeps every exchange whole (`exchanges`), for one probe run."""

    def __init__(self, give_up_ns: int, rewrite: Rewrite, struck: Callable[[Turn], bool]) -> None:
        super().__init__(give_up_ns)
        self._rewrite = rewrite
        self._struck = struck
        self._lock = threading.Lock()  # the server thread writes, the runner reads after
        self._exchanges: list[Exchange] = []
        self._by_turn: dict[Turn, Exchange] = {}
        self._by_index: dict[int, Exchange] = {}

    def refused(self, arrival_ns: int, status: int, message: str, *,
                protocol: str = ANTHROPIC) -> None:
        super().refused(arrival_ns, status, message, protocol=protocol)
        with self._lock:
            self._exchanges.append(Exchange(len(self._exchanges), None, b"", {}, (message,)))

    def arrived(self, arrival_ns: int, turn: Turn, model: str, messages: list[Any],
                raw: bytes, violations: Sequence[str], *, protocol: str = ANTHROPIC,
                streamed: bool = False) -> int:
        index = super().arrived(arrival_ns, turn, model, messages, raw, violations,
                                protocol=protocol, streamed=streamed)
        # `messages` is the conversation as the model sees it: a Messages body's own list, and
        # an OpenAI request's (Responses `input`, Chat `messages`) in the Messages shape, which
        # the classes read (`toolturn.wire.codecs`).
        body = {**_body(raw), "messages": messages, "stream": streamed}
        exchange = Exchange(index, turn, raw, body, tuple(violations))
        with self._lock:
            self._exchanges.append(exchange)
            self._by_turn[turn] = exchange
            self._by_index[index] = exchange
        return index

    def answered(self, index: int, *, status: int | None, ending: str, faults: Sequence[str],
                 end_ns: int, calls: Sequence[SentCall] = (), message_stop_ns: int | None = None,
                 first_byte_ns: int | None = None, bytes_sent: int = 0) -> None:
        with self._lock:
            exchange = self._by_index.get(index)
            if exchange is not None:  # before the recording decides its recovery with them
                exchange.written = [WrittenCall(call.tool_use_id, call.block_stop_ns is not None)
                                    for call in calls]
        super().answered(index, status=status, ending=ending, faults=faults, end_ns=end_ns,
                         calls=calls, message_stop_ns=message_stop_ns,
                         first_byte_ns=first_byte_ns, bytes_sent=bytes_sent)

    def recovered(self, index: int, recovery: str) -> None:
        with self._lock:
            exchange = self._by_index.get(index)
            if exchange is not None:
                exchange.recovery = recovery

    def rewrite(self, turn: Turn, response: Response) -> Response:
        """The case's rewrite, noting whether its fault struck the answer."""
        answer = self._rewrite(turn, response)
        with self._lock:
            exchange = self._by_turn.get(turn)
            if exchange is not None:
                exchange.faulted = self._struck(turn)
        return answer

    @property
    def exchanges(self) -> list[Exchange]:
        with self._lock:
            return list(self._exchanges)


def _body(raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw)
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}
