"""Tests of the tight-mode kernels (certbound.enclose.tight).

References are independent of the code under test: exact rational arithmetic
(``fractions.Fraction``) for the error-free transformations, and ``flint.arb_mat``
at 4000 bits (exact for every product and sum of binary64 data used here) for
the matrices ``XᵀX − I`` and ``W − X diag(s) Yᵀ``. A certified *lower* bound on
their spectral norm is ``‖Mv‖/‖v‖`` for an explicit float vector v (the top
right singular vector of a float approximation); every returned bound must be
≥ it, and close to it.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from flint import arb, arb_mat, ctx
from hypothesis import example, given
from hypothesis import strategies as st

from certbound.enclose import fperror
from certbound.enclose.tight import (
    _two_product,
    bits_per_part,
    gram_deviation_bound_tight,
    residual_norm_bound_tight,
    spectral_norm_upper,
    split_error_free,
)

REF_PREC = 4000


# ---------------------------------------------------------------- references


def _arb_matrix(a: np.ndarray) -> arb_mat:
    a = np.asarray(a, dtype=np.float64)
    return arb_mat(a.shape[0], a.shape[1], [float(v) for v in a.ravel()])


def _exact_residual(W, X, s, Y) -> arb_mat:
    m, n = W.shape
    r = len(s)
    old = ctx.prec
    ctx.prec = REF_PREC
    try:
        S = arb_mat(r, r, [float(s[i]) if i == j else 0 for i in range(r) for j in range(r)])
        return _arb_matrix(W) - _arb_matrix(X) * S * _arb_matrix(Y).transpose()
    finally:
        ctx.prec = old


def _exact_gram_deviation(X) -> arb_mat:
    r = X.shape[1]
    old = ctx.prec
    ctx.prec = REF_PREC
    try:
        Xa = _arb_matrix(X)
        eye = arb_mat(r, r, [1 if i == j else 0 for i in range(r) for j in range(r)])
        return Xa.transpose() * Xa - eye
    finally:
        ctx.prec = old


def _to_float(M: arb_mat) -> np.ndarray:
    return np.array([[float(M[i, j].mid()) for j in range(M.ncols())] for i in range(M.nrows())])


def _norm_lower(M: arb_mat) -> Fraction:
    """Certified lower bound ``‖Mv‖/‖v‖ ≤ ‖M‖₂`` (v from a float SVD), as a Fraction."""
    m, n = M.nrows(), M.ncols()
    if m == 0 or n == 0:
        return Fraction(0)
    Mf = _to_float(M)
    amax = np.max(np.abs(Mf))
    if amax == 0 or not np.isfinite(amax):
        return Fraction(0)
    # Scale only the float copy (to avoid under/overflow in LAPACK); v is exact data.
    _, _, vt = np.linalg.svd(Mf / amax)
    v = vt[0]
    old = ctx.prec
    ctx.prec = REF_PREC
    try:
        va = arb_mat(n, 1, [float(x) for x in v])
        Mv = M * va
        num = sum((Mv[i, 0] ** 2 for i in range(m)), arb(0))
        den = sum((arb(float(x)) ** 2 for x in v), arb(0))
        ratio = (num / den).sqrt().lower()
    finally:
        ctx.prec = old
    if not ratio > 0:
        return Fraction(0)
    man, exp = ratio.man_exp()
    return Fraction(int(man)) * Fraction(2) ** int(exp)


def _upper(x: arb) -> Fraction:
    hi = x.upper()
    assert hi.is_finite(), f"bound is not finite: {x}"
    man, exp = hi.man_exp()
    return Fraction(int(man)) * Fraction(2) ** int(exp)


def _fro(a) -> float:
    return float(np.sqrt(np.sum(np.square(np.asarray(a, dtype=np.float64)))))


def _check_bound(bound: arb, M: arb_mat, rank: int, abs_tol: float) -> None:
    """``bound ≥ ‖M‖₂`` (via a certified lower estimate) and ``bound`` close to it."""
    lo = _norm_lower(M)
    hi = _upper(bound)
    assert hi >= lo, f"bound {float(hi)!r} below the certified lower estimate {float(lo)!r}"
    # Gram squaring (L = 3) is within rank^{1/16} of ‖R̂‖₂; R̂ is within abs_tol of R.
    factor = Fraction(max(rank, 1) ** (1 / 16)) * Fraction(1001, 1000)
    assert hi <= factor * lo + Fraction(abs_tol), (float(hi), float(lo), abs_tol)


def _svd_factors(W):
    X, s, Vt = np.linalg.svd(W, full_matrices=False)
    return X, s, np.ascontiguousarray(Vt.T)


# ---------------------------------------------------------- building blocks


def test_bits_per_part_is_the_exactness_limit():
    for k in [1, 2, 3, 100, 768, 1024, 2048, 2049, 3072, 4096, 16384, 2**30]:
        b = bits_per_part(k)
        assert k * 2 ** (2 * b) <= 2**53 < k * 2 ** (2 * b + 2)


def _line_units(A: np.ndarray, axis: int, b: int) -> np.ndarray:
    """Independent recomputation of each line's unit 2^(μ−b) (None for masked lines)."""
    out = []
    lines = A if axis == 1 else A.T
    for line in lines:
        amax = float(np.max(np.abs(line))) if line.size else 0.0
        if amax == 0:
            out.append(None)
            continue
        mu = math.frexp(amax)[1]
        out.append(mu - b)
    return out


@st.composite
def _graded_matrix(draw, max_rows=6, max_cols=6):
    m = draw(st.integers(1, max_rows))
    n = draw(st.integers(1, max_cols))
    seed = draw(st.integers(0, 2**32 - 1))
    lo = draw(st.integers(-1100, 250))
    span = draw(st.integers(0, 120))
    rng = np.random.default_rng(seed)
    mant = rng.uniform(-1, 1, (m, n))
    exps = rng.integers(lo, min(lo + span, 250) + 1, (m, n))
    A = np.ldexp(mant, exps)
    if draw(st.booleans()):
        A[rng.random((m, n)) < 0.3] = 0.0
    return A


@given(_graded_matrix(), st.sampled_from([1, 5, 768, 3072]), st.sampled_from([0, 1]))
@example(np.array([[0.0, 0.0]]), 768, 1)
@example(np.array([[5e-324, -1e-310], [1.0, 2.0**-600]]), 3, 1)
@example(np.array([[1.0, 1.0 - 2.0**-53, -1.0]]), 3072, 1)
def test_split_error_free_is_exact_and_has_few_bits(A, k, axis):
    b = bits_per_part(k)
    A1, A2, T, Ap = split_error_free(A, axis=axis, k=k)
    units = _line_units(A, axis, b)
    for idx in np.ndindex(A.shape):
        exact = Fraction(A[idx])
        assert Fraction(A1[idx]) + Fraction(A2[idx]) + Fraction(T[idx]) == exact
        assert Fraction(A1[idx]) + Fraction(Ap[idx]) == exact
    # A₁: multiples of 2^(μ−b), |A₁| ≤ 2^μ; A₂: multiples of 2^(μ−2b), |A₂| ≤ 2^(μ−b);
    # |A'| ≤ 2^(μ−b), |T| ≤ 2^(μ−2b); units ≥ 2^-537 (else the part is zero).
    for part, shift in ((A1, 0), (A2, b)):
        lines = part if axis == 1 else part.T
        for line, e in zip(lines, units):
            if not np.any(line):
                continue
            assert e is not None and e - shift >= -537
            q = [Fraction(float(x)) / Fraction(2) ** (e - shift) for x in line]
            assert all(x.denominator == 1 and abs(x) <= 2**b for x in q)
    for rem, shift in ((Ap, 0), (T, b)):
        lines = rem if axis == 1 else rem.T
        parts1 = A1 if axis == 1 else A1.T
        parts2 = A2 if axis == 1 else A2.T
        for line, e, p1, p2 in zip(lines, units, parts1, parts2):
            split = np.any(p1) if shift == 0 else np.any(p2)
            if split:
                assert all(abs(Fraction(float(x))) <= Fraction(2) ** (e - shift) for x in line)


@pytest.mark.parametrize("k", [7, 768, 2048])
def test_products_of_parts_are_exact_at_the_bit_limit(k):
    # Entries of one sign with full 53-bit mantissas, all close to the line
    # maximum (just below a power of two): the parts use all b bits and the
    # sums reach ≈ k·2^{2b} units — the worst case for exactness.
    rng = np.random.default_rng(k)
    A = 1 - rng.uniform(2.0**-53, 2.0**-8, (k, 3))
    B = -(1 - rng.uniform(2.0**-53, 2.0**-8, (k, 2)))
    A1, A2, _, _ = split_error_free(A, axis=0, k=k)
    B1, B2, _, _ = split_error_free(B, axis=0, k=k)
    for P, Q in [(A1, B1), (A1, B2), (A2, B1)]:
        got = P.T @ Q
        for i in range(P.shape[1]):
            for j in range(Q.shape[1]):
                exact = sum(Fraction(float(x)) * Fraction(float(y)) for x, y in zip(P[:, i], Q[:, j]))
                assert Fraction(float(got[i, j])) == exact


@given(_graded_matrix(max_rows=5, max_cols=4), st.integers(0, 2**32 - 1))
@example(np.array([[2.0**-460, 3.0, 0.0]]), 0)
def test_two_product_is_exact_where_valid(a, seed):
    rng = np.random.default_rng(seed)
    b = np.ldexp(rng.uniform(0, 1, a.shape[1]), rng.integers(-500, 10, a.shape[1]))
    b = np.clip(b, 0, 2.0**200)
    p, e, w1, w2, w3 = (np.empty_like(a) for _ in range(5))
    invalid = _two_product(a, b, p, e, w1, w2, w3)
    for i, j in np.ndindex(a.shape):
        exact = Fraction(a[i, j]) * Fraction(b[j])
        assert Fraction(p[i, j]) == Fraction(float(a[i, j] * b[j]))
        if invalid is not None and invalid[i, j]:
            assert e[i, j] == 0
            assert a[i, j] != 0 and b[j] != 0
            assert min(abs(a[i, j]), abs(b[j])) < 2.0**-450
        else:
            assert Fraction(p[i, j]) + Fraction(e[i, j]) == exact


# ---------------------------------------------------------- spectral norm


@st.composite
def _dense_matrix(draw):
    m = draw(st.integers(1, 9))
    n = draw(st.integers(1, 9))
    seed = draw(st.integers(0, 2**32 - 1))
    scale = draw(st.sampled_from([0, -1070, -1000, -300, -60, 60, 200]))
    rank = draw(st.integers(1, min(m, n)))
    rng = np.random.default_rng(seed)
    A = (rng.standard_normal((m, rank)) @ rng.standard_normal((rank, n))) * 2.0**scale
    return A


def _reference_norm_lower(F: np.ndarray) -> Fraction:
    """A lower bound of ‖F‖₂ from the exact entries (converted at REF_PREC), independent of tight.py."""
    old = ctx.prec
    ctx.prec = REF_PREC
    try:
        Fa = _arb_matrix(F)
    finally:
        ctx.prec = old
    return _norm_lower(Fa)


@given(_dense_matrix())
@example(np.array([[5e-324]]))
@example(np.array([[1.0, 1e-300], [0.0, 5e-324]]))
@example(np.ones((1, 9)) * 2.0**250)
@example(np.array([[1.7e308, 5e-324], [1e-300, -1e308]]))
def test_spectral_norm_upper_encloses_and_is_tight(F):
    b = spectral_norm_upper(F)
    lo = _reference_norm_lower(F)
    hi = _upper(b)
    assert hi >= lo
    factor = Fraction(min(F.shape) ** (1 / 16)) * Fraction(1 + 10**-6)
    # Absolute slack: the η-terms (subnormal data only).
    assert hi <= factor * lo + Fraction(2.0**-1000)


def test_spectral_norm_upper_rank_one_is_near_exact():
    u = np.array([3.0, 4.0])
    v = np.array([1.0, 2.0, 2.0])
    F = np.outer(u, v)  # ‖F‖₂ = 5 · 3 = 15 exactly
    hi = _upper(spectral_norm_upper(F))
    assert 15 <= hi <= 15 * (1 + Fraction(1, 10**12))


def test_spectral_norm_upper_edge_cases():
    assert spectral_norm_upper(np.zeros((0, 3))) == 0
    assert spectral_norm_upper(np.zeros((3, 2))) == 0
    assert not spectral_norm_upper(np.array([[np.inf]])).is_finite()
    with pytest.raises(ValueError):
        spectral_norm_upper(np.zeros(3))


# ---------------------------------------------------------- ‖XᵀX − I‖₂


def _gram_tol(X) -> float:
    # Every neglected term is ≤ 2^-60 of ‖X‖_F² (fast mode's are ≈ 2^-43·m).
    return 2.0**-60 * _fro(X) ** 2 + 2.0**-1000


@pytest.mark.parametrize("shape", [(40, 60), (60, 40), (1, 5), (5, 1), (7, 7)])
def test_gram_deviation_of_svd_factors(shape):
    rng = np.random.default_rng(sum(shape))
    W = rng.uniform(-1, 1, shape)
    X, s, Y = _svd_factors(W)
    for F in (X, Y):
        b = gram_deviation_bound_tight(F)
        _check_bound(b, _exact_gram_deviation(F), F.shape[1], _gram_tol(F))
        # Much tighter than the a-priori bound of fast mode (unless both are ~0).
        if min(shape) >= 7:  # for tiny sizes fast mode's γ_m is itself small
            fast = _upper(fperror.gram_deviation_bound(F))
            assert _upper(b) <= fast / 4


def test_gram_deviation_exact_cases():
    # Sylvester–Hadamard / 2^k: exactly orthonormal, dyadic.
    H = np.array([[1.0]])
    while H.shape[0] < 16:
        H = np.block([[H, H], [H, -H]])
    Q = H / 4.0
    assert _upper(gram_deviation_bound_tight(Q)) < 2.0**-1000
    # One entry moved by δ = 2^-40: XᵀX − I = δ(e_j q_iᵀ... ) has a known norm.
    X = Q.copy()
    X[3, 5] += 2.0**-40
    D = _exact_gram_deviation(X)
    _check_bound(gram_deviation_bound_tight(X), D, 16, _gram_tol(X))
    # m = 0: XᵀX − I = −I.
    assert _upper(gram_deviation_bound_tight(np.zeros((0, 3)))) >= 1
    assert gram_deviation_bound_tight(np.zeros((4, 0))) == 0


@st.composite
def _gram_case(draw):
    m = draw(st.integers(1, 14))
    r = draw(st.integers(1, 8))
    seed = draw(st.integers(0, 2**32 - 1))
    kind = draw(st.sampled_from(["svd", "random", "graded", "deficient", "tiny", "huge"]))
    rng = np.random.default_rng(seed)
    if kind == "svd":
        X = _svd_factors(rng.standard_normal((m, max(r, m))))[0][:, : min(r, m)]
    elif kind == "random":
        X = rng.standard_normal((m, r))
    elif kind == "graded":
        X = np.ldexp(rng.uniform(-1, 1, (m, r)), rng.integers(-90, 1, (m, r)))
    elif kind == "deficient":
        X = rng.standard_normal((m, r))
        X[:, 0] = 0.0
        if r > 2:
            X[:, 2] = X[:, 1]
    elif kind == "tiny":
        X = rng.standard_normal((m, r)) * 1e-300
    else:
        X = rng.standard_normal((m, r)) * 2.0**200
    return X


@given(_gram_case())
@example(np.array([[1.0]]))
@example(np.array([[1.0 + 2.0**-52]]))
@example(np.full((3, 1), 5e-324))
def test_gram_deviation_hypothesis(X):
    b = gram_deviation_bound_tight(X)
    _check_bound(b, _exact_gram_deviation(X), X.shape[1], _gram_tol(X))


# ---------------------------------------------------------- ‖W − X diag(s) Yᵀ‖₂


def _res_tol(W, X, s, Y) -> float:
    # Neglected terms are ≤ 2^-60 of the data (fast mode's are ≈ 2^-43·r).
    return 2.0**-60 * (_fro(W) + _fro(X) * _fro(s) * _fro(Y)) + 2.0**-1000


@pytest.mark.parametrize("shape", [(40, 60), (60, 40), (1, 7), (7, 1), (12, 12)])
def test_residual_of_svd_factors(shape):
    rng = np.random.default_rng(7 * sum(shape))
    W = rng.uniform(-1, 1, shape) * 2
    X, s, Y = _svd_factors(W)
    b = residual_norm_bound_tight(W, X, s, Y)
    _check_bound(b, _exact_residual(W, X, s, Y), min(shape), _res_tol(W, X, s, Y))
    # Memory layout does not matter (F-ordered views are used without copies).
    b_f = residual_norm_bound_tight(np.asfortranarray(W), np.asfortranarray(X), s, np.asfortranarray(Y))
    _check_bound(b_f, _exact_residual(W, X, s, Y), min(shape), _res_tol(W, X, s, Y))
    assert abs(_upper(b_f) - _upper(b)) <= _upper(b) / 10**6
    g_f = gram_deviation_bound_tight(np.asfortranarray(Y))
    _check_bound(g_f, _exact_gram_deviation(Y), Y.shape[1], _gram_tol(Y))
    if min(shape) >= 12:  # for tiny r fast mode's γ_r is itself small
        fast = _upper(fperror.residual_norm_bound(W, X, s, Y))
        assert _upper(b) <= fast / 4


def test_residual_exact_decomposition_and_single_perturbation():
    H = np.array([[1.0]])
    while H.shape[0] < 16:
        H = np.block([[H, H], [H, -H]])
    Q = H / 4.0  # orthogonal, dyadic
    s = np.array([2.0 - 2.0**-k for k in range(1, 17)])  # short dyadics: W exact
    W = (Q * s) @ Q.T
    assert _upper(residual_norm_bound_tight(W, Q, s, Q)) < 2.0**-1000
    delta = 2.0**-44
    W2 = W.copy()
    W2[2, 9] += delta  # R = δ e₂ e₉ᵀ: ‖R‖₂ = δ exactly
    assert W2[2, 9] - W[2, 9] == delta
    hi = _upper(residual_norm_bound_tight(W2, Q, s, Q))
    assert Fraction(delta) <= hi <= Fraction(delta) * (1 + Fraction(1, 10**6))


def test_residual_is_a_bound_for_unrelated_factors():
    rng = np.random.default_rng(3)
    W = rng.standard_normal((9, 11))
    X = rng.standard_normal((9, 4))
    Y = rng.standard_normal((11, 4))
    s = rng.uniform(0, 3, 4)
    b = residual_norm_bound_tight(W, X, s, Y)
    _check_bound(b, _exact_residual(W, X, s, Y), 9, _res_tol(W, X, s, Y))


def test_residual_edge_shapes_and_errors():
    assert residual_norm_bound_tight(np.zeros((0, 3)), np.zeros((0, 2)), np.ones(2), np.ones((3, 2))) == 0
    W = np.array([[3.0, 4.0]])
    b = residual_norm_bound_tight(W, np.zeros((1, 0)), np.zeros(0), np.zeros((2, 0)))
    assert 5 <= _upper(b) <= 5 * (1 + Fraction(1, 10**9))
    with pytest.raises(ValueError, match="shape mismatch"):
        residual_norm_bound_tight(W, np.ones((1, 1)), np.ones(2), np.ones((2, 1)))
    with pytest.raises(ValueError, match="NaN or Inf"):
        residual_norm_bound_tight(np.array([[np.nan]]), np.ones((1, 1)), np.ones(1), np.ones((1, 1)))
    with pytest.raises(ValueError, match="2\\^256"):
        residual_norm_bound_tight(np.array([[2.0**300]]), np.ones((1, 1)), np.ones(1), np.ones((1, 1)))
    with pytest.raises(ValueError, match="2-D"):
        gram_deviation_bound_tight(np.ones(3))


@st.composite
def _residual_case(draw):
    m = draw(st.integers(1, 10))
    n = draw(st.integers(1, 10))
    seed = draw(st.integers(0, 2**32 - 1))
    kind = draw(st.sampled_from(["svd", "svd-truncated", "graded", "tiny", "huge", "random", "zeros-in-s"]))
    rng = np.random.default_rng(seed)
    W = rng.uniform(-1, 1, (m, n))
    if kind == "graded":
        W = np.ldexp(W, rng.integers(-70, 1, (m, n)))
    if kind == "tiny":
        W = W * 2.0**-1000
    if kind == "huge":
        W = W * 2.0**200
    if kind == "random":
        r = draw(st.integers(1, 6))
        return W, rng.standard_normal((m, r)), rng.uniform(0, 2, r), rng.standard_normal((n, r))
    X, s, Y = _svd_factors(W)
    if kind == "svd-truncated" and len(s) > 1:
        r = draw(st.integers(1, len(s) - 1))
        X, s, Y = X[:, :r], s[:r], Y[:, :r]
    if kind == "zeros-in-s":
        s = s.copy()
        s[len(s) // 2 :] = 0.0
    return W, X, s, Y


@given(_residual_case())
@example((np.array([[1.0]]), np.array([[1.0]]), np.array([1.0]), np.array([[1.0]])))
@example((np.array([[5e-324, 0.0]]), np.array([[1.0]]), np.array([5e-324]), np.array([[1.0], [0.0]])))
@example((np.array([[1.0, 2.0]]), np.array([[1.0]]), np.array([1.0]), np.array([[2.0**-460], [2.0]])))
def test_residual_hypothesis(case):
    W, X, s, Y = case
    b = residual_norm_bound_tight(W, X, s, Y)
    _check_bound(b, _exact_residual(W, X, s, Y), min(W.shape), _res_tol(W, X, s, Y))


# ------------------------------------- one-level splits (§3, §4: session 3)


def _fr(A) -> list[list[Fraction]]:
    A = np.atleast_2d(np.asarray(A, dtype=np.float64))
    return [[Fraction(float(x)) for x in row] for row in A]


def _fr_matmul_t(A, B) -> list[list[Fraction]]:
    """A Bᵀ in exact rational arithmetic (A p×k, B q×k as Fraction lists)."""
    return [[sum((a * b for a, b in zip(ra, rb)), Fraction(0)) for rb in B] for ra in A]


@given(_graded_matrix(max_rows=7, max_cols=5))
@example(np.array([[1.0, 2.0**-530], [-1.0 + 2.0**-52, 5e-324]]))
def test_gram_identity_of_the_one_level_split(X):
    # Theorem T-Gram's identity, in Fractions: 2(XᵀX − I) = 2(X₁ᵀX₁ − I) + N + Nᵀ
    # with N = X'ᵀ(X + X₁) for the first level X = X₁ + X' of the column split.
    m, r = X.shape
    X1, _, _, Xp = split_error_free(X, axis=0, k=m)
    Xt, X1t, Xpt = (_fr(A.T) for A in (X, X1, Xp))
    H = [[a + b for a, b in zip(ra, rb)] for ra, rb in zip(Xt, X1t)]
    lhs = _fr_matmul_t(Xt, Xt)
    P11 = _fr_matmul_t(X1t, X1t)
    N = _fr_matmul_t(Xpt, H)
    for i in range(r):
        for j in range(r):
            assert 2 * lhs[i][j] == 2 * P11[i][j] + N[i][j] + N[j][i]
    # The leading product is exact in float (Lemma T3), whatever the scaling.
    got = X1.T @ X1
    assert all(Fraction(float(got[i, j])) == P11[i][j] for i in range(r) for j in range(r))


@given(_graded_matrix(max_rows=5, max_cols=4), st.integers(0, 2**32 - 1), st.integers(1, 6))
def test_residual_identity_of_the_one_level_split(X, seed, n):
    # Theorem T-Res's identity, in Fractions: with Z = Z_hi + Z_lo (TwoProduct, no
    # invalid entries here), X = X₁ + X', Z_hi = Z₁ + Z', Z'' = fl(Z' + Z_lo) = Z' + Z_lo − δ:
    # XZᵀ = X₁Z₁ᵀ + X₁Z''ᵀ + X'Z_hiᵀ + X₁δᵀ + X'Z_loᵀ, and X₁Z₁ᵀ is exact in float.
    m, r = X.shape
    rng = np.random.default_rng(seed)
    Y = np.ldexp(rng.uniform(-1, 1, (n, r)), rng.integers(-60, 5, (n, r)))
    s = rng.uniform(0.5, 2, r)
    Zhi, Zlo, w1, w2, w3 = (np.empty_like(Y) for _ in range(5))
    assert _two_product(Y, s, Zhi, Zlo, w1, w2, w3) is None
    X1, _, _, Xp = split_error_free(X, axis=1, k=r)
    Z1, _, _, Zp = split_error_free(Zhi, axis=1, k=r)
    Zpp = Zp + Zlo
    Zf = [[Fraction(float(y)) * Fraction(float(si)) for y, si in zip(row, s)] for row in Y]
    delta = [[a + b - c for a, b, c in zip(ra, rb, rc)] for ra, rb, rc in zip(_fr(Zp), _fr(Zlo), _fr(Zpp))]
    terms = [
        _fr_matmul_t(_fr(X1), _fr(Z1)),
        _fr_matmul_t(_fr(X1), _fr(Zpp)),
        _fr_matmul_t(_fr(Xp), _fr(Zhi)),
        _fr_matmul_t(_fr(X1), delta),
        _fr_matmul_t(_fr(Xp), _fr(Zlo)),
    ]
    lhs = _fr_matmul_t(_fr(X), Zf)
    got = X1 @ Z1.T
    for i in range(m):
        for j in range(n):
            assert lhs[i][j] == sum(t[i][j] for t in terms)
            assert Fraction(float(got[i, j])) == terms[0][i][j]
    # |δ| ≤ u|Z''| (one rounded addition).
    assert all(abs(d) <= Fraction(1, 2**53) * abs(z) for rd, rz in zip(delta, _fr(Zpp)) for d, z in zip(rd, rz))


@pytest.mark.parametrize("exp", [-500, -530, -545, -1060, 250])
@pytest.mark.parametrize("shape", [(1, 1), (3, 7), (13, 5), (37, 11)])
def test_one_level_bounds_under_adversarial_scaling(exp, shape):
    # SVD factors (ragged sizes) with a few rows / columns scaled to 2^exp: near
    # the -537 unit cut-off, entirely below it (level skipped), subnormal, huge.
    rng = np.random.default_rng(abs(exp) + 31 * shape[0] + shape[1])
    m, n = shape
    W = rng.uniform(-1, 1, shape)
    X, s, Y = _svd_factors(W)
    Xs, Ys = X.copy(), Y.copy()
    Xs[: max(1, m // 3)] *= 2.0**exp
    Ys[:, : max(1, Ys.shape[1] // 2)] *= 2.0**exp
    for F in (Xs, Ys):
        if np.max(np.abs(F)) > 2.0**256:
            continue
        _check_bound(gram_deviation_bound_tight(F), _exact_gram_deviation(F), F.shape[1], _gram_tol(F))
    Ws = W * 2.0 ** max(min(exp, 250), -1000)
    for args in ((Ws, X, s, Y), (W, Xs, s, Y), (W, X, s * 2.0 ** min(exp, 250), Ys)):
        if max(np.max(np.abs(a)) for a in args) > 2.0**256:
            continue
        b = residual_norm_bound_tight(*args)
        _check_bound(b, _exact_residual(*args), min(shape), _res_tol(*args))


def test_one_level_bounds_at_a_moderate_size_stay_tight():
    # r = 48: the one-level a-priori terms (≈ γ_r 2^-b of the data) stay far below
    # 2^-60 of the data, and the bounds stay within rank^(1/16) of the exact norms.
    rng = np.random.default_rng(2026)
    W = rng.uniform(-1, 1, (48, 90))
    X, s, Y = _svd_factors(W)
    _check_bound(gram_deviation_bound_tight(X), _exact_gram_deviation(X), 48, _gram_tol(X))
    _check_bound(gram_deviation_bound_tight(Y), _exact_gram_deviation(Y), 48, _gram_tol(Y))
    _check_bound(residual_norm_bound_tight(W, X, s, Y), _exact_residual(W, X, s, Y), 48, _res_tol(W, X, s, Y))


# ------------------------------- Lemma T6′: Gram squaring with binary32 levels


@given(_dense_matrix(), st.integers(1, 5), st.integers(0, 3))
@example(np.diag([1.0, 2.0**-70]), 4, 0)  # Gram entries 2^-280: binary32-subnormal → rounded
@example(np.array([[1.0, 2.0**-80], [2.0**-75, 2.0**-90]]), 3, 0)
@example(np.array([[5e-324]]), 4, 0)
@example(np.ones((1, 9)) * 2.0**250, 5, 1)
@example(np.array([[1.7e308, 5e-324], [1e-300, -1e308]]), 4, 0)
def test_spectral_norm_upper_with_binary32_levels_encloses_and_is_tight(F, levels, single_from):
    b = spectral_norm_upper(F, levels, single_from=single_from)
    lo = _reference_norm_lower(F)
    hi = _upper(b)
    assert hi >= lo
    # rank^(1/2^(L+1)) of Gram squaring; binary32's terms (γ₃₂ of ≤ 9 terms) add < 2^-17.
    factor = Fraction(min(F.shape) ** (1 / 2 ** (levels + 1))) * (1 + Fraction(1, 2**17))
    assert hi <= factor * lo + Fraction(2.0**-1000)


def test_binary32_levels_fall_back_to_binary64_on_flat_spectra():
    # An exactly orthogonal 1024×1024 matrix (all σ = 1): binary32's γ_k‖A‖_F² is ≈ 6 %
    # of ‖A‖₂² here, so the all-binary64 chain must be computed too and the minimum returned.
    Q = np.array([[1.0]])
    while Q.shape[0] < 1024:
        Q = np.block([[Q, Q], [Q, -Q]])
    Q /= 32.0
    b32 = _upper(spectral_norm_upper(Q, 3, single_from=0))
    b64 = _upper(spectral_norm_upper(Q, 3))
    assert 1 <= b32 == b64 <= Fraction(1024 ** (1 / 16)) * (1 + Fraction(1, 10**9))


def test_spectral_norm_upper_rejects_negative_levels():
    with pytest.raises(ValueError, match="levels"):
        spectral_norm_upper(np.eye(2), -1)
    with pytest.raises(ValueError, match="single_from"):
        spectral_norm_upper(np.eye(2), 3, single_from=-1)
    assert 2 <= _upper(spectral_norm_upper(2 * np.eye(3), 0)) <= 2 * Fraction(3 ** 0.5) * (1 + Fraction(1, 10**9))


# ------------------------------------ blocking: many blocks, zero first blocks


@pytest.mark.parametrize("shape", [(9, 23), (23, 9), (12, 12)])
@pytest.mark.parametrize("block_entries, chunk", [(1, 1), (40, 2), (100, 5), (10**6, 4)])
def test_blocked_kernels_with_many_blocks(monkeypatch, shape, block_entries, chunk):
    # Tiny blocks: the Gram deviation accumulates its SYRK/GEMM over many row blocks, the
    # residual its products (float ones in inner-dimension chunks) and Lemma T6′'s first
    # level R̂R̂ᵀ over many column blocks
    # (after transposing the problem when m > n); the first blocks of R̂ are zero, so
    # the power-of-two scaling of level 0 comes from a later block.
    import certbound.enclose.tight as tight_mod

    monkeypatch.setattr(tight_mod, "_BLOCK_ENTRIES", block_entries)
    monkeypatch.setattr(tight_mod, "_CHUNK", chunk)  # the residual's float GEMMs in inner chunks
    rng = np.random.default_rng(block_entries + 7 * shape[0])
    W = rng.uniform(-1, 1, shape)
    X, s, Y = _svd_factors(W)
    for F in (X, Y):
        _check_bound(gram_deviation_bound_tight(F), _exact_gram_deviation(F), F.shape[1], _gram_tol(F))
    # A residual that is exactly zero on the first rows of Y (columns of W): W is
    # rebuilt there exactly from dyadic factors, and perturbed by 2^-30·noise elsewhere.
    m, n = shape
    r = min(shape)
    Xd = np.ldexp(np.round(X * 2**10), -10)
    Yd = np.ldexp(np.round(Y * 2**10), -10)
    sd = np.ldexp(np.round(s * 2**10), -10)
    Wd = (Xd * sd) @ Yd.T  # ≤ 30 significant bits per product, short sums: exact
    Wd[:, n // 2 :] += rng.uniform(-1, 1, (m, n - n // 2)) * 2.0**-30
    b = residual_norm_bound_tight(Wd, Xd, sd, Yd)
    _check_bound(b, _exact_residual(Wd, Xd, sd, Yd), r, _res_tol(Wd, Xd, sd, Yd))
    exact_part = _exact_residual(Wd[:, : n // 2], Xd, sd, Yd[: n // 2])
    assert all(exact_part[i, j] == 0 for i in range(m) for j in range(n // 2))
    b = residual_norm_bound_tight(W, X, s, Y)
    _check_bound(b, _exact_residual(W, X, s, Y), r, _res_tol(W, X, s, Y))
