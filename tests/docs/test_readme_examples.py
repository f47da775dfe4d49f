"""The Python examples of the README and the guides in docs/ run, and their scenario examples
load (docs that match the code).

Examples that need a running `toolturn serve` are exercised by the server tests instead, and the
loop excerpt of docs/runtime.md by `tests/docs/test_docs_loop_example.py`, its full version.
"""

import re
from pathlib import Path

import pytest

from toolturn.scenario.loader import load_scenario

TOP = Path(__file__).resolve().parents[2]
# The generated references hold no examples; the guides and the README do.
PAGES = [TOP / "README.md", *sorted((TOP / "docs").glob("*.md"))]


def blocks(language: str) -> list[tuple[Path, str]]:
    """Every fenced block of `language`, with the page it is on."""
    fence = re.compile(rf"```{language}\n(.*?)```", re.S)
    return [(page, block) for page in PAGES for block in fence.findall(page.read_text("utf-8"))]


# The docs' placeholder run folder, played here by a committed baseline run.
RUN_PLACEHOLDER = ("results/<run>", "results/baseline/default")
NEEDS_ELSEWHERE = ("127.0.0.1", "next(responses)", "events = [...]")
RUNNABLE = [
    (page, block) for page, block in blocks("python")
    if not any(marker in block for marker in NEEDS_ELSEWHERE)
]


def name(example: tuple[Path, str]) -> str:
    return f"{example[0].name}:{example[1].splitlines()[0][:40]}"


def test_the_docs_have_runnable_examples() -> None:
    assert len(RUNNABLE) >= 5


@pytest.mark.parametrize("example", RUNNABLE, ids=name)
def test_docs_example_runs(example: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    page, block = example
    monkeypatch.chdir(TOP)
    code = block.replace(*RUN_PLACEHOLDER)
    exec(compile(code, str(page), "exec"), {"__name__": "docs_example"})


@pytest.mark.parametrize("example", blocks("toml"), ids=name)
def test_docs_scenario_validates(example: tuple[Path, str], tmp_path: Path) -> None:
    path = tmp_path / "example.toml"
    path.write_text(example[1], encoding="utf-8")
    load_scenario(path)
