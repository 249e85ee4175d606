"""Referee tests of the records' decimal strings against directed decimal rounding done in integers.

For a float x ≠ 0 and p significant digits, the floor (ceiling) string must have the value
``⌊x / 10^(e−p+1)⌋ · 10^(e−p+1)`` (``⌈…⌉``), e = ⌊log₁₀|x|⌋ — decided here with Python integers
and Fractions only (no ``decimal`` module, no certbound code). Inputs: subnormals, the largest
floats, powers of two and of ten and their neighbours, integers beyond 2⁵³, values whose decimal
expansion has exactly p, p ± 1 digits, all p from 1 to 17. Checked: ``ball._decimal_round_float``,
``ball.float_interval_to_json`` (both ends, ``mid`` the float nearest to the midpoint, the
``exact`` dyadics) and ``ball.decimal_lower``/``decimal_upper`` of point balls.
"""

from __future__ import annotations

import decimal
from fractions import Fraction

import numpy as np
import pytest
from flint import arb

from certbound import ball


def _directed(q: Fraction, p: int, up: bool) -> Fraction:
    """The p-significant-digit decimal ⌊q⌋ (up False) or ⌈q⌉ (up True) of a nonzero rational q, exactly."""
    num, den = abs(q.numerator), q.denominator

    def at_least(e: int) -> bool:  # |q| ≥ 10^e
        return num * 10**-e >= den if e < 0 else num >= den * 10**e

    e = len(str(num)) - len(str(den))  # ⌊log₁₀|q|⌋ up to ±1
    while not at_least(e):
        e -= 1
    while at_least(e + 1):
        e += 1
    s = e - p + 1  # the last kept digit's place
    top, bot = (q.numerator, den * 10**s) if s >= 0 else (q.numerator * 10**-s, den)
    n, r = divmod(top, bot)  # ⌊q/10^s⌋ (Python's floor division rounds toward −∞)
    if up and r:
        n += 1
    return n * Fraction(10) ** s


def _floats(rng) -> list[float]:
    xs = [5e-324, 1e-323, 2.0**-1022, np.nextafter(2.0**-1022, 0), 1.7976931348623157e308, 2.0**1023, 2.0**53 + 2,
          2.0**64, 1e22, 1e23, 0.1, 0.5, 1.0, 3.0, 9.5, 99.5, 0.999999999999999, 123456789012345678.0, 1 / 3,
          2.0**-1074 * 12345, 1e-310, 4.9406564584124654e-324]
    for k in rng.integers(-1074, 1024, 40):
        xs.append(float(np.ldexp(1.0, int(k))))
    for k in rng.integers(-320, 309, 40):
        with np.errstate(all="ignore"):
            v = float(f"1e{int(k)}")
        xs += [v, float(np.nextafter(v, 0)), float(np.nextafter(v, np.inf))]
    xs += list(rng.standard_normal(40) * 10.0 ** rng.integers(-300, 300, 40))
    xs += [float(np.ldexp(float(rng.integers(1, 2**53)), int(rng.integers(-1100, 970)))) for _ in range(40)]
    xs += [float(int(d) * 10.0 ** int(s)) for d, s in zip(rng.integers(1, 10**6, 30), rng.integers(-20, 20, 30))]
    out = []
    for x in xs:
        if np.isfinite(x) and x != 0:
            out += [float(x), -float(x)]
    return out


def _value(s: str) -> Fraction:
    return Fraction(decimal.Decimal(s))


def test_decimal_strings_are_the_directed_roundings():
    rng = np.random.default_rng(6701)
    for x in _floats(rng):
        q = Fraction(x)
        for p in range(1, 18):
            lo = ball._decimal_round_float(x, p, decimal.ROUND_FLOOR)
            hi = ball._decimal_round_float(x, p, decimal.ROUND_CEILING)
            assert _value(lo) == _directed(q, p, False), (x, p, lo)
            assert _value(hi) == _directed(q, p, True), (x, p, hi)


def test_float_interval_json_ends_mid_and_exact():
    rng = np.random.default_rng(6702)
    xs = _floats(rng)
    for _ in range(600):
        a, b = sorted((float(rng.choice(xs)), float(rng.choice(xs))))
        if rng.random() < 0.2:
            b = a
        if rng.random() < 0.1 and b >= 0:
            a = 0.0
        p = int(rng.choice([17, 17, 6, 1, 3, 16]))
        d = ball.float_interval_to_json(a, b, p)
        qa, qb = Fraction(a), Fraction(b)
        assert _value(d["lower"]) == (_directed(qa, p, False) if a else 0), (a, p, d)
        assert _value(d["upper"]) == (_directed(qb, p, True) if b else 0), (b, p, d)
        # exact ends: "num*2^-k" or an integer, equal to the floats
        for key, q in (("lower", qa), ("upper", qb)):
            s = d["exact"][key]
            num, _, k = s.partition("*2^-")
            assert Fraction(int(num), 2 ** int(k or 0)) == q, (s, q)
        # mid: in [a, b] and the float nearest to (a + b)/2 (no float strictly closer)
        mid = d["mid"]
        c = (qa + qb) / 2
        assert qa <= Fraction(mid) <= qb, (a, b, mid)
        for nb in (np.nextafter(mid, -np.inf), np.nextafter(mid, np.inf)):
            if np.isfinite(nb):
                assert abs(Fraction(float(nb)) - c) >= abs(Fraction(mid) - c), (a, b, mid)


def test_decimal_ends_of_point_balls():
    rng = np.random.default_rng(6703)
    for x in _floats(rng)[::3]:
        for p in (1, 5, 17):
            assert _value(ball.decimal_lower(arb(x), p)) == _directed(Fraction(x), p, False), (x, p)
            assert _value(ball.decimal_upper(arb(x), p)) == _directed(Fraction(x), p, True), (x, p)


@pytest.mark.parametrize("bad", [(1.0, 0.5), (float("nan"), 1.0), (0.0, float("inf"))])
def test_float_interval_json_refuses_non_intervals(bad):
    with pytest.raises(ValueError):
        ball.float_interval_to_json(*bad)
