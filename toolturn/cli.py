"""The `toolturn` console script: discovers the subcommands in `toolturn.commands` and runs one.

`main` runs one command and returns its exit status (tests call it in-process); `console` is
the console script and `python -m toolturn`: `main`, then the end of the process (see `console`).
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import pkgutil
import signal
import sys
import threading
from typing import NoReturn

from toolturn import __version__, commands
from toolturn.errors import UserError, print_error, printable
from toolturn.options import EXIT_BAD_INPUT, Parser, reject_unknown

# Exit statuses: 0 success, 1 a check failed (strict repair, a regression), 2 bad input,
# 130 interrupted (128 + SIGINT, as a shell reports a command a Ctrl-C killed), 141 the reader of
# the output went away (128 + SIGPIPE: what `yes | head -1` reports for `yes`, so a pipeline
# under `set -o pipefail` sees it as the shell would any other command cut off by its reader).
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141

EXIT_STATUSES = """\
exit status:
  0    done
  1    a check failed: a strict repair found violations, toolturn compare a regression,
       a strict-mode run met a pairing violation (the message names seed and session),
       simulations of toolturn run failed (each named; the others kept for --resume)
  2    bad input (a file, a flag, a scenario), or a result that could not be written
  130  interrupted (Ctrl-C, or SIGTERM to toolturn run); nothing is left half written
  141  the reader of the output went away (toolturn ... | head -1)
"""


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or, when `argv` (default: the process's arguments) names
    one, of that command alone: a command's module imports what the command needs (pyarrow,
    simpy, pydantic, the SDK: a second or more), and `toolturn repair` should not wait for the
    imports of `toolturn run`. `toolturn --version` gets none; `toolturn --help`, `toolturn` and a
    misspelt command get every command."""
    parser = Parser(
        prog="toolturn",
        description="Simulate and benchmark the streaming tool turn of LLM agents.",
        epilog=EXIT_STATUSES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    # The module of a command is named for it (a test checks every one).
    names = sorted(info.name for info in pkgutil.iter_modules(commands.__path__))
    given = sys.argv[1:] if argv is None else argv
    chosen = _command_named(given)
    if chosen in names:
        names = [chosen]
    elif given[:1] == ["--version"]:
        names = []  # printed before any command is looked for
    for name in names:
        module = importlib.import_module(f"{commands.__name__}.{name}")
        module.add_parser(subparsers)
    return parser


def parse_arguments(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """`parser.parse_args(argv)`, except that arguments the command does not know are its error,
    not `toolturn`'s: argparse hands a subcommand's unknown arguments up to the top parser, which
    then prints its own usage (`toolturn [-h] [--version] COMMAND ...`) for `run --sesions 3`.
    The innermost command's parser (`toolturn traces stats`, not `toolturn traces`) says so
    (toolturn.options.reject_unknown)."""
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        reject_unknown(innermost_parser(parser, args), unknown)
    return args


def innermost_parser(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> argparse.ArgumentParser:
    """The parser of the deepest subcommand `args` chose (`traces` then `stats`), by each
    level's subparsers' `dest`; `parser` itself when it has none."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = dict(action.choices).get(getattr(args, action.dest, None) or "")
            return parser if chosen is None else innermost_parser(chosen, args)
    return parser


def _command_named(argv: list[str]) -> str | None:
    """The command `argv` names: its first argument, unless that is an option of `toolturn`."""
    return argv[0] if argv and not argv[0].startswith("-") else None


# Arrow's allocator for the process, read by Arrow once, when it first allocates: the C
# library's (`system`), not Arrow's default (mimalloc in this pyarrow). Measured when it was
# chosen (commit c24a00b): assembling and summarising a 3,000-session run folder holds at most
# 34 MB of Arrow buffers at once, yet under mimalloc the process grew by about 165 MB meanwhile
# and by about 90 MB under the system allocator. Only where memory comes from changes, no value or
# byte written. A value the user set is kept.
ARROW_POOL_VARIABLE = "ARROW_DEFAULT_MEMORY_POOL"
ARROW_POOL = "system"


def main(argv: list[str] | None = None) -> int:
    # Before any command's module is imported (they import pyarrow), so Arrow reads it.
    os.environ.setdefault(ARROW_POOL_VARIABLE, ARROW_POOL)
    try:
        parser = build_parser(argv)
    except KeyboardInterrupt:
        # Building the parser imports the command (numpy, pyarrow): a second or so to cut.
        print("toolturn: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    args = parse_arguments(parser, argv)
    # The words as the user typed them (a packaged name, not the path it resolved to), for a
    # command that tells how to run it again (toolturn run's --resume hint).
    args.command_line = list(sys.argv[1:] if argv is None else argv)
    try:
        status = int(args.func(args) or 0)
        # Flushed here so that a reader gone away is seen below, not at exit as a traceback.
        sys.stdout.flush()
        return status
    except UserError as error:
        print_error(error, f"toolturn {args.command}: error: ")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt as interrupt:
        # A command may say what it left behind in the interrupt's message.
        note = f": {printable(str(interrupt))}" if str(interrupt) else ""
        print(f"toolturn {args.command}: interrupted{note}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_BROKEN_PIPE


def console() -> NoReturn:
    """The console script: `main`, then an end of the process that a Ctrl-C cannot cut silently.

    After the command Python would tear itself down, and it gives SIGINT back its default action
    before it unloads its modules (numpy, pyarrow, matplotlib: a fraction of a second), so a
    Ctrl-C then killed the process by the signal without a word. Instead, from the command's end
    a SIGINT is only noted; the threads are joined and the exit functions run as Python would,
    and the process ends at once, without that teardown: an interrupt noted meanwhile is
    reported as any other (status 130). (Noted, not blocked: a mask would hold in this thread
    only, and native threads of numpy or pyarrow would still take the signal.)
    """
    noted: list[int] = []
    try:
        try:
            status = main()
        except SystemExit as request:  # argparse's: --help, --version, a usage error
            status = request.code if isinstance(request.code, int) else int(bool(request.code))
        signal.signal(signal.SIGINT, lambda signum, frame: noted.append(signum))
    except KeyboardInterrupt:  # after the command, before the handler
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        noted.append(signal.SIGINT)
        status = 0
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    if noted and status != EXIT_INTERRUPTED:
        status = EXIT_INTERRUPTED
        print("toolturn: interrupted", file=sys.stderr)
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
        status = status or EXIT_BROKEN_PIPE
    sys.stderr.flush()
    # The rest of the teardown frees memory that the end of the process frees anyway.
    os._exit(status)


def _quiet_stdout() -> None:
    # Python's recipe: point stdout at devnull, so that flushing it at exit cannot fail again.
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


if __name__ == "__main__":
    console()
