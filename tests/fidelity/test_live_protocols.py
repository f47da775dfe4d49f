"""The live driver speaks the Messages API only: a scenario on another wire protocol is refused
with one line, before anything runs (rows labelled openai-chat would be Messages sessions)."""

from __future__ import annotations

import asyncio

import pytest

from tests.engine.test_protocols import three_protocols
from toolturn.errors import UserError
from toolturn.fidelity.live_run import run_live
from toolturn.fidelity.settings import LiveSettings


def test_a_scenario_on_another_protocol_is_refused_by_the_live_driver() -> None:
    with pytest.raises(UserError, match="openai-responses, openai-chat: the live driver"):
        asyncio.run(run_live(three_protocols(), LiveSettings(speed=1.0)))
