"""Start-up: a command imports what it uses, not what the other commands use
(`toolturn.cli.build_parser` builds the parser of the command named alone). Checked in a fresh
interpreter per command: the heavy libraries left in `sys.modules` after the command ran."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

from toolturn import commands
from toolturn.cli import build_parser

ROOT = Path(__file__).parents[2]
FIXTURES = Path(__file__).parents[1] / "fixtures"
HEAVY = ("pyarrow", "simpy", "pydantic", "numpy", "anthropic", "matplotlib", "rich", "asyncio")
_PROGRAM = """
import json, sys
from toolturn.cli import main
try:
    status = main(sys.argv[2:])
except SystemExit as end:  # argparse's, for --version and --help
    status = end.code
heavy = [name for name in json.loads(sys.argv[1]) if name in sys.modules]
print(json.dumps([status, heavy]), file=sys.stderr)
"""


def _imported(*argv: str) -> tuple[int, list[str]]:
    """The exit status of `sim ARGV...` and the heavy libraries it imported."""
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM, json.dumps(HEAVY), *argv],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )
    status, heavy = json.loads(done.stderr.strip().splitlines()[-1])
    return status, heavy


@pytest.mark.parametrize(
    ("argv", "allowed"),
    [
        (("repair", str(FIXTURES / "transcripts" / "block_without_type.json")), ()),
        (("accumulate", str(FIXTURES / "streams" / "tool_use_split.sse")), ()),
        # Validation is pydantic's, and a scenario's distributions are numpy's.
        (("validate", str(ROOT / "scenarios" / "default.toml")), ("pydantic", "numpy")),
    ],
)
def test_a_command_imports_only_what_it_uses(
    argv: tuple[str, ...], allowed: tuple[str, ...]
) -> None:
    status, heavy = _imported(*argv)
    assert status in (0, 2)  # the transcript fixture is a bad one: reported, exit 2
    assert set(heavy) <= set(allowed), f"sim {argv[0]} imported {heavy}"


def test_the_whole_parser_is_built_for_help_and_unknown_commands() -> None:
    names = {info.name for info in pkgutil.iter_modules(commands.__path__)}
    for argv in ([], ["--help"], ["no-such-command"]):
        parser = build_parser(argv)
        assert set(parser._subparsers._group_actions[0].choices) == names  # type: ignore[union-attr]


def test_every_command_module_is_named_for_its_command() -> None:
    # build_parser finds a command's module by its name.
    for info in pkgutil.iter_modules(commands.__path__):
        parser = build_parser([info.name, "--help"])
        choices = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
        assert set(choices) == {info.name}


def test_the_version_needs_no_command() -> None:
    assert _imported("--version") == (0, [])
