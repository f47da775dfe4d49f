"""LOGS arguments to logged sessions: find the files, tell their format, read them.

Each argument is a file or a folder; a folder is searched recursively for `*.jsonl` files (so
`~/.claude/projects` or one project's folder both work) and for `toolturn serve --record` folders
(`toolturn.traces.serve_recording`: a folder holding `recording.json`, so `toolturn probe --out DIR`
gives one recording per case, and a `toolturn run` folder is no recording), in sorted order. A
file's format is told from its first readable line: a line with `messages` or `request` is a
request log (`toolturn.traces.request_log`), anything else a Claude Code session log
(`toolturn.traces.claude_code`). A folder named as an argument is a recording also when it holds a
recording's table but lost its `recording.json` (reported).

Lines that are not UTF-8 or not JSON objects are reported and skipped here, for every format; a
file that cannot be read at all (missing, too large) is a `UserError`, as is an argument that
names no log file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolturn.errors import UserError
from toolturn.input_files import read_input
from toolturn.runtime.strict_json import NotAnObject, parse_json_object
from toolturn.traces.claude_code import ClaudeCodeReader
from toolturn.traces.logged import LoggedSession
from toolturn.traces.request_log import RequestLogReader
from toolturn.traces.serve_recording import RecordingReader, is_recording
from toolturn.traces.skipped import Skipped
from toolturn.wire.record_files import RECORDING_FILE

UTF8_BOM = b"\xef\xbb\xbf"


@dataclass(slots=True)
class Logs:
    """Everything read from the LOGS arguments."""

    files: list[str] = field(default_factory=list)
    sessions: list[LoggedSession] = field(default_factory=list)
    skipped: Skipped = field(default_factory=Skipped)
    # Claude Code lines that are no part of a conversation (summary, attachment, ...), by type.
    other_lines: dict[str, int] = field(default_factory=dict)
    # Claude Code's `api-request` lines (one per request sent), read to time requests.
    request_lines: int = 0
    formats: dict[str, str] = field(default_factory=dict)


def log_files(arguments: list[str]) -> list[Path]:
    files: list[Path] = []
    for argument in arguments:
        path = Path(argument)
        if path.is_dir() and is_recording(path, named=True):
            files.append(path)
        elif path.is_dir():
            recordings = {p.parent for p in path.rglob(RECORDING_FILE) if p.is_file()}
            found = [p for p in path.rglob("*.jsonl") if p.is_file()]
            if not found and not recordings:
                raise UserError(
                    f"{argument}: no *.jsonl log files or toolturn serve --record folders in this "
                    "folder"
                )
            files.extend(sorted(found + sorted(recordings)))
        elif path.is_file():
            files.append(path)
        else:
            raise UserError(f"{argument}: no such file or folder")
    return files


def json_lines(path: Path, skipped: Skipped) -> list[tuple[int, dict[str, Any]]]:
    """The file's JSON objects with their line numbers. Lines end at newlines only (JSON allows
    U+2028 and U+0085 raw in a string), and each is decoded on its own: one line with a byte
    that is not UTF-8 (a write cut mid-character, a binary paste) is skipped, not the file."""
    body = read_input(str(path), str(path)).removeprefix(UTF8_BOM)
    lines = []
    for number, encoded in enumerate(body.split(b"\n"), start=1):
        try:
            raw = encoded.removesuffix(b"\r").decode("utf-8")
        except UnicodeDecodeError as error:
            skipped.add(str(path), number, f"not UTF-8: {error.reason} at byte {error.start}")
            continue
        if not raw.strip():
            continue
        try:
            lines.append((number, parse_json_object(raw)))
        except NotAnObject as error:
            skipped.add(str(path), number, f"not a JSON object: a {error.kind}")
        except (ValueError, RecursionError) as error:
            skipped.add(str(path), number, f"not JSON: {error}")
    return lines


def file_format(lines: list[tuple[int, dict[str, Any]]]) -> str:
    for _number, line in lines:
        if "messages" in line or "request" in line:
            return "request-log"
        return "claude-code"
    return "claude-code"


def read_logs(arguments: list[str]) -> Logs:
    logs = Logs()
    claude = ClaudeCodeReader(logs.skipped)
    requests = RequestLogReader(logs.skipped)
    recordings = RecordingReader(logs.skipped)
    for path in log_files(arguments):
        if path.is_dir():
            logs.files.append(str(path))
            logs.formats[str(path)] = "serve-recording"
            logs.sessions.extend(recordings.read(path))
            continue
        first_skipped = len(logs.skipped.lines)
        lines = json_lines(path, logs.skipped)
        kind = file_format(lines)
        logs.files.append(str(path))
        logs.formats[str(path)] = kind
        reader = requests if kind == "request-log" else claude
        logs.sessions.extend(reader.read(path, lines))
        # In line order: lines that are not JSON were found before the reader's problems.
        logs.skipped.lines[first_skipped:] = sorted(
            logs.skipped.lines[first_skipped:], key=lambda skipped: skipped.line
        )
    logs.other_lines = dict(sorted(claude.other_lines.items()))
    logs.request_lines = claude.request_lines
    return logs
