"""`ObjectWatch`: the one-pass finder of the piece after which streamed text first parses as a
JSON object (Chat Completions' speculative start), rule by rule and against a re-parse oracle."""

from __future__ import annotations

import itertools
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from toolturn.runtime.openai.object_watch import CHANGED, PARSED, ObjectWatch
from toolturn.runtime.strict_json import parse_json


def signals(pieces: list[str]) -> list[str | None]:
    parts: list[str] = []
    watch = ObjectWatch(parts)
    out = []
    for piece in pieces:
        parts.append(piece)
        out.append(watch.feed(piece))
    return out


def test_parses_at_the_closing_brace_and_not_before() -> None:
    parts: list[str] = []
    watch = ObjectWatch(parts)
    seen = []
    for piece in ['{"path": "a', '.py", "n": [1, {', '}]', "}"]:
        parts.append(piece)
        seen.append(watch.feed(piece))
    assert seen == [None, None, None, PARSED]
    assert watch.value == {"path": "a.py", "n": [1, {}]}


def test_brackets_and_quotes_inside_strings_do_not_count() -> None:
    assert signals(['{"a": "}]{[\\"', '}"', "}"]) == [None, None, PARSED]


def test_an_escape_split_across_pieces() -> None:
    # The backslash ends the first piece: the quote opening the next is escaped, not closing.
    assert signals(['{"k": "a\\', '"x"', "}"]) == [None, None, PARSED]
    # An escaped backslash at a piece's end escapes nothing after it.
    assert signals(['{"k": "a\\\\', '"', "}"]) == [None, None, PARSED]


def test_leading_whitespace_and_empty_pieces() -> None:
    assert signals(["", " \n", "\t{", "", "}"]) == [None, None, None, None, PARSED]


def test_a_text_that_is_not_an_object_never_parses() -> None:
    assert signals(["[1, 2]"]) == [None]
    assert signals(['"{}"', "{}"]) == [None, None]


def test_an_invalid_object_at_its_close_never_parses() -> None:
    assert signals(['{"a": NaN}', " "]) == [None, None]
    assert signals(['{"a": 1,}']) == [None]
    assert signals(["{a: 1}", "}"]) == [None, None]


def test_whitespace_after_keeps_it_more_text_changes_it() -> None:
    parts: list[str] = []
    watch = ObjectWatch(parts)
    seen = []
    for piece in ["{}", " \n", "x", "{}"]:
        parts.append(piece)
        seen.append(watch.feed(piece))
    assert seen == [PARSED, None, CHANGED, None]
    assert watch.value is None  # no longer the value of the text


def test_more_text_in_the_closing_piece_is_no_object() -> None:
    assert signals(['{"a": 1}{"b"', ": 2}"]) == [None, None]


def oracle(pieces: list[str]) -> list[str | None]:
    """Re-parse the whole text after every piece: what the watch must say, quadratically."""
    out: list[str | None] = []
    parsed_before = False
    for count in range(1, len(pieces) + 1):
        try:
            now = isinstance(parse_json("".join(pieces[:count])), dict)
        except ValueError:
            now = False
        if now and not parsed_before and CHANGED not in out:
            out.append(PARSED)
        elif parsed_before and not now and CHANGED not in out:
            out.append(CHANGED)
        else:
            out.append(None)
        parsed_before = parsed_before or now
    return out


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab"\\{}[] \u00e9', max_size=6),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.text(alphabet='k"\\{', max_size=3), children, max_size=3),
    max_leaves=8,
)


@st.composite
def streamed_texts(draw: st.DrawFn) -> list[str]:
    value = draw(st.dictionaries(st.text(max_size=3), json_values, max_size=3) | json_values)
    text = draw(st.sampled_from(["", " ", "\n "])) + json.dumps(value, ensure_ascii=False)
    text += draw(st.sampled_from(["", "  ", " x", "}", "{}", " \n{"]))
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=10)))
    return [text[start:end] for start, end in itertools.pairwise([0, *cuts, len(text)])]


@settings(max_examples=300, deadline=None)
@given(streamed_texts())
def test_the_watch_says_what_re_parsing_would(pieces: list[str]) -> None:
    assert signals(pieces) == oracle(pieces)
