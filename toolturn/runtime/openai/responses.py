"""The Responses API stream accumulator: events in, the response out, and each output item
returned when its ``response.output_item.done`` comes (for a ``function_call``: the moment the
call is known complete, so an executor can start it at once).

Rules (events are the JSON of each SSE ``data:`` line, as dicts):

1. The first event must be ``response.created``; it sets the response. An ``error`` event may
   come at any point: it is kept in :attr:`errors` and ends nothing (the openai SDK passes it on
   and reads on; Codex CLI ignores one before the end).
2. ``response.output_item.added`` opens the item at ``output_index`` (an index may be used once).
   ``response.content_part.added`` adds a part to an open ``message``;
   ``response.output_text.delta`` appends to that part's text (an ``output_text`` part);
   ``response.function_call_arguments.delta`` appends to an open ``function_call``'s arguments.
   A delta for an index that is not open, or that does not fit its item, is a protocol violation.
   Every other event (the ``.done`` events of texts, parts and arguments, reasoning summaries,
   annotations, ``response.in_progress``...) changes nothing here, as in the SDK, which
   accumulates the same deltas: each item's ``.done`` event carries it whole.
3. ``response.output_item.done`` closes the item and returns it as an :class:`OutputItem`: the item
   as that event carries it (it is the API's word on the item), for a ``function_call`` with its
   ``arguments`` parsed, once (`input`, or `input_error`). It may come for an index never added
   (the SDK allows that too), never twice, and must keep the added item's type and id.
4. ``response.completed``, ``response.failed`` and ``response.incomplete`` end the stream: the
   response becomes the event's ``response`` (whose ``output``, when absent, is the done items;
   for failed and incomplete, the items as far as they came, as in the SDK). A completed
   response whose output lacks an item that was added but never done is a violation. After the
   end, every event but ``error`` is a violation.

An item open when the stream ends (a cut) is never returned as complete: `open_indices` lists it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from toolturn.runtime.openai.shared import parse_arguments
from toolturn.runtime.stream_events import StreamProtocolError, as_dict, describe

__all__ = ["OutputItem", "ResponsesAccumulator"]

_TERMINAL: Final = frozenset({"response.completed", "response.failed", "response.incomplete"})
_TEXT_DELTA: Final = "response.output_text.delta"
_ARGUMENTS_DELTA: Final = "response.function_call_arguments.delta"


@dataclass(frozen=True, slots=True)
class OutputItem:
    """One completed output item. For a ``function_call``, `input` is its parsed arguments, or
    None when they are not a JSON object (`input_error` says why); for other items both are
    None."""

    response_id: str
    output_index: int
    item: dict[str, Any]
    input: dict[str, Any] | None = None
    input_error: str | None = None

    @property
    def is_call(self) -> bool:
        """Whether the item is a ``function_call``: a call to start."""
        return bool(self.item.get("type") == "function_call")


class _OpenItem:
    """An added item and its deltas: text parts per content index, or the arguments' pieces,
    joined only when asked, so n deltas cost O(total length)."""

    __slots__ = ("arguments", "item", "texts")

    def __init__(self, item: dict[str, Any]) -> None:
        self.item = item
        self.texts: list[list[str]] = []  # a message's parts' texts, by content index
        self.arguments: list[str] | None = None
        if item.get("type") == "function_call":
            self.arguments = [item.get("arguments") or ""]
        elif item.get("type") == "message":
            content = item.setdefault("content", [])
            if type(content) is not list:
                raise StreamProtocolError(f"a message whose content is not a list: {content!r}")
            self.texts = [[str(part.get("text", ""))] for part in content]

    def snapshot(self) -> dict[str, Any]:
        item = dict(self.item)
        if self.arguments is not None:
            item["arguments"] = "".join(self.arguments)
        elif self.texts:
            content = [dict(part) for part in item["content"]]
            for part, texts in zip(content, self.texts, strict=True):
                if part.get("type") == "output_text":  # the only parts text deltas go to
                    part["text"] = "".join(texts)
            item["content"] = content
        return item


def _identity(item: Mapping[str, Any]) -> tuple[Any, Any]:
    """What may not change between an item's added and done events. A function call's id may be
    filled in only at done (the SDK allows it), so its call_id names it."""
    if item.get("type") == "function_call":
        return "function_call", item.get("call_id")
    return item.get("type"), item.get("id")


class ResponsesAccumulator:
    """Turns one response's stream events into one :class:`OutputItem` per done item and the final
    response. Feed events in order with :meth:`feed`; it raises :class:`StreamProtocolError` on an
    event that breaks the protocol (the accumulator is then unchanged). Sans-I/O: no clocks, no
    threads."""

    def __init__(self) -> None:
        self.response_id: str | None = None
        self.started = False
        self.finished = False
        self.status: str | None = None  # the terminal event's: completed, failed, incomplete
        self.errors: list[dict[str, Any]] = []
        self.completed: list[OutputItem] = []
        self._response: dict[str, Any] = {}
        self._open: dict[int, _OpenItem] = {}
        self._done: dict[int, OutputItem] = {}
        self._live = False  # started and not finished

    @property
    def open_indices(self) -> tuple[int, ...]:
        """Indices of items added but not done, ascending (after a cut: the lost items)."""
        return tuple(sorted(self._open))

    def open_item(self, index: int) -> dict[str, Any]:
        """The item at `index` as far as its deltas came (KeyError: it is not open)."""
        return self._open[index].snapshot()

    def response(self) -> dict[str, Any]:
        """The final response once the stream ended; before, the response so far with the done
        items only as its output."""
        response = dict(self._response)
        if not self.finished:
            response["output"] = [self._done[index].item for index in sorted(self._done)]
        return response

    def feed(self, event: Mapping[str, Any] | Any) -> OutputItem | None:
        """Apply one event; returns the item on its output_item.done, else None."""
        if type(event) is not dict:
            event = as_dict(event)
        try:
            kind = event["type"]
            if (kind == _TEXT_DELTA or kind == _ARGUMENTS_DELTA) and self._live:
                self._delta(kind, event)
                return None
            if kind == "error":
                self.errors.append(dict(event))
                return None
            if not self._live:
                self._check_can_start(kind, event)
            if kind == "response.output_item.done":
                return self._item_done(event)
            if kind == "response.output_item.added":
                self._item_added(event)
            elif kind == "response.content_part.added":
                self._part_added(event)
            elif kind in _TERMINAL:
                self._end(kind, event)
            elif kind == "response.created":
                self._created(event)
            # every other event: nothing to do (rule 2)
            return None
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise StreamProtocolError(
                f"malformed {event.get('type', 'untyped')!s} event ({error!r}): {describe(event)}"
            ) from None

    def _check_can_start(self, kind: str, event: dict[str, Any]) -> None:
        if self.finished:
            raise StreamProtocolError(f"an event after the response ended: {describe(event)}")
        if kind != "response.created":
            raise StreamProtocolError(
                f"the first event must be response.created, got {kind}: {describe(event)}"
            )

    def _created(self, event: dict[str, Any]) -> None:
        if self.started:
            raise StreamProtocolError(f"a second response.created: {describe(event)}")
        response = event["response"]
        if type(response) is not dict:
            raise StreamProtocolError(f"response.created without a response: {describe(event)}")
        self._response = dict(response)
        self.response_id = response.get("id")
        self.started = self._live = True

    def _item_added(self, event: dict[str, Any]) -> None:
        item = event.get("item")
        if item is None:  # an empty added event: the SDK skips it too
            return
        index = event["output_index"]
        if type(index) is not int or type(item) is not dict:
            raise StreamProtocolError(f"an added item without index or item: {describe(event)}")
        if index in self._open or index in self._done:
            raise StreamProtocolError(f"output index {index} added twice: {describe(event)}")
        self._open[index] = _OpenItem(copy.deepcopy(item))

    def _part_added(self, event: dict[str, Any]) -> None:
        state = self._open_at(event)
        if state.item.get("type") != "message":
            return  # the SDK keeps parts of messages only
        part = dict(event["part"])
        state.item["content"].append(part)
        state.texts.append([str(part.get("text", ""))])

    def _delta(self, kind: str, event: dict[str, Any]) -> None:
        state = self._open_at(event)
        piece = event["delta"]
        if type(piece) is not str:
            raise StreamProtocolError(f"a delta that is not a string: {describe(event)}")
        if kind == _ARGUMENTS_DELTA:
            if state.arguments is None:
                raise StreamProtocolError(
                    f"arguments for an item that is not a function_call: {describe(event)}"
                )
            state.arguments.append(piece)
            return
        content_index = event["content_index"]
        item = state.item
        if item.get("type") != "message":
            raise StreamProtocolError(f"text for an item that is not a message: {describe(event)}")
        if type(content_index) is not int or not 0 <= content_index < len(state.texts):
            raise StreamProtocolError(f"text for a part never added: {describe(event)}")
        if item["content"][content_index].get("type") != "output_text":
            raise StreamProtocolError(f"text for a part that is not output_text: {describe(event)}")
        state.texts[content_index].append(piece)

    def _open_at(self, event: dict[str, Any]) -> _OpenItem:
        index = event["output_index"]
        state = self._open.get(index)
        if state is None:
            where = "already done" if index in self._done else "never added"
            raise StreamProtocolError(
                f"{event['type']} for output index {index}, which is {where}: {describe(event)}"
            )
        return state

    def _item_done(self, event: dict[str, Any]) -> OutputItem:
        index, item = event["output_index"], event["item"]
        if type(index) is not int or type(item) is not dict:
            raise StreamProtocolError(f"a done item without index or item: {describe(event)}")
        if index in self._done:
            raise StreamProtocolError(f"output index {index} done twice: {describe(event)}")
        state = self._open.get(index)
        if state is not None and _identity(state.item) != _identity(item):
            raise StreamProtocolError(
                f"output index {index} changed its type or id at done: {describe(event)}"
            )
        parsed = error = None
        if item.get("type") == "function_call":
            arguments = item.get("arguments")
            if type(arguments) is not str:
                raise StreamProtocolError(f"a function_call without arguments: {describe(event)}")
            parsed, error = parse_arguments(arguments)
        item = copy.deepcopy(item)
        self._open.pop(index, None)
        assert self.response_id is not None  # items come only after response.created
        done = OutputItem(self.response_id, index, item, parsed, error)
        self._done[index] = done
        self.completed.append(done)
        return done

    def _end(self, kind: str, event: dict[str, Any]) -> None:
        response = event["response"]
        if type(response) is not dict:
            raise StreamProtocolError(f"{kind} without a response: {describe(event)}")
        if response.get("id") != self.response_id:
            raise StreamProtocolError(f"{kind} for another response id: {describe(event)}")
        response = dict(response)
        output = response.get("output")
        if kind == "response.completed":
            final = {_identity(item) for item in output or () if isinstance(item, dict)}
            lost = [index for index, state in self._open.items()
                    if _identity(state.item) not in final]
            if lost:
                raise StreamProtocolError(
                    f"response.completed with items never done (output index {lost}): "
                    f"{describe(event)}"
                )
        if output is None:
            response["output"] = self._items_so_far(with_open=kind != "response.completed")
        self._response = response
        self.status = kind.removeprefix("response.")
        self.finished, self._live = True, False

    def _items_so_far(self, with_open: bool) -> list[dict[str, Any]]:
        items = {index: done.item for index, done in self._done.items()}
        if with_open:
            for index, state in self._open.items():
                items.setdefault(index, state.snapshot())
        return [items[index] for index in sorted(items)]
