"""The `sim` console script: discovers the subcommands in `sim.commands` and runs one."""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys

from sim import __version__, commands
from sim.errors import UserError

# Exit statuses: 0 success, 1 a check failed (strict repair, a regression), 2 bad input,
# 130 interrupted (128 + SIGINT, as a shell reports a command a Ctrl-C killed), 141 the reader of
# the output went away (128 + SIGPIPE: what `yes | head -1` reports for `yes`, so a pipeline
# under `set -o pipefail` sees it as the shell would any other command cut off by its reader).
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sim",
        description="Simulate and benchmark the streaming tool turn of LLM agents.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        module.add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        parser = build_parser()
    except KeyboardInterrupt:
        # Building the parser imports every command (numpy, pyarrow): a second or so to cut.
        print("sim: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    args = parser.parse_args(argv)
    try:
        status = int(args.func(args) or 0)
        # Flushed here so that a reader gone away is seen below, not at exit as a traceback.
        sys.stdout.flush()
        return status
    except UserError as error:
        print(f"sim {args.command}: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt as interrupt:
        # A command may say what it left behind in the interrupt's message.
        note = f": {interrupt}" if str(interrupt) else ""
        print(f"sim {args.command}: interrupted{note}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Python's recipe: point stdout at devnull, so that flushing it at exit cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())
