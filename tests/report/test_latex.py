"""LaTeX output: outward rounding against exact fractions, structure, compilation."""

from __future__ import annotations

import shutil
import subprocess
from decimal import Decimal
from fractions import Fraction

import pytest
from flint import arb
from hypothesis import given
from hypothesis import strategies as st

from certbound.ball import working_precision
from certbound.report.latex import (
    Raw,
    latex_document,
    latex_escape,
    latex_interval,
    latex_lower,
    latex_number,
    latex_table,
    latex_upper,
)


def parse_latex_number(s: str) -> Fraction:
    """Inverse of latex_number for finite values (independent parser)."""
    s = s.strip("$")
    if "\\times 10^{" in s:
        mant, exp = s.split("\\times 10^{")
        return Fraction(Decimal(mant)) * Fraction(10) ** int(exp.rstrip("}"))
    return Fraction(Decimal(s))


def significant_digits(s: str) -> int:
    mant = s.split("\\times")[0].lstrip("-").replace(".", "").lstrip("0")
    return len(mant)


@given(
    st.integers(1, 10**12),
    st.integers(1, 10**12),
    st.integers(-40, 40),
    st.integers(1, 8),
)
def test_upper_rounds_up_and_lower_rounds_down(num, den, exp10, digits):
    q = Fraction(num, den) * Fraction(10) ** exp10
    with working_precision(256):
        x = arb(num) / den * arb(10) ** exp10  # ball containing q
    up, lo = latex_upper(x, digits), latex_lower(x, digits)
    assert parse_latex_number(up) >= q
    assert parse_latex_number(lo) <= q
    assert significant_digits(up) <= digits and significant_digits(lo) <= digits
    # Not absurdly loose: within one unit of the last printed digit (plus the ball radius).
    assert parse_latex_number(up) - parse_latex_number(lo) <= 3 * q / 10 ** (digits - 1)


@given(st.fractions(min_value=-10**6, max_value=10**6, max_denominator=10**6), st.integers(2, 6))
def test_interval_contains_value(q, digits):
    with working_precision(200):
        x = arb(q.numerator) / q.denominator
    s = latex_interval(x, digits)
    if s.startswith("["):
        lo, hi = s[1:-1].split(", ")
        assert parse_latex_number(lo) <= q <= parse_latex_number(hi)
    else:
        assert parse_latex_number(s) == q


def test_number_forms():
    assert latex_number("1.5e-7") == "1.5\\times 10^{-7}"
    assert latex_number("-2") == "-2"
    assert latex_number("-inf") == "-\\infty"
    with pytest.raises(ValueError):
        latex_number("abc")


def test_escape_and_floats_refused():
    assert latex_escape("a_b&c%$#{}~^\\") == (
        "a\\_b\\&c\\%\\$\\#\\{\\}\\textasciitilde{}\\textasciicircum{}\\textbackslash{}"
    )
    with pytest.raises(TypeError, match="bare float"):
        latex_table([[1.5]], ["x"])
    with pytest.raises(ValueError, match="row 0"):
        latex_table([[1, 2]], ["x"])


def test_table_structure():
    rows = [["QK_0", arb(1) / 3, latex_upper(arb(2) / 3, 3), 12], ["M_in", arb(5), None, 7]]
    t = latex_table(rows, ["matrix", "interval", Raw("$B$"), "n"], caption="What was run", label="tab:t")
    lines = t.splitlines()
    assert lines[0] == "\\begin{table}[htbp]" and lines[-1] == "\\end{table}"
    assert "\\begin{tabular}{lrrr}" in lines
    i, j, k = lines.index("\\toprule"), lines.index("\\midrule"), lines.index("\\bottomrule")
    assert i < j < k and k - j - 1 == len(rows)
    assert "QK\\_0 & $[0.3333, 0.3334]$ & $0.667$ & $12$ \\\\" in lines
    assert "M\\_in & $5$ & -- & $7$ \\\\" in lines
    assert t.count("&") == 3 * (len(rows) + 1)


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex on this machine (structural test above)")
def test_table_compiles_with_pdflatex(tmp_path):
    rows = [["QK", arb(1) / 3, latex_upper(arb(10) ** 30 / 7, 4)], ["M_out", arb(2) ** -40, latex_lower(arb(1) / 7, 2)]]
    doc = latex_document(latex_table(rows, ["type", "ball", Raw("$\\le$")], caption="c", label="t", notes="n_1 & 2"
                                     .replace("&", "\\&").replace("_", "\\_")))
    (tmp_path / "t.tex").write_text(doc)
    proc = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert (tmp_path / "t.pdf").stat().st_size > 1000
