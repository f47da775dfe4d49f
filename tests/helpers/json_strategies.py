"""Hypothesis strategies the accumulators' differential tests share: JSON values (as the SDKs
and the API can carry them: no NaN, integers within a double's exact range), objects of them,
and a text cut into streamed pieces."""

from __future__ import annotations

import itertools

from hypothesis import strategies as st

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=12,
)
# A tool's input, a function call's arguments.
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=5)


@st.composite
def split_text(draw: st.DrawFn, text: str) -> list[str]:
    """The text cut into parts at random places (possibly empty parts)."""
    cuts = sorted(draw(st.lists(st.integers(min_value=0, max_value=len(text)), max_size=8)))
    bounds = [0, *cuts, len(text)]
    # Consecutive bounds: the shifted copy is one shorter by design.
    return [text[start:end] for start, end in itertools.pairwise(bounds)]
