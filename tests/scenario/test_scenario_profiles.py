"""[runtime] profiles: the recovery profiles a scenario runs, checked like its policies."""

from __future__ import annotations

import typing

import pytest
from pydantic import ValidationError

from toolturn.runtime.recovery import PROFILES
from toolturn.scenario.schema import Profile, RuntimeConfig


def test_the_schema_knows_exactly_the_runtimes_profiles() -> None:
    assert set(typing.get_args(Profile)) == set(PROFILES)


def test_default_alone_unless_told() -> None:
    assert RuntimeConfig().profiles == ["default"]
    assert RuntimeConfig(profiles=["claude-code", "default"]).profiles == ["claude-code", "default"]


@pytest.mark.parametrize(
    ("profiles", "why"),
    [(["nope"], "Input should be 'default', 'claude-code' or 'codex'"), ([], "at least 1 item"),
     (["default", "default"], "listed more than once: default")],
)
def test_bad_profiles_are_refused(profiles: list[str], why: str) -> None:
    with pytest.raises(ValidationError, match=why):
        RuntimeConfig(profiles=profiles)
