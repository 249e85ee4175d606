"""Plain-text tables for terminal output.

Cells are already-formatted strings (certified numbers must be formatted with
the outward-rounding helpers of :mod:`certbound.ball` *before* they get here;
this module never rounds anything). Numeric-looking columns are right-aligned.

>>> print(format_table([["QK", "1.5"], ["M_in", "12.25"]], ["type", "sigma1"]))
type  sigma1
----  ------
QK       1.5
M_in   12.25
"""

from __future__ import annotations

import re
from typing import Any, Sequence

__all__ = ["format_table"]

_NUMERIC = re.compile(r"^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$|^\s*[-+]?inf\s*$|^\s*\[.*\]\s*$")


def _is_numeric_column(cells: list[str]) -> bool:
    present = [c for c in cells if c not in ("", "-")]
    return bool(present) and all(_NUMERIC.match(c) for c in present)


def format_table(rows: Sequence[Sequence[Any]], header: Sequence[str], *,
                 align: Sequence[str] | None = None, gap: int = 2) -> str:
    """Format rows under a header with a dashed rule; no trailing spaces.

    Parameters
    ----------
    rows : sequence of sequences
        Cells; ``None`` prints as ``-``, anything else through ``str``.
    header : sequence of str
        Column titles (one per cell).
    align : sequence of {"<", ">"}, optional
        Per-column alignment; default right for numeric-looking columns
        (numbers, ``inf``, bracketed intervals), left otherwise.
    gap : int
        Spaces between columns.

    Returns
    -------
    str
        The table's lines joined by newlines (no trailing newline).

    Raises
    ------
    ValueError
        If a row's length differs from the header's, or ``align`` is malformed.

    Examples
    --------
    >>> print(format_table([[0, None, "[1, 32]"]], ["layer", "head", "rank"]))
    layer  head     rank
    -----  ----  -------
        0  -     [1, 32]
    """
    header = [str(h) for h in header]
    cells = [["-" if c is None else str(c) for c in row] for row in rows]
    for i, row in enumerate(cells):
        if len(row) != len(header):
            raise ValueError(f"table row {i} has {len(row)} cells, header has {len(header)}")
    ncol = len(header)
    columns = [[row[j] for row in cells] for j in range(ncol)]
    if align is None:
        align = [">" if _is_numeric_column(col) else "<" for col in columns]
    elif len(align) != ncol or any(a not in "<>" for a in align):
        raise ValueError(f"align must give '<' or '>' for each of the {ncol} columns")
    widths = [max([len(header[j])] + [len(c) for c in columns[j]]) for j in range(ncol)]
    sep = " " * gap

    def line(parts: Sequence[str]) -> str:
        return sep.join(f"{p:{a}{w}}" for p, a, w in zip(parts, align, widths)).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    out.extend(line(row) for row in cells)
    return "\n".join(out)
