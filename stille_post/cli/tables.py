"""Terminal tables that fit the console without cutting a name.

rich shrinks a table that is wider than the console by wrapping and then cutting its
cells (`bot:d…`): at 80 columns without a TTY every player name of a leaderboard was
cut. Here a table is fitted before rich sees it: optional columns are dropped, lowest
priority first (the caption names them), and a table that still does not fit is split
into several, each repeating the key columns. The key columns never wrap or shrink
(a name longer than the whole console folds, whole, over several lines).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from stille_post.core.text import printable

# A column costs its content plus a space on each side and one border.
_PER_COLUMN = 3


@dataclass(frozen=True)
class Column:
    header: str
    right: bool = False  # numbers: right-aligned
    drop: int = 0  # 0: always shown; higher numbers are dropped first when space is short


def _width(header: str, cells: Sequence[str], *, wrap: bool) -> int:
    # With `wrap`, a header may break at its spaces (`_header`); a cell never does.
    head = max((cell_len(w) for w in header.split()), default=0) if wrap \
        else cell_len(header)
    return max([head, *(cell_len(line) for c in cells for line in c.splitlines() or [""])])


def _widths(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int
            ) -> list[int]:
    """Each column's width: headers on one line when the whole table fits so, else
    headers broken at their spaces."""
    full = [_width(c.header, [r[i] for r in rows], wrap=False) for i, c in enumerate(columns)]
    if _table_width(full) <= width:
        return full
    return [_width(c.header, [r[i] for r in rows], wrap=True) for i, c in enumerate(columns)]


def _header(header: str, width: int) -> Text:
    """The header over as many lines as its column's width needs, broken at spaces."""
    lines = textwrap.wrap(header, width, break_long_words=False) or [header]
    return Text("\n".join(printable(line) for line in lines))


def _table_width(widths: Sequence[int]) -> int:
    return sum(widths) + _PER_COLUMN * len(widths) + 1


def fit(width: int, columns: Sequence[Column], rows: Sequence[Sequence[str]]
        ) -> tuple[list[int], list[str]]:
    """The indexes of the columns to show at `width`, and the headers of those dropped."""
    widths = _widths(columns, rows, width)
    shown = list(range(len(columns)))
    dropped: list[str] = []
    for i in sorted((i for i, c in enumerate(columns) if c.drop),
                    key=lambda i: (-columns[i].drop, -i)):
        if _table_width([widths[j] for j in shown]) <= width:
            break
        shown.remove(i)
        dropped.append(columns[i].header)
    return shown, dropped


def print_table(console: Console, title: str, columns: Sequence[Column],
                rows: Sequence[Sequence[str]], *, keys: int = 1) -> None:
    """Print rows under `columns`, fitted to the console: optional columns dropped first,
    then the rest split over several tables that each repeat the first `keys` columns."""
    shown, dropped = fit(console.width, columns, rows)
    widths = dict(zip(shown, _widths([columns[i] for i in shown],
                                     [[r[i] for i in shown] for r in rows], console.width),
                      strict=True))
    key_cols = [i for i in shown if i < keys]
    rest = [i for i in shown if i >= keys]
    groups: list[list[int]] = []
    for i in rest:
        if groups and _table_width([widths[j] for j in (*key_cols, *groups[-1], i)]) \
                <= console.width:
            groups[-1].append(i)
        else:
            groups.append([i])
    groups = groups or [[]]
    for n, group in enumerate(groups, start=1):
        part = f" ({n} of {len(groups)})" if len(groups) > 1 else ""
        caption = ("not shown at this width: " + ", ".join(dropped)
                   if dropped and n == len(groups) else None)
        table = Table(title=Text(printable(title + part)),
                      caption=Text(printable(caption)) if caption else None)
        # When even one group is too wide (one very long cell), rich wraps its cells at
        # spaces and folds the rest: nothing is cut.
        fits = _table_width([widths[j] for j in (*key_cols, *group)]) <= console.width
        for i in (*key_cols, *group):
            c = columns[i]
            table.add_column(_header(c.header, widths[i]), justify="right" if c.right else "left",
                             no_wrap=fits, overflow="fold",
                             min_width=widths[i] if fits else None)
        for row in rows:
            # Text, not markup: a player named "[red]x" is shown as it is.
            table.add_row(*(Text(printable(row[i])) for i in (*key_cols, *group)))
        console.print(table)


__all__ = ["Column", "fit", "print_table"]
