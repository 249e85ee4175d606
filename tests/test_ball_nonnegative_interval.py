"""ball.nonnegative_interval: its exact lower end, its upper end, and the same ball as its Fraction form.

References: exact Fractions of the balls' ends (ball.lower_fraction / upper_fraction, i.e. mid ∓ rad read
exactly), and the previous Fraction evaluation of the same steps (kept here) for "the same ball".
"""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from flint import arb, ctx

import certbound.ball as B


def _fraction_form(lo: arb, hi: arb) -> arb:
    """The previous evaluation: the same Arb calls on Fraction ends."""
    lq = B.lower_fraction(lo)
    l = lq if lq is not None and lq > 0 else Fraction(0)
    h = B.upper_fraction(hi)
    if h is None:
        return B._fraction_ball(l).union(arb.pos_inf())
    if h <= l:
        return B._exact_ball(l)
    with B.working_precision(B.DEFAULT_PREC):
        z = arb(0, B._exact_ball((h - l) / 2).upper())
    mid = l + B._dyadic(z.rad())
    bits = max(mid.numerator.bit_length(), mid.denominator.bit_length(), B.DEFAULT_PREC) + 64
    with B.working_precision(bits):
        return B._exact_ball(mid) + z


def _ball(rng: random.Random) -> arb:
    t = rng.random()
    e = rng.choice([0, 1, -1, 10, -60, 300, -1000, 2000])
    x = arb(rng.uniform(-2, 2)) * arb(2) ** e
    if t < 0.3:
        x = x + arb(0, rng.random()) * arb(2) ** (e - rng.randint(0, 80))
    elif t < 0.4:
        x = arb(0)
    elif t < 0.45:
        x = arb.pos_inf()
    elif t < 0.5:
        x = arb(0).union(arb.pos_inf())
    elif t < 0.55:
        x = arb(1) / 3
    return x


@pytest.mark.parametrize("prec", [53, 128, 256])
def test_same_ball_as_the_fraction_form_and_exact_lower_end(prec):
    rng = random.Random(prec)
    old = ctx.prec
    try:
        ctx.prec = prec
        for _ in range(1500):
            lo, hi = _ball(rng), _ball(rng)
            if rng.random() < 0.3:
                hi = lo + abs(_ball(rng))
            got, want = B.nonnegative_interval(lo, hi), _fraction_form(lo, hi)
            assert got.mid() == want.mid() and got.rad() == want.rad() and str(got) == str(want), (lo, hi)
            if not got.is_finite():
                continue
            lq, hq = B.lower_fraction(lo), B.upper_fraction(hi)
            l = max(lq, Fraction(0)) if lq is not None else Fraction(0)
            assert B.lower_fraction(got) == l  # exactly max(lo's lower end, 0)
            assert hq is not None and B.upper_fraction(got) >= max(hq, l)
    finally:
        ctx.prec = old
