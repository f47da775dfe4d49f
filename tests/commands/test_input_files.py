"""The commands' input files and output: a bounded read, strict JSON, printable output."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from toolturn import input_files
from toolturn.errors import UserError
from toolturn.input_files import json_object_lines, print_json, print_text, read_input

LIMIT = 10


@pytest.fixture
def small_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(input_files, "MAX_INPUT_BYTES", LIMIT)


def stdin_of(content: bytes) -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(content), encoding="utf-8")


@pytest.mark.usefixtures("small_limit")
def test_a_file_up_to_the_limit_is_read_and_a_larger_one_refused(tmp_path: Path) -> None:
    path = tmp_path / "input"
    path.write_bytes(b"x" * LIMIT)
    assert read_input(str(path), "input") == b"x" * LIMIT
    # /dev/zero was read until memory ran out.
    path.write_bytes(b"x" * (LIMIT + 1))
    with pytest.raises(UserError, match=r"^input: too large: an input may hold at most 10 bytes$"):
        read_input(str(path), "input")


@pytest.mark.usefixtures("small_limit")
def test_stdin_beyond_the_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", stdin_of(b"x" * LIMIT))
    assert read_input("-", "<stdin>") == b"x" * LIMIT
    monkeypatch.setattr(sys, "stdin", stdin_of(b"x" * (LIMIT * 100)))
    with pytest.raises(UserError, match=r"^<stdin>: too large"):
        read_input("-", "<stdin>")


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ('{"n": NaN}', "NaN is not valid JSON"),
        ('{"n": 1e999}', "1e999 is out of a double's range"),
        ('{"n":' * 100_000 + "1" + "}" * 100_000, "nesting too deep"),
    ],
    ids=["nan", "overflow", "deep"],
)
def test_json_lines_are_strict_json(line: str, why: str) -> None:
    with pytest.raises(UserError, match=rf"^f: line 2: not JSON \({why}\)$"):
        json_object_lines('{"n": 1}\n' + line + "\n", "f", "an event")


def test_lone_surrogates_are_printed_as_their_escapes(capsys: pytest.CaptureFixture[str]) -> None:
    # Printing one raised UnicodeEncodeError: UTF-8 cannot encode a lone surrogate.
    document = {"text": "a\ud800b é", "\udfff": ["\ud83d", "\ude00"]}
    print_json(document, "f")
    out = capsys.readouterr().out
    assert '"a\\ud800b é"' in out
    assert json.loads(out) == document
    print_text("id \ud800")
    assert capsys.readouterr().out == "id \\ud800\n"


def test_a_document_too_deep_to_print_is_a_user_error(capsys: pytest.CaptureFixture[str]) -> None:
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(UserError, match=r"^f: nesting too deep to print$"):
        print_json({"value": deep}, "f")
    assert capsys.readouterr().out == ""
