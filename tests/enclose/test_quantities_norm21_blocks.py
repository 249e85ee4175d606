"""norm_21's blockwise evaluation (proofs/enclosure.md §8, "Evaluation of norm_21").

References that share no code with what they test: left-to-right Python float sums over the exactly scaled
entries (math.ldexp), exact Fractions and mpmath for containment. The whole-matrix form (a scaled C-ordered copy
and np.einsum, what norm_21 computed before) is the reference for "the same ball".
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from flint import arb

from certbound.ball import float_model_scope, lower_fraction, upper_fraction
from certbound.enclose import quantities as Q
from certbound.enclose._input import power_of_two_scaling


def _whole_matrix_form(W: np.ndarray) -> arb:
    """The previous evaluation: C-ordered exact copy, scaled whole, einsum of the squares."""
    X = np.array(W, dtype=np.float64, order="C")  # a copy
    m, n = X.shape
    Ws, k, exact = power_of_two_scaling(X, inplace=True)
    with float_model_scope():
        bounds = Q._column_sumsq_bounds(Ws)
        if not bounds[0].any():
            return arb(0)
        out = Q._norm21_from_columns(Ws, None, bounds)
        return Q._scaled_back(out, k, arb(0) if exact else arb(n) * arb(m).sqrt(), "norm_21")


def _same_ball(a: arb, b: arb) -> bool:
    return a.mid() == b.mid() and a.rad() == b.rad()


def _matrices(rng: np.random.Generator, count: int):
    for t in range(count):
        m, n = int(rng.integers(1, 90)), int(rng.integers(1, 90))
        W = rng.standard_normal((m, n)) * 2.0 ** float(rng.integers(-1060, 1000))
        if t % 3 == 0:
            W[rng.random((m, n)) < 0.4] = 0.0
        if t % 4 == 0:  # entries that scaling down makes subnormal (exact = False)
            W.flat[int(rng.integers(W.size))] = 5e-324 * float(rng.integers(1, 2**20))
        yield np.asfortranarray(W) if t % 2 else W


@pytest.fixture
def small_blocks(monkeypatch):
    # Many row blocks and many transposing copies even for small matrices.
    monkeypatch.setattr(Q, "_SUMSQ_BLOCK_ENTRIES", 37)
    monkeypatch.setattr(Q, "_TRANSPOSE_BLOCK_ENTRIES", 5)
    monkeypatch.setattr(Q, "_MAX_MIN_BLOCK_ENTRIES", 11)


@pytest.mark.parametrize("blocks", ["default", "small"])
def test_same_ball_as_the_whole_matrix_form(blocks, request):
    if blocks == "small":
        request.getfixturevalue("small_blocks")
    rng = np.random.default_rng(11)
    for W in _matrices(rng, 160):
        assert _same_ball(Q.norm_21(W), _whole_matrix_form(W)), (W.shape, W.flags.f_contiguous)


def test_column_sums_are_left_to_right_sums_of_the_scaled_squares(small_blocks):
    rng = np.random.default_rng(5)
    for W in _matrices(rng, 60):
        m, n = W.shape
        if n == 1:
            continue  # one column keeps einsum's own loop (tested by the same-ball test)
        X, transposed, owned, amax = Q._norm_operand(W)
        v, k, exact = Q._scaled_column_sumsq(X, transposed, owned, amax)
        amax_ref = max(abs(float(x)) for x in W.ravel())
        k_ref = 0 if amax_ref == 0 else -(math.frexp(amax_ref)[1] - 1)
        assert k == k_ref
        scaled = [[math.ldexp(float(W[i, j]), k) for j in range(n)] for i in range(m)]  # correctly rounded
        assert exact == all(Fraction(scaled[i][j]) == Fraction(float(W[i, j])) * Fraction(2) ** k
                            for i in range(m) for j in range(n))
        for j in range(n):
            s = scaled[0][j] * scaled[0][j]
            for i in range(1, m):
                s = s + scaled[i][j] * scaled[i][j]
            assert v[j] == s, (W.shape, j)


@pytest.mark.parametrize("entries", [1 << 14, 6, 1])
def test_row_sums_in_order(entries, monkeypatch):
    monkeypatch.setattr(Q, "_TRANSPOSE_BLOCK_ENTRIES", entries)
    rng = np.random.default_rng(3)
    for r, c in [(1, 1), (1, 9), (2, 33), (3, 17), (7, 1), (5, 33), (40, 3)]:
        S = rng.standard_normal((r, c)) * 10.0 ** rng.integers(-5, 5, size=(r, c))
        got = Q._row_sums_in_order(S)
        for i in range(r):
            s = float(S[i, 0])
            for j in range(1, c):
                s += float(S[i, j])
            assert got[i] == s


def _mp(q: Fraction) -> mpmath.mpf:
    return mpmath.mpf(q.numerator) / q.denominator


def test_contains_the_exact_norm():
    rng = np.random.default_rng(8)
    with mpmath.workprec(300):
        for W in _matrices(rng, 40):
            x = Q.norm_21(W)
            sumsq = [sum((Fraction(float(w)) ** 2 for w in W[:, j]), Fraction(0)) for j in range(W.shape[1])]
            lo, hi = lower_fraction(x), upper_fraction(x)
            assert lo is not None and hi is not None
            # the exact norm to 300 bits, with a margin far below the ball's own radius
            exact = mpmath.fsum(mpmath.sqrt(_mp(q)) for q in sumsq)
            margin = exact * mpmath.mpf(2) ** -280
            assert _mp(lo) <= exact - margin and exact + margin <= _mp(hi)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_entries_raise_the_usual_error(order, bad):
    W = np.ones((4, 3), order=order)
    W[2, 1] = bad
    with pytest.raises(ValueError, match=r"W: matrix has 1 NaN/Inf entries \(first at \(2, 1\)\)"):
        Q.norm_21(W)


def test_scaling_into_a_buffer_is_the_same_scaling():
    rng = np.random.default_rng(4)
    for e in (-1070, -600, -3, 0, 2, 700):
        W = rng.standard_normal((6, 5)) * 2.0**e
        W[0, 0] = 5e-324 * 3
        want = power_of_two_scaling(W)
        buf = np.full_like(W, np.nan)
        got = power_of_two_scaling(W, out=buf)
        assert got[1:] == want[1:] and np.array_equal(got[0], want[0])
        assert got[0] is (W if want[1] == 0 else buf)


@pytest.mark.parametrize("where", [(0, 0), (17, 3), (39, 4)])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_blockwise_max_min(where, bad, monkeypatch):
    monkeypatch.setattr(Q, "_MAX_MIN_BLOCK_ENTRIES", 7)
    rng = np.random.default_rng(6)
    W = rng.standard_normal((40, 5))
    assert Q._max_min(W) == (float(W.max()), float(W.min()))
    W[where] = bad
    hi, lo = Q._max_min(W)
    assert not (math.isfinite(hi) and math.isfinite(lo))
    with pytest.raises(ValueError, match=re.escape(f"1 NaN/Inf entries (first at {where})")):
        Q.norm_21(W)
    with pytest.raises(ValueError, match="1 NaN/Inf entries"):
        Q.norm_21(np.asfortranarray(W))


def test_input_is_not_modified():
    rng = np.random.default_rng(2)
    for W in _matrices(rng, 20):
        before = W.copy(order="A")
        Q.norm_21(W)
        assert np.array_equal(W, before) and W.flags.f_contiguous == before.flags.f_contiguous
