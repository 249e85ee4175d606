"""Exact claimed numbers: decimal strings as rationals, rounding cells, certain digits.

A claimed value is read *exactly as written*: ``"12.30"`` is the rational
1230/100 together with the fact that it was written with 4 significant
digits. Nothing here goes through a binary float, so a claim is never
changed by the parser (``proofs/audit.md`` §1).

The "=" relation is decided against a *rounding cell*: the set of reals that
round to the claimed value at the stated precision (see
:func:`rounding_cell`). The cell's end points are exact rationals; verdicts
compare them with the exact dyadic end points of an Arb ball, so no rounding
happens in the decision itself.

>>> d = parse_decimal("12.30")
>>> d.value, d.significant_digits, d.last_digit_exponent
(Fraction(123, 10), 4, -2)
>>> rounding_cell(d.value, digits=3)
(Fraction(49, 4), Fraction(247, 20))
"""

from __future__ import annotations

import decimal
import re
from dataclasses import dataclass
from fractions import Fraction

from flint import arb, fmpq

__all__ = [
    "ExactDecimal",
    "parse_decimal",
    "parse_exact_number",
    "decimal_string",
    "arb_from_fraction",
    "rounding_cell",
    "rounding_cell_decimals",
    "round_to_significant",
    "certain_digits",
]

# A decimal literal: optional sign (ASCII or U+2212), digits with an optional
# point, optional exponent. Underscores between digits are allowed as in TOML.
_DECIMAL_RE = re.compile(
    r"""^\s*(?P<sign>[+\-\u2212]?)
        (?P<int>\d(?:_?\d)*)?(?:\.(?P<frac>\d(?:_?\d)*)?)?
        (?:[eE](?P<exp>[+\-\u2212]?\d+))?\s*$""",
    re.VERBOSE,
)


#: Largest decimal exponent magnitude and digit count of a literal. Exact
#: rationals of this size are still cheap (a few kB); beyond, a literal such as
#: ``1e999999999`` would take minutes and gigabytes to expand exactly.
MAX_DECIMAL_EXPONENT = 10_000
MAX_DECIMAL_DIGITS = 10_000


@dataclass(frozen=True)
class ExactDecimal:
    """A decimal number as written: exact value and written precision.

    Attributes
    ----------
    text : str
        The string as given.
    value : Fraction
        The exact rational value.
    significant_digits : int
        Digits from the first nonzero digit to the last written digit
        (``"0.0370"`` → 3, ``"1200"`` → 4, ``"1.2e3"`` → 2); 0 for zero.
    last_digit_exponent : int
        ``k`` such that the last written digit has weight ``10**k``
        (``"12.30"`` → −2, ``"1200"`` → 0, ``"1.2e3"`` → 2).
    """

    text: str
    value: Fraction
    significant_digits: int
    last_digit_exponent: int


def parse_decimal(text: str | int | decimal.Decimal) -> ExactDecimal:
    """Parse a decimal literal exactly (never through a binary float).

    Accepts ``int``, :class:`decimal.Decimal` (what ``tomllib`` returns with
    ``parse_float=Decimal``) and strings such as ``"12.3"``, ``"-1.5e-3"``,
    ``"1_000_000"``, ``"−0.25"`` (Unicode minus).

    Raises
    ------
    ValueError
        If the string is not a finite decimal literal.

    Examples
    --------
    >>> parse_decimal("1e6").value
    Fraction(1000000, 1)
    >>> parse_decimal("0.1").value == Fraction(1, 10)
    True
    >>> parse_decimal("0.0370").significant_digits
    3
    """
    if isinstance(text, bool):
        raise ValueError(f"not a number: {text!r}")
    if isinstance(text, int):
        text = str(text)
    elif isinstance(text, decimal.Decimal):
        if not text.is_finite():
            raise ValueError(f"not a finite number: {text}")
        text = str(text)
    if not isinstance(text, str):
        raise ValueError(f"expected a decimal string, got {type(text).__name__} {text!r}")
    m = _DECIMAL_RE.match(text)
    if m is None or (m.group("int") is None and m.group("frac") is None):
        raise ValueError(f"not a decimal number: {text!r} (write e.g. \"12.3\" or \"1.5e-3\")")
    int_digits = (m.group("int") or "").replace("_", "")
    frac_digits = (m.group("frac") or "").replace("_", "")
    exp_text = (m.group("exp") or "0").replace("\u2212", "-")
    if len(exp_text.lstrip("+-").lstrip("0")) > len(str(MAX_DECIMAL_EXPONENT)) or abs(int(exp_text)) > MAX_DECIMAL_EXPONENT:
        raise ValueError(f"exponent out of range in {text.strip()!r}: at most {MAX_DECIMAL_EXPONENT} in magnitude")
    if len(int_digits) + len(frac_digits) > MAX_DECIMAL_DIGITS:
        raise ValueError(f"too many digits in a decimal literal ({len(int_digits) + len(frac_digits)}; "
                         f"at most {MAX_DECIMAL_DIGITS})")
    exp = int(exp_text)
    negative = m.group("sign") in ("-", "\u2212")
    digits = (int_digits + frac_digits) or "0"
    last_exp = exp - len(frac_digits)
    mantissa = int(digits)
    value = Fraction(mantissa) * Fraction(10) ** last_exp
    if negative:
        value = -value
    sig = len(digits.lstrip("0"))
    return ExactDecimal(text.strip(), value, sig, last_exp)


_MAX_POWER_EXPONENT = 4096


def parse_exact_number(text: str) -> Fraction:
    """An exact rational from a number written as a string: a decimal literal, ``a/b`` or ``b**k`` (``b^k``).

    Used for keyword arguments given as strings, e.g. ``bound(n="1e6",
    delta="0.01")``; the value is exact (never through a binary float).

    Raises
    ------
    ValueError
        Naming the string, if it is none of these forms.

    Examples
    --------
    >>> parse_exact_number("1e6"), parse_exact_number("10**6"), parse_exact_number("1/100")
    (Fraction(1000000, 1), Fraction(1000000, 1), Fraction(1, 100))
    >>> parse_exact_number("0.1") == Fraction(1, 10)
    True
    """
    if not isinstance(text, str):
        raise ValueError(f"expected a number written as a string, got {text!r}")
    t = text.strip()
    try:
        for op in ("**", "^"):
            if op in t:
                base, exp = t.split(op, 1)
                k = int(exp.strip().replace("\u2212", "-"))
                if abs(k) > _MAX_POWER_EXPONENT:
                    raise ValueError("exponent too large")
                b = parse_decimal(base).value
                if b == 0 and k < 0:
                    raise ValueError("0 to a negative power")
                return b**k
        if "/" in t:
            num, den = t.split("/", 1)
            d = parse_decimal(den).value
            if d == 0:
                raise ValueError("division by zero")
            return parse_decimal(num).value / d
        return parse_decimal(t).value
    except ValueError:
        raise ValueError(f"{text!r} is not an exact number (write e.g. \"1e6\", \"0.01\", \"1/3\" or "
                         "\"10**6\")") from None


def decimal_string(q: Fraction, max_digits: int = 40) -> str:
    """A short exact decimal for ``q`` when it has one, else a rounded one marked ``≈``.

    For display only (never used in a decision).

    >>> decimal_string(Fraction(1, 8)), decimal_string(Fraction(1, 3), 5)
    ('0.125', '≈0.33333')
    """
    c = decimal.Context(prec=max_digits, rounding=decimal.ROUND_HALF_EVEN, Emax=10**9, Emin=-(10**9))
    c.traps[decimal.Inexact] = False
    c.clear_flags()
    d = c.divide(decimal.Decimal(q.numerator), decimal.Decimal(q.denominator))
    inexact = c.flags[decimal.Inexact]
    s = format(d.normalize(c) if not inexact else d, "f" if abs(d.adjusted()) < 16 else "e")
    return ("≈" if inexact else "") + s


def arb_from_fraction(q: Fraction | int) -> arb:
    """A ball containing the rational ``q`` at the current working precision.

    Exact when ``q`` is dyadic and fits the precision; otherwise Arb rounds
    ``fmpq → arb`` with a rigorous radius.

    >>> arb_from_fraction(Fraction(1, 3)).contains(fmpq(1, 3))
    True
    """
    q = Fraction(q)
    return arb(fmpq(q.numerator, q.denominator))


def _pow10(k: int) -> Fraction:
    return Fraction(10) ** k


def _leading_exponent(q: Fraction) -> int:
    """``e`` with ``10**e <= |q| < 10**(e+1)`` (q ≠ 0), computed exactly."""
    q = abs(q)
    e = len(str(q.numerator)) - len(str(q.denominator))
    while _pow10(e) > q:
        e -= 1
    while _pow10(e + 1) <= q:
        e += 1
    return e


def rounding_cell(value: Fraction, digits: int) -> tuple[Fraction, Fraction]:
    """The closed interval of reals that round to ``value`` at ``digits`` significant digits.

    ``value`` must be nonzero and have at most ``digits`` significant digits.
    Writing ``|value| = m·10^e`` with ``m`` an integer of exactly ``digits``
    digits, the reals rounding (to nearest) to it form the cell
    ``[(m − ½)·10^e, (m + ½)·10^e]`` — except when ``m = 10^(digits−1)``
    (``|value|`` is a power of ten): the next smaller ``digits``-digit number is
    ``(10^digits − 1)·10^(e−1)``, so the lower end is ``(m − 1/20)·10^e``.
    Example: 3 digits, "10.0" is what 9.997 rounds to, but 9.99 rounds to
    itself. End points belong to the cell or not depending on the tie rule;
    callers treat them as undecidable (``proofs/audit.md`` §2).

    >>> rounding_cell(Fraction(10), 3)
    (Fraction(1999, 200), Fraction(201, 20))
    >>> rounding_cell(Fraction(-123, 10), 3)
    (Fraction(-247, 20), Fraction(-49, 4))
    """
    if value == 0:
        raise ValueError("a value of 0 has no significant digits; use 'decimals', '≈' or '<=' instead")
    if digits < 1:
        raise ValueError(f"digits must be ≥ 1, got {digits}")
    e = _leading_exponent(value) - digits + 1
    m = abs(value) / _pow10(e)
    if m.denominator != 1:
        raise ValueError(
            f"{decimal_string(value)} has more than {digits} significant digits; "
            "it cannot be a value rounded to that many digits"
        )
    m = m.numerator
    hi = (m + Fraction(1, 2)) * _pow10(e)
    lo = (m - Fraction(1, 20 if m == 10 ** (digits - 1) else 2)) * _pow10(e)
    return (lo, hi) if value > 0 else (-hi, -lo)


def rounding_cell_decimals(value: Fraction, decimals: int) -> tuple[Fraction, Fraction]:
    """The closed interval of reals that round to ``value`` at ``decimals`` decimal places.

    The grid is uniform, so the cell is ``[value − ½·10^−decimals, value + ½·10^−decimals]``.

    >>> rounding_cell_decimals(Fraction(0), 2)
    (Fraction(-1, 200), Fraction(1, 200))
    """
    u = _pow10(-decimals)
    if (value / u).denominator != 1:
        raise ValueError(f"{decimal_string(value)} has more than {decimals} decimal places")
    return value - u / 2, value + u / 2


def round_to_significant(q: Fraction, digits: int) -> Fraction:
    """``q`` rounded to nearest (ties to even) at ``digits`` significant digits.

    >>> round_to_significant(Fraction(9997, 1000), 3)
    Fraction(10, 1)
    """
    if q == 0:
        return Fraction(0)
    e = _leading_exponent(q) - digits + 1
    return round(q / _pow10(e)) * _pow10(e)


def certain_digits(lower: Fraction | None, upper: Fraction | None, max_digits: int = 40) -> tuple[int, Fraction] | None:
    """The most significant digits every point of ``[lower, upper]`` rounds to.

    Returns ``(n, v)``: every real in the interval rounds (to nearest, under
    any tie rule) to ``v`` at ``n`` significant digits, with ``n`` the largest
    such count ≤ ``max_digits``; ``None`` when not even one digit is certain
    (or the interval is unbounded or contains 0). An exact interval
    ``[q, q]`` returns ``(max_digits, round(q))``, or for 0 ``(0, 0)``.

    >>> certain_digits(Fraction(123441, 10000), Fraction(123449, 10000))
    (4, Fraction(617, 50))
    >>> certain_digits(Fraction(-1, 10), Fraction(1, 10)) is None
    True
    """
    if lower is None or upper is None:
        return None
    if lower == upper == 0:
        return (0, Fraction(0))
    if lower <= 0 <= upper:
        return None
    best = None
    mid = (lower + upper) / 2
    for n in range(1, max_digits + 1):
        v = round_to_significant(mid, n)
        if v == 0:
            continue
        lo, hi = rounding_cell(v, n)
        if lo < lower and upper < hi:
            best = (n, v)
    return best

