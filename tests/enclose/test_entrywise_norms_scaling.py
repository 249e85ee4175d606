"""Issue 12 items 8 and 9: entrywise norms at every scale (exact power-of-two scaling).

References: mpmath at 400 bits on the exact float values (``mpf(float)`` is
exact) — no certbound code. Every result must be a finite ball containing the
reference, with a lower end ≥ 0 exactly, no warning, and (scale invariance)
about as tight as at unit scale.
"""

from __future__ import annotations

import warnings

import mpmath
import numpy as np
import pytest

from certbound.ball import lower_fraction, upper_fraction
from certbound.enclose import norm_11, norm_11_of_product, norm_21, norm_21_of_product

mpmath.mp.prec = 400


def _mp(M):
    return [[mpmath.mpf(float(x)) for x in row] for row in np.asarray(M, dtype=np.float64)]


def ref_norm_21(W):
    W = _mp(W)
    m, n = len(W), len(W[0])
    return mpmath.fsum(mpmath.sqrt(mpmath.fsum(W[i][j] ** 2 for i in range(m))) for j in range(n))


def ref_norm_11(W):
    return mpmath.fsum(abs(x) for row in _mp(W) for x in row)


def ref_product(A, B):
    A, B = _mp(A), _mp(B)
    return [[mpmath.fsum(a * b for a, b in zip(ra, rb)) for rb in B] for ra in A]


def ref_norm_21_of_product(A, B):
    P = ref_product(A, B)
    return mpmath.fsum(mpmath.sqrt(mpmath.fsum(P[i][j] ** 2 for i in range(len(P)))) for j in range(len(P[0])))


def ref_norm_11_of_product(A, B):
    return mpmath.fsum(abs(x) for row in ref_product(A, B) for x in row)


def _check(ball, ref, rel_width=1e-9):
    lo, hi = lower_fraction(ball), upper_fraction(ball)
    assert lo is not None and hi is not None, f"unbounded ball {ball} for a finite input (ref {ref})"
    assert lo >= 0, f"negative lower end {float(lo)}"
    lo_mp = mpmath.mpf(lo.numerator) / lo.denominator
    hi_mp = mpmath.mpf(hi.numerator) / hi.denominator
    assert lo_mp <= ref <= hi_mp, (ball, ref)
    if ref > 0:
        assert (hi_mp - lo_mp) / ref < rel_width, f"width {(hi_mp - lo_mp) / ref} relative"


rng = np.random.default_rng(12)
A0, B0 = rng.standard_normal((7, 3)), rng.standard_normal((5, 3))
W0 = rng.standard_normal((6, 4))
SCALES = [1.0, 2.0**600, 1e300, 2.0**-600, 1e-300, 2.0**-1060]


@pytest.mark.parametrize("scale", SCALES)
def test_norm_21_every_scale(scale):
    W = W0 * scale
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _check(norm_21(W), ref_norm_21(W))
        _check(norm_11(W), ref_norm_11(W), rel_width=1e-9 if scale >= 2.0**-1000 else 1e-1)


@pytest.mark.parametrize("scale_a", SCALES)
@pytest.mark.parametrize("scale_b", [1.0, 1e300, 2.0**-600])
def test_product_norms_every_scale(scale_a, scale_b):
    A, B = A0 * scale_a, B0 * scale_b
    if not 2.0**-1074 < float(np.abs(A).min()) * float(np.abs(B).min()):
        pytest.skip("product underflows entirely")  # 2^-1060 · 2^-600: the exact product is below every float
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # item 9: no (unwarned or warned) infinite result for finite input
        _check(norm_21_of_product(A, B), ref_norm_21_of_product(A, B))
        _check(norm_11_of_product(A, B), ref_norm_11_of_product(A, B))


def test_norm_11_of_product_near_1e300_does_not_crash():
    # The crash: NaN / fsum overflow for factors with entries near 1e300.
    A = np.array([[1e300, -1e300], [1e300, 1e300]])
    B = np.array([[1e300, 1e300], [-1e300, 1e300]])
    _check(norm_11_of_product(A, B), ref_norm_11_of_product(A, B))
    _check(norm_21_of_product(A, B), ref_norm_21_of_product(A, B))


def test_formed_path_of_norm_21_of_product_at_huge_scale():
    # d(m+n) > mn: the formed-product path (not the Gram path)
    A, B = rng.standard_normal((2, 5)) * 2.0**700, rng.standard_normal((3, 5)) * 2.0**400
    _check(norm_21_of_product(A, B), ref_norm_21_of_product(A, B))


@pytest.mark.parametrize("e", [300, 600])
def test_gram_path_with_unbalanced_factors(e):
    # d(m+n) <= mn: the Gram path; a tiny A meets a huge B (the product is of unit size)
    A, B = rng.standard_normal((30, 3)) * 2.0**-e, rng.standard_normal((40, 3)) * 2.0**e
    _check(norm_21_of_product(A, B), ref_norm_21_of_product(A, B))


def test_wide_dynamic_range_inside_one_factor():
    # 1e300 and 1e-300 in one matrix: scaling down rounds the tiny entries (the perturbation term).
    W = np.array([[1e300, 3e-300, 2.0**-1074], [1e-300, -5e-310, 1.0]])
    _check(norm_21(W), ref_norm_21(W))
    _check(norm_11(W), ref_norm_11(W))
    B = np.array([[1e-300, 1e300, 2.0], [4e-310, 1.0, -1e-300]])
    _check(norm_21_of_product(W, B), ref_norm_21_of_product(W, B))
    _check(norm_11_of_product(W, B), ref_norm_11_of_product(W, B))


@pytest.mark.parametrize("f", [norm_21, norm_11])
def test_tiny_matrix_lower_end_is_nonnegative_and_tight(f):
    W = np.array([[3.0, 1.0], [1.0, 2.0]]) * 2.0**-1074
    ref = ref_norm_21(W) if f is norm_21 else ref_norm_11(W)
    _check(f(W), ref, rel_width=1e-9)


def test_zero_and_empty():
    for f in (norm_21, norm_11):
        assert f(np.zeros((3, 2))) == 0 and f(np.zeros((0, 2))) == 0
    for f in (norm_21_of_product, norm_11_of_product):
        assert f(np.zeros((3, 2)), np.ones((4, 2))) == 0
        assert f(np.ones((3, 0)), np.ones((4, 0))) == 0
