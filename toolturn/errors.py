"""The one exception type the command line turns into a clean message and exit status 2, and how
what a user gave is shown in a message.

A message may echo anything: a file's name, a key or a value read from the file, a flag's
argument. Two rules keep such echoes from reaching the terminal raw:

1. An echoed value is `quoted` where the message is made: in double quotes, with backslashes,
   quotes and unprintable characters escaped, so that its ends are visible and it is one line.
2. Every line the command line prints for an error is `printable` (toolturn/cli.py applies it to
every
   error of every command): control characters, line and paragraph separators and the other
   characters Python calls unprintable become escapes (``\\n``, ``\\x1b``, ``\\u2028``), so one
   line of a message stays one line on stderr and a file cannot send the terminal an escape
   sequence (colours, a window title, a cleared screen) through an error, even from a place
   that did not apply rule 1.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


class UserError(Exception):
    """Bad input from the user (a file, a flag, a scenario): reported without a traceback.

    The message should name what was wrong and where (file, field path) and why. Several
    problems at once (a scenario's schema errors) are `details`, one line each under the
    message.
    """

    def __init__(self, message: str, *, details: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.details = tuple(details)

    def __str__(self) -> str:
        return "\n  ".join([self.message, *self.details])

    def lines(self) -> list[str]:
        """The message and its details as they are printed: each one line (rule 2), the
        details indented under the message."""
        return [printable(self.message), *(f"  {printable(detail)}" for detail in self.details)]


def print_error(error: UserError, prefix: str = "") -> None:
    """`error` on stderr, every line printable, the first after `prefix`."""
    first, *rest = error.lines()
    print(f"{prefix}{first}", *rest, sep="\n", file=sys.stderr)


def printable(text: str) -> str:
    """`text` with every unprintable character as its escape (rule 2); the rest unchanged."""
    if text.isprintable():
        return text
    # repr escapes exactly the characters str.isprintable refuses, as \n, \xNN, \uNNNN.
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


def quoted(text: str) -> str:
    """`text` echoed in a message (rule 1): double-quoted, backslashes and quotes escaped, then
    made printable."""
    return '"' + printable(text.replace("\\", "\\\\").replace('"', '\\"')) + '"'
