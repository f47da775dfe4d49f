"""`InputPattern`, the per-call safety a profile or scenario declares: its compiled pattern is its
own (no module-wide cache in the runtime), invisible to equality, hashing and pickling. And the
claude-code profile's Bash rule (`ReadOnlyCommand`, issue 30 section 3): compound commands of
read-only parts only."""

from __future__ import annotations

import pickle
import re

import pytest

from toolturn.runtime.read_only_shell import ReadOnlyCommand, is_read_only
from toolturn.runtime.recovery import CLAUDE_CODE, READ_ONLY_BASH, InputPattern


def test_a_pattern_judges_the_field_and_refuses_shell_metacharacters() -> None:
    pattern = InputPattern("command", r"(ls|git status)(\s.*)?")
    assert pattern({"command": "git status"})
    assert not pattern({"command": "git status > out"})
    assert not pattern({"command": "rm -rf /"})
    assert not pattern({"path": "ls"})  # no such field: unsafe


def test_a_bad_pattern_fails_when_made() -> None:
    with pytest.raises(re.error):
        InputPattern("command", "(ls")


def test_equal_patterns_are_equal_and_survive_pickling() -> None:
    pattern = InputPattern("command", r"ls(\s.*)?")
    again = InputPattern("command", pattern.matches)
    assert again == pattern and hash(again) == hash(pattern)
    assert "_compiled" not in repr(again)
    copied = pickle.loads(pickle.dumps(pattern))
    assert copied == pattern and copied({"command": "ls -la"})


READ_ONLY = [
    "date +%s%N; sleep 1; echo done-1",  # the CLI ran two of these in parallel (2.1.328)
    "git status && ls src | wc -l",
    "grep -rn TODO . || true",
    "find . -name '*.py' | head -5",
    "git -C /tmp/x log --oneline -3",
    "cat README.md; pwd",
    'echo "a > b; c"',  # operators inside quotes are text
    "ls;",
    "git branch --show-current",
    "printf '%s\\n' x | tail -1",
    "stat README.md && du -sh . && df -h && tree && which git && file README.md && rg x",
]
NOT_READ_ONLY = [
    "date >> log.txt",  # the CLI ran a command with an output redirect alone
    "ls > listing",
    "cat < input",
    "ls 2>/dev/null",
    "echo $(rm -rf x)",
    'echo "`id`"',
    "cat <(ls)",
    "ls & sleep 1",
    "(ls)",
    "ls\nrm x",
    "A=1 ls",
    "ls && rm -rf /",
    "sort file | uniq",
    "find . -name x -delete",
    "find . -exec rm {} ;",
    "git commit -m x",
    "git branch new-branch",
    "git diff --output=patch",
    "git -c alias.st=!rm status",
    "date -s 12:00",
    "tree -o listing.txt",
    "tree -olisting.txt",
    "rg --pre ./run-me pattern",
    "rg --pre=./run-me pattern",
    "echo 'unclosed",
    "",
    "ls ||",
]


@pytest.mark.parametrize("command", READ_ONLY)
def test_compound_commands_of_read_only_parts_are_read_only(command: str) -> None:
    assert is_read_only(command)
    assert CLAUDE_CODE.safe_when["Bash"]({"command": command})


@pytest.mark.parametrize("command", NOT_READ_ONLY)
def test_redirects_substitutions_and_other_commands_are_not(command: str) -> None:
    assert not is_read_only(command)


def test_the_rule_is_data_and_judges_its_field_only() -> None:
    assert READ_ONLY_BASH == ReadOnlyCommand("command")
    assert pickle.loads(pickle.dumps(READ_ONLY_BASH)) == READ_ONLY_BASH
    assert not READ_ONLY_BASH({"path": "ls"}) and not READ_ONLY_BASH({"command": 3})
