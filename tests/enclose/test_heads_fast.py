"""The lean per-head path: Lemma 8.1's c₀ in floats, Lemma 3.1's one-chain bound, Lemma 11.1 with any inverse.

References share no code with what they test: exact Fractions for c₀ and for
the chain bounds, mpmath at 320 bits for spectral norms and for
``‖QᵀQ − I‖₂`` with ``Q = A R⁻¹`` formed exactly from the float R.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest

from certbound.enclose import CertificateWarning, _stacked
from certbound.enclose import product as P
from certbound.enclose import quantities as Q
from certbound.enclose.product import enclose_singular_values_of_products
from tests.enclose.reference import contains_value, mp_product_singular_values

_U = Fraction(1, 2**53)
_ETA = Fraction(1, 2**1074)


def _gamma(k: int) -> Fraction:
    return k * _U / (1 - k * _U)


def _exact_c0(m: int, d: int, beta: float) -> Fraction:
    b, g = Fraction(beta), _gamma(d)
    return 2 * m * _ETA * (d * b) ** 2 * (1 + g) ** 2 + 2 * d * d * b * _ETA * (1 + g) + 2 * d * _ETA


@pytest.mark.parametrize("m,d", [(1, 1), (7, 3), (384, 32), (768, 64), (4096, 128)])
def test_lemma81_c0_upper_bounds_the_exact_c0_tightly(m, d):
    betas = np.array([0.0, 5e-324, 2.0**-1000, 2.0**-600, 1e-300, 2.0**-200, 0.37, 1.0, 1.9999999999999998,
                      2.0**200, 1e150])
    got = Q._lemma81_c0_upper(m, d, betas)
    for b, c in zip(betas.tolist(), got.tolist()):
        exact = _exact_c0(m, d, b)
        assert np.isfinite(c) and Fraction(c) >= exact, (m, d, b)
        # a few ulps above (the last step's result is subnormal: its ulp is η)
        assert Fraction(c) <= exact * (1 + Fraction(1, 2**45)) + 2 * _ETA, (m, d, b)
    assert np.isinf(Q._lemma81_c0_upper(8, 4, np.array([1e300]))[0])  # overflow is reported, not hidden


def _exact_abs_gram_inf_norm(X: np.ndarray) -> Fraction:
    F = [[abs(Fraction(float(x))) for x in row] for row in X]
    m, r = X.shape
    v = [sum(row, Fraction(0)) for row in F]
    return max(sum((F[i][j] * v[i] for i in range(m)), Fraction(0)) for j in range(r))


@pytest.mark.parametrize("seed", range(3))
def test_abs_gram_norm2_upper_bounds_both_norms_and_never_exceeds_the_two_chain_bound(seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((4, 13, 5))
    X[1] = np.abs(X[1])  # nonnegative: ‖|X|ᵀ|X|‖₂ = ‖|X|ᵀ|X|𝟙‖-ish, the bound is nearly attained
    X[2] *= 2.0**-1060  # subnormal entries
    X[3, :, 0] = 0.0
    aX = np.abs(X)
    got = _stacked.abs_gram_norm2_upper(aX)
    old = _stacked.abs_product_norm2_upper(aX.transpose(0, 2, 1), None, aX)
    for j in range(4):
        exact_inf = _exact_abs_gram_inf_norm(X[j])
        assert Fraction(float(got[j])) >= exact_inf  # ≥ ‖N‖_∞ exactly, hence ≥ ‖N‖₂
        if exact_inf > 2**30 * _ETA:
            assert Fraction(float(got[j])) <= exact_inf * (1 + Fraction(1, 2**40))
        with mpmath.workprec(320):
            N = mpmath.matrix(aX[j].T.tolist()) * mpmath.matrix(aX[j].tolist())
            assert max(mpmath.svd_r(N, compute_uv=False)) <= mpmath.mpf(float(got[j]))
        assert got[j] <= old[j]
    with np.errstate(over="ignore"):
        assert np.isinf(_stacked.abs_gram_norm2_upper(np.full((1, 3, 2), 1e300)))[0]


def _exact_alpha(A: np.ndarray, R: np.ndarray) -> mpmath.mpf:
    """‖QᵀQ − I‖₂ for Q = A R⁻¹ exactly (R the float matrix returned), at 320 bits."""
    with mpmath.workprec(320):
        Am, Rm = mpmath.matrix(A.tolist()), mpmath.matrix(R.tolist())
        Qm = Am * mpmath.inverse(Rm)
        D = Qm.T * Qm - mpmath.eye(R.shape[0])
        return max(abs(x) for x in mpmath.eig(D, left=False, right=False))


@pytest.mark.parametrize("inverse", ["lapack", "perturbed", "garbage", "fails"])
def test_gram_factor_alpha_is_valid_for_any_inverse(inverse, monkeypatch):
    """Lemma 11.1 holds for any X ≈ R⁻¹: a bad X may only make α large (or ∞), never wrong."""
    rng = np.random.default_rng(4)
    S = rng.standard_normal((3, 20, 4))
    S[2, :, 3] = S[2, :, 0] * (1 + 2.0**-30)  # ill-conditioned slice
    real = P._dtrtri
    if inverse != "lapack":
        def fake(Rj, lower=0):
            X, info = real(Rj, lower=lower)
            if inverse == "perturbed":
                return X * (1 + 1e-6), info
            if inverse == "garbage":
                return rng.standard_normal(X.shape), info
            return X, 1
        monkeypatch.setattr(P, "_dtrtri", fake)
    R, alpha = P._gram_factor_stack(S)
    for j in range(3):
        assert np.all(np.tril(R[j], -1) == 0)
        if np.isfinite(alpha[j]):
            assert _exact_alpha(S[j], R[j]) <= mpmath.mpf(float(alpha[j]))
    if inverse == "fails":
        assert np.all(np.isinf(alpha))
    if inverse == "lapack":
        assert np.all(alpha[:2] < 1e-12)
    if inverse == "garbage":
        assert not np.any(alpha < 1e-12)  # δ ≥ 1 or a large ‖R⁻¹‖ bound: never a small wrong α


def test_gram_factor_alpha_covers_a_perturbed_cholesky_factor(monkeypatch):
    """A Cholesky factor off in its last diagonal entry: QᵀQ − I is then ≈ 2·10⁻⁶ in the weakest direction.

    Lemma 11.1's bound is nearly attained there (a small σ_min, so ‖R⁻¹‖² ≫ ‖R⁻¹‖): α must cover the exact
    deviation although it is far above the rounding level.
    """
    rng = np.random.default_rng(6)
    S = rng.standard_normal((2, 30, 4))
    S[:, :, 3] = S[:, :, 1] + 2.0**-12 * S[:, :, 3]  # σ_min ≈ 2⁻¹²·√30
    real = np.linalg.cholesky

    def perturbed(G):
        L = real(G).copy()
        L[..., -1, -1] *= 1 + 1e-6
        return L
    monkeypatch.setattr(np.linalg, "cholesky", perturbed)
    R, alpha = P._gram_factor_stack(S)
    for j in range(2):
        exact = _exact_alpha(S[j], R[j])
        assert exact > 1e-6 and exact <= mpmath.mpf(float(alpha[j])) <= 10 * exact


def test_products_contain_exact_spectra_with_any_inverse(monkeypatch):
    """The whole Lemma P-G route with a perturbed inverse: still inside the exact spectra (mpmath)."""
    real = P._dtrtri
    monkeypatch.setattr(P, "_dtrtri", lambda Rj, lower=0: (real(Rj, lower=lower)[0] * (1 - 1e-9), 0))
    rng = np.random.default_rng(9)
    As = [rng.standard_normal((24, 4)) for _ in range(3)]
    Bs = [rng.standard_normal((24, 4)) for _ in range(3)]
    for enc, A, B in zip(enclose_singular_values_of_products(As, Bs, mode="auto"), As, Bs):
        assert enc.certified
        ref = mp_product_singular_values(A, B)
        for i, t in enumerate(ref[:6]):
            assert contains_value(enc.lower[i], enc.upper[i], t if i < 4 else 0)


def test_finish_stack_equals_one_by_one_finish():
    """The vectorised finishing gives exactly the per-product _finish results (normal and subnormal scales)."""
    rng = np.random.default_rng(2)
    lo = np.sort(rng.random((4, 3)), axis=1)[:, ::-1] * 1.5
    hi = lo * (1 + 2.0**-40)
    lo[1, 2] = 0.0
    t = np.array([0, -1070, 40, -3])  # slice 1 leaves the normal range: the Arb path
    al, be, rs = rng.random(4) * 1e-12, rng.random(4) * 1e-12, rng.random(4) * 1e-14
    got = P._finish_stack((9, 7), 7, 3, lo, hi, t, al, be, rs)
    for j, g in enumerate(got):
        ref = P._finish((9, 7), 7, 3, lo[j], hi[j], int(t[j]), float(al[j]), float(be[j]), float(rs[j]))
        assert np.array_equal(g.lower, ref.lower) and np.array_equal(g.upper, ref.upper)
        assert all(a.mid() == b.mid() and a.rad() == b.rad() for a, b in zip(g.sigma, ref.sigma))
        assert g.rank == ref.rank and g.mode == ref.mode
        assert g.residual.mid() == ref.residual.mid() and g.residual.rad() == ref.residual.rad()
    hi[3, 0] = np.inf
    with pytest.warns(CertificateWarning):
        assert not P._finish_stack((9, 7), 7, 3, lo, hi, t, al, be, rs)[3].certified


def _exact_norm_21(A: np.ndarray, B: np.ndarray) -> mpmath.mpf:
    FA = [[Fraction(float(x)) for x in row] for row in A]
    FB = [[Fraction(float(x)) for x in row] for row in B]
    with mpmath.workprec(400):
        total = mpmath.mpf(0)
        for bj in FB:
            col = [sum((a * b for a, b in zip(row, bj)), Fraction(0)) for row in FA]
            c = sum((x * x for x in col), Fraction(0))
            total += mpmath.sqrt(mpmath.mpf(c.numerator) / c.denominator)
    return total


@pytest.mark.parametrize("scale", [1.0, 2.0**10, 2.0**-10])
def test_batched_norm_21_contains_exact_value_under_cancellation(scale):
    """Columns A b_j much shorter than |A||b_j|: t_j = b_jᵀĜb_j cancels, and only Lemma 8.1's e_j covers the error.

    At the scales 2^±10 of A (B scaled inversely) the terms of e_j that carry ‖|A|ᵀ|A|‖₂ differ from those that do not.
    """
    rng = np.random.default_rng(12)
    As, Bs = [], []
    for k in range(4):
        a, c = rng.standard_normal(12), rng.standard_normal(12)
        A = np.stack([a, a + 2.0 ** (-18 - 4 * k) * c, rng.standard_normal(12)], axis=1)
        B = np.stack([np.ones(10), -np.ones(10) + 2.0**-40 * rng.standard_normal(10), 2.0**-30 * rng.standard_normal(10)],
                     axis=1)
        As.append(A * scale)
        Bs.append(B / scale)
    got = Q.norm_21_of_products(As, Bs)
    for A, B, g in zip(As, Bs, got):
        v = _exact_norm_21(A, B)
        lo, hi = Q.lower_fraction(g), Q.upper_fraction(g)
        with mpmath.workprec(400):
            assert mpmath.mpf(lo.numerator) / lo.denominator <= v <= mpmath.mpf(hi.numerator) / hi.denominator
        single = Q.norm_21_of_product(A, B)
        assert Q.lower_fraction(single) == lo and Q.upper_fraction(single) == hi


def test_finish_lower_end_below_the_exact_scaled_end_at_the_normal_boundary():
    """lo = 1 − 2⁻⁵³, t = −1022: ldexp rounds the tie 2⁻¹⁰²² − 2⁻¹⁰⁷⁵ up to 2⁻¹⁰²²; the lower end must not."""
    lo = np.array([1.5, 1.0 - 2.0**-53])  # the first end is normal after scaling: only the tie decides
    hi = np.array([1.75, 1.0])
    exact = [Fraction(float(x)) * Fraction(1, 2**1022) for x in lo]
    one = P._finish((5, 4), 4, 2, lo, hi, -1022, 0.0, 0.0, 0.0)
    (many,) = P._finish_stack((5, 4), 4, 2, lo[None], hi[None], np.array([-1022]), np.zeros(1), np.zeros(1),
                              np.zeros(1))
    for enc in (one, many):
        for i in range(2):
            assert Fraction(float(enc.lower[i])) <= exact[i]
            assert Q.lower_fraction(enc.sigma[i]) <= exact[i]


def test_stacked_residual_is_infinite_when_the_float_residual_is_not_finite():
    """Overflow in X·V (±∞ entries of R̂) and ∞ − ∞ (NaN entries) give +∞, slice by slice; the rest stay finite."""
    rng = np.random.default_rng(3)
    X, Y = rng.standard_normal((3, 5, 4)), rng.standard_normal((3, 6, 4))
    W = np.matmul(X, Y.transpose(0, 2, 1))
    X[1, 0, :] = 1e300
    Y[1, :, :] = 1e300  # X·Yᵀ overflows in slice 1
    W[2, 0, 0] = np.inf
    X[2, 0, :] = 1e300
    Y[2, 0, :] = 1e300  # ∞ − ∞ = NaN in slice 2
    with np.errstate(all="ignore"):
        got = _stacked.residual_norm_upper(W, X, None, Y)
    assert np.isfinite(got[0]) and np.isinf(got[1]) and np.isinf(got[2])


@pytest.mark.parametrize("mode", ["auto", "fast"])
def test_enclosures_and_norms_21_together_contain_exact_values(mode):
    """The shared route (Lemma P-G's Gram matrices for Lemma 8.1) against exact Fractions, at scales 2^k.

    Scaled factors exercise the exact scale-back of the float sums; 2^±300 and subnormal entries (inexact
    scaling) leave the shared route; a zero factor and a rank-deficient one take the other routes.
    """
    rng = np.random.default_rng(21)
    As, Bs = [], []
    for j, (ka, kb) in enumerate([(0, 0), (40, -3), (-25, 17), (300, -300), (7, 7), (0, 0), (0, 0), (-1070, 0)]):
        A = rng.standard_normal((11, 3)) * 2.0**ka
        B = rng.standard_normal((9, 3)) * 2.0**kb
        if j == 5:
            A[:, 2] = A[:, 0]  # rank-deficient: the QR route
        if j == 6:
            B = np.zeros_like(B)
        As.append(A)
        Bs.append(B)
    encs, norms = P.enclose_singular_values_and_norms_21_of_products(As, Bs, mode=mode)
    ref_encs = enclose_singular_values_of_products(As, Bs, mode=mode)
    ref_norms = Q.norm_21_of_products(As, Bs)
    for A, B, e, r, x, y in zip(As, Bs, encs, ref_encs, norms, ref_norms):
        assert np.array_equal(e.lower, r.lower) and np.array_equal(e.upper, r.upper)
        v = _exact_norm_21(A, B)
        lo, hi = Q.lower_fraction(x), Q.upper_fraction(x)
        assert lo >= 0
        with mpmath.workprec(400):
            assert mpmath.mpf(lo.numerator) / lo.denominator <= v <= mpmath.mpf(hi.numerator) / hi.denominator
        if Q._safe_scale_stack(A[None])[0] and Q._safe_scale_stack(B[None])[0]:
            # both routes evaluate Lemma 8.1 on the same floats up to exact powers of two: the same ball
            assert Q.lower_fraction(y) == lo and Q.upper_fraction(y) == hi
