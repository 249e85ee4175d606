"""LaTeX (booktabs) tables of certified numbers, rounded outward.

A certified quantity is printed as an *upper bound* (its ball's upper end
rounded **up** to ``digits`` significant digits), a *lower bound* (lower end
rounded **down**) or an *interval* ``[lower, upper]`` with both ends rounded
outward — always through :func:`certbound.ball.decimal_upper` and
:func:`certbound.ball.decimal_lower`, never through ``float()`` or ``%g``, so
the printed digits are themselves proven bounds.

Every ``.tex`` certbound writes is a *fragment* for ``\\input`` that compiles
in a plain ``article`` with the preamble :data:`LATEX_PREAMBLE`
(``amssymb``, ``booktabs``, ``graphicx``, ``longtable``); tables wider than
the text are scaled down to ``\\linewidth``, tables longer than
:data:`LONG_TABLE_ROWS` rows are ``longtable`` s that break across pages.
Numbers below 10⁻³ or from 10⁵ on are printed in scientific notation (the
digits moved, never re-rounded).

Cells of :func:`latex_table` are ``arb`` balls (printed as intervals), already
formatted :class:`Raw` LaTeX (from :func:`latex_upper`, :func:`latex_lower`,
:func:`latex_interval`), ints, or plain text (escaped).

Examples
--------
>>> from flint import arb
>>> x = arb(1) / 3
>>> latex_upper(x, 3), latex_lower(x, 3)
('0.334', '0.333')
>>> latex_number("1.25e+7")
'1.25\\\\times 10^{7}'
>>> print(latex_table([["QK", latex_upper(x, 3)]], ["type", Raw(r"$\\sigma_1$ (upper)")], fit=False))
\\begin{tabular}{lr}
\\toprule
type & $\\sigma_1$ (upper) \\\\
\\midrule
QK & $0.334$ \\\\
\\bottomrule
\\end{tabular}
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any, Sequence

from flint import arb

from certbound.ball import decimal_lower, decimal_upper

__all__ = [
    "Raw",
    "latex_escape",
    "latex_number",
    "latex_upper",
    "latex_lower",
    "latex_interval",
    "latex_table",
    "latex_document",
    "latex_fragment",
    "latex_count",
    "LATEX_PREAMBLE",
    "LONG_TABLE_ROWS",
]

#: The preamble every fragment certbound writes needs (besides ``\documentclass{article}``).
LATEX_PREAMBLE = "\\usepackage{amssymb,booktabs,graphicx,longtable}"
#: Tables with more rows than this become ``longtable`` (page-breaking, not floating).
LONG_TABLE_ROWS = 30


class Raw(str):
    r"""A string that already is LaTeX (not escaped by :func:`latex_table`).

    Examples
    --------
    >>> print(latex_table([[Raw(r"$\alpha$"), "$"]], ["a", "b"], fit=False).splitlines()[4])
    $\alpha$ & \$ \\
    """


class _MathNumber(Raw):
    """A formatted number (typeset in math mode, right-aligned)."""


_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    r"""Escape LaTeX's special characters in plain text.

    Parameters
    ----------
    text : str
        Plain text (anything else is converted with ``str``).

    Returns
    -------
    str
        The text with ``\ & % $ # _ { } ~ ^`` escaped.

    Examples
    --------
    >>> latex_escape("M_in & 50%")
    'M\\_in \\& 50\\%'
    """
    return "".join(_ESCAPES.get(c, c) for c in str(text))


_DECIMAL = re.compile(r"^(-?)(\d+(?:\.\d*)?)(?:e([-+]?\d+))?$")


def latex_number(decimal: str) -> Raw:
    r"""A decimal string from :mod:`certbound.ball` as LaTeX math (no $).

    The digits are copied, never re-rounded: ``"1.5e-7"`` → ``1.5\times 10^{-7}``.

    Parameters
    ----------
    decimal : str
        A decimal number string (``"-0.5"``, ``"3e-12"``, ``"inf"``), as
        :func:`certbound.ball.decimal_upper` and :func:`~certbound.ball.decimal_lower` write them.

    Returns
    -------
    Raw
        LaTeX math without ``$``: plain below 10⁵ and from 10⁻³ on, else ``d.dd\times 10^{E}``.

    Raises
    ------
    ValueError
        If ``decimal`` is not a decimal number string.

    Examples
    --------
    >>> latex_number("-0.5"), latex_number("inf"), latex_number("3e-12")
    ('-0.5', '\\infty', '3\\times 10^{-12}')
    """
    s = str(decimal).strip()
    if s in ("inf", "+inf"):
        return Raw(r"\infty")
    if s == "-inf":
        return Raw(r"-\infty")
    m = _DECIMAL.match(s.lower())
    if not m:
        raise ValueError(f"not a decimal number string: {decimal!r}")
    sign, mant, exp = m.groups()
    # Normalise to d.ddd × 10^E by moving the decimal point only (exact).
    int_part, _, frac = mant.partition(".")
    digits = (int_part + frac).lstrip("0")
    if not digits:
        return Raw(f"{sign}0")
    e10 = int(exp or 0) - len(frac) + len(digits) - 1
    if -3 <= e10 < 5:
        if exp is None:
            return Raw(f"{sign}{mant}")
        return Raw(f"{sign}{mant}\\times 10^{{{int(exp)}}}")
    tail = digits[1:].rstrip("0")
    return Raw(f"{sign}{digits[0]}{'.' + tail if tail else ''}\\times 10^{{{e10}}}")


def latex_count(n: int) -> Raw:
    r"""An exact integer (a sample size) as LaTeX math, in scientific form when it ends in zeros.

    Parameters
    ----------
    n : int
        The integer (printed exactly).

    Returns
    -------
    Raw
        ``10^{12}``, ``1.3\times 10^{9}`` (three or more trailing zeros), else the digits in groups of three.

    Examples
    --------
    >>> latex_count(1000000000000), latex_count(469759), latex_count(1300000000)
    ('10^{12}', '469\\,759', '1.3\\times 10^{9}')
    """
    n = int(n)
    s = str(abs(n))
    sign = "-" if n < 0 else ""
    zeros = len(s) - len(s.rstrip("0"))
    if zeros >= 3:
        head = s.rstrip("0")
        e10 = len(s) - 1
        mant = head[0] + ("." + head[1:] if len(head) > 1 else "")
        return Raw(f"{sign}10^{{{e10}}}" if mant == "1" else f"{sign}{mant}\\times 10^{{{e10}}}")
    groups = []
    while s:
        groups.append(s[-3:])
        s = s[:-3]
    return Raw(sign + "\\,".join(reversed(groups)))


def latex_upper(x: arb, digits: int = 4) -> Raw:
    """The ball's upper end rounded **up** to ``digits`` significant digits.

    Parameters
    ----------
    x : flint.arb
        A certified ball.
    digits : int
        Significant digits.

    Returns
    -------
    Raw
        LaTeX math (no ``$``) of a decimal ≥ every point of ``x``.

    Examples
    --------
    >>> from flint import arb
    >>> latex_upper(arb(2) / 3, 2)
    '0.67'
    """
    return _MathNumber(latex_number(decimal_upper(x, digits)))


def latex_lower(x: arb, digits: int = 4) -> Raw:
    """The ball's lower end rounded **down** to ``digits`` significant digits.

    Parameters
    ----------
    x : flint.arb
        A certified ball.
    digits : int
        Significant digits.

    Returns
    -------
    Raw
        LaTeX math (no ``$``) of a decimal ≤ every point of ``x``.

    Examples
    --------
    >>> from flint import arb
    >>> latex_lower(arb(2) / 3, 2)
    '0.66'
    """
    return _MathNumber(latex_number(decimal_lower(x, digits)))


def latex_interval(x: arb, digits: int = 4) -> Raw:
    """``[lower, upper]`` with both ends rounded outward.

    An exact value whose two ends print identically is shown once.

    Parameters
    ----------
    x : flint.arb
        A certified ball.
    digits : int
        Significant digits of each end.

    Returns
    -------
    Raw
        LaTeX math (no ``$``): an interval containing ``x``.

    Examples
    --------
    >>> from flint import arb
    >>> latex_interval(arb(2) / 3, 3)
    '[0.666, 0.667]'
    >>> latex_interval(arb(32), 3)
    '32'
    """
    lo, hi = decimal_lower(x, digits), decimal_upper(x, digits)
    if lo == hi:
        return _MathNumber(latex_number(lo))
    return _MathNumber(f"[{latex_number(lo)}, {latex_number(hi)}]")


def _cell(value: Any, digits: int) -> str:
    if isinstance(value, _MathNumber):
        return f"${value}$"
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, arb):
        return f"${latex_interval(value, digits)}$"
    if value is None:
        return "--"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"${value}$"
    if isinstance(value, Fraction):
        return f"${value.numerator}$" if value.denominator == 1 else f"${value.numerator}/{value.denominator}$"
    if isinstance(value, float):
        raise TypeError(
            "refusing a bare float in a certified LaTeX table: format it with "
            "latex_upper/latex_lower/latex_interval (or wrap uncertified text in Raw)"
        )
    return latex_escape(str(value))


def _is_numeric(value: Any) -> bool:
    return isinstance(value, (_MathNumber, arb, int, Fraction)) and not isinstance(value, bool)


def latex_table(
    rows: Sequence[Sequence[Any]],
    header: Sequence[Any],
    *,
    caption: str | None = None,
    label: str | None = None,
    align: str | None = None,
    digits: int = 4,
    notes: str | None = None,
    long: bool | None = None,
    fit: bool = True,
) -> str:
    r"""A booktabs ``tabular`` (in a ``table`` float if caption/label given), or a ``longtable``.

    Parameters
    ----------
    rows : sequence of sequences
        Cells (see the module docstring), each row as long as ``header``.
    header : sequence
        Header cells: text (escaped unless :class:`Raw`).
    caption, label : str, optional
        The caption is LaTeX (escape it with :func:`latex_escape`
        if it is plain text).
    align : str, optional
        Column specification; default ``r`` for numeric columns, ``l`` else.
    digits : int
        Significant digits for bare ``arb`` cells (printed as intervals).
    notes : str, optional
        LaTeX text placed under the tabular (e.g. what was run).
    long : bool, optional
        ``longtable`` (breaks across pages, no float); default: more than
        :data:`LONG_TABLE_ROWS` rows.
    fit : bool
        Scale a (non-long) table down to ``\\linewidth`` when it is wider.

    Returns
    -------
    str
        The LaTeX source (no trailing newline).

    Raises
    ------
    ValueError
        If a row's length differs from the header's, or ``align`` has too few columns.
    TypeError
        For a bare ``float`` cell (not a certified number: format it first).

    Examples
    --------
    >>> t = latex_table([[1, "a_b"]], ["n", "name"], caption="C", label="tab:x")
    >>> t.splitlines()[0], t.splitlines()[-1]
    ('\\begin{table}[htbp]', '\\end{table}')
    >>> "longtable" in latex_table([[i] for i in range(LONG_TABLE_ROWS + 1)], ["i"], caption="C")
    True
    """
    ncol = len(header)
    for i, row in enumerate(rows):
        if len(row) != ncol:
            raise ValueError(f"LaTeX table row {i} has {len(row)} cells, header has {ncol}")
    if align is None:
        align = "".join(
            "r" if rows and all(_is_numeric(r[j]) or r[j] is None for r in rows) else "l" for j in range(ncol)
        )
    elif len(align.replace("@{}", "")) < ncol:
        raise ValueError(f"align {align!r} gives fewer than {ncol} columns")
    head = " & ".join(str(h) if isinstance(h, Raw) else latex_escape(str(h)) for h in header)
    body = [" & ".join(_cell(v, digits) for v in row) + " \\\\" for row in rows]
    note = [f"\\par\\smallskip{{\\footnotesize {notes}}}"] if notes else []
    if long is None:
        long = len(rows) > LONG_TABLE_ROWS
    if long:
        # A page-breaking table; script-size type and narrow gaps keep wide ones inside the text width
        # (a longtable cannot be scaled).
        cap = []
        if caption is not None or label is not None:
            cap = [(f"\\caption{{{caption}}}" if caption is not None else "")
                   + (f"\\label{{{label}}}" if label is not None else "") + " \\\\"]
        out = ["{\\scriptsize\\setlength{\\tabcolsep}{3pt}", f"\\begin{{longtable}}{{{align}}}", *cap,
               "\\toprule", head + " \\\\", "\\midrule", "\\endfirsthead",
               "\\toprule", head + " \\\\", "\\midrule", "\\endhead",
               "\\bottomrule", "\\endlastfoot", *body, "\\end{longtable}}", *note]
        return "\n".join(out)
    lines = [f"\\begin{{tabular}}{{{align}}}", "\\toprule", head + " \\\\", "\\midrule", *body,
             "\\bottomrule", "\\end{tabular}"]
    if fit:
        # Scale down (never up) to the text width.
        lines = ["\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{%", *lines, "}"]
    lines += ["", *note] if note else []
    if caption is None and label is None:
        return "\n".join(lines)
    out = ["\\begin{table}[htbp]", "\\centering"]
    if caption is not None:
        out.append(f"\\caption{{{caption}}}")
    if label is not None:
        out.append(f"\\label{{{label}}}")
    out += lines
    out.append("\\end{table}")
    return "\n".join(out)


def latex_fragment(body: str, what: str = "certbound") -> str:
    r"""A ``.tex`` fragment for ``\\input``: ``body`` after a comment stating the preamble it needs.

    Parameters
    ----------
    body : str
        LaTeX source (tables, text).
    what : str
        Who wrote it (the comment's first word, e.g. ``"certbound proxies"``).

    Returns
    -------
    str
        The fragment, ending in one newline.

    Examples
    --------
    >>> latex_fragment("x").splitlines()[0]
    '% certbound: input this into a document whose preamble has \\usepackage{amssymb,booktabs,graphicx,longtable}'
    """
    return f"% {what}: input this into a document whose preamble has {LATEX_PREAMBLE}\n{body.rstrip()}\n"


def latex_document(*bodies: str) -> str:
    r"""A minimal standalone ``article`` around fragments (the preamble of :data:`LATEX_PREAMBLE`).

    Parameters
    ----------
    *bodies : str
        LaTeX fragments, separated by blank lines in the document.

    Returns
    -------
    str
        A complete ``.tex`` document.

    Examples
    --------
    >>> latex_document("x").splitlines()[1]
    '\\usepackage{amssymb,booktabs,graphicx,longtable}'
    """
    return (
        "\\documentclass{article}\n" + LATEX_PREAMBLE + "\n"
        "\\begin{document}\n" + "\n\n".join(bodies) + "\n\\end{document}\n"
    )
