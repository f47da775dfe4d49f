"""The command reference: every command and subcommand of `toolturn`, from the argparse parsers
the commands build (`toolturn.cli.build_parser`), with each argument's form, default and help.

The usage lines are composed here rather than taken from argparse's formatter, whose wrapping
follows the terminal's width (and whose layout moves between Python versions): the page must be
the same bytes wherever it is made.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from toolturn.cli import EXIT_STATUSES, build_parser
from toolturn.reference.markdown import GENERATED, code, table

HEADER = ("argument", "default", "meaning")


def _metavar(action: argparse.Action) -> str:
    if isinstance(action.metavar, str):
        return action.metavar
    if action.choices is not None and not action.metavar:
        return "{" + ",".join(str(choice) for choice in action.choices) + "}"
    return action.dest.upper() if action.option_strings else action.dest


def _form(action: argparse.Action) -> str:
    """How the argument is written (`-n/--sessions N`, `LOGS [LOGS ...]`)."""
    name = _metavar(action)
    nargs = action.nargs
    if nargs == 0:
        value = ""
    elif isinstance(nargs, int):
        value = " ".join([name] * nargs)
    else:
        value = {
            "?": f"[{name}]", "*": f"[{name} ...]", "+": f"{name} [{name} ...]",
            argparse.REMAINDER: f"{name} ...",
        }.get(nargs or "", name)
    flags = "/".join(action.option_strings)
    return f"{flags} {value}".strip() if flags else value


def _help(action: argparse.Action, prog: str) -> str:
    text = action.help or ""
    if "%" in text:
        text = text % {**vars(action), "prog": prog}
    return text


def _default(action: argparse.Action) -> str:
    """A default worth showing: not for flags (off unless given) or what is unset."""
    if action.nargs == 0 or action.default in (None, [], argparse.SUPPRESS):
        return ""
    return code(str(action.default))


def _arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [
        action for action in parser._actions
        if action.help != argparse.SUPPRESS
        and not isinstance(action, argparse._HelpAction | argparse._SubParsersAction)
    ]


def _usage(parser: argparse.ArgumentParser) -> str:
    # As argparse writes it: the options, then the positionals (`-- COMMAND ARGS` ends a line).
    actions = sorted(_arguments(parser), key=lambda action: not action.option_strings)
    parts = [parser.prog]
    for action in actions:
        form = _form(action)
        parts.append(form if action.required or not action.option_strings else f"[{form}]")
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            parts.append("{" + ",".join(action.choices) + "} ...")
    return " ".join(parts)


def _commands(
    parser: argparse.ArgumentParser, summary: str = ""
) -> Iterator[tuple[argparse.ArgumentParser, str]]:
    """Each command's parser with its one-line help, subcommands after their command."""
    yield parser, summary
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in sorted(action.choices.items()):
                yield from _commands(sub, helps.get(name, ""))


def _section(parser: argparse.ArgumentParser, summary: str) -> list[str]:
    lines = ["", f"## {parser.prog}", ""]
    if summary:
        lines += [summary[:1].upper() + summary[1:] + ".", ""]
    if parser.description:
        lines += [" ".join(parser.description.split()), ""]
    lines += ["```", _usage(parser), "```"]
    rows = [[code(_form(a)), _default(a), _help(a, parser.prog)] for a in _arguments(parser)]
    if rows:
        lines += ["", *table(HEADER, rows)]
    return lines


def render() -> str:
    """The command reference page."""
    root = build_parser([])
    lines = [
        GENERATED, "", "# Command reference", "",
        "Every command of `toolturn` (also `python -m toolturn`, and `sim`, the script's "
        "second name) with its arguments, as `toolturn COMMAND --help` gives them. Bad input "
        "is one line on stderr and exit status 2.",
        "", "```", EXIT_STATUSES.rstrip("\n"), "```",
    ]
    for parser, summary in _commands(root):
        if parser is not root:
            lines += _section(parser, summary)
    return "\n".join(lines) + "\n"
