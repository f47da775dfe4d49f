"""The API-boundary layer: make a transcript pass the API's pairing rules, and say what changed.

`ensure_tool_result_pairing(messages)` returns a transcript that `check_pairing` accepts, and one
`Repair` per change. It is the last of the three layers that keep every `tool_use` answered (the
executor and the loop come first), so it expects to find little, and it is a fixed point: repairing
its own output reports nothing.

The repair, in one pass over the transcript (linear in messages plus blocks). It merges role
runs first; every block-level change is then the repair of a `Finding` of the classifier that
`check_pairing` words (`toolturn.runtime.pairing`), so that the check and the repair cannot disagree
about what is wrong:

- Consecutive messages of one role merge into one (`SAME_ROLE_MERGED`; string content becomes a
  text block). A transcript whose first message is an assistant one gets a user message
  inserted before it (`USER_MESSAGE_INSERTED`).
- In an assistant message: a `tool_use` or server tool use whose id was already used anywhere
  earlier is removed (`DUPLICATE_TOOL_USE_REMOVED`, keep the first); a server result block
  (`web_search_tool_result`, ...) with no server tool use before it in the same message is removed
  (`ORPHAN_RESULT_REMOVED`), a second one for the same id too (`DUPLICATE_RESULT_REMOVED`).
- A server tool use left without its result is removed (`SERVER_TOOL_USE_REMOVED`). Why removed
  rather than answered: its result block is the server's own (typed per tool, some with
  encrypted content) and cannot be forged honestly; without the pair the model simply issues the
  search again. This is also the known workaround for `pause_turn` leftovers
  (anthropics/anthropic-sdk-python#1339).
- In the user message after an assistant message: a `tool_result` whose id is not a `tool_use`
  of that assistant message is removed (`ORPHAN_RESULT_REMOVED`, or `LEADING_ORPHAN_REMOVED` in
  the first message of the transcript, where a resumed session left results of a turn it no
  longer holds); a second result for an id is removed (`DUPLICATE_RESULT_REMOVED`); results found
  after other content move to the front, in their order (`RESULT_MOVED_TO_FRONT`); each
  `tool_use` left unanswered gets a synthetic `is_error` result placed first
  (`MISSING_RESULT_INSERTED`). If the assistant message is the last one, a user message holding
  those results is appended (`USER_MESSAGE_INSERTED`).
- Pairing blocks on the wrong side (`tool_result` in an assistant message, `tool_use` or server
  blocks in a user message) are removed (`MISPLACED_BLOCK_REMOVED`), so are `text` blocks holding
  the empty string (`EMPTY_TEXT_REMOVED`).
- A message left with no content gets a placeholder text block (`PLACEHOLDER_INSERTED`), so that
  roles keep alternating and no content is empty. Only a final assistant message may stay empty
  (a prefill), and only if it came in empty.

`Repair.message_index` is the index in the OUTPUT transcript of the message where the change is
visible (the merged message, the message a block was removed from or inserted into, the inserted
message itself).

Unchanged messages are shared with the input, never copied; changed ones are new dicts. The input
is never mutated. With `strict=True` nothing is repaired: the transcript is checked, and if
`check_pairing` finds anything, `PairingError` lists every violation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolturn.runtime.errors import ToolTurnError
from toolturn.runtime.pairing import (
    TOOL_RESULT,
    Finding,
    FindingKind,
    RepairKind,
    check_message_list,
    check_pairing,
    classify_assistant,
    classify_user,
    message_blocks,
    message_role,
)

__all__ = [
    "MISSING_RESULT_TEXT",
    "PLACEHOLDER_TEXT",
    "RESUMED_SESSION_TEXT",
    "PairingError",
    "Repair",
    "RepairKind",
    "check_pairing",
    "ensure_tool_result_pairing",
]

MISSING_RESULT_TEXT = (
    "[tool result missing] No result was recorded for this tool call; this error result was "
    "inserted at the API boundary by the tool-result pairing repair."
)
PLACEHOLDER_TEXT = (
    "[empty message] All content of this message was removed by the tool-result pairing repair."
)
RESUMED_SESSION_TEXT = "[session resumed] Earlier messages of this conversation are not available."


@dataclass(frozen=True, slots=True)
class Repair:
    """One change: its kind, the OUTPUT index of the message it shows in, the tool id if any."""

    kind: RepairKind
    message_index: int
    tool_use_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The repair as a JSON object (`kind` as its string value)."""
        return {
            "kind": self.kind.value,
            "message_index": self.message_index,
            "tool_use_id": self.tool_use_id,
        }


class PairingError(ToolTurnError):
    """Strict mode found a transcript the API would reject; `violations` lists every mismatch."""

    def __init__(self, violations: list[str]) -> None:
        super().__init__(f"{len(violations)} pairing violation(s): " + "; ".join(violations))
        self.violations = violations


def ensure_tool_result_pairing(
    messages: Sequence[Mapping[str, Any]], *, strict: bool = False
) -> tuple[list[dict[str, Any]], list[Repair]]:
    """Return `(repaired transcript, repairs)`; the transcript always passes `check_pairing`.

    A transcript that already passes comes back equal (its message objects shared) with no
    repairs. With `strict=True` nothing is repaired: a transcript that passes comes back as is,
    any other raises `PairingError` listing every violation. Raises
    `toolturn.runtime.pairing.TranscriptShapeError` for input that is not a transcript.
    """
    if strict:
        violations = check_pairing(messages)
        if violations:
            raise PairingError(violations)
        return [_as_dict(message) for message in messages], []
    return _Repairer().run(messages)


def _as_dict(message: Mapping[str, Any]) -> dict[str, Any]:
    return message if isinstance(message, dict) else dict(message)


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _missing_result(tool_use_id: str) -> dict[str, Any]:
    return {
        "type": TOOL_RESULT,
        "tool_use_id": tool_use_id,
        "is_error": True,
        "content": MISSING_RESULT_TEXT,
    }


@dataclass(slots=True)
class _Run:
    """Consecutive input messages of one role, to become one output message."""

    role: str
    first: Mapping[str, Any]
    content: list[Mapping[str, Any]] | str
    # How many further messages were folded into `first`.
    merged: int = 0


class _Repairer:
    """One repair pass; holds the output and the state carried from message to message."""

    def __init__(self) -> None:
        self.out: list[dict[str, Any]] = []
        self.repairs: list[Repair] = []
        # Every tool_use / server tool use id kept so far: ids are unique transcript-wide.
        self.used_ids: set[str] = set()
        # Client tool_use ids of the last assistant message written, in order: the next
        # message must answer them.
        self.awaiting: list[str] = []

    def run(
        self, messages: Sequence[Mapping[str, Any]]
    ) -> tuple[list[dict[str, Any]], list[Repair]]:
        runs = _role_runs(messages)
        if runs and runs[0].role == "assistant":
            self._report(RepairKind.USER_MESSAGE_INSERTED, 0)
            self.out.append({"role": "user", "content": [_text(RESUMED_SESSION_TEXT)]})
        last = len(runs) - 1
        for position, run in enumerate(runs):
            index = len(self.out)
            # One report per message folded into the first of the run.
            for _ in range(run.merged):
                self._report(RepairKind.SAME_ROLE_MERGED, index)
            if run.role == "assistant":
                self.out.append(self._assistant(run, index, is_last=position == last))
            else:
                self.out.append(self._user(run, index))
        if self.awaiting:
            index = len(self.out)
            self._report(RepairKind.USER_MESSAGE_INSERTED, index)
            results = []
            for use_id in self.awaiting:
                self._report(RepairKind.MISSING_RESULT_INSERTED, index, use_id)
                results.append(_missing_result(use_id))
            self.out.append({"role": "user", "content": results})
        return self.out, self.repairs

    def _report(self, kind: RepairKind, index: int, tool_use_id: str | None = None) -> None:
        self.repairs.append(Repair(kind, index, tool_use_id))

    def _assistant(self, run: _Run, index: int, *, is_last: bool) -> dict[str, Any]:
        content = run.content
        self.awaiting = []
        if isinstance(content, str):
            if content or is_last:
                return _as_dict(run.first)
            return self._emptied(run, index)
        findings, self.awaiting = classify_assistant(content, self.used_ids)
        changed = run.merged > 0 or bool(findings)
        kept = content
        if findings:
            # Every finding in an assistant message is a block to remove.
            removed: set[int] = set()
            for finding in findings:
                self._report(finding.kind.repair, index, finding.tool_use_id)
                removed.add(finding.position)
            kept = [block for position, block in enumerate(content) if position not in removed]
        if not kept and (changed or not is_last):
            return self._emptied(run, index)
        if not changed:
            return _as_dict(run.first)
        return {**run.first, "content": kept}

    def _user(self, run: _Run, index: int) -> dict[str, Any]:
        awaiting = self.awaiting
        self.awaiting = []
        content = run.content
        if isinstance(content, str):
            if not content:
                return self._emptied(run, index, inserted=self._synthetic(awaiting, index))
            if not awaiting:
                return _as_dict(run.first)
            content = [_text(content)]
            return {**run.first, "content": self._synthetic(awaiting, index) + content}
        findings = classify_user(content, awaiting)
        changed = run.merged > 0
        if not (findings or changed) and content:
            return _as_dict(run.first)
        results: list[Mapping[str, Any]] = []
        others: list[Mapping[str, Any]] = []
        found = {finding.position: finding for finding in findings}
        for position, block in enumerate(content):
            finding = found.get(position)
            if finding is None:
                # No finding: an answering result at the front, or another block to keep.
                (results if block["type"] == TOOL_RESULT else others).append(block)
            elif finding.kind is FindingKind.RESULT_NOT_FIRST:
                if others:  # a move past nothing kept is no move
                    self._report(RepairKind.RESULT_MOVED_TO_FRONT, index, finding.tool_use_id)
                    changed = True
                results.append(block)
            else:
                self._report(self._repair_of(finding, index), index, finding.tool_use_id)
                changed = True
        missing = [
            finding.tool_use_id
            for finding in findings
            if finding.kind is FindingKind.MISSING_RESULT and finding.tool_use_id is not None
        ]
        synthetic = self._synthetic(missing, index)
        if not (results or others):
            return self._emptied(run, index, inserted=synthetic)
        if not (changed or synthetic):
            return _as_dict(run.first)
        return {**run.first, "content": synthetic + results + others}

    @staticmethod
    def _repair_of(finding: Finding, index: int) -> RepairKind:
        """A finding's repair; an orphan result in the first message is a leading orphan, left
        by a resumed session that no longer holds the turn it answered."""
        if finding.kind is FindingKind.UNEXPECTED_RESULT and index == 0:
            return RepairKind.LEADING_ORPHAN_REMOVED
        return finding.kind.repair

    def _synthetic(self, missing: list[str], index: int) -> list[dict[str, Any]]:
        for use_id in missing:
            self._report(RepairKind.MISSING_RESULT_INSERTED, index, use_id)
        return [_missing_result(use_id) for use_id in missing]

    def _emptied(
        self, run: _Run, index: int, *, inserted: list[dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        """The run's message with its content emptied: synthetic results, else a placeholder."""
        if inserted:
            return {**run.first, "content": inserted}
        self._report(RepairKind.PLACEHOLDER_INSERTED, index)
        return {**run.first, "content": [_text(PLACEHOLDER_TEXT)]}


def _role_runs(messages: Sequence[Mapping[str, Any]]) -> list[_Run]:
    """Group consecutive messages of one role; check each message's shape on the way."""
    check_message_list(messages)
    runs: list[_Run] = []
    for index, message in enumerate(messages):
        role = message_role(message, index)
        content = message_blocks(message, index)
        if runs and runs[-1].role == role:
            run = runs[-1]
            # The first merge makes a fresh list, so the input's content lists are never touched.
            blocks = run.content if run.merged and isinstance(run.content, list) else []
            if not run.merged:
                blocks.extend(_as_blocks(run.content))
            blocks.extend(_as_blocks(content))
            run.content = blocks
            run.merged += 1
        else:
            runs.append(_Run(role, message, content))
    return runs


def _as_blocks(content: list[Mapping[str, Any]] | str) -> list[Mapping[str, Any]]:
    # An empty string contributes nothing to a merge, rather than an empty text block.
    if isinstance(content, str):
        return [_text(content)] if content else []
    return content
