"""The README's Python examples run and its scenario example loads (docs that match the code).

Examples that need a running `toolturn serve` are exercised by the server tests instead, and the
loop excerpt by `tests/test_loop_readme_example.py`, its full version.
"""

import re
from pathlib import Path

import pytest

from toolturn.scenario.loader import load_scenario

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
# The README's placeholder run folder, played here by a committed baseline run.
RUN_PLACEHOLDER = ("results/<run>", "results/baseline/default")
NEEDS_ELSEWHERE = ("127.0.0.1", "next(responses)", "events = [...]")
RUNNABLE = [block for block in BLOCKS if not any(marker in block for marker in NEEDS_ELSEWHERE)]


def test_the_readme_has_runnable_examples() -> None:
    assert len(RUNNABLE) >= 5


@pytest.mark.parametrize("block", RUNNABLE, ids=lambda block: block.splitlines()[0][:40])
def test_readme_example_runs(block: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(README.parent)
    code = block.replace(*RUN_PLACEHOLDER)
    exec(compile(code, str(README), "exec"), {"__name__": "readme_example"})


TOML_BLOCKS = re.findall(r"```toml\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("block", TOML_BLOCKS, ids=lambda block: block.splitlines()[0][:40])
def test_readme_scenario_validates(block: str, tmp_path: Path) -> None:
    path = tmp_path / "readme.toml"
    path.write_text(block, encoding="utf-8")
    load_scenario(path)
