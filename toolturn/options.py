"""Command-line options shared by the commands: the parser class whose usage errors name the
command's own usage and a near option, and values that name several things
(`--policy streaming,serial`).

Such an option takes one word per use, a comma list, and may be repeated (`-p streaming -p
serial`): never a run of words (argparse's `nargs="+"`), which would take the positional
argument after it as one more value (`toolturn run -p streaming default` read `default` as a
policy and reported the wrong problem).
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from toolturn.errors import printable

# toolturn's exit status for bad input (toolturn.cli lists them all).
EXIT_BAD_INPUT = 2


class Parser(argparse.ArgumentParser):
    """argparse's parser with its usage errors printable (toolturn/errors.py, rule 2): it echoes
    unknown arguments as they were typed. The subcommands' parsers are of this class too.

    A usage error of a command given a misspelt option names that option instead, the cause
    of the rest: `capacity default --sol X` is missing `--slo` because of `--sol`."""

    _words: Sequence[str] = ()

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        # The words this parser reads (a subcommand's parser: its own), for `error`.
        self._words = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        misspelt = misspelt_option(self, self._words)
        self.print_usage(sys.stderr)
        shown = misspelt if misspelt is not None else message
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {printable(shown)}\n")


def reject_unknown(parser: argparse.ArgumentParser, unknown: Sequence[str]) -> NoReturn:
    """`parser`'s usage error for the arguments it does not know. A misspelt option is named as
    the problem, alone (`misspelt_option`): in `run --sesions 3 default` argparse took `3` for
    the scenario and left `default` over, but the user's mistake is `--sesions`."""
    parser.error(
        misspelt_option(parser, unknown) or f"unrecognized arguments: {' '.join(unknown)}"
    )


def misspelt_option(parser: argparse.ArgumentParser, words: Sequence[str]) -> str | None:
    """"unrecognized argument: --sesions (did you mean --sessions?)" for the first of `words`
    (before `--`) that is no long option of the command `parser`, nor argparse's abbreviation
    of one, but is near one; None if there is none, and for a parser of subcommands (its words
    hold its subcommand's options)."""
    if any(isinstance(action, argparse._SubParsersAction) for action in parser._actions):
        return None
    options = [o for action in parser._actions for o in action.option_strings if o[:2] == "--"]
    for word in words:
        if word == "--":
            break
        typed = word.partition("=")[0]
        if not typed.startswith("--") or any(option.startswith(typed) for option in options):
            continue
        # Names without their dashes, which every long option shares: `--bogus` is not near
        # `--out`.
        near = difflib.get_close_matches(typed[2:], [o[2:] for o in options], n=1, cutoff=0.6)
        if near:
            return f"unrecognized argument: {word} (did you mean --{near[0]}?)"
    return None


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
