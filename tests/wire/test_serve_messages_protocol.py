"""`/v1/messages` combines consecutive turns of one role, as the Messages API documents, before
its checks: a `user`, `system`, `user` body (the system-role message taken out, as Claude Code's
are) is one user turn, not the 400 "roles must alternate"."""

from __future__ import annotations

from tests.helpers.server import mock_model, request, serving
from toolturn.wire.request_shape import merged_turns
from toolturn.wire.side_endpoints import model_body

USER_SYSTEM_USER = [
    {"role": "user", "content": "Read the file."},
    {"role": "system", "content": "The user's working directory is /tmp/x."},
    {"role": "user", "content": [{"type": "text", "text": "Then summarise it."}]},
]


def test_consecutive_turns_of_one_role_are_combined_in_order() -> None:
    a = {"role": "user", "content": "a"}
    b = {"role": "user", "content": [{"type": "text", "text": "b"}]}
    c = {"role": "assistant", "content": "c"}
    alternating = [a, c]
    assert merged_turns(alternating) is alternating  # nothing to combine: the list itself
    assert merged_turns([a, b, c, c]) == [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "c"}] * 2},
    ]


def test_the_model_sees_one_user_turn_for_user_system_user() -> None:
    model = mock_model()
    seen = model_body(request(model, messages=USER_SYSTEM_USER), model, False)
    assert seen["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "Read the file."},
        {"type": "text", "text": "Then summarise it."}]}]


def test_a_user_system_user_body_gets_an_answer_not_a_400() -> None:
    model = mock_model()
    with serving(model) as (_, client, log):
        message = client.messages.create(**request(model, messages=USER_SYSTEM_USER))
    assert message.stop_reason == "tool_use"
    assert " 200 message " in log.lines[0]
