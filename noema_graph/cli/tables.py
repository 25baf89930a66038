"""The CLI's tables, drawn for the stream they go to: rich on a terminal, plain rows elsewhere.

On a terminal a table is a rich :class:`~rich.table.Table` fitted to the window. Piped
(``| less``, ``> file``, a CI log) it is plain text, as ``git`` and ``kubectl`` print it: a
header row, then one line per row, columns aligned with two spaces, every cell whole (no
wrapping, no ``…``, no cut at 80 columns). A cell is a ``str`` (printed as is, never read as
markup) or a styled :class:`~rich.text.Text` (its plain text when piped).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from rich.console import Console
from rich.table import Table
from rich.text import Text

__all__ = ["Cell", "Column", "plain_table", "print_table"]

Cell = str | Text
"""One cell: literal text, or text with a style (shown on a terminal only)."""
GAP = "  "
"""Between two columns of a plain table."""


@dataclass(frozen=True)
class Column:
    """A column: its header, alignment, and how a terminal may shorten it.

    ``no_wrap``: never wrap it on a terminal; ``clip``: on a terminal, show at most this many
    characters of a cell (the plain rows keep the whole text).
    """

    header: str
    justify: Literal["left", "right"] = "left"
    no_wrap: bool = False
    clip: int | None = None


def _column(spec: str | Column) -> Column:
    return Column(spec) if isinstance(spec, str) else spec


def _plain(cell: Cell) -> str:
    """Return ``cell`` as one line of text (a newline or tab inside it becomes a space)."""
    text = cell.plain if isinstance(cell, Text) else cell
    return " ".join(text.splitlines()).replace("\t", " ")


def plain_table(
    columns: Sequence[str | Column],
    rows: Iterable[Sequence[Cell]],
    *,
    title: str | None = None,
    caption: str | None = None,
) -> str:
    """Return the table as plain lines: ``title``, the header, one line per row, ``caption``.

    Columns are as wide as their widest cell; trailing spaces are dropped.
    """
    specs = [_column(c) for c in columns]
    lines = [[c.header for c in specs], *([_plain(cell) for cell in row] for row in rows)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(specs))]
    text = [
        GAP.join(
            cell.rjust(width) if spec.justify == "right" else cell.ljust(width)
            for cell, width, spec in zip(line, widths, specs, strict=True)
        ).rstrip()
        for line in lines
    ]
    return "\n".join([*([title] if title else []), *text, *([caption] if caption else [])]) + "\n"


def _rich_table(columns: Sequence[str | Column], rows: Iterable[Sequence[Cell]]) -> Table:
    """Return the table as a rich :class:`~rich.table.Table` (cells clipped as columns say)."""
    specs = [_column(c) for c in columns]
    table = Table()
    for spec in specs:
        table.add_column(spec.header, justify=spec.justify, no_wrap=spec.no_wrap)
    for row in rows:
        table.add_row(*(_clipped(cell, spec.clip) for cell, spec in zip(row, specs, strict=True)))
    return table


def _clipped(cell: Cell, clip: int | None) -> Text:
    text = cell if isinstance(cell, Text) else Text(cell)
    if clip is not None and len(text) > clip:
        text = text[:clip]
    return text


def print_table(
    console: Console,
    columns: Sequence[str | Column],
    rows: Iterable[Sequence[Cell]],
    *,
    title: str | None = None,
    caption: str | None = None,
) -> None:
    """Print the table on ``console``: rich on a terminal, :func:`plain_table` otherwise."""
    if console.is_terminal:
        table = _rich_table(columns, rows)
        table.title = None if title is None else Text(title)
        table.caption = None if caption is None else Text(caption)
        console.print(table, soft_wrap=False)
        return
    console.file.write(plain_table(columns, rows, title=title, caption=caption))
    console.file.flush()
