"""`MockModel.respond` is `reject` for a body the API would refuse, else `answer`; `answer` takes
a body its caller has checked (the simulator hands over the loop's verdict) and checks nothing
again."""

from __future__ import annotations

from tests.helpers.model_support import MESSAGES, body, make_model
from toolturn.model.response import HttpError, StreamResponse, Turn
from toolturn.runtime.pairing import check_pairing

BROKEN = [*MESSAGES[:2], {"role": "user", "content": "no result for the call"}]


def test_respond_is_answer_or_the_reject_of_the_first_violation() -> None:
    model = make_model()
    turn = Turn(3, 1)
    valid = {**body(model), "messages": MESSAGES}
    assert check_pairing(MESSAGES) == []
    assert model.respond(valid, turn) == model.answer(valid, turn)
    broken = {**body(model), "messages": BROKEN}
    violations = check_pairing(BROKEN)
    assert violations
    own = model.respond(broken, turn)
    assert isinstance(own, HttpError) and own.status == 400
    assert own == model.reject(violations[0], turn)


def test_answer_trusts_its_caller_and_reject_says_what_it_is_given() -> None:
    model = make_model()
    streamed = model.answer({**body(model), "messages": BROKEN}, Turn(3, 1))
    assert isinstance(streamed, StreamResponse)  # not checked again: streamed as any body
    error = model.reject("messages.2: said by the caller", Turn(3, 1))
    assert isinstance(error, HttpError) and error.status == 400
    assert error.body["error"]["message"] == "messages.2: said by the caller"
    assert error.body["error"]["type"] == "invalid_request_error"
