"""The Chat Completions stream accumulator: chunks in, the ``chat.completion`` out, and each tool
call reported the moment the stream lets it be known complete.

Rules (a chunk is the JSON of one SSE ``data:`` line, as a dict; ``"[DONE]"``, the last line's
text, is passed as that string):

1. The first chunk sets the completion's ``id``, ``created``, ``model`` and any other top-level
   field it carries (``service_tier``...); ``object`` becomes ``chat.completion``. Every chunk
   then sets ``usage`` and ``system_fingerprint`` (a chunk without them sets null), as the openai
   SDK does: the usage chunk of ``stream_options.include_usage`` is the last one.
2. Each ``choices[]`` entry adds to the choice of its ``index`` (several with ``n > 1``).
   ``delta.content`` and ``delta.refusal`` append (a null leaves what came); ``tool_calls``
   entries add to the call of their ``index``: ``function.arguments`` appends, every other field
   follows the SDK's merge (`merge.merge_delta`: ``id`` and ``name`` come whole). Other delta
   fields (``role``, the deprecated ``function_call``, ``audio``...) follow the same merge.
   ``logprobs`` lists extend; a truthy ``finish_reason`` sets it.
3. When a call is known complete, `feed` returns a `CallNotice` of kind ``complete`` for it:
   when a tool_calls entry of the next ``index`` begins (calls come in index order, from 0), or
   when the choice's ``finish_reason`` comes. A call's arguments are parsed then, once.
   An entry for a call already known complete, or one that skips an index, is a protocol
   violation: it would turn a start made on that knowledge into a wrong one.
4. With ``speculative=True`` (``chat_start = "at_parsed_json"``) `feed` also returns a notice of
   kind ``parsed`` on the chunk after which a call's arguments so far first parse as a JSON
   object, and ``changed`` if more than whitespace follows (a start made at ``parsed`` was a
   misfire). Linear: see `object_watch`.
5. ``{"error": {...}}`` ends the stream, kept in :attr:`error`; ``[DONE]`` ends it too. After
   either, every chunk is a violation. A chunk whose ``object`` is not ``chat.completion.chunk``
   is skipped, as the SDK skips Azure's content-filter chunks.

A call open when the stream ends (a cut) is never reported complete: `open_calls` lists it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from toolturn.runtime.openai.merge import merge_delta
from toolturn.runtime.openai.object_watch import ObjectWatch
from toolturn.runtime.openai.shared import parse_arguments
from toolturn.runtime.stream_events import StreamProtocolError, as_dict, describe

__all__ = ["DONE", "CallNotice", "ChatAccumulator", "ChatCall"]

DONE: Final = "[DONE]"
_CHUNK: Final = "chat.completion.chunk"
_NO_NOTICES: tuple[CallNotice, ...] = ()


@dataclass(frozen=True, slots=True)
class ChatCall:
    """One tool call of choice `choice`, as far as it came: `call` is API-shaped (``id``,
    ``type``, ``function: {name, arguments}``). `input` is the parsed arguments, None when they
    are not a JSON object (then `input_error` says why); a call's parsed and complete notices
    share one `input` object when its arguments did not change between them."""

    choice: int
    index: int
    call: dict[str, Any]
    input: dict[str, Any] | None
    input_error: str | None

    @property
    def id(self) -> str:
        """The call's id ("" if the stream never sent one)."""
        return str(self.call.get("id") or "")

    @property
    def name(self) -> str:
        """The function's name ("" if the stream never sent one)."""
        return str((self.call.get("function") or {}).get("name") or "")


@dataclass(frozen=True, slots=True)
class CallNotice:
    """What one chunk made known about a call (rules 3 and 4)."""

    kind: Literal["complete", "parsed", "changed"]
    call: ChatCall


class _Call:
    """One call's state: its fields but the arguments, and the arguments' pieces."""

    __slots__ = ("arguments", "fields", "watch")

    def __init__(self, speculative: bool) -> None:
        self.fields: dict[str, Any] = {}
        self.arguments: list[str] = []
        self.watch = ObjectWatch(self.arguments) if speculative else None

    def api(self) -> dict[str, Any]:
        call = dict(self.fields)
        function = dict(call.get("function") or {})
        function["arguments"] = "".join(self.arguments)
        call["function"] = function
        return call


class _Choice:
    __slots__ = ("calls", "content", "done", "finish_reason", "index", "logprobs", "message",
                 "refusal")

    def __init__(self, index: int) -> None:
        self.index = index
        self.message: dict[str, Any] = {}  # the fields rule 2 merges the SDK's way
        self.content: list[str] | None = None
        self.refusal: list[str] | None = None
        self.calls: list[_Call] = []
        self.done = 0  # calls[:done] were reported complete
        self.finish_reason: str | None = None
        self.logprobs: dict[str, Any] | None = None

    def api(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", **self.message}
        message["content"] = None if self.content is None else "".join(self.content)
        message["refusal"] = None if self.refusal is None else "".join(self.refusal)
        if self.calls:
            message["tool_calls"] = [call.api() for call in self.calls]
        return {"index": self.index, "message": message, "logprobs": self.logprobs,
                "finish_reason": self.finish_reason}


class ChatAccumulator:
    """Turns one Chat Completions stream into its ``chat.completion`` (`completion`) and the
    calls' notices (`feed`'s answers). Raises :class:`StreamProtocolError` on a chunk that breaks
    the protocol; that chunk may be partly applied (a chunk is many entries), so from then on
    every chunk is refused: `broken` says why. Sans-I/O: no clocks, no threads."""

    def __init__(self, speculative: bool = False) -> None:
        self.speculative = speculative
        self.started = False
        self.finished = False  # [DONE] came
        self.error: dict[str, Any] | None = None
        self.broken: str | None = None  # the violation that ended the stream
        self.completed: list[ChatCall] = []  # every call reported complete, in report order
        self._head: dict[str, Any] = {}
        self._choices: dict[int, _Choice] = {}

    def feed(self, chunk: Mapping[str, Any] | str | Any) -> tuple[CallNotice, ...]:
        """Apply one chunk; return the notices it makes (usually none)."""
        if self.finished or self.error is not None or self.broken is not None:
            self._refuse(chunk)
        if chunk == DONE:
            self.finished = True
            return _NO_NOTICES
        try:
            return self._chunk(chunk if type(chunk) is dict else as_dict(chunk))
        except StreamProtocolError as error:
            self.broken = str(error)
            raise

    def _refuse(self, chunk: Any) -> None:
        if self.broken is not None:
            ended_by = f"a protocol violation ({self.broken})"
        else:
            ended_by = DONE if self.finished else "an error"
        raise StreamProtocolError(f"a chunk after {ended_by}: {describe(chunk)}")

    def _chunk(self, chunk: dict[str, Any]) -> tuple[CallNotice, ...]:
        try:
            if chunk.get("error"):
                self.error = dict(chunk["error"])
                return _NO_NOTICES
            if chunk.get("object") != _CHUNK:
                return _NO_NOTICES
            if not self.started:
                self._start(chunk)
            notices: tuple[CallNotice, ...] = _NO_NOTICES
            for entry in chunk["choices"]:
                found = self._choice(entry)
                if found:
                    notices += found
            self._head["usage"] = chunk.get("usage")
            self._head["system_fingerprint"] = chunk.get("system_fingerprint")
            return notices
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise StreamProtocolError(f"malformed chunk ({error!r}): {describe(chunk)}") from None

    @property
    def open_calls(self) -> tuple[tuple[int, int], ...]:
        """(choice, index) of every call not known complete, in order (after a cut: lost)."""
        return tuple(
            (choice.index, index)
            for choice in sorted(self._choices.values(), key=_choice_index)
            for index in range(choice.done, len(choice.calls))
        )

    def completion(self) -> dict[str, Any]:
        """The ``chat.completion`` so far, every call included (its arguments as far as they
        came; `open_calls` says which are not known complete)."""
        completion = dict(self._head)
        completion["choices"] = [
            choice.api() for choice in sorted(self._choices.values(), key=_choice_index)
        ]
        return completion

    def _start(self, chunk: dict[str, Any]) -> None:
        head = {key: value for key, value in chunk.items() if key not in ("choices", "obfuscation")}
        head["object"] = "chat.completion"
        head.setdefault("system_fingerprint", None)
        self._head = head
        self.started = True

    def _choice(self, entry: dict[str, Any]) -> tuple[CallNotice, ...]:
        index = entry["index"]
        choice = self._choices.get(index)
        if choice is None:
            if type(index) is not int:
                raise StreamProtocolError(
                    f"a choice index that is not an integer: {describe(entry)}"
                )
            choice = self._choices[index] = _Choice(index)
        delta = entry["delta"]
        notices: tuple[CallNotice, ...] = _NO_NOTICES
        for key, value in delta.items():
            if value is None:
                continue
            if key == "content":
                choice.content = _appended(choice.content, value, entry)
            elif key == "tool_calls":
                notices = self._tool_calls(choice, value, entry)
            elif key == "refusal":
                choice.refusal = _appended(choice.refusal, value, entry)
            else:
                merge_delta(choice.message, {key: value})
        logprobs = entry.get("logprobs")
        if logprobs is not None:
            _add_logprobs(choice, logprobs)
        finish = entry.get("finish_reason")
        if finish:
            choice.finish_reason = finish
            notices += self._complete(choice, len(choice.calls))
        return notices

    def _tool_calls(
        self, choice: _Choice, entries: list[dict[str, Any]], chunk_entry: dict[str, Any]
    ) -> tuple[CallNotice, ...]:
        notices: tuple[CallNotice, ...] = _NO_NOTICES
        calls = choice.calls
        for entry in entries:
            index = entry["index"]
            if index == len(calls) and type(index) is int:
                notices += self._complete(choice, index)
                calls.append(_Call(self.speculative))
            elif index != len(calls) - 1 or index < choice.done:
                state = "was known complete" if index < len(calls) else "skips an index"
                raise StreamProtocolError(
                    f"tool call index {index!r} of choice {choice.index}, which {state}: "
                    f"{describe(chunk_entry)}"
                )
            call = calls[index]
            for key, value in entry.items():
                if key == "function" and type(value) is dict:
                    notice = self._function(choice, index, call, value)
                    if notice is not None:
                        notices += (notice,)
                elif key != "index":
                    merge_delta(call.fields, {key: value})
        return notices

    def _function(
        self, choice: _Choice, index: int, call: _Call, function: dict[str, Any]
    ) -> CallNotice | None:
        notice = None
        for key, value in function.items():
            if key != "arguments":
                merge_delta(call.fields.setdefault("function", {}), {key: value})
            elif type(value) is str:
                call.arguments.append(value)
                if call.watch is not None:
                    kind = call.watch.feed(value)
                    if kind is not None:
                        notice = CallNotice(kind, self._snapshot(choice, index, call))
            elif value is not None:
                raise StreamProtocolError(f"function arguments that are not a string: {value!r}")
        return notice

    def _complete(self, choice: _Choice, upto: int) -> tuple[CallNotice, ...]:
        """Report calls[done:upto] complete."""
        if choice.done >= upto:
            return _NO_NOTICES
        notices = []
        for index in range(choice.done, upto):
            call = choice.calls[index]
            done = self._snapshot(choice, index, call)
            self.completed.append(done)
            notices.append(CallNotice("complete", done))
        choice.done = upto
        return tuple(notices)

    @staticmethod
    def _snapshot(choice: _Choice, index: int, call: _Call) -> ChatCall:
        api = call.api()
        parsed: dict[str, Any] | None
        if call.watch is not None and call.watch.value is not None:
            # The watch's one parse is the value of the whole text (object_watch's docstring):
            # the parsed notice and the complete notice share it, not parse it again.
            parsed, error = call.watch.value, None
        else:
            parsed, error = parse_arguments(api["function"]["arguments"])
        return ChatCall(choice.index, index, api, parsed, error)


def _choice_index(choice: _Choice) -> int:
    return choice.index


def _appended(parts: list[str] | None, value: Any, entry: dict[str, Any]) -> list[str]:
    if type(value) is not str:
        raise StreamProtocolError(f"delta text that is not a string: {describe(entry)}")
    if parts is None:
        return [value]
    parts.append(value)
    return parts


def _add_logprobs(choice: _Choice, logprobs: dict[str, Any]) -> None:
    """As the SDK: the first logprobs set the lists, later ones extend them."""
    if choice.logprobs is None:
        choice.logprobs = {
            "content": _list_copy(logprobs.get("content")),
            "refusal": _list_copy(logprobs.get("refusal")),
        }
        return
    for key in ("content", "refusal"):
        more = logprobs.get(key)
        if more:
            if choice.logprobs[key] is None:
                choice.logprobs[key] = []
            choice.logprobs[key].extend(more)


def _list_copy(value: Any) -> list[Any] | None:
    return None if value is None else list(value)
