"""`agent_errors.json` in a run folder of `toolturn run --agent`: each session of the agent arm
that ended `agent_error`, with the exception's type and message (the sessions table has only
the outcome: its columns are numbers and categories, not free text).

    {"policy": "agent:my_agent:agent",
     "errors": [{"load_level": 0, "session_id": 1, "type": "ValueError", "message": "..."}]}

Errors go in load-level order, then by session id: the same run, the same bytes. The file is
written with the run's tables, in the same atomic step (`toolturn.metrics.writer`), and is
there, its list empty, whenever the arm ran.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolturn.agents.arm import AgentError

AGENT_ERRORS_FILE = "agent_errors.json"


def agent_errors_json(policy: str, levels: Sequence[Sequence[AgentError]]) -> bytes:
    """The file's bytes for the arm `policy`, from each load level's errors in turn."""
    errors = [
        {"load_level": level, "session_id": error.session_id, "type": error.type,
         "message": error.message}
        for level, level_errors in enumerate(levels)
        for error in sorted(level_errors, key=lambda error: error.session_id)
    ]
    text = json.dumps({"policy": policy, "errors": errors}, ensure_ascii=False, indent=1)
    return (text + "\n").encode("utf-8", "backslashreplace")


def read_agent_errors(run_folder: Path) -> dict[str, Any]:
    """A run folder's `agent_errors.json`, parsed."""
    parsed: dict[str, Any] = json.loads((run_folder / AGENT_ERRORS_FILE).read_text("utf-8"))
    return parsed
