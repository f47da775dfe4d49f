"""Runs one probe case: the case's server on a free loopback port, the agent command once
against it, what the server recorded and every exchange whole (`toolturn.probe.exchanges`).

The command runs in a fresh temporary working directory (holding a `README.md` and a
`src/app.py` for the built-in read-only calls to find) with a fresh temporary HOME, stdin from
/dev/null, `ANTHROPIC_BASE_URL` at the server, a dummy `ANTHROPIC_API_KEY` (no other
`ANTHROPIC_*` variable of ours leaks in), `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` and
`SIM_PROBE_CASE` naming the case. For an OpenAI protocol (`openai-responses`, `openai-chat`)
also `OPENAI_BASE_URL` at the server's `/v1` (where the openai SDK and most OpenAI clients
look) and a dummy `OPENAI_API_KEY`; for `anthropic` neither is passed on (a real key of the
caller's never reaches the agent). The server answers every protocol whichever is chosen.
The command is killed, with its process group, after the suite's timeout. Both temporary
folders are removed afterwards.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from toolturn.model.response import Response, Turn
from toolturn.probe.endings import end_cut
from toolturn.probe.exchanges import Exchange, ExchangeTap
from toolturn.probe.suite import ProbeCase, Suite, case_model
from toolturn.wire.background import serve_in_thread
from toolturn.wire.client_tools import ClientTools
from toolturn.wire.codecs import ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES
from toolturn.wire.server import MockServer

DUMMY_KEY = "sk-ant-probe-dummy-key"
OPENAI_DUMMY_KEY = "sk-probe-dummy-key"
PROTOCOLS = (ANTHROPIC, OPENAI_RESPONSES, OPENAI_CHAT)
_OPENAI_VARIABLES = ("OPENAI_BASE_URL", "OPENAI_API_KEY")
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
    output_tail: str  # the end of the command's stderr (its stdout is `stdout`)
    exchanges: tuple[Exchange, ...] = ()
    stdout: str = ""  # the command's stdout whole: the agent's own account of the run


def make_workdir(workdir: Path) -> None:
    """The files a case's client finds in its working directory."""
    for name, text in WORKDIR_FILES.items():
        (workdir / name).parent.mkdir(parents=True, exist_ok=True)
        (workdir / name).write_text(text, encoding="utf-8")


def struck(case: ProbeCase) -> Callable[[Turn], bool]:
    """Whether the case's fault strikes a turn; for a clean case, the first answer of the
    plan's turn (what the client does after an ordinary answer is classed too)."""
    plan = case.fault
    if plan.kind == "none":
        return lambda turn: turn.turn_index == plan.turn and turn.attempt == 1
    return plan.applies


def case_rewrite(case: ProbeCase, speed: float) -> Callable[[Turn, Response], Response]:
    """The case's fault, its cut ending as the case says (`toolturn.probe.endings`)."""
    def rewrite(turn: Turn, response: Response) -> Response:
        answer = case.fault(turn, response)
        if answer is response:
            return answer
        return end_cut(answer, case.ending, case.late_cut_ms, speed)
    return rewrite


@contextmanager
def serve_case(case: ProbeCase, suite: Suite, workdir: Path,
               log: Callable[[str], None]) -> Iterator[tuple[MockServer, ExchangeTap]]:
    """The case's server, listening, and the tap that records it."""
    tap = ExchangeTap(round(suite.give_up_s * 1e9), case_rewrite(case, suite.speed),
                      struck(case))
    tools = ClientTools({spec.name: spec for spec in case.scenario.tool_specs},
                        client_dir=str(workdir))
    with serve_in_thread(case_model(case.scenario), speed=suite.speed, log=log,
                         client_tools=tools, recorder=tap, rewrite=tap.rewrite) as server:
        yield server, tap
    tap.give_up(None)  # the client is gone: a fault still unanswered was given up


def agent_env(base_url: str, home: Path, case_name: str, protocol: str) -> dict[str, str]:
    """The agent's environment: ours without our keys and base URLs, then the case's."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("ANTHROPIC_") and key not in _OPENAI_VARIABLES}
    env.update(ANTHROPIC_BASE_URL=base_url, ANTHROPIC_API_KEY=DUMMY_KEY, HOME=str(home),
               SIM_PROBE_CASE=case_name, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    if protocol != ANTHROPIC:
        env.update(OPENAI_BASE_URL=base_url + "/v1", OPENAI_API_KEY=OPENAI_DUMMY_KEY)
    return env


def run_case(case: ProbeCase, suite: Suite, command: list[str],
             protocol: str = ANTHROPIC) -> CaseRun:
    log: list[str] = []
    with tempfile.TemporaryDirectory(prefix=f"toolturn-probe-{case.name}-") as temporary:
        workdir, home = Path(temporary) / "work", Path(temporary) / "home"
        make_workdir(workdir)
        home.mkdir()
        with serve_case(case, suite, workdir, log.append) as (server, tap):
            env = agent_env(server.base_url, home, case.name, protocol)
            started = time.monotonic()
            status, stdout, stderr = _run(command, workdir, env, suite.timeout_s)
            wall_s = time.monotonic() - started
    return CaseRun(case, status, wall_s, tap.tables(), list(log), stderr[-2000:],
                   tuple(tap.exchanges), stdout)


def _run(command: list[str], cwd: Path, env: dict[str, str], timeout_s: float) -> tuple[
        int | None, str, str]:
    """The command's exit status (None: killed at the timeout), stdout and stderr."""
    try:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   start_new_session=True)
    except OSError as error:
        return 127, "", f"cannot run {command[0]}: {error.strerror}"
    try:
        stdout, stderr = process.communicate(timeout=timeout_s)
        status: int | None = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate(timeout=_KILL_WAIT_S)
        status = None
    return status, stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace")
