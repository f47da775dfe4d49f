"""`InputPattern`, the per-call safety a profile or scenario declares: its compiled pattern is its
own (no module-wide cache in the runtime), invisible to equality, hashing and pickling."""

from __future__ import annotations

import pickle
import re

import pytest

from toolturn.runtime.recovery import READ_ONLY_BASH, InputPattern


def test_a_pattern_judges_the_field_and_refuses_shell_metacharacters() -> None:
    assert READ_ONLY_BASH({"command": "git status"})
    assert not READ_ONLY_BASH({"command": "git status > out"})
    assert not READ_ONLY_BASH({"command": "rm -rf /"})
    assert not READ_ONLY_BASH({"path": "ls"})  # no such field: unsafe


def test_a_bad_pattern_fails_when_made() -> None:
    with pytest.raises(re.error):
        InputPattern("command", "(ls")


def test_equal_patterns_are_equal_and_survive_pickling() -> None:
    again = InputPattern("command", READ_ONLY_BASH.matches)
    assert again == READ_ONLY_BASH and hash(again) == hash(READ_ONLY_BASH)
    assert "_compiled" not in repr(again)
    copied = pickle.loads(pickle.dumps(READ_ONLY_BASH))
    assert copied == READ_ONLY_BASH and copied({"command": "ls -la"})
