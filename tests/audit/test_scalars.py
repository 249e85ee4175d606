"""Certified scalar functions against independent references (mpmath at 400 bits, exact rationals)."""

from fractions import Fraction
from math import comb

import mpmath
import pytest
from flint import arb
from hypothesis import given, strategies as st

from certbound.audit import scalars
from certbound.ball import lower_fraction, upper_fraction, working_precision

mpmath.mp.prec = 200


def mp_kl(q, p):
    q, p = mpmath.mpf(q), mpmath.mpf(p)
    a = q * mpmath.log(q / p) if q > 0 else 0
    b = (1 - q) * mpmath.log((1 - q) / (1 - p)) if q < 1 else 0
    return a + b


def mp_kl_inv_upper(q, c):
    q, c = mpmath.mpf(q), mpmath.mpf(c)
    lo, hi = q, mpmath.mpf(1)
    for _ in range(165):
        m = (lo + hi) / 2
        if mp_kl(q, m) > c:
            hi = m
        else:
            lo = m
    return lo, hi


def mp_frac(q: Fraction):
    return mpmath.mpf(q.numerator) / q.denominator


def mp_to_fraction(x) -> Fraction:
    """The exact value of a (binary) mpmath number."""
    man, exp = mpmath.mpf(x).man_exp
    return Fraction(int(man)) * Fraction(2) ** int(exp)


def brackets_root(ball, q, c, lower_branch=False):
    """Independent check (mpmath, 200 bits) that [lower, upper] brackets the root of kl(q‖·) = c.

    On the upper branch kl(q‖·) increases: kl(q‖lower) ≤ c ≤ kl(q‖upper) (up to 2^-180).
    """
    lo_end, hi_end = lower_fraction(ball), upper_fraction(ball)
    tol = mpmath.mpf(2) ** -180
    qm, cm = mp_frac(Fraction(q)), mp_frac(Fraction(c))
    a, b = (hi_end, lo_end) if lower_branch else (lo_end, hi_end)
    a, b = min(max(a, Fraction(0)), Fraction(1)), min(max(b, Fraction(0)), Fraction(1))
    ka = mp_kl(qm, mp_frac(a)) if 0 < a < 1 or a == qm else (0 if a == qm else mpmath.inf)
    kb = mp_kl(qm, mp_frac(b)) if 0 < b < 1 else mpmath.inf
    assert ka <= cm + tol
    assert kb >= cm - tol


def contains_interval(ball, lo, hi):
    """ball ⊇ [lo, hi] for mpmath numbers, checked exactly via Fractions."""
    return lower_fraction(ball) <= mp_to_fraction(lo) and mp_to_fraction(hi) <= upper_fraction(ball)


@given(
    q=st.fractions(min_value=0, max_value=1, max_denominator=1000),
    c=st.fractions(min_value=0, max_value=5, max_denominator=1000),
)
def test_kl_inverse_upper_contains_reference(q, c):
    with working_precision(128):
        ball = scalars.kl_inverse_upper(q, c)
    lo, hi = mp_kl_inv_upper(mp_frac(q), mp_frac(c))
    if q == 1:
        assert ball == 1
        return
    brackets_root(ball, q, c)
    # Away from the degenerate c = 0 the float-free reference bracket (width 2^-165) meets the ball.
    if c > Fraction(1, 10**6):
        assert lower_fraction(ball) <= mp_to_fraction(hi) and mp_to_fraction(lo) <= upper_fraction(ball)
    assert ball.rad() < 1e-30
    # The safe end really is on the safe side: kl(q ‖ upper) ≥ c.
    safe = scalars.safe_kl_inverse_upper(q, c)
    assert safe == 1 or mp_kl(mp_frac(q), mp_frac(safe)) >= mp_frac(c) - mpmath.mpf(2) ** -180


@given(
    q=st.fractions(min_value=0, max_value=1, max_denominator=1000),
    c=st.fractions(min_value=0, max_value=5, max_denominator=1000),
)
def test_kl_inverse_lower_by_symmetry_reference(q, c):
    with working_precision(128):
        ball = scalars.kl_inverse_lower(q, c)
    brackets_root(ball, q, c, lower_branch=True)
    safe = scalars.safe_kl_inverse_lower(q, c)
    assert safe == 0 or mp_kl(mp_frac(q), mp_frac(safe)) >= mp_frac(c) - mpmath.mpf(2) ** -180


def test_kl_closed_forms_and_domain():
    with working_precision(200):
        c = arb("0.7")
        assert scalars.kl_inverse_upper(0, c).overlaps(1 - (-c).exp())
        assert scalars.kl_inverse_lower(1, c).overlaps((-c).exp())
        assert scalars.kl_bernoulli("0.5", 0) == arb.pos_inf() or not scalars.kl_bernoulli("0.5", 0).is_finite()
    with pytest.raises(scalars.DomainError):
        scalars.kl_inverse_upper("0.1", "-1")
    with pytest.raises(scalars.DomainError):
        scalars.kl_bernoulli("1.5", "0.5")


def test_log_sum_exp_reference():
    xs = ["1000", "1000.5", "-3", "0.25"]
    with working_precision(128):
        b = scalars.log_sum_exp(xs)
    ref = mpmath.log(sum(mpmath.exp(mpmath.mpf(x)) for x in xs))
    assert b.overlaps(arb(mpmath.nstr(ref, 60)))
    assert b.rad() < 1e-30


@pytest.mark.parametrize("kind", ["harmonic", "zeta", "geometric"])
def test_peeling_weights_sum_to_delta(kind):
    J = 2000
    with working_precision(128):
        partial = arb(0)
        for j in range(1, J + 1):
            partial += scalars.peeling_weight(j, 1, kind)
    lo, hi = lower_fraction(partial), upper_fraction(partial)
    if kind == "harmonic":  # telescoping: exactly 1 − 1/(J+1)
        assert lo <= 1 - Fraction(1, J + 1) <= hi
    elif kind == "geometric":  # exactly 1 − 2^-J
        assert lo <= 1 - Fraction(1, 2**J) <= hi
    else:  # 1 − 6/(π² J) ≤ partial < 1 (tail Σ_{j>J} 1/j² < 1/J)
        assert lo < 1 and hi > 1 - Fraction(6, 9 * J)


def exact_cdf(k, n, p: Fraction) -> Fraction:
    return sum(Fraction(comb(n, i)) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


@given(n=st.integers(1, 40), data=st.data())
def test_binomial_cdf_contains_exact(n, data):
    k = data.draw(st.integers(0, n))
    p = data.draw(st.fractions(min_value=0, max_value=1, max_denominator=64))
    ref = exact_cdf(k, n, p)
    with working_precision(128):
        b = scalars.binomial_cdf(k, n, p)
        e = scalars.binomial_cdf(k, n, p, exact=True)
    for ball in (b, e):
        assert lower_fraction(ball) <= ref <= upper_fraction(ball)


@pytest.mark.parametrize("k, n, delta", [(0, 10, "0.05"), (3, 100, "0.01"), (7, 50, "0.5"), (49, 50, "0.1")])
def test_binomial_tail_inversion_brackets_exact_crossing(k, n, delta):
    d = Fraction(delta)
    with working_precision(128):
        up = scalars.binomial_tail_inverse_upper(k, n, delta)
        up_exact = scalars.binomial_tail_inverse_upper(k, n, delta, exact=True)
        low = scalars.binomial_tail_inverse_lower(k, n, delta)
    for ball in (up, up_exact):
        lo, hi = lower_fraction(ball), upper_fraction(ball)
        # Independent check with exact rationals: cdf(lo) ≥ δ > cdf(hi) (lo inside the set, hi outside).
        assert exact_cdf(k, n, lo) >= d
        assert hi >= 1 or exact_cdf(k, n, hi) <= d
    assert upper_fraction(up_exact) - lower_fraction(up_exact) < Fraction(1, 10**30)
    assert upper_fraction(up) - lower_fraction(up) < Fraction(1, 10**20)
    # Lower limit: P[X ≥ k] = 1 − cdf(k−1); at lo it is ≤ δ, at hi ≥ δ.
    lo, hi = lower_fraction(low), upper_fraction(low)
    if k > 0:
        assert 1 - exact_cdf(k - 1, n, max(lo, Fraction(0))) <= d
        assert 1 - exact_cdf(k - 1, n, hi) >= d


def test_binomial_zero_errors_closed_form():
    with working_precision(128):
        b = scalars.binomial_tail_inverse_upper(0, 1000, "0.05")
        assert b.overlaps(1 - arb("0.05") ** (arb(1) / 1000))
