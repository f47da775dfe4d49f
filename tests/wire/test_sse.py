"""The SSE codec: encoding as the API does, incremental decoding, cuts and clear errors."""

from __future__ import annotations

from typing import Any

import pytest

from toolturn.wire.sse import (
    PartialEvent,
    SSEDecodeError,
    SSEDecoder,
    decode_stream,
    encode_event,
    encode_stream,
)

START: dict[str, Any] = {
    "type": "message_start",
    "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": []},
}
DELTA: dict[str, Any] = {
    "type": "content_block_delta",
    "index": 0,
    "delta": {"type": "text_delta", "text": "héllo \"wörld\" 😀\n"},
}
EVENTS = [START, {"type": "ping"}, DELTA, {"type": "message_stop"}]


def feed_in_chunks(body: bytes, size: int) -> tuple[list[dict[str, Any]], PartialEvent | None]:
    decoder = SSEDecoder()
    events: list[dict[str, Any]] = []
    for offset in range(0, len(body), size):
        events += decoder.feed(body[offset : offset + size])
    return events, decoder.close()


def test_encode_event_writes_name_and_compact_utf8_json() -> None:
    assert encode_event({"type": "ping"}) == b'event: ping\ndata: {"type":"ping"}\n\n'
    encoded = encode_event(DELTA)
    assert "😀".encode() in encoded  # raw UTF-8, as the API sends it, not \\u escapes
    assert encoded.count(b"\n") == 3  # the newline inside the text is escaped by JSON


def test_a_lone_surrogate_is_encoded_as_its_json_escape_and_round_trips() -> None:
    # A `\ud800` escape decodes to a lone surrogate, which UTF-8 cannot encode: encoding raised.
    event = {**DELTA, "delta": {"type": "text_delta", "text": "a\ud800b 😀"}}
    encoded = encode_event(event)
    assert b'"text":"a\\ud800b \xf0\x9f\x98\x80"' in encoded
    assert decode_stream(encoded) == ([event], None)


def test_encode_stream_round_trips() -> None:
    assert decode_stream(encode_stream(EVENTS)) == (EVENTS, None)


@pytest.mark.parametrize("size", [1, 2, 3, 5, 64])
def test_any_chunking_decodes_the_same(size: int) -> None:
    # Chunks of 1-3 bytes split the four-byte 😀 and the two-byte é between feeds.
    assert feed_in_chunks(encode_stream(EVENTS), size) == (EVENTS, None)


@pytest.mark.parametrize("ending", [b"\r\n", b"\r"])
def test_crlf_and_cr_line_endings_split_anywhere(ending: bytes) -> None:
    body = encode_stream(EVENTS).replace(b"\n", ending)
    for size in (1, 2, 7):
        assert feed_in_chunks(body, size) == (EVENTS, None)


def test_cr_lf_split_between_chunks_is_one_line_ending() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b'data: {"type":"ping"}\r') == []
    assert decoder.feed(b"\n\r") == [{"type": "ping"}]
    assert decoder.feed(b"\n") == []
    assert decoder.close() is None


def test_comments_unknown_fields_id_and_retry_are_ignored() -> None:
    body = b': hello\nid: 7\nretry: 100\nfoo: bar\nevent: ping\ndata: {"type":"ping"}\n\n'
    assert decode_stream(body) == ([{"type": "ping"}], None)


def test_multi_line_data_joins_with_newline() -> None:
    body = b'data: {"type":\ndata: "ping"}\n\n'
    assert decode_stream(body) == ([{"type": "ping"}], None)


def test_event_without_data_is_not_dispatched() -> None:
    assert decode_stream(b"event: ping\n\n") == ([], None)


def test_leading_byte_order_mark_is_skipped_even_when_split() -> None:
    body = b"\xef\xbb\xbf" + encode_event({"type": "ping"})
    assert feed_in_chunks(body, 1) == ([{"type": "ping"}], None)


def test_close_reports_an_event_cut_mid_line() -> None:
    body = encode_event(START) + b'event: content_block_delta\ndata: {"type":"content'
    events, partial = decode_stream(body)
    assert events == [START]
    assert partial == PartialEvent("content_block_delta", (), 'data: {"type":"content')


def test_close_reports_an_event_cut_before_its_blank_line() -> None:
    events, partial = decode_stream(b'event: ping\ndata: {"type":"ping"}\n')
    assert events == []
    assert partial == PartialEvent("ping", ('{"type":"ping"}',), "")


def test_close_on_a_clean_boundary_reports_nothing() -> None:
    assert decode_stream(b"")[1] is None
    assert decode_stream(b": only a comment\n")[1] is None


def test_malformed_data_names_the_line() -> None:
    body = encode_event(START) + b"event: ping\ndata: {not json\n\n"
    with pytest.raises(SSEDecodeError, match=r"line 5: data is not JSON .*\{not json"):
        decode_stream(body)


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ('{"type": "ping", "n": NaN}', "NaN is not valid JSON"),
        ('{"type": "ping", "n": -Infinity}', "-Infinity is not valid JSON"),
        # json reads it as inf and writes it back as `Infinity`.
        ('{"type": "ping", "n": 1e999}', "1e999 is out of a double's range"),
        # json raised RecursionError, which is not a ValueError.
        ("[" * 100_000 + "]" * 100_000, "nesting too deep"),
    ],
    ids=["nan", "infinity", "overflow", "deep"],
)
def test_data_that_is_not_strict_json_names_the_line(data: str, why: str) -> None:
    with pytest.raises(SSEDecodeError, match=rf"line 2: data is not JSON \({why}\)"):
        decode_stream(f": comment\ndata: {data}\n\n".encode())


def test_data_that_is_not_an_object_is_an_error() -> None:
    with pytest.raises(SSEDecodeError, match=r"line 1: data is JSON list, not an object"):
        decode_stream(b"data: [1]\n\n")


def test_event_name_must_match_the_data_type() -> None:
    with pytest.raises(
        SSEDecodeError,
        match=r"line 2: event name 'ping' does not match the data's type 'message_stop'",
    ):
        decode_stream(b'event: ping\ndata: {"type":"message_stop"}\n\n')


def test_invalid_utf8_names_the_line() -> None:
    with pytest.raises(SSEDecodeError, match=r"line 2: not UTF-8"):
        decode_stream(b"event: ping\ndata: \xff\n\n")


def test_feed_after_close_is_an_error() -> None:
    decoder = SSEDecoder()
    decoder.close()
    with pytest.raises(SSEDecodeError, match="after close"):
        decoder.feed(b"data: {}\n\n")
