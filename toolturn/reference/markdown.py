"""Markdown pieces the references share: a table from rows, and a cell that cannot break it."""

from __future__ import annotations

from collections.abc import Sequence

# The first line of every generated page: a reader (and a reviewer of a diff) knows not to edit
# it by hand, and what remakes it.
GENERATED = (
    "<!-- Generated from the code by `make docs` (python -m toolturn.reference): do not edit. -->"
)


def cell(text: str) -> str:
    """`text` as one Markdown table cell: a `|` would end the cell, a newline the row."""
    return " ".join(text.split()).replace("|", "\\|")


def code(text: str) -> str:
    """`text` as inline code in a table cell (empty stays empty). A backtick inside is fenced
    with two, as Markdown allows."""
    if not text:
        return ""
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """The lines of a Markdown table; every value is escaped as a cell."""
    lines = [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join("---" for _ in header) + " |",
    ]
    lines += ["| " + " | ".join(cell(value) for value in row) + " |" for row in rows]
    return lines
