"""Correctly rounded binary64 arithmetic emulated on exact rationals (no numpy, no certbound code).

A float is a dyadic rational; :func:`rn` rounds an exact rational to the nearest binary64 number
(ties to even, gradual underflow, ±∞ beyond the overflow threshold) by integer arithmetic only, so
a float recurrence can be replayed *exactly as IEEE 754 prescribes it* and compared bit for bit
with what the code computes. :func:`sturm_pivots` replays Lemma S's recurrence
(proofs/enclosure-gram.md §1a) this way.

>>> rn(Fraction(1, 3)) == 1 / 3, rn(Fraction(1, 10)) == 0.1
(True, True)
>>> rn(Fraction(2) ** -1075), rn(Fraction(3) * Fraction(2) ** -1076)   # tie to even (0), just above half: 2⁻¹⁰⁷⁴
(0.0, 5e-324)
>>> rn(Fraction(2) ** 1024)
inf
"""

from __future__ import annotations

import math
from fractions import Fraction

__all__ = ["rn", "rn_ratio", "fl_sub", "fl_mul", "fl_div", "sturm_pivots", "normalised_sturm_reference"]

_EMIN = -1074  # exponent of the smallest subnormal
_P = 53


def rn(x: Fraction) -> float:
    """The binary64 number nearest to the rational x (ties to even), ±∞ on overflow; never -0 (sign of 0 is +)."""
    return rn_ratio(x.numerator, x.denominator)


def rn_ratio(num: int, den: int) -> float:
    """:func:`rn` of num/den (integers, den > 0), without forming a Fraction."""
    if num == 0:
        return 0.0
    sign = -1 if num < 0 else 1
    num = abs(num)
    # exponent t with 2^t ≤ num/den < 2^(t+1)
    t = num.bit_length() - den.bit_length()
    if (num << -t if t < 0 else num) < (den << t if t > 0 else den):
        t -= 1
    if t > 1023:
        return sign * math.inf
    q = max(t - (_P - 1), _EMIN)  # the spacing 2^q at num/den
    if q <= 0:
        n, r = divmod(num << -q, den)
        dd = den
    else:
        dd = den << q
        n, r = divmod(num, dd)
    if 2 * r > dd or (2 * r == dd and n % 2 == 1):
        n += 1
    if n == 2**53 and q == 1024 - 53:  # rounded up past the largest float
        return sign * math.inf
    return sign * math.ldexp(float(n), q)  # n ≤ 2^53: exact as a float; ldexp exact (result representable)


def _ratio(x: float) -> tuple[int, int]:
    return float(x).as_integer_ratio()


def fl_sub(a: float, b: float) -> float:
    """fl(a − b) for finite floats, exactly rounded."""
    (an, ad), (bn, bd) = _ratio(a), _ratio(b)
    return rn_ratio(an * bd - bn * ad, ad * bd)


def fl_mul(a: float, b: float) -> float:
    """fl(a·b) for finite floats, exactly rounded."""
    (an, ad), (bn, bd) = _ratio(a), _ratio(b)
    return rn_ratio(an * bn, ad * bd)


def fl_div(a: float, b: float) -> float:
    """fl(a/b) for finite floats, b ≠ 0, exactly rounded."""
    (an, ad), (bn, bd) = _ratio(a), _ratio(b)
    num, den = an * bd, ad * bn
    return rn_ratio(-num, -den) if den < 0 else rn_ratio(num, den)


def sturm_pivots(d, e, mu) -> list[float] | None:
    """Lemma S's pivots exactly as IEEE computes them: sᵢ = fl(eᵢeᵢ), q₁ = fl(d₁ − μ), qᵢ = fl(fl(dᵢ − μ) − fl(sᵢ₋₁/qᵢ₋₁)).

    Returns the list of qᵢ while every one is finite and nonzero; None as soon as one is 0 or not
    finite (a division by it would be IEEE's ±∞/NaN business, which no valid count reaches).
    """
    d = [float(x) for x in d]
    e = [float(x) for x in e]
    mu = float(mu)
    s = [fl_mul(x, x) for x in e]
    out = []
    q = fl_sub(d[0], mu)
    for i in range(len(d)):
        if i:
            if math.isinf(s[i - 1]):
                return None
            r = fl_div(s[i - 1], q)
            if math.isinf(r):
                return None
            q = fl_sub(fl_sub(d[i], mu), r)
        if q == 0 or math.isinf(q):
            return None
        out.append(q)
    return out


def normalised_sturm_reference(d, e, mu, tau: float = 2.0**-400) -> tuple[int, bool]:
    """``(count, valid)`` of the normalised guard replayed exactly: valid ⟺ every pivot has |qᵢ| ≥ τ.

    (A zero or non-finite pivot fails the guard too.) The count #{qᵢ < 0} is meaningful only when valid.
    """
    q = sturm_pivots(d, e, mu)
    if q is None or any(abs(x) < tau for x in q):
        return 0, False
    return sum(1 for x in q if x < 0), True
