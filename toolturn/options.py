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


FORMATS = ("table", "markdown")


def add_format_options(parser: argparse.ArgumentParser, json_help: str) -> None:
    """`--json` and `--format table|markdown`, which exclude each other (argparse's usage
    error, exit 2): JSON is for programs, Markdown the same tables for a CI step summary."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--json", action="store_true", help=json_help)
    group.add_argument(
        "--format", choices=FORMATS, default="table",
        help="how the tables are printed: table (the default, for a terminal or a log) or "
        "markdown (the same tables as Markdown, e.g. for a CI step summary)",
    )
