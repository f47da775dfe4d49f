"""Calibrated scenarios express the claude-code profile's read-only shell rule
(`toolturn.runtime.read_only_shell`): the regular expression `toolturn traces calibrate` writes
is built from the rule's lists, accepts every command the rule accepts (compound commands, date,
find, git diff, git branch included) and never one it refuses."""

from __future__ import annotations

import random
import tomllib
from pathlib import Path

import pytest

from toolturn.runtime.read_only_shell import is_read_only
from toolturn.tools.spec import SafeWhen
from toolturn.traces.calibrate import calibrated_scenario
from toolturn.traces.sources import read_logs

SHARED = (Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "claude-code-shapes"
          / "shared_id_and_overlap.jsonl")

ACCEPTED = [
    "ls", "ls -la", "pwd", "git status && ls src | wc -l", "date +%s%N; sleep 1; echo done-1",
    "date -u", "find . -name '*.py'", "find src -type f | head -n 3", "git diff HEAD~1",
    "git diff --stat", "git branch", "git branch -a --no-color", "git -C /tmp log --oneline -5",
    "git log --format='%h %s'", "grep -rn \"a|b\" src", "grep -E '^(a|b)$' notes.txt",
    "echo $HOME", "ls;", "rg foo || true", "pwd&&ls", "cat 'a b.txt'", "sleep 0.3; wc -l *.txt",
    "git show HEAD:README.md", "printf '%s\\n' a", "du -sh . ; df -h", "which python",
]
REFUSED = [
    "rm notes.txt", "ls > out.txt", "find . -exec rm {} \\;", "find . -delete", "date -s 2020",
    "date --set=2020", "git diff --output=x", "git branch new", "git -c core.pager=x log",
    "ls $(pwd)", "echo `id`", "ls &", "ls\nrm x", "A=1 ls", "(ls)", "git push", "ls | rm x",
    "echo \"|\"", "find . \"-exec\" rm", "find . -e'xec' rm", "date '-s' 2020", "git -C log",
]


def _calibrated_rule() -> SafeWhen:
    text = calibrated_scenario(read_logs([str(SHARED)]), "shell", 1)
    tools = {t["name"]: t for t in tomllib.loads(text)["tools"]["define"]}
    return SafeWhen.model_validate(tools["Bash"]["concurrency_safe_when"])


@pytest.mark.parametrize("command", ACCEPTED)
def test_every_command_the_rule_accepts_is_safe_in_the_calibrated_scenario(command: str) -> None:
    assert is_read_only(command)
    assert _calibrated_rule().predicate()({"command": command})


@pytest.mark.parametrize("command", REFUSED)
def test_commands_the_rule_refuses_run_alone(command: str) -> None:
    assert not is_read_only(command)
    assert not _calibrated_rule().predicate()({"command": command})


def test_the_expression_is_never_looser_than_the_rule() -> None:
    """Seeded commands glued from the rule's words, quotes and operators: whatever the expression
    accepts the rule accepts (and it accepts most of what the rule does)."""
    predicate = _calibrated_rule().predicate()
    atoms = ["ls", "cat", "git", "find", "date", "rm", "status", "branch", "diff", "log", "-exec",
             "-delete", "-s", "--set=1", "--output=x", "-a", "-C", "-c", "x", "'a b'", '"q"',
             '"|"', "'>'", "\\;", ";", "&&", "||", "|", "&", ">", "(", "$(", "$x", '"-exec"',
             "''", "-'s'", "'-C'", "--git-dir", "\"a|b\"", "'", "\\"]
    rng = random.Random(31)
    agreed = both = 0
    for _ in range(20_000):
        command = " ".join(rng.choice(atoms) for _ in range(rng.randint(1, 5)))
        rule = is_read_only(command)
        if predicate({"command": command}):
            assert rule, command
            both += 1
        agreed += rule
    assert both > 0.9 * agreed
