"""Tests for the bench-driven speed-ups: the Gram path of ‖A Bᵀ‖_{2,1}, shared sums, JSON form.

References are independent: exact Fractions for the column sums of squares of
the product, mpmath at 400 bits for square roots and singular values.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest
from flint import arb
from hypothesis import given, strategies as st

from certbound.ball import (
    ball_to_json,
    decimal_lower,
    decimal_upper,
    lower_fraction,
    upper_fraction,
    working_precision,
)
from certbound.enclose import (
    enclose_singular_values,
    enclose_singular_values_of_product,
    frobenius_norm,
    norm_21_of_product,
    nuclear_norm,
    schatten_quantity,
)
from certbound.enclose.quantities import (
    _norm_21_of_product_formed,
    _norm_21_of_product_gram,
    norms_and_schatten,
)
from tests.enclose.reference import mp_product_singular_values


def _exact_norm21_of_product(A: np.ndarray, B: np.ndarray) -> mpmath.mpf:
    """Σⱼ ‖(A Bᵀ)_{:,j}‖₂: exact column sums of squares (Fractions), sqrt at 400 bits."""
    FA = [[Fraction(float(x)) for x in row] for row in A]
    FB = [[Fraction(float(x)) for x in row] for row in B]
    d = A.shape[1]
    total = mpmath.mpf(0)
    with mpmath.workprec(400):
        for j in range(B.shape[0]):
            c = sum((sum(FA[i][k] * FB[j][k] for k in range(d)) ** 2 for i in range(A.shape[0])), Fraction(0))
            total += mpmath.sqrt(mpmath.mpf(c.numerator) / c.denominator)
    return total


def _contains(ball, value) -> bool:
    lo, hi = lower_fraction(ball), upper_fraction(ball)
    with mpmath.workprec(400):
        v = mpmath.mpf(value)
        ok_lo = lo is None or mpmath.mpf(lo.numerator) / lo.denominator <= v
        ok_hi = hi is None or v <= mpmath.mpf(hi.numerator) / hi.denominator
    return ok_lo and ok_hi


@given(
    m=st.integers(1, 12),
    n=st.integers(1, 12),
    d=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
    scale_exp=st.sampled_from([0, -40, 40, -500, 480, -1040]),
    cancel=st.booleans(),
)
def test_gram_path_contains_exact_norm21(m, n, d, seed, scale_exp, cancel):
    rng = np.random.default_rng(seed)
    A = np.ldexp(rng.standard_normal((m, d)), scale_exp)
    B = rng.standard_normal((n, d))
    if cancel and d >= 2:
        # Columns of A with A b_j ≈ 0 for some j: heavy cancellation in t_j.
        A[:, 1] = A[:, 0]
        B[0, 1] = -B[0, 0]
    out = _norm_21_of_product_gram(A, B)
    if out is None:  # only allowed on float overflow
        assert scale_exp >= 480
        return
    assert _contains(out, _exact_norm21_of_product(A, B))


def test_gram_path_exact_zero_and_empty():
    A = np.zeros((5, 3))
    B = np.ones((4, 3))
    z = _norm_21_of_product_gram(A, B)  # only the underflow allowance c₀ remains
    assert z.contains(0) and z.upper() < 1e-150
    assert _norm_21_of_product_gram(np.ones((5, 0)), np.ones((4, 0))) == 0
    assert _norm_21_of_product_gram(np.ones((0, 2)), np.ones((4, 2))) == 0
    assert _norm_21_of_product_gram(np.ones((3, 2)), np.ones((0, 2))) == 0


def test_gram_path_overflow_falls_back():
    A = np.full((6, 2), 1e200)
    B = np.full((7, 2), 1e200)
    assert _norm_21_of_product_gram(A, B) is None  # Ĝ overflows
    out = norm_21_of_product(A, B)  # the formed path (whatever it gives) must contain the value
    assert _contains(out, _exact_norm21_of_product(A, B))


def test_thin_product_uses_gram_path_and_is_tight():
    rng = np.random.default_rng(3)
    A, B = rng.standard_normal((40, 3)) * 0.05, rng.standard_normal((30, 3)) * 0.05
    exact = _exact_norm21_of_product(A, B)
    g = norm_21_of_product(A, B)
    f = _norm_21_of_product_formed(A, B)
    assert _contains(g, exact) and _contains(f, exact)
    # Same ball as the Gram path itself (dispatch), and a width far below float resolution of the inputs.
    assert lower_fraction(g) == lower_fraction(_norm_21_of_product_gram(A, B))
    with working_precision():
        assert float((g.upper() - g.lower()) / g.upper()) < 1e-12


def test_norms_and_schatten_same_balls_and_contain_reference():
    rng = np.random.default_rng(5)
    A, B = rng.standard_normal((9, 3)), rng.standard_normal((7, 3))
    enc = enclose_singular_values_of_product(A, B)
    ps = ["0.5", "1", 2, "1/3", Fraction(2), 1.0]
    fro, nuc, sps = norms_and_schatten(enc, ps)
    same = [(fro, frobenius_norm(enc)), (nuc, nuclear_norm(enc))] + [
        (s, schatten_quantity(enc, p)) for s, p in zip(sps, ps)]
    for a, b in same:
        assert lower_fraction(a) == lower_fraction(b) and upper_fraction(a) == upper_fraction(b)
    s = mp_product_singular_values(A, B)
    with mpmath.workprec(400):
        assert _contains(fro, mpmath.sqrt(sum(x**2 for x in s)))
        assert _contains(nuc, sum(s))
        assert _contains(sps[0], sum(mpmath.sqrt(x) for x in s if x > 1e-60))
        assert _contains(sps[3], sum(mpmath.cbrt(x) for x in s if x > 1e-60))


@pytest.mark.parametrize("x", [arb(1) / 3, -arb(2).sqrt(), arb(0), arb.pos_inf(), arb(0).union(arb.pos_inf()),
                               arb(7) * arb(2) ** -1100, arb(3) * arb(2) ** 2000])
def test_ball_to_json_endpoints(x):
    with working_precision(128):
        j = ball_to_json(x)
    lo, hi = lower_fraction(x), upper_fraction(x)
    # The printed ends are the outward decimals of the exact ends, widened to ``mid`` when no float lies
    # inside the ball (issue 12 item 13: lower <= mid <= upper always).
    mid = None if j["mid"] is None else Fraction(j["mid"])
    if mid is None or lo is None or lo <= mid:
        assert j["lower"] == decimal_lower(x)
    else:
        assert j["lower"] == decimal_lower(arb(j["mid"]))
    if mid is None or hi is None or mid <= hi:
        assert j["upper"] == decimal_upper(x)
    else:
        assert j["upper"] == decimal_upper(arb(j["mid"]))
    if lo is not None:
        assert Fraction(j["lower"]) <= lo
        m, _, e = j["exact"]["lower"].partition("*2^")
        assert Fraction(int(m)) * Fraction(2) ** int(e or 0) == lo
    else:
        assert j["lower"] == "-inf" and j["exact"]["lower"] == "-inf"
    if hi is not None:
        assert Fraction(j["upper"]) >= hi
        m, _, e = j["exact"]["upper"].partition("*2^")
        assert Fraction(int(m)) * Fraction(2) ** int(e or 0) == hi
    else:
        assert j["upper"] == "inf" and j["exact"]["upper"] == "inf"


def test_dense_enclosure_suffix_of_zeros_in_spectrum_sums():
    # σ with float upper end 0 are dropped from the sums by `certbound spectrum`: the
    # record's sums must still contain the exact values of a rank-deficient matrix.
    from certbound.pipeline import certify_theory_matrix
    from certbound.checkpoints import TheoryMatrix

    W = np.zeros((4, 5))
    W[0, 0], W[1, 1] = 3.0, 4.0
    r = certify_theory_matrix(TheoryMatrix(0, None, "M_in", (4, 5), dense=W), ps=["1", "2"])
    assert Fraction(r["nuclear_norm"]["lower"]) <= 7 <= Fraction(r["nuclear_norm"]["upper"])
    assert Fraction(r["schatten"]["2"]["lower"]) <= 25 <= Fraction(r["schatten"]["2"]["upper"])
    assert Fraction(r["frobenius_norm"]["lower"]) <= 5 <= Fraction(r["frobenius_norm"]["upper"])
    enc = enclose_singular_values(W, exact_rank=True)
    assert enc.rank.upper == 2
