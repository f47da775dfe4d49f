"""`SendRequest.pairing_violations`: the loop's own check of the body it sends, so that no driver
checks it again. Empty for a passing transcript and after a repair; a repair that broke its
guarantee shows there, and the simulator then counts it and answers with the API's 400."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

import toolturn.runtime.loop as loop_module
from tests.helpers.engine_runs import STRICT, dict_rows, run, scenario_of
from tests.helpers.loop_tools import TOOLS
from toolturn.runtime.commands import SendRequest
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.runtime.repair import PairingError, Repair, check_pairing

ORPHANED = [
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "gone", "content": "x"},
                                 {"type": "text", "text": "where were we"}]},
]


def _unrepaired(
    messages: Sequence[Mapping[str, Any]], *, strict: bool = False
) -> tuple[list[dict[str, Any]], list[Repair]]:
    """A repair that breaks its guarantee: everything passes through unchanged."""
    return [dict(message) for message in messages], []


def test_a_passing_transcript_is_sent_with_no_violations() -> None:
    loop = ToolTurnLoop(TOOLS, model="m")
    [send] = loop.start("go", 0)
    assert isinstance(send, SendRequest) and send.pairing_violations == ()
    assert loop.repairs == []


def test_a_repaired_transcript_is_checked_again_and_sent_with_no_violations() -> None:
    loop = ToolTurnLoop(TOOLS, model="m", messages=ORPHANED)
    assert check_pairing(ORPHANED) != []
    [send] = loop.start("continue", 0)
    assert isinstance(send, SendRequest) and loop.repairs
    assert send.pairing_violations == tuple(check_pairing(send.request_body["messages"])) == ()


def test_strict_mode_sends_nothing() -> None:
    loop = ToolTurnLoop(TOOLS, model="m", strict=True, messages=ORPHANED)
    with pytest.raises(PairingError) as raised:
        loop.start("continue", 0)
    prompt = {"type": "text", "text": "continue"}
    sent = [{**ORPHANED[0], "content": [*ORPHANED[0]["content"], prompt]}]
    assert raised.value.violations == check_pairing(sent) != []


def test_the_verdict_is_a_check_of_the_body_not_an_assumption(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(loop_module, "ensure_tool_result_pairing", _unrepaired)
    loop = ToolTurnLoop(TOOLS, model="m", messages=ORPHANED)
    [send] = loop.start("continue", 0)
    assert isinstance(send, SendRequest)
    expected = check_pairing(send.request_body["messages"])
    assert expected and send.pairing_violations == tuple(expected)


@pytest.mark.usefixtures("damaged_resume")
def test_the_simulator_counts_a_broken_verdict_and_the_model_answers_400(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every session resumes from a transcript whose tool_result was lost (the runtime itself
    # never makes one: tests/damaged_resume.py); without strict mode the loop would repair it,
    # and with a repair that repairs nothing, the bodies go out broken.
    monkeypatch.setattr(loop_module, "ensure_tool_result_pairing", _unrepaired)
    result = run(scenario_of(STRICT, **{"runtime.strict": False}))
    assert result.pairing_violations > 0
    requests = dict_rows(result.rows["requests"])
    broken = [row for row in requests if row["fault"] == "pairing_violation"]
    assert broken and all(row["status"] == "400" for row in broken)
    assert len(broken) <= result.pairing_violations
