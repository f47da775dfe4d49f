"""Whether a shell command only reads: the claude-code profile's Bash rule (issue 30, section 3).

The CLI runs `date +%s%N; sleep 1; echo done-1` in parallel with a sibling of the same shape, and
any command with an output redirect alone. So a command is read-only when it splits, at `;`,
`&&`, `||` and `|` outside quotes, into parts that are each a read-only command
(`READ_ONLY_PROGRAMS`, `find` without its writing actions, git's read-only subcommands).
Anything else is not: a redirect (`>`, `<`), a substitution (`$(`, backquotes, `<(`), a
subshell or group, a background `&`, a second line, a variable assignment, any other program.
A wrong "not read-only" only serialises a call; a wrong "read-only" runs a writer beside others,
so every doubt answers no.

    READ_ONLY_COMMAND({"command": "git status && ls src | wc -l"})   # True
    READ_ONLY_COMMAND({"command": "ls > listing.txt"})                # False
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

READ_ONLY_PROGRAMS = frozenset({
    "cat", "head", "tail", "wc", "ls", "pwd", "echo", "printf", "date", "sleep", "true", "grep",
    "rg", "find", "which", "file", "stat", "du", "df", "tree", "git",
})
READ_ONLY_GIT = frozenset({
    "status", "diff", "log", "show", "branch", "rev-parse", "ls-files", "blame",
})
SEPARATORS = frozenset({";", "&&", "||", "|"})
# find's actions that run or write something (-exec and -delete are the issue's; -ok, -fprint
# and kin write or run as well).
FIND_WRITERS = frozenset({
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
})
# Arguments that turn a read-only program into a writer: `date -s` sets the clock, `git diff
# --output=FILE` writes a file; `git branch NAME` makes a branch (only listing options pass);
# `tree -o FILE` writes its listing to a file; `rg --pre CMD` runs CMD on every file searched.
_DATE_SETTERS = ("-s", "--set")
_WRITING_OPTIONS = {"tree": ("-o",), "rg": ("--pre",)}
_GIT_BRANCH_LISTING = frozenset({
    "-a", "-r", "-v", "-vv", "-l", "--list", "--all", "--remotes", "--show-current",
    "--verbose", "--no-color", "--color",
})
# Text that substitutes or runs something even inside double quotes.
_SUBSTITUTIONS = ("$(", "`", "<(", ">(")


@dataclass(frozen=True, slots=True)
class ReadOnlyCommand:
    """A per-call safety predicate (`CallSafety`): the string at `field` is a read-only shell
    command. Data (a frozen dataclass: equal, hashable, picklable) like `InputPattern`."""

    field: str

    def __call__(self, tool_input: Mapping[str, Any]) -> bool:
        value = tool_input.get(self.field)
        return isinstance(value, str) and is_read_only(value)


def is_read_only(command: str) -> bool:
    """Whether `command` only reads (the module docstring's rule)."""
    if "\n" in command or "\r" in command or any(s in command for s in _SUBSTITUTIONS):
        return False
    words = _words(command)
    if words is None:
        return False
    parts: list[list[str]] = [[]]
    for word in words:
        if word in SEPARATORS:
            parts.append([])
        else:
            parts[-1].append(word)
    if len(parts) > 1 and not parts[-1] and words[-1] == ";":
        parts.pop()  # `ls;`: a trailing `;` ends the command, it starts no other
    return all(part and _part_reads_only(part) for part in parts)


def _words(command: str) -> list[str] | None:
    """The command's words and operators (quotes removed), None if it does not parse."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""  # `#` inside a word is text; a comment is not worth allowing
    try:
        return list(lexer)
    except ValueError:  # an unclosed quote
        return None


def _part_reads_only(part: list[str]) -> bool:
    program, arguments = part[0], part[1:]
    if program not in READ_ONLY_PROGRAMS:
        return False  # any other program, an assignment (`A=1 ls`), a redirect or `(`
    if any(_is_operator(word) for word in arguments):
        return False  # `>`, `>>`, `<`, `&`, `(`: punctuation that is not a separator
    if program == "find":
        return not any(word in FIND_WRITERS for word in arguments)
    if program == "date":
        return not any(word in _DATE_SETTERS or word.startswith("--set=") for word in arguments)
    if program == "git":
        return _git_reads_only(arguments)
    options = _WRITING_OPTIONS.get(program, ())
    # `-o FILE`, `-oFILE` and `--pre=CMD` alike.
    return not any(word.startswith(option) for word in arguments for option in options)


def _is_operator(word: str) -> bool:
    # shlex gives punctuation as words made only of its punctuation characters.
    return bool(word) and all(char in "();<>|&" for char in word)


def _git_reads_only(arguments: list[str]) -> bool:
    # `git -C DIR status`: options before the subcommand are skipped; `-c key=value` sets config
    # for the command (an alias or hook could then run anything), so it is refused.
    position = 0
    while position < len(arguments) and arguments[position].startswith("-"):
        if arguments[position] in ("-c", "--exec-path") or arguments[position].startswith(
                "--exec-path="):
            return False
        position += 2 if arguments[position] in ("-C", "--git-dir", "--work-tree") else 1
    if position >= len(arguments) or arguments[position] not in READ_ONLY_GIT:
        return False
    subcommand, rest = arguments[position], arguments[position + 1:]
    if any(word == "--output" or word.startswith("--output=") for word in rest):
        return False
    if subcommand == "branch":
        return all(word in _GIT_BRANCH_LISTING for word in rest)
    return True
