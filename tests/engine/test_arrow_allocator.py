"""`toolturn` makes the C library's allocator Arrow's default pool (toolturn/cli.py, `ARROW_POOL`):
with mimalloc, Arrow's default in this pyarrow, assembling and summarising a run folder grew the
process by far more than the buffers it held (measured when it was chosen, commit c24a00b). A
user's own choice stays.
Checked in a fresh interpreter: Arrow reads the variable once, when it first allocates."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
_PROGRAM = """
import json, sys
from toolturn.cli import main
status = main(["schema"])
import pyarrow as pa
print(json.dumps([status, pa.default_memory_pool().backend_name]), file=sys.stderr)
"""


def _pool(environment: dict[str, str]) -> tuple[int, str]:
    """The exit status of `toolturn schema` and the backend of Arrow's default pool after it."""
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM], cwd=ROOT, capture_output=True, text=True,
        timeout=120, check=False, env=environment,
    )
    status, backend = json.loads(done.stderr.strip().splitlines()[-1])
    return status, backend


def _without_pool_variable() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}


def test_sim_gives_arrow_the_system_allocator() -> None:
    assert _pool(_without_pool_variable()) == (0, "system")


def test_an_allocator_the_user_chose_is_kept() -> None:
    assert _pool({**_without_pool_variable(), "ARROW_DEFAULT_MEMORY_POOL": "mimalloc"}) == (
        0, "mimalloc",
    )
