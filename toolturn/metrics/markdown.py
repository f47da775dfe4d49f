"""The terminal's tables as Markdown (`--format markdown`), for a CI step summary: the same
tables, sentences and notes that the console shows, in the same order.

Rules: a table is a GitHub-flavoured pipe table (its title a bold line above it, its columns
aligned as on the console, a header's line breaks made spaces); a cell's `|` is escaped and a
line break in it is `<br>`; a sentence (``display.Phrases``, rich ``Text``) is a paragraph of
its own, bold when the console shows it bold. Markup and colour are dropped.
"""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from toolturn.metrics.display import Fitted, Phrases, column_headers, table_rows


def markdown(renderable: object) -> str:
    """`renderable` (a Group of tables and sentences, or one of them) as Markdown, blocks
    separated by a blank line, ending in a newline."""
    return "\n\n".join(_blocks(renderable)) + "\n"


def _blocks(renderable: object) -> list[str]:
    if isinstance(renderable, Group):
        return [block for part in renderable.renderables for block in _blocks(part)]
    if isinstance(renderable, Fitted):
        return [markdown_table(renderable.table)]
    if isinstance(renderable, Table):
        return [markdown_table(renderable)]
    if isinstance(renderable, Phrases):
        return [_paragraph(renderable.plain, bold=bool(renderable.style))]
    if isinstance(renderable, Text):
        return [_paragraph(renderable.plain, bold="bold" in str(renderable.style))]
    if isinstance(renderable, str):
        return [_paragraph(Text.from_markup(renderable).plain, bold=False)]
    raise TypeError(f"no Markdown for {type(renderable).__name__}")


def markdown_table(table: Table) -> str:
    """One table as a pipe table, its title (if any) a bold line above it."""
    headers = [_cell(header) or " " for header in column_headers(table)]
    align = {"right": "---:", "center": ":---:"}
    lines = [
        _row(headers),
        _row([align.get(str(column.justify), ":---") for column in table.columns]),
        *(_row([_cell(cell) for cell in row]) for row in table_rows(table)),
    ]
    if table.title:
        lines.insert(0, _paragraph(Text.from_markup(str(table.title)).plain, bold=True) + "\n")
    return "\n".join(lines)


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", "<br>")


def _paragraph(text: str, *, bold: bool) -> str:
    text = " ".join(text.split())
    return f"**{_cell(text)}**" if bold and text else _cell(text)
