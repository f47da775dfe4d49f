"""Whether a client completed a tool turn against `toolturn serve`, read from its recording.

    python -m toolturn.wire.tool_turns DIR [--protocol openai-responses]

A tool turn is complete when a call the server sent (a `tool_calls` row of the recording) is
answered by a later request of its session (the row's `result_request_index`: for the
Responses API, a `function_call_output` with the call's id) that the server took: status 200,
no pairing violation (no 400). With `--protocol`, both requests must have come in that protocol.
`make codex-turn` runs this on a session of the real Codex CLI, so a Codex release that stops
completing tool turns against the server fails there, outside `make test`.

Exit status: 0 with one line per completed turn (the request that sent the calls, the one that
answered them, the calls' names); 1 when there is none, saying what the recording holds; 2 when
DIR is not a readable recording.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from toolturn.wire.codecs import ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES
from toolturn.wire.record_files import RECORDING_FILE, read_table
from toolturn.wire.recording import REQUESTS, TOOL_CALLS

EXIT_DONE = 0
EXIT_NONE = 1
EXIT_UNREADABLE = 2


@dataclass(frozen=True, slots=True)
class ToolTurn:
    """One completed tool turn: the request whose answer sent calls, the request that answered
    them, and the names of the calls it answered."""

    request_index: int
    result_request_index: int
    names: tuple[str, ...]


def _taken(request: dict[str, Any] | None, protocol: str | None) -> bool:
    return (request is not None and request["status"] == 200
            and not request["pairing_violations"]
            and (protocol is None or request["protocol"] == protocol))


def completed_tool_turns(requests: pa.Table, tool_calls: pa.Table,
                         protocol: str | None = None) -> list[ToolTurn]:
    """The tool turns completed in a recording's tables, in request order."""
    by_index = {row["request_index"]: row for row in requests.to_pylist()}
    answered: dict[tuple[int, int], list[str]] = {}
    for call in tool_calls.to_pylist():
        result = call["result_request_index"]
        if result is None or not _taken(by_index.get(call["request_index"]), protocol):
            continue
        if _taken(by_index.get(result), protocol):
            answered.setdefault((call["request_index"], result), []).append(call["name"])
    return [ToolTurn(index, result, tuple(names))
            for (index, result), names in sorted(answered.items())]


def _summary(requests: pa.Table, tool_calls: pa.Table) -> str:
    statuses = sorted({str(status) for status in requests.column("status").to_pylist()})
    protocols = sorted({str(name) for name in requests.column("protocol").to_pylist()})
    return (f"{requests.num_rows} requests (status {', '.join(statuses) or '-'}; protocol "
            f"{', '.join(protocols) or '-'}), {tool_calls.num_rows} calls sent")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m toolturn.wire.tool_turns",
        description="Exit 0 if the recording holds a completed tool turn, else 1.")
    parser.add_argument("folder", metavar="DIR", type=Path,
                        help="a `toolturn serve --record` folder")
    parser.add_argument("--protocol", choices=(ANTHROPIC, OPENAI_RESPONSES, OPENAI_CHAT),
                        default=None, help="count only requests in this protocol")
    args = parser.parse_args(argv)
    folder: Path = args.folder
    if not (folder / RECORDING_FILE).is_file():
        print(f"{folder}: not a recording (no {RECORDING_FILE})", file=sys.stderr)
        return EXIT_UNREADABLE
    try:
        requests, tool_calls = read_table(folder, REQUESTS), read_table(folder, TOOL_CALLS)
    except (OSError, pa.ArrowException) as error:
        print(f"{folder}: cannot read the recording ({error})", file=sys.stderr)
        return EXIT_UNREADABLE
    turns = completed_tool_turns(requests, tool_calls, args.protocol)
    for turn in turns:
        print(f"request {turn.request_index}: {len(turn.names)} call(s) "
              f"({', '.join(turn.names)}) answered by request {turn.result_request_index}")
    if not turns:
        print(f"{folder}: no tool turn completed: {_summary(requests, tool_calls)}",
              file=sys.stderr)
        return EXIT_NONE
    print(f"{folder}: {len(turns)} tool turn(s) completed")
    return EXIT_DONE


if __name__ == "__main__":
    sys.exit(main())
