"""What a probe's client sent and what it was answered, request by request: the material the
probe's classes are read from (`toolturn.probe.verdicts`).

The recording (`toolturn.wire.recorder`) keeps tables, not bodies. A probe needs each request's
body whole (was the cut call kept? its result sent? a resume message? `stream: false`?) and the
answer the server meant to send (which blocks it carried, which completed). `ExchangeTap` is the
server's recorder (the recording's rows go on as ever) and wraps the case's rewrite, so it sees
both without a hook of its own in the server.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolturn.model.response import Response, StreamResponse, Turn
from toolturn.wire.codecs import ANTHROPIC
from toolturn.wire.recorder import Recorder

Rewrite = Callable[[Turn, Response], Response]


@dataclass(slots=True)
class Exchange:
    """One request to the Messages endpoint and what it was answered."""

    index: int  # the recording's request_index
    turn: Turn | None  # None: refused before the model saw it
    raw: bytes
    body: dict[str, Any]  # {} when the bytes were not a JSON object
    violations: tuple[str, ...]  # our pairing verdict: non-empty means a 400
    # The answer as planned, fault applied (None for a 400: the rewrite never sees one).
    response: Response | None = None
    faulted: bool = False  # the case's fault struck this answer
    # Block index -> the block as far as the answer carries it (type, id, name, text).
    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    completed: set[int] = field(default_factory=set)  # blocks whose content_block_stop went

    @property
    def streamed(self) -> bool:
        return self.body.get("stream") is True

    @property
    def session(self) -> int | None:
        return None if self.turn is None else self.turn.session_id


class ExchangeTap(Recorder):
    """A `Recorder` that also keeps every exchange whole (`exchanges`), for one probe run."""

    def __init__(self, give_up_ns: int, rewrite: Rewrite, struck: Callable[[Turn], bool]) -> None:
        super().__init__(give_up_ns)
        self._rewrite = rewrite
        self._struck = struck
        self._lock = threading.Lock()  # the server thread writes, the runner reads after
        self._exchanges: list[Exchange] = []
        self._by_turn: dict[Turn, Exchange] = {}

    def refused(self, arrival_ns: int, status: int, message: str, *,
                protocol: str = ANTHROPIC) -> None:
        super().refused(arrival_ns, status, message, protocol=protocol)
        with self._lock:
            self._exchanges.append(Exchange(len(self._exchanges), None, b"", {}, (message,)))

    def arrived(self, arrival_ns: int, turn: Turn, model: str, messages: list[Any],
                raw: bytes, violations: Sequence[str], *, protocol: str = ANTHROPIC) -> int:
        index = super().arrived(arrival_ns, turn, model, messages, raw, violations,
                                protocol=protocol)
        # `messages` is the conversation as the model sees it: a Messages body's own list, and
        # an OpenAI request's (Responses `input`, Chat `messages`) in the Messages shape, which
        # the classes read (`toolturn.wire.codecs`).
        body = {**_body(raw), "messages": messages}
        exchange = Exchange(len(self._exchanges), turn, raw, body, tuple(violations))
        with self._lock:
            self._exchanges.append(exchange)
            self._by_turn[turn] = exchange
        return index

    def rewrite(self, turn: Turn, response: Response) -> Response:
        """The case's rewrite, with the answer kept beside the request it answers."""
        answer = self._rewrite(turn, response)
        with self._lock:
            exchange = self._by_turn.get(turn)
            if exchange is not None:
                exchange.response = answer
                exchange.faulted = self._struck(turn)
                if isinstance(answer, StreamResponse):
                    exchange.blocks, exchange.completed = carried_blocks(answer.events)
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


def carried_blocks(events: Sequence[dict[str, Any]]) -> tuple[dict[int, dict[str, Any]], set[int]]:
    """The content blocks a stream's events carry, and which of them stop."""
    blocks: dict[int, dict[str, Any]] = {}
    completed: set[int] = set()
    for event in events:
        index, kind = event.get("index"), event.get("type")
        if not isinstance(index, int):
            continue
        if kind == "content_block_start":
            block = event.get("content_block") or {}
            blocks[index] = {"type": block.get("type"), "id": block.get("id"),
                             "name": block.get("name"), "text": block.get("text") or ""}
        elif kind == "content_block_delta" and index in blocks:
            delta = event.get("delta") or {}
            if delta.get("type") == "text_delta":
                blocks[index]["text"] += delta.get("text", "")
        elif kind == "content_block_stop":
            completed.add(index)
    return blocks, completed
