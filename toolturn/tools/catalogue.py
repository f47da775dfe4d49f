"""Named sets of simulated tools a scenario can start from (`[tools] catalogue = "default"`).

The default catalogue is shaped like a coding agent's: Read, Grep, Glob (concurrency-safe, fast);
Bash (unsafe, and an error cancels its siblings); Edit, Write (unsafe, ask the user, not cancellable
half way); WebFetch (safe, slow, flaky); Task (a sub-agent: long, reports progress).

Where the numbers come from. Limits are Claude Code's documented defaults: the Bash tool times out
after 120 s (`BASH_DEFAULT_TIMEOUT_MS`, at most 600 s), long output is truncated at about 30,000
characters, and Read returns at most 2,000 lines. Everything else is an estimate, not a
measurement, and should be replaced with recorded latencies (an `empirical` distribution) where they
exist: file reads, edits and globs on a warm page cache take milliseconds; ripgrep searches a
mid-sized repository in tens of milliseconds (its README benchmarks search the Linux kernel tree
in a fraction of a second); shell commands in agent sessions range from `ls` (milliseconds) to test
suites (minutes), hence a wide lognormal capped at the timeout; a web fetch is an HTTP round trip
plus a summarising model call (seconds); a sub-agent runs a whole tool loop of its own (tens of
seconds to minutes). About one Bash command in eight exits non-zero (failing tests, grep without
matches) and Edit fails when `old_string` is not found or not unique.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from toolturn.tools.spec import ToolSpec


def _lognormal(median_ms: float, sigma: float, max_ms: float | None = None) -> dict[str, Any]:
    return {"kind": "lognormal", "median_ms": median_ms, "sigma": sigma, "max_ms": max_ms}


def _chars(median: int, sigma: float, maximum: int) -> dict[str, Any]:
    return {"kind": "lognormal", "median": median, "sigma": sigma, "max": maximum}


def _string(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _closed_object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """An input schema: an object of these properties, these required, no others."""
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


_PATHS = (
    "/repo/src/app.py",
    "/repo/src/models/user.py",
    "/repo/tests/test_app.py",
    "/repo/README.md",
    "/repo/pyproject.toml",
    "/repo/src/api/routes.py",
)
_ASK_USER = {
    "mode": "ask",
    # A user reading a diff and pressing enter: a couple of seconds, sometimes much longer.
    "decision_delay": _lognormal(2000, 0.8, 60_000),
    "deny_probability": 0.05,
}

_DEFAULT: tuple[dict[str, Any], ...] = (
    {
        "name": "Read",
        "description": "Read a file from the local filesystem.",
        "input_schema": _closed_object(
            {
                "file_path": _string("Absolute path of the file to read"),
                "offset": {"type": "integer", "minimum": 0},
                "limit": {"type": "integer", "minimum": 1},
            },
            required=["file_path"],
        ),
        "examples": [{"file_path": path} for path in _PATHS]
        + [{"file_path": "/repo/src/app.py", "offset": 120, "limit": 80}],
        "concurrency_safe": True,
        "duration": _lognormal(8, 0.6, 500),
        "failures": {"error": 0.02},  # file not found
        "result_chars": _chars(6000, 1.0, 60_000),
    },
    {
        "name": "Grep",
        "description": "Search file contents with a regular expression (ripgrep).",
        "input_schema": _closed_object(
            {
                "pattern": _string("Regular expression to search for"),
                "path": _string("Directory or file to search"),
                "glob": _string("Only search files matching this glob"),
                "output_mode": {"enum": ["content", "files_with_matches", "count"]},
            },
            required=["pattern"],
        ),
        "examples": [
            {"pattern": "def main", "path": "/repo/src"},
            {"pattern": "TODO", "output_mode": "count"},
            {"pattern": "class .*Error", "glob": "*.py", "output_mode": "content"},
            {"pattern": "import numpy", "output_mode": "files_with_matches"},
        ],
        "concurrency_safe": True,
        "duration": _lognormal(60, 0.8, 5000),
        "result_chars": _chars(1500, 1.2, 30_000),
    },
    {
        "name": "Glob",
        "description": "Find files whose path matches a glob pattern.",
        "input_schema": _closed_object(
            {
                "pattern": _string("Glob pattern"),
                "path": _string("Directory to search"),
            },
            required=["pattern"],
        ),
        "examples": [
            {"pattern": "**/*.py"},
            {"pattern": "src/**/*.ts", "path": "/repo"},
            {"pattern": "tests/test_*.py"},
        ],
        "concurrency_safe": True,
        "duration": _lognormal(25, 0.6, 2000),
        "result_chars": _chars(800, 1.0, 30_000),
    },
    {
        "name": "Bash",
        "description": "Run a shell command.",
        "input_schema": _closed_object(
            {
                "command": _string("The command to run"),
                "description": _string("What the command does, in a few words"),
                "timeout": {"type": "integer", "minimum": 1, "maximum": 600_000},
            },
            required=["command"],
        ),
        "examples": [
            {"command": "pytest -q", "description": "Run the tests"},
            {"command": "git status"},
            {"command": "ls -la /repo/src"},
            {"command": "python -m mypy src", "timeout": 300_000},
            {"command": "git diff --stat"},
            {"command": "npm run build", "description": "Build the front end"},
        ],
        "cancels_siblings": True,
        "duration": _lognormal(1500, 1.4, 120_000),
        "progress_every": {"kind": "fixed", "ms": 1000},
        "failures": {"error": 0.12, "exception": 0.002},
        "result_chars": _chars(1200, 1.5, 30_000),
    },
    {
        "name": "Edit",
        "description": "Replace an exact string in a file.",
        "input_schema": _closed_object(
            {
                "file_path": _string("Absolute path of the file to edit"),
                "old_string": _string("Text to replace"),
                "new_string": _string("Replacement text"),
                "replace_all": {"type": "boolean"},
            },
            required=["file_path", "old_string", "new_string"],
        ),
        "examples": [
            {
                "file_path": "/repo/src/app.py",
                "old_string": "return None",
                "new_string": "return result",
            },
            {
                "file_path": "/repo/src/models/user.py",
                "old_string": "name: str",
                "new_string": "name: str = ''",
            },
            {
                "file_path": "/repo/tests/test_app.py",
                "old_string": "assert x == 1",
                "new_string": "assert x == 2",
                "replace_all": True,
            },
        ],
        "cancellable": False,
        "duration": _lognormal(15, 0.5, 1000),
        "failures": {"error": 0.08},
        "permission": _ASK_USER,
        "result_chars": _chars(300, 0.8, 5000),
    },
    {
        "name": "Write",
        "description": "Write a file, replacing it if it exists.",
        "input_schema": _closed_object(
            {
                "file_path": _string("Absolute path of the file to write"),
                "content": _string("The whole new content"),
            },
            required=["file_path", "content"],
        ),
        "examples": [
            {
                "file_path": "/repo/src/util.py",
                "content": "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n",
            },
            {"file_path": "/repo/notes.md", "content": "# Notes\n"},
        ],
        "cancellable": False,
        "duration": _lognormal(10, 0.5, 1000),
        "failures": {"error": 0.01},
        "permission": _ASK_USER,
        "result_chars": _chars(120, 0.3, 1000),
    },
    {
        "name": "WebFetch",
        "description": "Fetch a URL and answer a question about its content.",
        "input_schema": _closed_object(
            {
                "url": _string("The URL to fetch"),
                "prompt": _string("What to extract from the page"),
            },
            required=["url", "prompt"],
        ),
        "examples": [
            {
                "url": "https://docs.python.org/3/library/tomllib.html",
                "prompt": "How do I parse a file?",
            },
            {"url": "https://pypi.org/project/simpy/", "prompt": "Latest version?"},
            {"url": "https://github.com/python-hyper/h11", "prompt": "Summarise the design"},
        ],
        "concurrency_safe": True,
        "duration": _lognormal(2500, 0.8, 60_000),
        "failures": {"error": 0.08, "hang": 0.01},  # timeouts, 4xx/5xx, unreachable hosts
        "result_chars": _chars(2000, 0.8, 20_000),
    },
    {
        "name": "Task",
        "description": "Hand a self-contained task to a sub-agent and return its report.",
        "input_schema": _closed_object(
            {
                "description": _string("A short title for the task"),
                "prompt": _string("The full task for the sub-agent"),
                "subagent_type": {"enum": ["general-purpose", "explore"]},
            },
            required=["description", "prompt"],
        ),
        "examples": [
            {
                "description": "Find config loading",
                "prompt": "Find where configuration files are loaded",
                "subagent_type": "explore",
            },
            {
                "description": "Fix flaky test",
                "prompt": "Make tests/test_app.py::test_retry deterministic",
            },
        ],
        "concurrency_safe": True,
        "duration": _lognormal(45_000, 0.8, 600_000),
        "progress_every": _lognormal(3000, 0.5),
        "failures": {"error": 0.02},
        "result_chars": _chars(2000, 0.7, 20_000),
    },
)

CATALOGUE_NAMES = ("default", "none")


@cache
def catalogue(name: str) -> tuple[ToolSpec, ...]:
    """The tools of the catalogue `name` ("default"; "none" has no tools), in a fixed order."""
    if name == "default":
        return tuple(ToolSpec.model_validate(entry) for entry in _DEFAULT)
    if name == "none":
        return ()
    raise ValueError(f"unknown catalogue {name!r}; known: {', '.join(CATALOGUE_NAMES)}")
