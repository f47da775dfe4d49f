"""`toolturn serve` from the command line: it listens, answers, logs a line per request, refuses bad
flags, and stops cleanly on Ctrl-C (SIGINT)."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

from toolturn.cli import main

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "default.toml"


def test_serves_until_ctrl_c_then_stops_cleanly() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "toolturn.cli", "serve", str(SCENARIO), "--port", "0",
         "--speed", "50", "--seed", "3"],
        stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )
    try:
        assert process.stderr is not None
        banner = process.stderr.readline()
        assert "(model claude-sonnet-4-5, seed 3, speed 50)" in banner
        found = re.search(r"http://\S+", banner)
        assert found is not None, banner
        response = httpx2.post(
            f"{found.group(0)}/v1/messages",
            json={"model": "claude-sonnet-4-5", "max_tokens": 100, "stream": True,
                  "messages": [{"role": "user", "content": "hi"}]},
            headers={"x-sim-session": "1"},
            timeout=20,
        )
        assert response.status_code == 200 and b"event: message_start" in response.content
        process.send_signal(signal.SIGINT)
        _, rest = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0
    assert re.match(r"POST /v1/messages 200 stream \S+ session=1 turn=1 attempt=1 ", rest)
    assert rest.endswith("toolturn serve: stopped\n") and "Traceback" not in rest


@pytest.mark.parametrize(("flags", "wording"), [
    (["--speed", "0"], "--speed: must be a positive number (got 0)"),
    (["--speed", "nan"], "--speed: must be a positive number (got nan)"),
    (["--port", "70000"], "--port: must be 0-65535 (got 70000)"),
    (["--idle-timeout", "0"], "--idle-timeout: must be a positive number of seconds (got 0)"),
    (["--header-timeout", "inf"],
     "--header-timeout: must be a positive number of seconds (got inf)"),
    (["--body-timeout", "-1"], "--body-timeout: must be a positive number of seconds (got -1)"),
    (["--write-timeout", "nan"], "--write-timeout: must be a positive number of seconds (got nan)"),
    (["--max-connections", "0"], "--max-connections: must be at least 1 (got 0)"),
])
def test_bad_flags_are_user_errors(
    flags: list[str], wording: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", str(SCENARIO), *flags]) == 2
    assert capsys.readouterr().err == f"toolturn serve: error: {wording}\n"


def test_a_busy_port_is_a_user_error(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", str(SCENARIO), "--port", str(port)]) == 2
    error = capsys.readouterr().err
    assert error.startswith(
        f"toolturn serve: error: --host 127.0.0.1 --port {port}: cannot listen: "
    )


def test_a_missing_scenario_is_a_user_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "nowhere.toml"]) == 2
    assert capsys.readouterr().err == "toolturn serve: error: nowhere.toml: no such file\n"


def test_session_faults_are_said_to_be_the_agents_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    faulty = tmp_path / "faulty.toml"
    faulty.write_text(SCENARIO.read_text() + "\n[session.faults]\ncrash = 0.1\n")
    with socket.socket() as taken:  # a busy port: serve stops right after its checks
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        assert main(["serve", str(faulty), "--port", str(taken.getsockname()[1])]) == 2
    warning, error = capsys.readouterr().err.splitlines()
    assert warning == (
        "toolturn serve: warning: [session.faults] not applied: the agent under test "
        "owns its process, its rewinds and its compaction"
    )
    assert "cannot listen" in error
