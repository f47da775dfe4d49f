"""`MockModel.respond(..., pairing=...)`: a caller that has already checked the transcript hands
its verdict over, and the model answers exactly as if it had checked it itself."""

from __future__ import annotations

from sim.model.response import HttpError, Turn
from sim.runtime.pairing import check_pairing
from tests.test_model_support import MESSAGES, body, make_model

BROKEN = [*MESSAGES[:2], {"role": "user", "content": "no result for the call"}]


def test_a_given_verdict_gives_the_same_answer_as_the_models_own_check() -> None:
    model = make_model()
    for messages in (MESSAGES, BROKEN):
        request = {**body(model), "messages": messages}
        turn = Turn(3, 1)
        own = model.respond(request, turn)
        given = model.respond(request, turn, pairing=check_pairing(messages))
        assert own == given


def test_the_given_verdict_is_trusted_not_recomputed() -> None:
    model = make_model()
    error = model.respond(body(model), Turn(3, 1), pairing=["messages.2: said by the caller"])
    assert isinstance(error, HttpError) and error.status == 400
    assert error.body["error"]["message"] == "messages.2: said by the caller"
