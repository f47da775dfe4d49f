"""Values of command-line options that name several things (`--policy streaming,serial`).

Such an option takes one word per use, a comma list, and may be repeated (`-p streaming -p
serial`): never a run of words (argparse's `nargs="+"`), which would take the positional
argument after it as one more value (`toolturn run -p streaming default` read `default` as a
policy and reported the wrong problem).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence


def comma_list(choices: Sequence[str]) -> Callable[[str], list[str]]:
    """An argparse `type` (with `action="extend"`) reading `a,b` as the choices `a` and `b`; an
    empty item or one not among `choices` is a usage error naming it and the choices."""

    def parse(text: str) -> list[str]:
        values = [value.strip() for value in text.split(",")]
        for value in values:
            if value not in choices:
                shown = repr(value) if value else "an empty name"
                raise argparse.ArgumentTypeError(
                    f"invalid choice: {shown} (choose from {', '.join(choices)})"
                )
        return values

    return parse


def choices_help(choices: Sequence[str]) -> str:
    """The part of a help text naming the choices and how to give several."""
    return f"one of {', '.join(choices)}; several as a comma list or by repeating the option"
