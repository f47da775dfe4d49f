"""A run that sent no request fails its case, naming the variable the agent was to honour for
the protocol it was probed in (`toolturn.probe.verdicts.no_request_reason`)."""

from __future__ import annotations

import pytest

from toolturn.probe.scorecard import NO_REQUEST_CLASS, case_entry
from toolturn.wire.codecs import ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES


@pytest.mark.parametrize(("protocol", "variable"), [
    (ANTHROPIC, "ANTHROPIC_BASE_URL"), (OPENAI_RESPONSES, "OPENAI_BASE_URL"),
    (OPENAI_CHAT, "OPENAI_BASE_URL"),
])
def test_the_failure_names_the_protocols_variable(protocol: str, variable: str) -> None:
    runs = [{"class": NO_REQUEST_CLASS}]
    entry = case_entry("two_calls_clean", "checks", runs, "calls_answered", protocol)
    assert entry["failed"] == (
        f"the agent sent no request to the server (does it honour {variable}?)")
