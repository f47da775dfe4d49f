"""The README is a user's page and the docs hold together (issue 32, section 1): the README stays
under its line limit with (almost) no dated measurements, its two quickstart commands are make
targets that install what they need, every page of docs/ is reachable from it, and every link of
the README and the docs names a file of the repository (and a heading of it, for an anchor)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]
README = TOP / "README.md"
PAGES = [README, *sorted((TOP / "docs").rglob("*.md"))]
MAX_README_LINES = 400
MAX_DATED_LINES = 3  # measurements with dates belong in docs/performance.md
DATED = re.compile(r"20\d\d-\d\d-\d\d")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_the_readme_is_under_its_line_limit() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, (
        f"README.md has {len(lines)} lines (at most {MAX_README_LINES}): it is a user's page; "
        "guides go in docs/, measurements in docs/performance.md"
    )


def test_the_readme_holds_no_dated_measurements() -> None:
    dated = [line for line in README.read_text(encoding="utf-8").splitlines() if DATED.search(line)]
    assert len(dated) <= MAX_DATED_LINES, dated


def test_the_quickstart_commands_are_make_targets_that_install_first() -> None:
    readme = README.read_text(encoding="utf-8")
    makefile = (TOP / "Makefile").read_text(encoding="utf-8")
    for target in ("run", "test"):
        assert f"make {target}" in readme
        assert re.search(rf"^{target}: \$\(STAMP\)$", makefile, re.M), target
    assert "$(STAMP): pyproject.toml constraints.txt" in makefile


def test_the_readme_is_the_packages_long_description() -> None:
    project = tomllib.loads((TOP / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["readme"] == "README.md"
    assert len(README.read_bytes()) < 20_000  # the wheel's metadata carries it whole


def test_every_guide_is_linked_from_the_readme() -> None:
    linked = {(README.parent / target).resolve() for target in links(README)}
    pages = {page.resolve() for page in PAGES if page != README}
    assert sorted(str(page) for page in pages - linked) == []


def links(page: Path) -> list[str]:
    """The page's relative link targets, without their anchors; web links are not files here."""
    files = [target.split("#")[0] for target in LINK.findall(page.read_text(encoding="utf-8"))]
    return [target for target in files if target and "://" not in target]


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation but - and _ dropped, spaces
    made hyphens."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return {slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(TOP)))
def test_every_link_names_a_file_and_heading_of_the_repository(page: Path) -> None:
    broken = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if "://" in target:
            continue
        file_part, _, anchor = target.partition("#")
        linked = (page.parent / file_part).resolve() if file_part else page
        if not linked.exists() or TOP not in linked.parents:
            broken.append(target)
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(target)
    assert broken == []


def test_no_page_points_outside_the_repository() -> None:
    # The design map lives beside the checkout, not in it: a user of the package never has it.
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        assert "DESIGN.md" not in text and "../shared" not in text, page


def test_the_slug_is_githubs() -> None:
    assert slug(" Recovery profiles: the loop's choices on faults") == (
        "recovery-profiles-the-loops-choices-on-faults"
    )
    assert slug("Capacity: the highest load meeting SLOs (`toolturn capacity`)") == (
        "capacity-the-highest-load-meeting-slos-toolturn-capacity"
    )
