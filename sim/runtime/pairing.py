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

`check_pairing` returns one string per violation, worded as the real API words its 400 errors
where we have seen the real wording (the source is cited beside each template), so that the mock
server can answer with them. An empty list means the transcript passes.

Anything that is not a transcript at all (messages that are not a list, a message without a
string role, content that is neither a string nor a list, a block without a type or id) is not a
pairing violation: it raises `TranscriptShapeError`, whose message names the place, e.g.
`messages[3].content[1]: block has no 'type'`. Any JSON value gets one or the other: a list of
violations, or that error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

TOOL_USE = "tool_use"
TOOL_RESULT = "tool_result"
# Server-executed tool calls: their results come back inside the same assistant message.
SERVER_TOOL_USES = frozenset({"server_tool_use", "mcp_tool_use"})
ROLES = frozenset({"user", "assistant"})
# Common block types that carry no pairing id: validated with one set lookup.
_PLAIN_BLOCK_TYPES = frozenset({"text", "image", "document", "thinking", "redacted_thinking"})


class TranscriptShapeError(ValueError):
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

    __slots__ = ("_checked", "_before_last")

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
    """The state of a check, message by message: what `check_pairing` carries along."""

    __slots__ = ("violations", "seen_use_ids", "previous_role", "awaiting")

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
                violations.append(_missing(index - 1, self.awaiting))
            self.awaiting = _check_assistant(blocks, index, self.seen_use_ids, violations)
        else:
            _check_user(blocks, index, self.awaiting, violations)
            self.awaiting = []
        self.previous_role = role

    def finish(self, last: int) -> list[str]:
        """The violations of the transcript, once its last message was stepped through."""
        if self.awaiting:
            return [*self.violations, _missing(last, self.awaiting)]
        return list(self.violations)


def _missing(index: int, ids: Sequence[str]) -> str:
    return MISSING_RESULTS.format(index=index, ids=", ".join(ids))


def _check_assistant(
    blocks: Sequence[Mapping[str, Any]],
    index: int,
    seen_use_ids: set[str],
    violations: list[str],
) -> list[str]:
    """Check one assistant message; return its client tool_use ids that need results next."""
    tool_use_ids: list[str] = []
    open_server_uses: dict[str, Mapping[str, Any]] = {}
    answered_server_ids: set[str] = set()
    for position, block in enumerate(blocks):
        block_type = block["type"]
        if block_type == TOOL_USE or block_type in SERVER_TOOL_USES:
            use_id = block["id"]
            if use_id in seen_use_ids:
                violations.append(DUPLICATE_TOOL_USE_ID.format(index=index, position=position))
                continue
            seen_use_ids.add(use_id)
            if block_type == TOOL_USE:
                tool_use_ids.append(use_id)
            else:
                open_server_uses[use_id] = block
        elif is_server_result(block_type):
            use_id = block["tool_use_id"]
            if use_id in answered_server_ids:
                violations.append(
                    DUPLICATE_RESULT.format(
                        index=index, position=position, block_type=block_type, id=use_id
                    )
                )
            elif use_id in open_server_uses:
                answered_server_ids.add(use_id)
            else:
                violations.append(
                    UNEXPECTED_SERVER_RESULT.format(
                        index=index, position=position, block_type=block_type, id=use_id
                    )
                )
        elif block_type == TOOL_RESULT:
            violations.append(
                MISPLACED_BLOCK.format(
                    index=index, position=position, block_type=block_type, role="assistant"
                )
            )
        elif block_type == "text" and block.get("text") == "":
            violations.append(EMPTY_TEXT_BLOCK)
    for use_id, use_block in open_server_uses.items():
        if use_id not in answered_server_ids:
            violations.append(
                MISSING_SERVER_RESULT.format(
                    index=index,
                    name=_server_tool_name(use_block),
                    id=use_id,
                    result_type=expected_server_result_type(use_block),
                )
            )
    return tool_use_ids


def _check_user(
    blocks: Sequence[Mapping[str, Any]],
    index: int,
    awaiting: Sequence[str],
    violations: list[str],
) -> None:
    """Check one user message against the tool_use ids of the assistant message before it."""
    expected = set(awaiting)
    answered: set[str] = set()
    unexpected: list[str] = []
    first_unexpected = -1
    leading = True
    not_leading = 0
    for position, block in enumerate(blocks):
        block_type = block["type"]
        if block_type == TOOL_RESULT:
            use_id = block["tool_use_id"]
            if use_id in answered:
                violations.append(
                    DUPLICATE_RESULT.format(
                        index=index, position=position, block_type=block_type, id=use_id
                    )
                )
            elif use_id in expected:
                answered.add(use_id)
                if not leading:
                    not_leading += 1
            else:
                if not unexpected:
                    first_unexpected = position
                unexpected.append(use_id)
            continue
        leading = False
        if is_assistant_only(block_type):
            violations.append(
                MISPLACED_BLOCK.format(
                    index=index, position=position, block_type=block_type, role="user"
                )
            )
        elif block_type == "text" and block.get("text") == "":
            violations.append(EMPTY_TEXT_BLOCK)
    if unexpected:
        violations.append(
            UNEXPECTED_RESULTS.format(
                index=index, position=first_unexpected, ids=", ".join(unexpected)
            )
        )
    missing = [use_id for use_id in awaiting if use_id not in answered]
    if missing:
        violations.append(_missing(index - 1, missing))
    elif not_leading:
        violations.append(RESULTS_NOT_FIRST.format(index=index, count=not_leading))
