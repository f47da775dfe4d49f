"""A run folder whose run.json is 100,000-deep JSON (issue 29, section 5): `toolturn report` and
`toolturn compare` say so in one line and exit 2, not with a RecursionError traceback; so does a
recording whose recording.json is."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolturn.cli import main

DEPTH = 100_000


def deep_run(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    assert main(["run", "default", "-n", "1", "--no-report", "-q", "--out", str(folder)]) == 0
    (folder / "run.json").write_text("[" * DEPTH + "]" * DEPTH, encoding="utf-8")
    return folder


@pytest.mark.parametrize("command", ["report", "compare", "report2"])
def test_deep_run_json_is_a_clear_error(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deep = deep_run(tmp_path, "deep")
    base = tmp_path / "base"
    assert main(["run", "default", "-n", "1", "--no-report", "-q", "--out", str(base)]) == 0
    capsys.readouterr()
    argv = {"report": ["report", str(deep)], "compare": ["compare", str(base), str(deep)],
            "report2": ["report", str(base), str(deep), "--out", str(tmp_path / "page")]}[command]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{deep / 'run.json'}: not a run.json written by toolturn (nesting too deep)" in err


def test_deep_recording_json_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "recording.json").write_text("{\"a\":" * DEPTH + "1" + "}" * DEPTH)
    assert main(["report", str(tmp_path)]) == 2
    assert "not a readable recording (nesting too deep)" in capsys.readouterr().err
