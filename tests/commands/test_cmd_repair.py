"""`toolturn repair FILE`: the three input formats, strict mode, and one-line errors for
non-transcripts."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from toolturn.cli import main
from toolturn.runtime.repair import MISSING_RESULT_TEXT

FIXTURES = Path(__file__).parents[1] / "fixtures" / "transcripts"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["repair", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_a_valid_transcript_is_printed_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, str(FIXTURES / "valid.json"))
    assert status == 0
    assert json.loads(out) == {
        "messages": json.loads((FIXTURES / "valid.json").read_text()),
        "repairs": [],
    }


def test_a_request_body_is_repaired(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, str(FIXTURES / "interrupted_request.json"))
    assert status == 0
    result = json.loads(out)
    assert result["messages"][2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_02",
                "is_error": True,
                "content": MISSING_RESULT_TEXT,
            },
            {"type": "tool_result", "tool_use_id": "toolu_01", "content": "alpha"},
        ],
    }
    assert result["repairs"] == [
        {"kind": "orphan_result_removed", "message_index": 2, "tool_use_id": "toolu_09"},
        {"kind": "missing_result_inserted", "message_index": 2, "tool_use_id": "toolu_02"},
    ]


def test_jsonl_from_stdin_drops_leading_orphans(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    body = (FIXTURES / "resumed.jsonl").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(body)))
    status, out, _ = run_cli(capsys, "-")
    assert status == 0
    assert json.loads(out) == {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Carry on."}]},
            {"role": "assistant", "content": "Carrying on."},
        ],
        "repairs": [
            {"kind": "leading_orphan_removed", "message_index": 0, "tool_use_id": "toolu_07"}
        ],
    }


def test_strict_prints_violations_and_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "--strict", str(FIXTURES / "interrupted_request.json"))
    assert status == 1
    assert out.splitlines() == [
        "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_09. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous "
        "message.",
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_02. Each `tool_use` block must have a corresponding `tool_result` block in the "
        "next message.",
    ]


def test_strict_on_a_clean_transcript_exits_0_silently(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(capsys, "--strict", str(FIXTURES / "valid.json")) == (0, "", "")


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ("", "empty file: expected a transcript"),
        (
            "[{",
            "not JSON (Expecting property name enclosed in double quotes: "
            "line 1 column 3 (char 2))",
        ),
        ('{"role": "user", "content": "a"}\n{oops\n', "line 2: not JSON"),
        (
            '{"role": "user", "content": "a"}\n[1]\n',
            "line 2: a message must be a JSON object, not list",
        ),
        ('{"model": "m"}', "a JSON object must be a request body with 'messages'"),
        ('{"messages": {}}', "messages: must be a list, not dict"),
        ("42", "expected a list of messages or a request body, not int"),
        (
            '[{"role": "tool", "content": "x"}]',
            "messages[0].role: 'tool' is not 'user' or 'assistant'",
        ),
        ('[{"content": "x"}]', "messages[0]: message has no 'role'"),
        ('[{"role": [], "content": "x"}]', "messages[0].role: must be a string, not list"),
        # Read as nan / inf and printed back as `NaN` / `Infinity`, which are not JSON.
        ('[{"role": "user", "content": "x", "n": NaN}]', "not JSON (NaN is not valid JSON)"),
        ('[{"role": "user", "content": "x", "n": 1e999}]', "not JSON (1e999 is out of"),
        # RecursionError tracebacks.
        ("[" * 100_000 + "]" * 100_000, "not JSON (nesting too deep)"),
        ('{"a":' * 100_000 + "1" + "}" * 100_000, "line 1: not JSON (nesting too deep)"),
        (
            '[{"role": "user", "content": 7}]',
            "messages[0].content: must be a string or a list of blocks, not int",
        ),
    ],
)
def test_input_that_is_not_a_transcript_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, body: str, error: str
) -> None:
    path = tmp_path / "transcript.json"
    path.write_text(body)
    status, out, err = run_cli(capsys, str(path))
    assert status == 2
    assert out == ""
    assert err.startswith(f"toolturn repair: error: {path}: {error}")
    assert err.count("\n") == 1


def test_a_block_without_type_is_named_with_its_place(capsys: pytest.CaptureFixture[str]) -> None:
    path = FIXTURES / "block_without_type.json"
    for argv in ([str(path)], ["--strict", str(path)]):
        status, _, err = run_cli(capsys, *argv)
        assert status == 2
        assert err == (
            f"toolturn repair: error: {path}: messages[1].content[1]: block has no 'type'\n"
        )


def test_strict_reports_a_role_that_is_an_object_as_a_shape_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "transcript.json"
    path.write_text('[{"role": {}, "content": "hi"}]')
    status, out, err = run_cli(capsys, "--strict", str(path))
    assert (status, out) == (2, "")
    assert err == f"toolturn repair: error: {path}: messages[0].role: must be a string, not dict\n"


def test_lone_surrogates_are_printed_as_their_json_escapes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Printing them raised UnicodeEncodeError: UTF-8 cannot encode a lone surrogate.
    path = tmp_path / "transcript.json"
    path.write_text(
        '[{"role": "user", "content": "hi \\ud800"}, {"role": "assistant", "content": [\n'
        '{"type": "tool_use", "id": "toolu_\\udfff", "name": "f", "input": {}}]}]'
    )
    status, out, _ = run_cli(capsys, str(path))
    assert status == 0 and '"hi \\ud800"' in out
    assert json.loads(out)["messages"][0]["content"] == "hi \ud800"
    assert "toolu_\udfff" in [repair["tool_use_id"] for repair in json.loads(out)["repairs"]]
    status, out, _ = run_cli(capsys, "--strict", str(path))
    assert status == 1 and "toolu_\\udfff" in out


def test_a_missing_file_is_a_clean_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, _, err = run_cli(capsys, str(tmp_path / "absent.json"))
    assert status == 2
    assert err == (
        f"toolturn repair: error: {tmp_path / 'absent.json'}: cannot read: "
        "No such file or directory\n"
    )
