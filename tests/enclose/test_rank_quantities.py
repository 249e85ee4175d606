"""Exact rank and certified derived quantities against independent references."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, strategies as st

from certbound.ball import lower_fraction, upper_fraction
from certbound.enclose import (
    certified_rank,
    enclose_singular_values,
    enclose_singular_values_of_product,
    exact_rank,
    frobenius_norm,
    norm_11,
    norm_11_of_product,
    norm_21,
    norm_21_of_product,
    nuclear_norm,
    rank_lower_bound_modp,
    schatten_quantity,
    spectral_norm,
    stable_rank,
)
from tests.enclose.reference import fraction_rank, mp_singular_values


def ball_contains_mp(ball, value) -> bool:
    lo, hi = lower_fraction(ball), upper_fraction(ball)
    with mpmath.workprec(400):
        v = mpmath.mpf(value)
        ok_lo = lo is None or mpmath.mpf(lo.numerator) / lo.denominator <= v
        ok_hi = hi is None or v <= mpmath.mpf(hi.numerator) / hi.denominator
    return ok_lo and ok_hi


@given(st.integers(1, 7), st.integers(1, 7), st.integers(0, 3), st.integers(0, 2**31))
def test_rank_matches_fraction_elimination(m, n, r, seed):
    rng = np.random.default_rng(seed)
    W = rng.integers(-4, 5, size=(m, r)).astype(float) @ rng.integers(-4, 5, size=(r, n)).astype(float)
    W = W * 2.0 ** rng.integers(-30, 30)  # exact scaling, dyadic entries
    truth = fraction_rank(W)
    assert exact_rank(W) == truth
    assert rank_lower_bound_modp(W) <= truth
    assert certified_rank(W) == certified_rank(W, exact=True)
    lo, hi = certified_rank(W, exact=False).lower, certified_rank(W, exact=False).upper
    assert lo <= truth <= hi


def test_rank_with_wide_exponent_range():
    W = np.array([[1e-300, 1e300], [2e-300, 2e300], [1.0, 0.0]])
    assert exact_rank(W) == fraction_rank(W) == 2


@pytest.mark.parametrize("p", [0.25, 0.5, 1, "1/3", 1.5, 2])
def test_schatten_against_mpmath(p):
    rng = np.random.default_rng(2)
    W = rng.standard_normal((9, 6))
    enc = enclose_singular_values(W)
    ref = mp_singular_values(W)
    with mpmath.workprec(400):
        pp = mpmath.mpf(Fraction(p).numerator) / Fraction(p).denominator if isinstance(p, str) else mpmath.mpf(p)
        truth = sum(s**pp for s in ref)
    assert ball_contains_mp(schatten_quantity(enc, p), truth)


def test_norms_against_mpmath():
    rng = np.random.default_rng(4)
    W = rng.standard_normal((7, 11))
    enc = enclose_singular_values(W)
    ref = mp_singular_values(W)
    with mpmath.workprec(400):
        fro = mpmath.sqrt(sum(mpmath.mpf(float(x)) ** 2 for x in W.ravel()))
        nuc = sum(ref)
        sr = fro**2 / ref[0] ** 2
    assert ball_contains_mp(spectral_norm(enc), ref[0])
    assert ball_contains_mp(frobenius_norm(enc), fro)
    assert ball_contains_mp(nuclear_norm(enc), nuc)
    assert ball_contains_mp(stable_rank(enc), sr)


def test_schatten_zero_is_certified_rank_and_bad_p():
    enc = enclose_singular_values(np.diag([2.0, 1.0, 0.0]), exact_rank=True)
    s0 = schatten_quantity(enc, 0)
    assert s0.contains(2) and not s0.contains(3)
    with pytest.raises(ValueError, match=r"\(0, 2\]"):
        schatten_quantity(enc, 2.5)
    with pytest.raises(ValueError):
        schatten_quantity(enc, -1)


def test_entrywise_norms_exact():
    rng = np.random.default_rng(8)
    W = rng.standard_normal((13, 5)) * 1e-3
    exact11 = sum(abs(Fraction(float(x))) for x in W.ravel())
    b = norm_11(W)
    assert lower_fraction(b) <= exact11 <= upper_fraction(b)
    with mpmath.workprec(400):
        exact21 = sum(mpmath.sqrt(sum(mpmath.mpf(float(x)) ** 2 for x in W[:, j])) for j in range(W.shape[1]))
    assert ball_contains_mp(norm_21(W), exact21)


def test_product_entrywise_norms_exact():
    rng = np.random.default_rng(9)
    A, B = rng.standard_normal((6, 2)), rng.standard_normal((5, 2))
    P = [[sum(Fraction(float(A[i, k])) * Fraction(float(B[j, k])) for k in range(2)) for j in range(5)] for i in range(6)]
    exact11 = sum(abs(x) for row in P for x in row)
    b = norm_11_of_product(A, B)
    assert lower_fraction(b) <= exact11 <= upper_fraction(b)
    with mpmath.workprec(400):
        col_sq = [sum(P[i][j] ** 2 for i in range(6)) for j in range(5)]  # exact Fractions
        exact21 = sum(mpmath.sqrt(mpmath.mpf(c.numerator) / c.denominator) for c in col_sq)
    assert ball_contains_mp(norm_21_of_product(A, B), exact21)
    enc = enclose_singular_values_of_product(A, B)
    assert schatten_quantity(enc, 0).upper() <= 2


@pytest.mark.parametrize("p, error, needle", [
    ("abc", ValueError, "exponent 'abc' is not a number"),
    ("1/0", ValueError, "exponent '1/0' is not a number"),  # was a ZeroDivisionError
    (None, TypeError, "exponent must be a number or a numeric string, not NoneType"),
    ([1], TypeError, "not list"),
    (3, ValueError, "must be 0 or in (0, 2]"),
])
def test_a_bad_schatten_index_says_what_is_wrong(p, error, needle):
    import re

    with pytest.raises(error, match=re.escape(needle)):
        schatten_quantity(enclose_singular_values(np.diag([3.0, 4.0])), p)
