"""The Messages API's rules for tool pairing in a transcript, and a checker worded as the API.

A transcript is a list of `{"role": "user" | "assistant", "content": str | list[block]}`. The API
accepts it only if:

1. it is not empty of meaning: the first message has the `user` role, roles alternate, a user
   message has non-empty content, every message except a final assistant one has non-empty
   content, and no `text` block is the empty string;
2. every client `tool_use` id is unique in the whole transcript (ids of `server_tool_use` and
   `mcp_tool_use` blocks share that namespace);
3. every `tool_use` of an assistant message is answered by a `tool_result` in the very next
   message, which is a user message, and those results open that message (before any other block);
4. every `tool_result` answers a `tool_use` of the immediately preceding assistant message, once;
5. every server tool use (`server_tool_use`, `mcp_tool_use`) is answered, later in the same
   assistant message, by one result block of a `*_tool_result` type carrying its id, and every such
   result block answers a server tool use before it;
6. pairing blocks stay on their side: `tool_use`, server tool uses and their results only in
   assistant messages, `tool_result` only in user messages.

One walk judges every rule. Rule 1's roles and empty messages are judged message by message;
the rest by one classifier of a message's blocks (`classify_assistant`, `classify_user`), which
yields each violation as a `Finding` whose kind names both its API wording and its repair.
`check_pairing` words the findings of a walk over the messages: one string per violation, worded
as the real API words its 400 errors where we have seen the real wording (the source is cited
beside each template), so that the mock server can answer with them. An empty list means the
transcript passes. `toolturn.runtime.repair` applies the findings of the same classifier to the
transcript's role runs (consecutive messages of one role, merged): where roles alternate, those
are its messages and both see the very same findings.

Anything that is not a transcript at all (messages that are not a list, a message without a
string role, content that is neither a string nor a list, a block without a type or id) is not a
pairing violation: it raises `TranscriptShapeError`, whose message names the place, e.g.
`messages[3].content[1]: block has no 'type'`. Any JSON value gets one or the other: a list of
violations, or that error.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolturn.runtime.errors import ToolTurnError

TOOL_USE = "tool_use"
TOOL_RESULT = "tool_result"
# Server-executed tool calls: their results come back inside the same assistant message.
SERVER_TOOL_USES = frozenset({"server_tool_use", "mcp_tool_use"})
ROLES = frozenset({"user", "assistant"})
# Common block types that carry no pairing id: validated with one set lookup.
_PLAIN_BLOCK_TYPES = frozenset({"text", "image", "document", "thinking", "redacted_thinking"})


class TranscriptShapeError(ToolTurnError, ValueError):
    """The input is not a transcript in Messages API shape; the message names where and why."""


def is_server_result(block_type: str) -> bool:
    """Whether a block type is the result of a server tool use (`web_search_tool_result`, ...)."""
    return block_type != TOOL_RESULT and block_type.endswith("_tool_result")


def is_assistant_only(block_type: str) -> bool:
    """Pairing blocks that the API accepts only in assistant messages."""
    return block_type == TOOL_USE or block_type in SERVER_TOOL_USES or is_server_result(block_type)


def _server_tool_name(use_block: Mapping[str, Any]) -> str:
    """The name of a server tool use for messages: its `name`, or its type if that is not a
    string (any other value could print as anything, or not at all: think of a list nested a
    million deep)."""
    name = use_block.get("name")
    return name if isinstance(name, str) else str(use_block["type"])


def expected_server_result_type(use_block: Mapping[str, Any]) -> str:
    """The result block type that answers a server tool use, for the API's wording."""
    if use_block["type"] == "mcp_tool_use":
        return "mcp_tool_result"
    name = use_block.get("name")
    if not isinstance(name, str):
        name = "server"
    if name.startswith("tool_search_tool_"):
        return "tool_search_tool_result"
    return f"{name}_tool_result"


def check_message_list(messages: object) -> None:
    """Raise `TranscriptShapeError` unless `messages` is a list (or another sequence) of messages,
    before anything takes its length or indexes it."""
    if type(messages) is list:
        return
    if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes, bytearray)):
        raise TranscriptShapeError(f"messages: must be a list, not {type(messages).__name__}")


def message_role(message: object, index: int) -> str:
    """The role of `messages[index]`, after checking the message is a mapping with a known role."""
    # `type(...) is dict` first: the ABC check of isinstance(..., Mapping) is slow and this
    # runs once per message and per block of every request.
    if type(message) is not dict and not isinstance(message, Mapping):
        raise TranscriptShapeError(
            f"messages[{index}]: a message must be an object, not {type(message).__name__}"
        )
    role = message.get("role")
    if type(role) is str and role in ROLES:
        return role
    if role is None:
        raise TranscriptShapeError(f"messages[{index}]: message has no 'role'")
    if not isinstance(role, str):
        # Not `role not in ROLES` for every role: a list or an object is not hashable.
        raise TranscriptShapeError(
            f"messages[{index}].role: must be a string, not {type(role).__name__}"
        )
    raise TranscriptShapeError(f"messages[{index}].role: {role!r} is not 'user' or 'assistant'")


def message_blocks(message: Mapping[str, Any], index: int) -> list[Mapping[str, Any]] | str:
    """The content of `messages[index]`: the string itself, or its list of checked blocks."""
    if "content" not in message:
        raise TranscriptShapeError(f"messages[{index}]: message has no 'content'")
    content = message["content"]
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise TranscriptShapeError(
            f"messages[{index}].content: must be a string or a list of blocks, "
            f"not {type(content).__name__}"
        )
    for position, block in enumerate(content):
        # Fast path for the JSON-decoded shape, inlined because it runs for every block of every
        # request; anything unusual gets the full check, which explains what is wrong.
        if type(block) is dict:
            block_type = block.get("type")
            if type(block_type) is str:
                if block_type in _PLAIN_BLOCK_TYPES:
                    continue
                if block_type == TOOL_USE or block_type in SERVER_TOOL_USES:
                    if type(block.get("id")) is str:
                        continue
                elif block_type == TOOL_RESULT or block_type.endswith("_tool_result"):
                    if type(block.get("tool_use_id")) is str:
                        continue
                else:
                    continue
        _check_block(block, index, position)
    return content


def _has_pairing_id(block: Mapping[str, Any], block_type: str) -> bool:
    """Whether a block that pairs by id carries its id as a string (others: always true)."""
    if block_type == TOOL_USE or block_type in SERVER_TOOL_USES:
        return isinstance(block.get("id"), str)
    if block_type == TOOL_RESULT or is_server_result(block_type):
        return isinstance(block.get("tool_use_id"), str)
    return True


def _check_block(block: object, index: int, position: int) -> None:
    """Raise `TranscriptShapeError` saying where and why if `block` is not a content block."""
    where = f"messages[{index}].content[{position}]"
    if not isinstance(block, Mapping):
        raise TranscriptShapeError(
            f"{where}: a block must be an object, not {type(block).__name__}"
        )
    block_type = block.get("type")
    if block_type is None:
        raise TranscriptShapeError(f"{where}: block has no 'type'")
    if not isinstance(block_type, str):
        raise TranscriptShapeError(
            f"{where}.type: must be a string, not {type(block_type).__name__}"
        )
    if not _has_pairing_id(block, block_type):
        field = "id" if block_type == TOOL_USE or block_type in SERVER_TOOL_USES else "tool_use_id"
        raise TranscriptShapeError(f"{where}: `{block_type}` block has no string '{field}'")


# --- The API's wording. Each template quotes a real 400 response where one was found. ---

# lobehub/lobehub#1601
FIRST_MESSAGE_NOT_USER = 'messages: first message must use the "user" role'
# FlowiseAI/Flowise#2006 (assistant) and coaidev/coai#209 (user)
ROLES_NOT_ALTERNATING = (
    'messages: roles must alternate between "user" and "assistant", '
    'but found multiple "{role}" roles in a row'
)
# experientiallabs/experiential#804 (measured against the live API)
EMPTY_USER_MESSAGE = "messages.{index}: user messages must have non-empty content"
# BerriAI/litellm#2549
EMPTY_MESSAGE = (
    "messages: all messages must have non-empty content except for the optional final "
    "assistant message"
)
# experientiallabs/experiential#804, aliasrobotics/cai#182
EMPTY_TEXT_BLOCK = "messages: text content blocks must be non-empty"
# anthropics/claude-code#5989 (two ids, comma-separated). The real API names the assistant
# message only, with no `.content.N` (every sample seen, 2025 to 2026, e.g. claude-code#3512).
MISSING_RESULTS = (
    "messages.{index}: `tool_use` ids were found without `tool_result` blocks immediately after: "
    "{ids}. Each `tool_use` block must have a corresponding `tool_result` block in the next "
    "message."
)
# apify/tester-mcp-client#12
RESULTS_NOT_FIRST = (
    "messages.{index}: Did not find {count} `tool_result` block(s) at the beginning of this "
    "message. Messages following `tool_use` blocks must begin with a matching number of "
    "`tool_result` blocks."
)
# anthropics/claude-code#13460, router-for-me/CLIProxyAPI#497
UNEXPECTED_RESULTS = (
    "messages.{index}.content.{position}: unexpected `tool_use_id` found in `tool_result` blocks: "
    "{ids}. Each `tool_result` block must have a corresponding `tool_use` block in the previous "
    "message."
)
# anthropics/claude-code#28515 (2026 wording; 2025 responses quoted `tool_use` in backticks)
DUPLICATE_TOOL_USE_ID = "messages.{index}.content.{position}: tool_use ids must be unique"
# No real sample found: our wording, in the API's style.
DUPLICATE_RESULT = (
    "messages.{index}.content.{position}: multiple `{block_type}` blocks found for "
    "`tool_use_id` {id}. Each `tool_use` block must have exactly one result."
)
# anthropics/anthropic-sdk-python#1339
MISSING_SERVER_RESULT = (
    "messages.{index}: `{name}` tool use with id `{id}` was found without a corresponding "
    "`{result_type}` block"
)
# anthropics/claude-code#64383 (for `advisor_tool_result`)
UNEXPECTED_SERVER_RESULT = (
    "messages.{index}.content.{position}: unexpected `tool_use_id` found in `{block_type}` "
    "blocks: {id}. Each `{block_type}` block must have a corresponding `server_tool_use` block "
    "before it."
)
# No real sample found: our wording, in the API's style.
MISPLACED_BLOCK = (
    "messages.{index}.content.{position}: `{block_type}` blocks are not allowed in "
    "`{role}` messages"
)


class RepairKind(enum.StrEnum):
    """What one repair did (`toolturn.runtime.repair`); named here because each `FindingKind` names
    the repair it gets."""

    MISSING_RESULT_INSERTED = "missing_result_inserted"
    ORPHAN_RESULT_REMOVED = "orphan_result_removed"
    DUPLICATE_TOOL_USE_REMOVED = "duplicate_tool_use_removed"
    DUPLICATE_RESULT_REMOVED = "duplicate_result_removed"
    RESULT_MOVED_TO_FRONT = "result_moved_to_front"
    LEADING_ORPHAN_REMOVED = "leading_orphan_removed"
    SAME_ROLE_MERGED = "same_role_merged"
    PLACEHOLDER_INSERTED = "placeholder_inserted"
    USER_MESSAGE_INSERTED = "user_message_inserted"
    SERVER_TOOL_USE_REMOVED = "server_tool_use_removed"
    MISPLACED_BLOCK_REMOVED = "misplaced_block_removed"
    EMPTY_TEXT_REMOVED = "empty_text_removed"


class FindingKind(enum.Enum):
    """What the classifier found in one message's blocks: the rule broken, then the template
    `check_pairing` words it with, then `repair` (what `toolturn.runtime.repair` does about it)."""

    # Rule 2, DUPLICATE_TOOL_USE_ID: the block is removed (the first use of the id stays).
    DUPLICATE_TOOL_USE = "duplicate_tool_use"
    # Rule 5, MISSING_SERVER_RESULT: the server tool use is removed (its result is the server's
    # own, and cannot be forged honestly).
    UNANSWERED_SERVER_USE = "unanswered_server_use"
    # Rule 5, UNEXPECTED_SERVER_RESULT: the result block is removed.
    UNEXPECTED_SERVER_RESULT = "unexpected_server_result"
    # Rules 4 and 5, DUPLICATE_RESULT: the second result for an id is removed.
    DUPLICATE_RESULT = "duplicate_result"
    # Rule 6, MISPLACED_BLOCK: the block is removed.
    MISPLACED_BLOCK = "misplaced_block"
    # Rule 1, EMPTY_TEXT_BLOCK: the block is removed.
    EMPTY_TEXT = "empty_text"
    # Rule 4, UNEXPECTED_RESULTS (one line for a message's every such id, at the first one's
    # position): the result is removed.
    UNEXPECTED_RESULT = "unexpected_result"
    # Rule 3, RESULTS_NOT_FIRST (one line counting a message's results after other blocks, said
    # only when none is missing): the result moves to the front. A result that follows only
    # blocks the repair removes is already at the front once they are gone: no move is reported.
    RESULT_NOT_FIRST = "result_not_first"
    # Rule 3, MISSING_RESULTS (one line for a message's every missing id): an is_error result is
    # inserted first. Its `position` is the message's block count: it is about no block.
    MISSING_RESULT = "missing_result"

    @property
    def repair(self) -> RepairKind:
        """The repair of this finding (an orphan result in the transcript's first message is
        a `LEADING_ORPHAN_REMOVED` instead: the repair knows where it is)."""
        return _REPAIR_OF[self]


_REPAIR_OF = {
    FindingKind.DUPLICATE_TOOL_USE: RepairKind.DUPLICATE_TOOL_USE_REMOVED,
    FindingKind.UNANSWERED_SERVER_USE: RepairKind.SERVER_TOOL_USE_REMOVED,
    FindingKind.UNEXPECTED_SERVER_RESULT: RepairKind.ORPHAN_RESULT_REMOVED,
    FindingKind.DUPLICATE_RESULT: RepairKind.DUPLICATE_RESULT_REMOVED,
    FindingKind.MISPLACED_BLOCK: RepairKind.MISPLACED_BLOCK_REMOVED,
    FindingKind.EMPTY_TEXT: RepairKind.EMPTY_TEXT_REMOVED,
    FindingKind.UNEXPECTED_RESULT: RepairKind.ORPHAN_RESULT_REMOVED,
    FindingKind.RESULT_NOT_FIRST: RepairKind.RESULT_MOVED_TO_FRONT,
    FindingKind.MISSING_RESULT: RepairKind.MISSING_RESULT_INSERTED,
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One violation in one message's blocks: its kind, the block's position in the message's
    content, the tool id it concerns (None for an empty text block), and the block itself (None
    for a missing result)."""

    kind: FindingKind
    position: int
    tool_use_id: str | None
    block: Mapping[str, Any] | None


def classify_assistant(
    blocks: Sequence[Mapping[str, Any]], seen_use_ids: set[str]
) -> tuple[list[Finding], list[str]]:
    """The findings of rules 1, 2, 5 and 6 in an assistant message's (checked) blocks, in block
    order then each unanswered server tool use in order; and the message's client tool_use ids
    that the next message must answer. `seen_use_ids` (the ids of earlier messages) gains the
    message's new ids."""
    findings: list[Finding] = []
    tool_use_ids: list[str] = []
    open_server_uses: dict[str, int] = {}  # id -> position
    answered_server_ids: set[str] = set()
    for position, block in enumerate(blocks):
        block_type = block["type"]
        if block_type == TOOL_USE or block_type in SERVER_TOOL_USES:
            use_id = block["id"]
            if use_id in seen_use_ids:
                findings.append(Finding(FindingKind.DUPLICATE_TOOL_USE, position, use_id, block))
                continue
            seen_use_ids.add(use_id)
            if block_type == TOOL_USE:
                tool_use_ids.append(use_id)
            else:
                open_server_uses[use_id] = position
        elif is_server_result(block_type):
            use_id = block["tool_use_id"]
            if use_id in answered_server_ids:
                findings.append(Finding(FindingKind.DUPLICATE_RESULT, position, use_id, block))
            elif use_id in open_server_uses:
                answered_server_ids.add(use_id)
            else:
                findings.append(
                    Finding(FindingKind.UNEXPECTED_SERVER_RESULT, position, use_id, block)
                )
        elif block_type == TOOL_RESULT:
            findings.append(
                Finding(FindingKind.MISPLACED_BLOCK, position, block["tool_use_id"], block)
            )
        elif block_type == "text" and block.get("text") == "":
            findings.append(Finding(FindingKind.EMPTY_TEXT, position, None, block))
    if len(answered_server_ids) != len(open_server_uses):
        for use_id, position in open_server_uses.items():
            if use_id not in answered_server_ids:
                findings.append(
                    Finding(FindingKind.UNANSWERED_SERVER_USE, position, use_id, blocks[position])
                )
    return findings, tool_use_ids


def classify_user(
    blocks: Sequence[Mapping[str, Any]], awaiting: Sequence[str]
) -> list[Finding]:
    """The findings of rules 1, 3, 4 and 6 in a user message's (checked) blocks, given the
    client tool_use ids of the assistant message before it (`awaiting`, in order; empty if the
    message before is not an assistant one): in block order, then each missing result in
    `awaiting` order."""
    findings: list[Finding] = []
    expected = set(awaiting)
    answered: set[str] = set()
    leading = True
    for position, block in enumerate(blocks):
        block_type = block["type"]
        if block_type == TOOL_RESULT:
            use_id = block["tool_use_id"]
            if use_id in answered:
                findings.append(Finding(FindingKind.DUPLICATE_RESULT, position, use_id, block))
            elif use_id in expected:
                answered.add(use_id)
                if not leading:
                    findings.append(
                        Finding(FindingKind.RESULT_NOT_FIRST, position, use_id, block)
                    )
            else:
                findings.append(Finding(FindingKind.UNEXPECTED_RESULT, position, use_id, block))
            continue
        leading = False
        if is_assistant_only(block_type):
            use_id = block.get("id", block.get("tool_use_id"))
            findings.append(Finding(FindingKind.MISPLACED_BLOCK, position, use_id, block))
        elif block_type == "text" and block.get("text") == "":
            findings.append(Finding(FindingKind.EMPTY_TEXT, position, None, block))
    if len(answered) != len(awaiting):
        end = len(blocks)
        for use_id in awaiting:
            if use_id not in answered:
                findings.append(Finding(FindingKind.MISSING_RESULT, end, use_id, None))
    return findings


def api_wording(findings: Sequence[Finding], index: int) -> list[str]:
    """The API's words for the findings of `messages[index]`: one line per finding in order,
    except the kinds it words per message (see `FindingKind`), which come after, in the order
    unexpected results, then missing results or else results not first."""
    lines: list[str] = []
    unexpected: list[Finding] = []
    missing: list[str] = []
    not_first = 0
    for finding in findings:
        kind, position = finding.kind, finding.position
        block = finding.block
        if kind is FindingKind.UNEXPECTED_RESULT:
            unexpected.append(finding)
        elif kind is FindingKind.MISSING_RESULT:
            assert finding.tool_use_id is not None
            missing.append(finding.tool_use_id)
        elif kind is FindingKind.RESULT_NOT_FIRST:
            not_first += 1
        elif kind is FindingKind.DUPLICATE_TOOL_USE:
            lines.append(DUPLICATE_TOOL_USE_ID.format(index=index, position=position))
        elif kind is FindingKind.EMPTY_TEXT:
            lines.append(EMPTY_TEXT_BLOCK)
        else:
            assert block is not None
            lines.append(_block_wording(kind, block, index, position))
    if unexpected:
        ids = ", ".join(str(finding.tool_use_id) for finding in unexpected)
        lines.append(
            UNEXPECTED_RESULTS.format(index=index, position=unexpected[0].position, ids=ids)
        )
    if missing:
        lines.append(_missing(index - 1, missing))
    elif not_first:
        lines.append(RESULTS_NOT_FIRST.format(index=index, count=not_first))
    return lines


def _block_wording(
    kind: FindingKind, block: Mapping[str, Any], index: int, position: int
) -> str:
    """The line for a finding about one block that the API words on its own."""
    block_type = block["type"]
    if kind is FindingKind.UNANSWERED_SERVER_USE:
        return MISSING_SERVER_RESULT.format(
            index=index,
            name=_server_tool_name(block),
            id=block["id"],
            result_type=expected_server_result_type(block),
        )
    if kind is FindingKind.MISPLACED_BLOCK:
        role = "assistant" if block_type == TOOL_RESULT else "user"
        return MISPLACED_BLOCK.format(
            index=index, position=position, block_type=block_type, role=role
        )
    duplicate = kind is FindingKind.DUPLICATE_RESULT
    template = DUPLICATE_RESULT if duplicate else UNEXPECTED_SERVER_RESULT
    return template.format(
        index=index, position=position, block_type=block_type, id=block["tool_use_id"]
    )


def check_pairing(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every way `messages` breaks the API's pairing rules, worded as the API's 400 errors.

    Returns an empty list for a transcript the API accepts (and for an empty list: whether a
    request needs at least one message is the request's concern, not the pairing's). Raises
    `TranscriptShapeError` if `messages` is not a transcript at all. Linear in the transcript size.
    """
    check_message_list(messages)
    walk = _Walk()
    last = len(messages) - 1
    for index, message in enumerate(messages):
        walk.step(index, message, last)
    return walk.finish(last)


class PairingMonitor:
    """`check_pairing` for the successive requests of one conversation, where each transcript
    is the one checked before plus new messages: `monitor.check(messages)`.

    Why: an agent's transcript grows by a turn per request, so checking every request from the
    start costs the square of the session's length. The monitor keeps the state of the check
    before the last message it saw, and when the new transcript starts with the same messages
    (compared by `==`, which holds at once for the same objects) it checks only from there; any
    other transcript is checked whole. A message changed in place after it was checked is not
    noticed: the runtime never does that (it replaces a message, as earlier requests share it).
    """

    __slots__ = ("_before_last", "_checked")

    def __init__(self) -> None:
        self._checked: list[Mapping[str, Any]] = []
        self._before_last = _Walk()  # the state before `_checked[-1]`

    def check(self, messages: Sequence[Mapping[str, Any]]) -> list[str]:
        """`check_pairing(messages)`; raises `TranscriptShapeError` the same way."""
        check_message_list(messages)
        known = len(self._checked) - 1
        walk, start = _Walk(), 0
        if known > 0 and len(messages) > known and messages[:known] == self._checked[:known]:
            # The last message checked was checked as the last one (it may end empty): again.
            walk, start = self._before_last.copy(), known
        last = len(messages) - 1
        before_last = walk
        for index in range(start, len(messages)):
            if index == last:
                before_last = walk.copy()
            walk.step(index, messages[index], last)
        self._checked, self._before_last = list(messages), before_last
        return walk.finish(last)


class _Walk:
    """The state of a check, message by message: what `check_pairing` carries along. Rule 1's
    roles and empty messages are judged here; every other rule by the classifier."""

    __slots__ = ("awaiting", "previous_role", "seen_use_ids", "violations")

    def __init__(self) -> None:
        self.violations: list[str] = []
        self.seen_use_ids: set[str] = set()
        self.previous_role: str | None = None
        # Client tool_use ids of the previous message, in order, when it is an assistant message.
        self.awaiting: list[str] = []

    def copy(self) -> _Walk:
        other = _Walk()
        other.violations = list(self.violations)
        other.seen_use_ids = set(self.seen_use_ids)
        other.previous_role = self.previous_role
        other.awaiting = list(self.awaiting)
        return other

    def step(self, index: int, message: Mapping[str, Any], last: int) -> None:
        """Check `messages[index]`, in a transcript whose last index is `last`."""
        violations = self.violations
        role = message_role(message, index)
        content = message_blocks(message, index)
        if index == 0 and role != "user":
            violations.append(FIRST_MESSAGE_NOT_USER)
        if role == self.previous_role:
            violations.append(ROLES_NOT_ALTERNATING.format(role=role))
        if not content:
            if role == "user":
                violations.append(EMPTY_USER_MESSAGE.format(index=index))
            elif index != last:
                violations.append(EMPTY_MESSAGE)
        blocks: Sequence[Mapping[str, Any]] = () if isinstance(content, str) else content
        if role == "assistant":
            if self.awaiting:
                # Two assistant messages in a row: the first one's calls went unanswered.
                violations.append(_missing(index - 1, self.awaiting))
            findings, self.awaiting = classify_assistant(blocks, self.seen_use_ids)
        else:
            findings = classify_user(blocks, self.awaiting)
            self.awaiting = []
        if findings:
            violations += api_wording(findings, index)
        self.previous_role = role

    def finish(self, last: int) -> list[str]:
        """The violations of the transcript, once its last message was stepped through."""
        if self.awaiting:
            return [*self.violations, _missing(last, self.awaiting)]
        return list(self.violations)


def _missing(index: int, ids: Sequence[str]) -> str:
    return MISSING_RESULTS.format(index=index, ids=", ".join(ids))
