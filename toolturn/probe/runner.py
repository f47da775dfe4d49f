"""Runs one probe case: the case's server on a free loopback port, the agent command once
against it, what the server recorded.

The command runs in a fresh temporary working directory (holding a `README.md` and a
`src/app.py` for the built-in read-only calls to find) with a fresh temporary HOME, stdin from
/dev/null, `ANTHROPIC_BASE_URL` at the server, a dummy `ANTHROPIC_API_KEY` (no other
`ANTHROPIC_*` variable of ours leaks in), `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` and
`SIM_PROBE_CASE` naming the case. It is killed, with its process group, after the suite's
timeout. Both temporary folders are removed afterwards.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from toolturn.probe.suite import ProbeCase, Suite, case_model
from toolturn.wire.background import serve_in_thread
from toolturn.wire.client_tools import ClientTools
from toolturn.wire.recorder import Recorder

DUMMY_KEY = "sk-ant-probe-dummy-key"
WORKDIR_FILES = {
    "README.md": "# probe\n\nA working directory made by toolturn probe.\n",
    "src/app.py": "def main():\n    return 'probe'\n",
}
_KILL_WAIT_S = 5.0


@dataclass(frozen=True, slots=True)
class CaseRun:
    case: ProbeCase
    exit_status: int | None  # None: killed at the timeout
    wall_s: float
    tables: dict[str, pa.Table]
    server_log: list[str]
    output_tail: str  # the end of the command's stdout and stderr


def run_case(case: ProbeCase, suite: Suite, command: list[str]) -> CaseRun:
    recorder = Recorder(round(suite.give_up_s * 1e9))
    log: list[str] = []
    with tempfile.TemporaryDirectory(prefix=f"sim-probe-{case.name}-") as temporary:
        workdir, home = Path(temporary) / "work", Path(temporary) / "home"
        for name, text in WORKDIR_FILES.items():
            (workdir / name).parent.mkdir(parents=True, exist_ok=True)
            (workdir / name).write_text(text, encoding="utf-8")
        home.mkdir()
        tools = ClientTools({spec.name: spec for spec in case.scenario.tool_specs},
                            client_dir=str(workdir))
        with serve_in_thread(case_model(case.scenario), speed=suite.speed, log=log.append,
                             client_tools=tools, recorder=recorder, rewrite=case.fault) as server:
            env = {key: value for key, value in os.environ.items()
                   if not key.startswith("ANTHROPIC_")}
            env.update(ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY=DUMMY_KEY,
                       HOME=str(home), SIM_PROBE_CASE=case.name,
                       CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
            started = time.monotonic()
            status, output = _run(command, workdir, env, suite.timeout_s)
            wall_s = time.monotonic() - started
    recorder.give_up(None)  # the client is gone: a fault still unanswered was given up
    return CaseRun(case, status, wall_s, recorder.tables(), list(log), output[-2000:])


def _run(command: list[str], cwd: Path, env: dict[str, str], timeout_s: float) -> tuple[
        int | None, str]:
    try:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    except OSError as error:
        return 127, f"cannot run {command[0]}: {error.strerror}"
    try:
        output, _ = process.communicate(timeout=timeout_s)
        status: int | None = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate(timeout=_KILL_WAIT_S)
        status = None
    return status, output.decode("utf-8", "replace")
