"""The generated references of docs/reference/ are what the code makes now, and the scenario
reference names every key the shipped scenarios write (issue 32, section 1)."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolturn.reference import scenario_keys
from toolturn.reference.__main__ import main
from toolturn.reference.pages import PAGES, REMAKE, stale

TOP = Path(__file__).resolve().parents[2]
FOLDER = TOP / "docs" / "reference"
SHIPPED = sorted(TOP.glob("scenarios/*.toml")) + sorted(
    path for path in TOP.glob("scenarios/probes/*.toml") if path.name != "suite.toml"
)


@pytest.mark.parametrize("name", PAGES)
def test_the_committed_page_is_what_the_code_makes(name: str) -> None:
    committed = (FOLDER / name).read_text(encoding="utf-8")
    assert committed == PAGES[name](), f"docs/reference/{name} is stale: run {REMAKE}"


def test_check_says_what_is_stale_and_write_mends_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--check", str(tmp_path)]) == 1
    assert capsys.readouterr().err.count("make docs") == len(PAGES)
    assert main([str(tmp_path)]) == 0
    assert stale(tmp_path) == []
    (tmp_path / "tables.md").write_text("edited by hand\n", encoding="utf-8")
    assert main(["--check", str(tmp_path)]) == 1
    assert "tables.md: stale" in capsys.readouterr().err


def key_paths(table: dict[str, Any], path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every key a TOML document writes, by its path; an array of tables is `name[]`."""
    for name, value in table.items():
        if isinstance(value, dict):
            yield from key_paths(value, (*path, name)) if value else iter([(*path, name)])
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            yield (*path, name)
            for element in value:
                yield from key_paths(element, (*path, f"{name}[]"))
        else:
            yield (*path, name)


def matches(pattern: tuple[str, ...], path: tuple[str, ...]) -> bool:
    return len(pattern) == len(path) and all(
        p == q or (p.startswith("<") and p.endswith(">"))
        for p, q in zip(pattern, path, strict=True)
    )


def documenting(
    path: tuple[str, ...], keys: list[scenario_keys.Key]
) -> scenario_keys.Key | None:
    """The reference's key that names `path`: its own, or one that covers it (a distribution's
    keys, a JSON value, a path of an experiment); None if there is none."""
    families = {"duration": {"kind"}, "count": {"kind"}}
    for kind, key in scenario_keys.distribution_keys():
        families["duration" if kind.startswith("duration") else "count"].add(key.dotted)
    for key in keys:
        if matches(key.path, path):
            return key
        depth = len(key.path)
        if len(path) <= depth:
            continue
        # An array of JSON objects (`examples`) is written as tables, `examples[]`.
        under = (*path[: depth - 1], path[depth - 1].removesuffix("[]"))
        if matches(key.path, under):
            if key.cover == "any":
                return key
            if key.cover in families and len(path) == depth + 1:
                return key if path[-1] in families[key.cover] else None
    return None


def documented(path: tuple[str, ...], keys: list[scenario_keys.Key]) -> bool:
    return documenting(path, keys) is not None


@pytest.mark.parametrize("scenario", SHIPPED, ids=lambda path: path.name)
def test_every_key_of_a_shipped_scenario_is_in_the_reference(scenario: Path) -> None:
    keys = scenario_keys.scenario_keys()
    committed = (FOLDER / "scenario.md").read_text(encoding="utf-8")
    written = list(key_paths(tomllib.loads(scenario.read_text(encoding="utf-8"))))
    assert written
    found = {".".join(path): documenting(path, keys) for path in written}
    assert [path for path, key in found.items() if key is None] == []
    # ... and the committed page names each by its dotted path (as a cell of its own).
    assert [path for path, key in found.items() if key and f"`{key.dotted}`" not in committed] == []


def test_the_coverage_check_can_fail() -> None:
    keys = scenario_keys.scenario_keys()
    assert documented(("session", "interrupts", "probability"), keys)
    assert documented(("tools", "override", "Bash", "duration", "median_ms"), keys)
    assert documented(("experiment", "grid", "load.concurrency"), keys)
    assert not documented(("session", "interrupts", "chance"), keys)
    assert not documented(("session", "think_time", "median"), keys)  # a count's key, not ms
    assert not documented(("tools", "override", "Bash", "speed"), keys)


def test_a_key_has_its_type_default_unit_and_bounds() -> None:
    keys = {key.dotted: key for key in scenario_keys.scenario_keys()}
    probability = keys["session.interrupts.probability"]
    assert (probability.type, probability.default, probability.bounds) == (
        "number", "0", ">= 0, <= 1"
    )
    assert keys["load.mode"].default == "required"
    assert keys["load.mode"].type == '"closed" | "open"'
    assert keys["runtime.retries.initial_backoff_ms"].unit == "ms"
    assert keys["seed"].bounds == ">= 0, <= 9223372036854775807"
    think = keys["session.think_time"]
    assert think.type == scenario_keys.DURATION and think.unit == "ms"
    assert think.default.startswith('{ kind = "lognormal", median_ms = 15000')


def test_a_distributions_keys_are_listed_once_under_its_kind() -> None:
    page = PAGES["scenario.md"]()
    assert "`session.think_time.median_ms`" not in page
    assert page.count("| `median_ms` |") == 1
    kinds = {kind for kind, _ in scenario_keys.distribution_keys()}
    assert 'duration distribution, kind = "lognormal"' in kinds and len(kinds) == 8


def test_every_command_is_in_the_command_reference() -> None:
    page = PAGES["commands.md"]()
    commands = sorted(p.stem for p in (TOP / "toolturn" / "commands").glob("[a-z]*.py"))
    assert commands and all(f"\n## toolturn {name}\n" in page for name in commands)
    assert "## toolturn traces calibrate" in page and "`-n/--sessions SESSIONS`" in page


def test_every_table_and_column_is_in_the_table_reference() -> None:
    from toolturn.metrics.columns import all_specs

    page = PAGES["tables.md"]()
    for spec in all_specs():
        assert f"\n## {spec.name}\n" in page
        assert all(f"| `{column}` |" in page for column in spec.column_names)
