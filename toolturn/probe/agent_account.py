"""The agent's own account of a probe run, set beside the recording's (issue 30).

Claude Code prints its session with `--output-format stream-json --verbose`: one JSON object a
line, `{"type": "assistant", "message": {...}}` for each content block the CLI kept (a
`tool_use` block is a call it took in), `{"type": "user", "message": {...}}` for the
`tool_result` blocks it made (`is_error` set when the call failed, was refused or cut), then
`system` and `result` lines. `read_account` reads the calls and results from such a stdout;
`compare_account` sets them beside the recording's `tool_calls` rows (the calls the server
wrote, and the results that came back for them), so a case shows whether the agent's account
agrees with what the server saw.

A line that is not a JSON object is counted (`unreadable`), never fatal: a CLI's stdout may
hold other text. A stdout with no line of the stream-json shape is no account (None): the
command printed something else (another output format, another agent).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

_KINDS = frozenset({"system", "assistant", "user", "result", "stream_event"})


@dataclass(slots=True)
class Account:
    """What the agent said it did: the tool_use ids it took in (in order, once each), each
    result's error flag by tool_use id (an id answered twice is an error if either was), and
    how many lines it printed that were not JSON objects."""

    calls: list[str] = field(default_factory=list)
    results: dict[str, bool] = field(default_factory=dict)
    unreadable: int = 0


def read_account(stdout: str) -> Account | None:
    """The account in a stream-json stdout; None when no line has that shape."""
    account = Account()
    events = 0
    for line in stdout.splitlines():
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:
            account.unreadable += 1
            continue
        if not isinstance(event, dict):
            account.unreadable += 1
            continue
        if event.get("type") in _KINDS:
            events += 1
            _take(account, event)
    return account if events else None


def _take(account: Account, event: dict[str, Any]) -> None:
    message = event.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict):
            continue
        if event["type"] == "assistant" and block.get("type") == "tool_use":
            tool_use_id = str(block.get("id"))
            if tool_use_id not in account.calls:
                account.calls.append(tool_use_id)
        elif event["type"] == "user" and block.get("type") == "tool_result":
            tool_use_id = str(block.get("tool_use_id"))
            account.results[tool_use_id] = (account.results.get(tool_use_id, False)
                                            or block.get("is_error") is True)


def compare_account(account: Account | None,
                    calls: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The agent's account beside the recording's `tool_calls` rows: `agrees` (every call the
    agent reported was written by the server; every result it reported came back to the server,
    with the same error flag, and no other did), the `differences` in words, and the counts.
    None: no account to compare."""
    if account is None:
        return None
    written = {str(row["tool_use_id"]) for row in calls}
    returned: dict[str, bool] = {}
    for row in calls:
        if row["result_request_index"] is not None:
            tool_use_id = str(row["tool_use_id"])
            returned[tool_use_id] = returned.get(tool_use_id, False) or bool(row["is_error"])
    differences = [f"{c}: the agent reported a call the server never wrote"
                   for c in account.calls if c not in written]
    for tool_use_id, is_error in account.results.items():
        if tool_use_id not in returned:
            differences.append(f"{tool_use_id}: the agent reported a result the server never "
                               "received")
        elif returned[tool_use_id] != is_error:
            differences.append(f"{tool_use_id}: the agent's result is_error={is_error}, the "
                               f"server received is_error={returned[tool_use_id]}")
    differences += [f"{c}: the server received a result the agent did not report"
                    for c in returned if c not in account.results]
    return {"agrees": not differences, "differences": differences,
            "calls": len(account.calls), "results": len(account.results),
            "unreadable": account.unreadable}
