"""Exact decimals and rounding cells, checked against Python's decimal module (an independent rounding)."""

import decimal
from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from certbound.audit._exact import certain_digits, parse_decimal, rounding_cell, rounding_cell_decimals


@pytest.mark.parametrize(
    "text, value, sig, last",
    [
        ("12.3", Fraction(123, 10), 3, -1),
        ("12.30", Fraction(123, 10), 4, -2),
        ("0.0370", Fraction(37, 1000), 3, -4),
        ("1e6", Fraction(10**6), 1, 6),
        ("-1.5e-3", Fraction(-15, 10000), 2, -4),
        ("\u22120.25", Fraction(-1, 4), 2, -2),
        ("1_000", Fraction(1000), 4, 0),
        (".5", Fraction(1, 2), 1, -1),
        (decimal.Decimal("1.20"), Fraction(6, 5), 3, -2),
        (7, Fraction(7), 1, 0),
    ],
)
def test_parse_decimal_exact(text, value, sig, last):
    d = parse_decimal(text)
    assert (d.value, d.significant_digits, d.last_digit_exponent) == (value, sig, last)


@pytest.mark.parametrize("bad", ["", "abc", "1.2.3", "1e", "nan", "inf", "0x10", "1/3", "--1"])
def test_parse_decimal_rejects(bad):
    with pytest.raises(ValueError):
        parse_decimal(bad)


def _rounds_to(x: Fraction, digits: int, rounding: str) -> Fraction:
    """x rounded to `digits` significant digits by the decimal module (independent reference)."""
    ctx = decimal.Context(prec=60)
    d = ctx.divide(decimal.Decimal(x.numerator), decimal.Decimal(x.denominator))
    r = decimal.Context(prec=digits, rounding=rounding).plus(d)
    return Fraction(r)


@given(
    mantissa=st.integers(min_value=1, max_value=999),
    exponent=st.integers(min_value=-5, max_value=5),
    digits=st.integers(min_value=3, max_value=5),
    offset=st.integers(min_value=-1200, max_value=1200),
    negative=st.booleans(),
)
def test_rounding_cell_matches_decimal_rounding(mantissa, exponent, digits, offset, negative):
    v = Fraction(mantissa) * Fraction(10) ** exponent * (-1 if negative else 1)
    lo, hi = rounding_cell(v, digits)
    # Probe points around v on a grid 1000x finer than the last digit.
    ulp = Fraction(10) ** (exponent - digits + len(str(mantissa)))
    x = v + offset * ulp / 1000
    inside_open = lo < x < hi
    outside_closed = x < lo or x > hi
    for mode in (decimal.ROUND_HALF_EVEN, decimal.ROUND_HALF_UP, decimal.ROUND_HALF_DOWN):
        r = _rounds_to(x, digits, mode)
        if inside_open:
            assert r == v, (x, v, lo, hi, mode)
        if outside_closed:
            assert r != v, (x, v, lo, hi, mode)


def test_power_of_ten_cell_is_asymmetric():
    lo, hi = rounding_cell(Fraction(10), 3)
    assert lo == Fraction(9995, 1000) and hi == Fraction(1005, 100)
    assert _rounds_to(Fraction(9997, 1000), 3, decimal.ROUND_HALF_EVEN) == 10
    assert _rounds_to(Fraction(999, 100), 3, decimal.ROUND_HALF_EVEN) != 10


def test_rounding_cell_rejects_too_many_digits_and_zero():
    with pytest.raises(ValueError, match="more than 2 significant"):
        rounding_cell(Fraction(123, 10), 2)
    with pytest.raises(ValueError):
        rounding_cell(Fraction(0), 2)
    assert rounding_cell_decimals(Fraction(0), 2) == (Fraction(-1, 200), Fraction(1, 200))
    with pytest.raises(ValueError):
        rounding_cell_decimals(Fraction(1, 1000), 2)


def test_certain_digits():
    assert certain_digits(Fraction(12344, 1000), Fraction(12346, 1000))[0] == 3  # straddles 12.345
    n, v = certain_digits(Fraction(123441, 10000), Fraction(123449, 10000))
    assert (n, v) == (4, Fraction(1234, 100))
    assert certain_digits(Fraction(-1), Fraction(1)) is None
    assert certain_digits(None, Fraction(1)) is None
