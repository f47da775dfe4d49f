"""One session's persisted transcript in simulated time: what is on disk, kept apart from what the
loop holds in memory.

The log watches the loop after every callback (`observe`) and appends the lines an agent writes
(`toolturn.runtime.transcript_lines`, rules 1-4): the blocks of each assistant message as it enters
the transcript, each tool_result as it is handed over (after its call's line), each other block of
user content. Repairs the boundary layer makes in memory are not written (`resync`): an agent
repairs what it sends, not its log, so a second crash finds the same damage again.

When a line is on disk (`[session.transcript]`):

- `line`: each line is written `write_delay` after it was appended (a draw per line, keyed by
  session and line number), in order: never before the line ahead of it.
- `buffered`: lines wait in a buffer; each turn's end flushes it, and the lines are on disk
  `write_delay` after the flush.

`crash(now_ns)` keeps the lines on disk by then, drops the rest (they never reached the disk) and
returns the transcript they hold: what `--continue` reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolturn.randomness import stream
from toolturn.runtime.commands import Command, DiscardedResult, ResultReady
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.runtime.pairing import TOOL_RESULT
from toolturn.runtime.transcript_lines import Line, LineKind, content_blocks, read_transcript
from toolturn.scenario.schema import TranscriptConfig


class TranscriptLog:
    """The persisted lines of one session and when each is (or will be) on disk."""

    def __init__(self, config: TranscriptConfig, seed: int, session_id: int) -> None:
        self._delay = config.write_delay
        self._buffered = config.durability == "buffered"
        self._seed = seed
        self._session_id = session_id
        self.lines: list[Line] = []
        # When each line is on disk; None while it waits in the buffer.
        self.on_disk_ns: list[int | None] = []
        self._draws = 0  # write delays drawn: the key of the next draw
        self._last_disk_ns = 0
        self._keys = 0  # assistant messages written
        # The loop's transcript as far as it was written: its length, and the blocks other than
        # results of its last message when that is a user message.
        self._count = 0
        self._tail_is_user = False
        self._tail_blocks = 0
        self._result_ids: set[str] = set()  # tool_use ids whose result line was written
        self._repairs = 0
        self._calls_written: set[str] = set()  # tool_use ids whose line was written
        self._held: list[Mapping[str, Any]] = []  # results whose call has no line yet

    # ----- what the loop did -----

    def observe(self, loop: ToolTurnLoop, commands: Sequence[Command], now_ns: int) -> None:
        """Write the lines of what the loop did in the callback that returned `commands`."""
        messages = loop.messages
        if len(loop.repairs) != self._repairs:
            # A repaired request (the first after a resume or a compaction, made by `start`):
            # its messages moved, but the user content `start` added is the last message's.
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "user":
                self._user_blocks(last, self._tail_blocks if self._tail_is_user else 0, now_ns)
            self.resync(loop)
            return
        for index in range(self._count, len(messages)):
            if messages[index]["role"] == "assistant":
                self._assistant(messages[index], now_ns)
        for command in commands:
            if type(command) is ResultReady:
                self._held.append(command.result)
            elif type(command) is DiscardedResult:
                # A misfired call's result, handed over before its arguments changed and held
                # for its call's line, which the loop has dropped (its call's answer comes anew).
                self._held = [held for held in self._held if held is not command.result]
        self._results(now_ns)
        for index in range(max(self._count - 1, 0), len(messages)):
            message = messages[index]
            if message["role"] == "user":
                done = self._tail_blocks if index == self._count - 1 else 0
                self._user_blocks(message, done, now_ns)
        self._mark(loop)

    def replaced(self, loop: ToolTurnLoop, now_ns: int) -> None:
        """A rewind or a compaction replaced the loop's transcript: the new branch's transcript is
        one line (rule 4); nothing of it is written again."""
        self._append(Line(LineKind.REPLACE, messages=tuple(loop.messages)), now_ns)
        self._held = []
        self.resync(loop)

    def resync(self, loop: ToolTurnLoop) -> None:
        """Take the loop's transcript as written (after a resume, a repair): nothing of it is
        written again."""
        self._repairs = len(loop.repairs)
        self._calls_written.update(
            str(block["id"])
            for message in loop.messages if message["role"] == "assistant"
            for block in content_blocks(message) if block.get("type") == "tool_use"
        )
        self._mark(loop)

    def flush(self, now_ns: int) -> None:
        """A turn ended: under `buffered`, the buffer goes to disk, in order."""
        if not self._buffered:
            return
        first = len(self.on_disk_ns)
        while first > 0 and self.on_disk_ns[first - 1] is None:
            first -= 1
        for index in range(first, len(self.on_disk_ns)):
            self.on_disk_ns[index] = self._landing(now_ns)

    # ----- a crash -----

    def crash(self, now_ns: int) -> list[dict[str, Any]]:
        """The process died at `now_ns`: keep the lines on disk by then, return their transcript."""
        kept = 0
        for when in self.on_disk_ns:
            if when is None or when > now_ns:
                break
            kept += 1
        del self.lines[kept:]
        del self.on_disk_ns[kept:]
        self._held = []
        last = self.on_disk_ns[-1] if self.on_disk_ns else None
        self._last_disk_ns = last if last is not None else 0
        self._result_ids = {
            str(line.block["tool_use_id"])
            for line in self.lines
            if line.kind is LineKind.RESULT and line.block is not None
        }
        return read_transcript(self.lines)

    def results_kept(self) -> set[str]:
        """The tool_use ids whose result line is in the log."""
        return set(self._result_ids)

    # ----- internals -----

    def _assistant(self, message: Mapping[str, Any], now_ns: int) -> None:
        self._keys += 1
        for block in content_blocks(message):
            self._append(Line(LineKind.ASSISTANT, block, key=self._keys), now_ns)
            if block.get("type") == "tool_use":
                self._calls_written.add(str(block["id"]))

    def _results(self, now_ns: int) -> None:
        """Write each held result whose call's line is written (rule 2), in the order held; an
        id answered already is not answered twice (the loop keeps the first result of an id)."""
        waiting = []
        for result in self._held:
            tool_use_id = str(result["tool_use_id"])
            if tool_use_id not in self._calls_written:
                waiting.append(result)
            elif tool_use_id not in self._result_ids:
                self._result_ids.add(tool_use_id)
                self._append(Line(LineKind.RESULT, result), now_ns)
        self._held = waiting

    def _user_blocks(self, message: Mapping[str, Any], done: int, now_ns: int) -> None:
        """Write the blocks of a user message other than results, from the `done`-th on."""
        others = [b for b in content_blocks(message) if b.get("type") != TOOL_RESULT]
        for block in others[done:]:
            self._append(Line(LineKind.USER, block), now_ns)

    def _mark(self, loop: ToolTurnLoop) -> None:
        messages = loop.messages
        self._count = len(messages)
        last = messages[-1] if messages else None
        self._tail_is_user = last is not None and last["role"] == "user"
        self._tail_blocks = 0 if last is None or not self._tail_is_user else sum(
            1 for block in content_blocks(last) if block.get("type") != TOOL_RESULT
        )

    def _append(self, line: Line, now_ns: int) -> None:
        self.lines.append(line)
        self.on_disk_ns.append(None if self._buffered else self._landing(now_ns))

    def _landing(self, now_ns: int) -> int:
        """When a line written now is on disk: after its delay, and not before the one ahead."""
        self._draws += 1
        rng = stream(self._seed, "transcript_write", self._session_id, self._draws)
        landing = max(now_ns + self._delay.sample_ns(rng), self._last_disk_ns)
        self._last_disk_ns = landing
        return landing
