"""Any JSON value as a transcript: the checker, the repair and the monitor either answer or raise
`TranscriptShapeError`, never anything else (a `TypeError` from an unhashable role once escaped).
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolturn.runtime.pairing import PairingMonitor, TranscriptShapeError, check_pairing
from toolturn.runtime.repair import PairingError, ensure_tool_result_pairing

# The keys and strings a transcript uses, so that generated values often get deep into the
# checks instead of failing at the first lookup.
WORDS = st.sampled_from(
    [
        "role", "content", "type", "id", "tool_use_id", "text", "name", "input", "user",
        "assistant", "tool_use", "tool_result", "server_tool_use", "mcp_tool_use",
        "web_search_tool_result", "thinking", "t1", "",
    ]
)
SCALARS = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | WORDS | st.text()
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(WORDS | st.text(max_size=3), children, max_size=5),
    max_leaves=40,
)


@settings(max_examples=1_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(JSON_VALUES, max_size=5) | JSON_VALUES)
def test_any_json_value_is_answered_or_raises_the_shape_error(messages: Any) -> None:
    try:
        violations = check_pairing(messages)
    except TranscriptShapeError:
        shape_error = True
    else:
        shape_error = False
        assert all(isinstance(violation, str) for violation in violations)
    # The repair and the monitor agree with the checker on what is a transcript.
    for attempt in (
        lambda: ensure_tool_result_pairing(messages),
        lambda: ensure_tool_result_pairing(messages, strict=True),
        lambda: PairingMonitor().check(messages),
    ):
        try:
            attempt()
        except TranscriptShapeError:
            assert shape_error
        except PairingError:
            assert not shape_error and violations
        else:
            assert not shape_error
