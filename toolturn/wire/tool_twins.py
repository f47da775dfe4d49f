"""The scenario's tools played by a client's own: which tool of an agent does what a scenario
tool does, and how a scripted call's input is said in that tool's terms.

Claude Code declares the scenario's names (Bash, Read, ...), so its calls need no mapping.
Codex CLI has one shell, `exec_command` (`cmd` a command line; the older `shell` takes an
argv), and no file tools: Bash's command and a Read (as `cat PATH`) go to its shell. Qwen Code
has `run_shell_command`, `read_file`, `glob` and `grep_search`. A twin takes its scenario tool's
`tool_mix` weight (`TWINS`); a scripted call to a tool the request does not declare goes to the
first twin it declares (`played_by`), its input translated; with none declared it stays as
scripted (an unknown tool to the client, as the script's author may mean).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Collection
from typing import Any

Input = dict[str, Any]


def _shell_line(call: Input) -> str:
    return str(call.get("command", ""))


def _cat(call: Input) -> str:
    return f"cat {shlex.quote(str(call.get('file_path', '')))}"


# Scenario tool -> its twins, first preferred, each with the input it gets for a scripted call.
_PLAYERS: dict[str, list[tuple[str, Callable[[Input], Input]]]] = {
    "Bash": [
        ("exec_command", lambda call: {"cmd": _shell_line(call)}),
        ("run_shell_command", lambda call: {"command": _shell_line(call)}),
        ("shell", lambda call: {"command": ["bash", "-lc", _shell_line(call)]}),
    ],
    "Read": [
        ("read_file", lambda call: {"file_path": call.get("file_path", "")}),
        ("exec_command", lambda call: {"cmd": _cat(call)}),
        ("run_shell_command", lambda call: {"command": _cat(call)}),
        ("shell", lambda call: {"command": ["bash", "-lc", _cat(call)]}),
    ],
    "Glob": [("glob", lambda call: {"pattern": call.get("pattern", "*")})],
    "Grep": [("grep_search", lambda call: {"pattern": call.get("pattern", "")})],
}

# A client tool -> the scenario tool whose weight it takes (its first role above: reversed, so
# that the first one is written last).
TWINS: dict[str, str] = {
    twin: tool for tool, players in reversed(_PLAYERS.items()) for twin, _ in players
}


def played_by(name: str, call: Input, declared: Collection[str]) -> tuple[str, Input]:
    """The tool and input a scripted call to `name` goes out as, given the names declared."""
    if name in declared:
        return name, call
    for twin, translated in _PLAYERS.get(name, ()):
        if twin in declared:
            return twin, translated(call)
    return name, call
