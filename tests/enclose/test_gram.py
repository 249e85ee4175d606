"""Gram-mode certificate: inclusion against exact spectra and mpmath references.

Nothing here compares against numbers produced by the code under test: true
singular values come from exactly built matrices (Hadamard factors checked
with Fractions) or mpmath at ≥ 256 bits; the bounds β, ‖|W||W|ᵀ‖₂ and
Theorem G's arithmetic are re-derived independently.
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from flint import arb
from hypothesis import example, given, strategies as st

import certbound.enclose.gram as gram_mod
import certbound.enclose.svd as svd_mod
from certbound.ball import lower_fraction, upper_fraction
from certbound.enclose import CertificateWarning
from certbound.enclose.gram import (
    abs_gram_norm_upper,
    certify_gram,
    enclose_singular_values_gram,
    rounded_gram,
    theorem_g_intervals,
)
from tests.enclose.reference import (
    built_exactly,
    contains_value,
    fraction_rank,
    hadamard_orthogonal,
    mp_singular_values,
)


def assert_encloses(enc, true_values):
    k = min(enc.shape)
    assert len(enc.sigma) == k == len(enc.lower) == len(enc.upper)
    assert np.all(enc.lower >= 0)
    assert np.all(np.diff(enc.lower) <= 0) and np.all(np.diff(enc.upper) <= 0)
    for i, t in enumerate(true_values):
        assert contains_value(enc.lower[i], enc.upper[i], t), (i, enc.lower[i], t, enc.upper[i])
        if isinstance(t, (float, Fraction)):
            f = Fraction(t)
            assert lower_fraction(enc.sigma[i]) <= f <= upper_fraction(enc.sigma[i]), (i, t)
    for i in range(len(true_values), k):
        assert enc.lower[i] == 0.0


# --------------------------------------------------------------------------- exact spectra


@st.composite
def exact_spectrum_matrices(draw):
    """(W, σ, scale) with W = Q_m[:, :r] diag(σ) Q_n[:, :r]ᵀ exactly in float64."""
    m = draw(st.sampled_from([1, 4, 16, 64]))
    n = draw(st.sampled_from([1, 4, 16]))
    r = draw(st.integers(0, min(m, n)))
    span = draw(st.sampled_from([4, 20, 40]))
    mant = draw(st.lists(st.integers(1, 15), min_size=r, max_size=r))
    expo = draw(st.lists(st.integers(-span, 0), min_size=r, max_size=r))
    if draw(st.booleans()) and r:  # one cluster of equal values
        mant, expo = [mant[0]] * r, [expo[0]] * r
    sigma = np.sort(np.ldexp(np.array(mant, dtype=float), np.array(expo, dtype=np.int64)))[::-1]
    scale = draw(st.sampled_from([0, 900, -960, 30]))
    Qm, Qn = hadamard_orthogonal(m), hadamard_orthogonal(n)
    W = (Qm[:, :r] * sigma) @ Qn[:, :r].T if r else np.zeros((m, n))
    if not built_exactly(Qm, sigma, Qn, W):
        W = None
    return W, sigma, scale


@given(exact_spectrum_matrices(), st.booleans())
def test_exact_spectrum_is_enclosed(case, transpose):
    W, sigma, scale = case
    if W is None:
        return  # construction not exact (rare); the mpmath tests cover such W
    if transpose:
        W = W.T
    W = np.ldexp(W, scale)
    true = [float(np.ldexp(s, scale)) for s in sigma]  # exact: powers of two times small integers
    enc = enclose_singular_values_gram(W)
    assert enc.certified and enc.mode in ("gram", "zero")
    assert_encloses(enc, true)
    assert enc.rank.lower <= len(sigma) <= enc.rank.upper


def test_hadamard_graded_clusters_tall_and_wide():
    Qm, Qn = hadamard_orthogonal(64), hadamard_orthogonal(16)
    sigma = np.sort(np.ldexp(1.0, -np.repeat(np.arange(0, 24, 6), 4)))[::-1]  # 1 … 2^-18, clusters of 4
    W = (Qm[:, :16] * sigma) @ Qn.T  # 64×16, exact
    assert built_exactly(Qm, sigma, Qn, W)
    for M in (W, W.T):
        enc = enclose_singular_values_gram(M)
        assert enc.mode == "gram"
        assert_encloses(enc, list(sigma))
        # σ₁ is tight; σ = 2^-18 has σ² ≈ 2^-36, still far above the Gram rounding.
        assert enc.upper[0] - enc.lower[0] < 1e-12
        assert enc.lower[-1] > 0


# --------------------------------------------------------------------------- mpmath references


def random_cases():
    rng = np.random.default_rng(11)
    out = []
    for shape in [(1, 7), (7, 1), (5, 5), (9, 4), (4, 9), (12, 30), (30, 12)]:
        out.append(rng.standard_normal(shape))
    U = np.linalg.qr(rng.standard_normal((10, 10)))[0]
    V = np.linalg.qr(rng.standard_normal((24, 10)))[0]
    out.append((U * np.logspace(0, -16, 10)) @ V.T)  # graded, wide
    out.append(np.outer(rng.standard_normal(6), rng.standard_normal(9)))  # rank one (up to rounding)
    out.append(np.ones((6, 6)))
    Z = rng.standard_normal((6, 10))
    Z[2, :] = 0.0
    Z[:, 7] = 0.0
    out.append(Z)  # a zero row and a zero column
    out.append(rng.standard_normal((5, 8)) * 1e270)
    out.append(rng.standard_normal((8, 5)) * 1e-290)
    M = rng.standard_normal((4, 6))
    M[0, 0], M[1, 1], M[2, 3] = 1e300, 5e-324, 1e-310  # subnormals round when scaled down
    out.append(M)
    out.append(np.full((3, 5), 1e154))  # entries whose squares overflow without scaling
    return out


@pytest.mark.parametrize("index", range(len(random_cases())))
def test_random_matrices_against_mpmath(index):
    W = random_cases()[index]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc = enclose_singular_values_gram(W)
    assert enc.certified and enc.mode == "gram"
    ref = mp_singular_values(W)
    for i, t in enumerate(ref):
        assert contains_value(enc.lower[i], enc.upper[i], t), (i, enc.lower[i], t, enc.upper[i])


def test_inexact_scaling_path_is_exercised():
    W = random_cases()[-2]
    from certbound.enclose._input import power_of_two_scaling

    assert power_of_two_scaling(W)[2] is False  # the perturbation term is really used
    enc = enclose_singular_values_gram(W)
    ref = mp_singular_values(W)
    for i, t in enumerate(ref):
        assert contains_value(enc.lower[i], enc.upper[i], t)


@given(
    st.integers(1, 9),
    st.integers(1, 9),
    st.integers(0, 2**32 - 1),
    st.sampled_from(["float16", "float32", "float64"]),
    st.sampled_from([0, 60, -60]),
)
@example(1, 1, 0, "float64", 0)
@example(9, 1, 1, "float16", 0)
@example(1, 9, 2, "float32", -60)
@example(3, 3, 3, "float64", 60)
def test_stored_dtypes_against_mpmath(m, n, seed, dtype, exp):
    with np.errstate(over="ignore"):
        W = np.ldexp(np.random.default_rng(seed).standard_normal((m, n)), exp).astype(dtype)
    if not np.all(np.isfinite(W)):
        return
    enc = enclose_singular_values_gram(W)
    ref = mp_singular_values(W.astype(np.float64))  # widening is exact
    for i, t in enumerate(ref):
        assert contains_value(enc.lower[i], enc.upper[i], t)


# --------------------------------------------------------------------------- the lemmas, independently


def _mp_matrix(a):
    return mpmath.matrix([[mpmath.mpf(float(x)) for x in row] for row in np.atleast_2d(a)])


@pytest.mark.parametrize("seed", range(4))
def test_rounded_gram_beta_bounds_true_error(seed):
    rng = np.random.default_rng(seed)
    m, n = [(3, 40), (6, 20), (1, 200), (8, 8)][seed]
    Ws = rng.standard_normal((m, n)) * (rng.random((m, n)) < 0.7)
    Ws /= np.max(np.abs(Ws))  # max entry 1, as after scaling
    G, beta = rounded_gram(Ws)
    assert np.array_equal(G, G.T)
    with mpmath.workprec(300):
        M = _mp_matrix(Ws)
        D = _mp_matrix(G) - M * M.T  # exact: 300 bits hold every product and sum
        ev = mpmath.eigsy(D, eigvals_only=True)
        true_norm = max(abs(x) for x in ev)
        assert true_norm <= mpmath.mpf(upper_fraction(beta).numerator) / upper_fraction(beta).denominator


def test_rounded_gram_beta_covers_a_perturbed_matrix():
    """β with extra_residual d bounds ‖Ĝ − (Ws+Δ)(Ws+Δ)ᵀ‖₂ for any ‖Δ‖₂ ≤ d (Lemma G.3)."""
    rng = np.random.default_rng(9)
    Ws = rng.standard_normal((4, 10))
    Ws /= np.max(np.abs(Ws))
    Delta = rng.standard_normal((4, 10))
    Delta *= 0.25 / np.linalg.norm(Delta, 2)
    d = 0.25 * (1 + 1e-12)
    G, beta = rounded_gram(Ws, arb(d))
    _, beta0 = rounded_gram(Ws)
    assert upper_fraction(beta) > upper_fraction(beta0)
    with mpmath.workprec(300):
        M = _mp_matrix(Ws) + _mp_matrix(Delta)
        true_norm = max(abs(x) for x in mpmath.eigsy(_mp_matrix(G) - M * M.T, eigvals_only=True))
        assert true_norm <= mpmath.mpf(upper_fraction(beta).numerator) / upper_fraction(beta).denominator
        # Without the perturbation term the bound would be far too small here.
        assert true_norm > mpmath.mpf(upper_fraction(beta0).numerator) / upper_fraction(beta0).denominator


@pytest.mark.parametrize("seed", range(5))
def test_abs_gram_norm_upper_bounds_spectral_radius(seed):
    rng = np.random.default_rng(100 + seed)
    m, n = [(4, 9), (7, 3), (1, 5), (6, 6), (5, 12)][seed]
    Ws = rng.standard_normal((m, n))
    if seed == 3:
        Ws[1, :] = 0.0  # zero row: x stays positive, the ratio for that row is 0
    b = abs_gram_norm_upper(Ws)
    with mpmath.workprec(256):
        A = _mp_matrix(np.abs(Ws))
        N = A * A.T
        rho = max(abs(x) for x in mpmath.eigsy(N, eigvals_only=True))
        assert rho <= mpmath.mpf(upper_fraction(b).numerator) / upper_fraction(b).denominator
        # The power iteration is never worse than ‖N‖_∞ (x = 𝟙), up to the final rounding.
        ninf = max(sum(N[i, j] for j in range(m)) for i in range(m))
        assert mpmath.mpf(lower_fraction(b).numerator) / lower_fraction(b).denominator <= ninf * (1 + 1e-12)


def _fraction_theorem_g(lam, a: Fraction, c: Fraction):
    """Independent Theorem G: σᵢ² ∈ [min_θ θλ₍ᵢ₎ − c, max_θ θλ₍ᵢ₎ + c], θ ∈ [1−a, 1+a]."""
    out = []
    for li in sorted((Fraction(float(x)) for x in lam), reverse=True):
        ends = [li * (1 - a), li * (1 + a)]  # θλ is linear in θ: extremes at the ends
        out.append((min(ends) - c, max(ends) + c))
    return out


@given(
    st.lists(st.floats(-8, 8, allow_nan=False, width=32), min_size=1, max_size=6),
    st.sampled_from([0.0, 2.0**-40, 0.125, 0.5]),
    st.sampled_from([0.0, 2.0**-30, 0.25, 3.0]),
    st.sampled_from([0.0, 2.0**-50, 1.0]),
    st.sampled_from([0, 7, -3]),
)
@example([-0.5, 2.0], 0.25, 0.0, 1.0, 0)
@example([-0.0, 0.0], 0.0, 0.0, 0.0, 0)
def test_theorem_g_intervals_match_fraction_rederivation(lam, a, b, e, sc):
    res = theorem_g_intervals(np.array(lam), arb(a), arb(b), arb(e), sc)
    ref = _fraction_theorem_g(lam, Fraction(a), Fraction(b) + Fraction(e))
    if any(hi < 0 for _, hi in ref):
        assert res is None  # inconsistent data: refused, not guessed
        return
    assert res is not None and len(res) == len(ref)
    two = Fraction(2) ** sc
    for ball, (lo2, hi2) in zip(res, ref):
        lo_b, hi_b = lower_fraction(ball), upper_fraction(ball)
        # Outward: the ball contains [√max(lo2,0), √hi2]·2^sc; squares compared exactly.
        # (A ball [0, h] is stored as mid ± rad, so its lower end may dip just below 0.)
        assert max(lo_b, Fraction(0)) ** 2 <= max(lo2, Fraction(0)) * two**2
        assert (hi_b / two) ** 2 >= hi2
        # …and not absurdly wider: 128-bit evaluation, plus the ball's radius, which Arb
        # stores with a short mantissa (so the ends move by a tiny fraction of the width).
        h, w = hi_b / two, (hi_b - lo_b) / two
        assert h**2 <= hi2 * (1 + Fraction(1, 2**100)) + 4 * h * w / 2**20 + Fraction(1, 2**200)
        assert lo_b >= -w * two / 2**20


def test_theorem_g_refuses_bad_alpha_and_infinite_bounds():
    lam = np.array([1.0])
    assert theorem_g_intervals(lam, arb(1), arb(0), arb(0)) is None
    assert theorem_g_intervals(lam, arb(0), arb.pos_inf(), arb(0)) is None
    assert theorem_g_intervals(lam, arb(0), arb(0), arb("nan")) is None


def test_theorem_g_with_poor_eigenvectors_is_still_sound():
    """Deliberately bad U, λ (α ≈ 0.05, negative λ): bounds computed in mpmath, not by the code."""
    rng = np.random.default_rng(5)
    W = np.outer(rng.standard_normal(5), rng.standard_normal(8))
    W[0] += rng.standard_normal(8)  # rank 2: three zero eigenvalues of WWᵀ
    lam_true, U0 = np.linalg.eigh(W @ W.T)
    U = U0 + 0.01 * rng.standard_normal((5, 5))
    lam = lam_true - 0.3  # the small ones become negative
    with mpmath.workprec(300):
        Um, Wm = _mp_matrix(U), _mp_matrix(W)
        G = Wm * Wm.T
        alpha = max(abs(x) for x in mpmath.eigsy(Um.T * Um - mpmath.eye(5), eigvals_only=True))
        L = mpmath.diag([mpmath.mpf(float(x)) for x in lam])
        e = max(abs(x) for x in mpmath.eigsy(G - Um * L * Um.T, eigvals_only=True))
        a_up = arb(float(mpmath.nstr(alpha * (1 + mpmath.mpf(2) ** -40), 20)))
        e_up = arb(float(mpmath.nstr(e * (1 + mpmath.mpf(2) ** -40), 20)))
    assert 0.01 < float(alpha) < 0.5
    res = theorem_g_intervals(lam, a_up, arb(0), e_up)  # Ĝ = G exactly here: β = 0
    assert res is not None
    ref = mp_singular_values(W)
    for ball, t in zip(res, ref):
        assert lower_fraction(ball) <= Fraction(str(mpmath.nstr(t, 60))) * (1 + Fraction(1, 10**40))
        assert Fraction(str(mpmath.nstr(t, 60))) * (1 - Fraction(1, 10**40)) <= upper_fraction(ball)


# --------------------------------------------------------------------------- failure and fallback


def _no_tridiagonal_route(monkeypatch):
    """Make Theorem G-T's LAPACK step fail, so that certify_gram takes Theorem G's eigh route."""
    monkeypatch.setattr(gram_mod.tridiagonal, "householder_tridiagonal", lambda G: None)


def test_tridiagonal_failure_falls_back_to_the_eigh_route(monkeypatch):
    _no_tridiagonal_route(monkeypatch)
    Ws = np.diag([1.5, 1.0, 0.5])
    res = certify_gram(Ws, arb(0), 0)
    assert res is not None and res[4] == "gram"
    assert enclose_singular_values_gram(Ws).mode == "gram"
    assert_encloses(enclose_singular_values_gram(Ws), [1.5, 1.0, 0.5])


def test_bad_eigenvectors_fall_back_to_fast_mode(monkeypatch):
    _no_tridiagonal_route(monkeypatch)
    monkeypatch.setattr(gram_mod, "_float_eigh", lambda G: (np.ones(G.shape[0]), 3 * np.ones(G.shape)))
    Ws = np.diag([1.5, 1.0, 0.5])
    assert certify_gram(Ws, arb(0), 0) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc = enclose_singular_values_gram(Ws)
    assert enc.certified and enc.mode == "fast"
    assert_encloses(enc, [1.5, 1.0, 0.5])


@pytest.mark.parametrize("failure", ["raise", "nan"])
def test_lapack_failures_return_none(monkeypatch, failure):
    def broken(G, **kwargs):
        if failure == "raise":
            raise np.linalg.LinAlgError("no convergence")
        return np.full(G.shape[0], np.nan), np.eye(G.shape[0])

    monkeypatch.setattr(gram_mod.scipy.linalg, "eigh", broken)
    monkeypatch.setattr(gram_mod, "TRIDIAGONAL_MIN_ORDER", 1)
    assert certify_gram(np.eye(2), arb(0), 0)[4] == "gram-tri"  # Theorem G-T does not use eigh
    _no_tridiagonal_route(monkeypatch)
    assert certify_gram(np.eye(2), arb(0), 0) is None


def test_everything_failing_gives_trivial_enclosure(monkeypatch):
    _no_tridiagonal_route(monkeypatch)
    monkeypatch.setattr(gram_mod, "_float_eigh", lambda G: None)
    monkeypatch.setattr(svd_mod, "_float_svd", lambda Ws, driver, overwrite=False: None)
    with pytest.warns(CertificateWarning, match="trivial enclosure"):
        enc = enclose_singular_values_gram(np.eye(3) * 2)
    assert not enc.certified and enc.mode == "trivial"
    assert np.all(enc.lower == 0) and np.all(np.isinf(enc.upper))


# --------------------------------------------------------------------------- fields, options, inputs


def test_certificate_fields_scale_in_squared_units():
    rng = np.random.default_rng(2)
    W = rng.standard_normal((6, 20))
    a = enclose_singular_values_gram(W)
    b = enclose_singular_values_gram(np.ldexp(W, 100))
    assert a.mode == b.mode == "gram"
    assert upper_fraction(b.beta) == upper_fraction(a.beta) * Fraction(2) ** 200
    assert upper_fraction(b.residual) == upper_fraction(a.residual) * Fraction(2) ** 200
    assert upper_fraction(b.alpha) == upper_fraction(a.alpha)
    for x, y in zip(a.sigma, b.sigma):
        assert upper_fraction(y) == upper_fraction(x) * Fraction(2) ** 100


def test_tall_and_wide_give_the_same_certificate():
    W = np.random.default_rng(4).standard_normal((5, 17))
    a, b = enclose_singular_values_gram(W), enclose_singular_values_gram(W.T)
    assert a.shape == (5, 17) and b.shape == (17, 5)
    assert np.array_equal(a.lower, b.lower) and np.array_equal(a.upper, b.upper)


def test_exact_rank_option_sets_exact_zeros():
    rng = np.random.default_rng(5)
    W = rng.integers(-3, 4, size=(7, 2)).astype(float) @ rng.integers(-3, 4, size=(2, 9)).astype(float)
    enc = enclose_singular_values_gram(W, exact_rank=True)
    r = fraction_rank(W)
    assert enc.rank.lower == enc.rank.upper == r
    assert np.all(enc.upper[r:] == 0)
    ref = mp_singular_values(W)
    for i in range(r):
        assert contains_value(enc.lower[i], enc.upper[i], ref[i])


def test_widths_are_reasonable_for_wide_gaussian():
    W = np.random.default_rng(3).standard_normal((60, 240))
    enc = enclose_singular_values_gram(W)
    s = np.linalg.svd(W, compute_uv=False)
    assert enc.mode == "gram"
    assert np.median((enc.upper - enc.lower) / s) < 1e-10


# --------------------------------------------------------------------------- mode auto: small matrices


def _mp_sigma_via_gram(W, prec=200):
    """σᵢ(W), descending: square roots of mpmath's eigenvalues of the small side's Gram matrix, formed from the
    exact floats at ``prec`` bits (4–5× faster than mpmath's SVD of a 32×500 matrix; relative error ~2^-190)."""
    with mpmath.workprec(prec):
        M = mpmath.matrix(np.asarray(W, dtype=np.float64).tolist())
        G = M * M.T if M.rows <= M.cols else M.T * M
        ev = mpmath.eigsy(G, eigvals_only=True)
        return sorted((mpmath.sqrt(max(ev[i], 0)) for i in range(G.rows)), reverse=True)


def _decaying(m, n, p, seed=0):
    rng = np.random.default_rng(seed)
    k = min(m, n)
    U = np.linalg.qr(rng.standard_normal((m, k)))[0]
    V = np.linalg.qr(rng.standard_normal((n, k)))[0]
    return (U * (3.0 * np.arange(1, k + 1) ** -p)) @ V.T


@pytest.mark.parametrize("shape", [(8, 8), (16, 64), (32, 32), (64, 32), (32, 500), (64, 64)])
def test_auto_on_small_matrices_is_fast_intersected_with_theorem_g(shape):
    # m·n·min(m, n) ≤ AUTO_SMALL_WORK: both certificates run although Theorem G alone meets τ, and each end is
    # the better of the two (so never wider than either); the balls contain mpmath's singular values.
    W = _decaying(*shape, p=1.5)
    assert svd_mod._auto_small(W.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = svd_mod.enclose_singular_values(W, mode="gram")
        f = svd_mod.enclose_singular_values(W, mode="fast")
        a = svd_mod.enclose_singular_values(W, mode="auto")
    assert svd_mod.meets_width_target(list(g.sigma))  # Theorem G alone would have been accepted before
    assert a.mode == "fast+" + g.mode
    assert np.array_equal(a.lower, np.maximum(f.lower, g.lower))
    assert np.array_equal(a.upper, np.minimum(f.upper, g.upper))
    assert np.any(g.upper - g.lower > a.upper - a.lower)  # narrower than Theorem G alone somewhere
    for i, t in enumerate(_mp_sigma_via_gram(W)):
        assert contains_value(a.lower[i], a.upper[i], t), (i, a.lower[i], t, a.upper[i])
        assert lower_fraction(a.sigma[i]) <= Fraction(a.lower[i]) and Fraction(a.upper[i]) <= upper_fraction(a.sigma[i])


def test_auto_above_the_small_work_keeps_theorem_g_alone():
    W = _decaying(64, 2000, p=1.5)
    assert not svd_mod._auto_small(W.shape) and not svd_mod._auto_small(W.T.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = svd_mod.enclose_singular_values(W, mode="auto")
    assert a.mode == "gram"
    assert svd_mod._auto_small((32, 512)) and not svd_mod._auto_small((32, 513))  # 32·512·32 = 2¹⁹


def test_intersect_ends_keeps_the_better_end_and_refuses_disjoint():
    def balls(lo, hi):
        out = svd_mod._BallsWithEnds(arb(x).union(arb(y)) for x, y in zip(lo, hi))
        out.lower, out.upper = np.array(lo), np.array(hi)
        return out

    f = balls([2.0, 1.0, 0.0], [2.5, 1.5, 0.5])
    g = balls([2.1, 0.5, 0.0], [2.2, 1.7, 0.75])
    out = svd_mod._intersect_ends(f, g)
    assert out.lower.tolist() == [2.1, 1.0, 0.0] and out.upper.tolist() == [2.2, 1.5, 0.5]
    for b, lo, hi in zip(out, out.lower, out.upper):  # the balls hold their ends (a hull's radius may round up)
        assert lower_fraction(b) <= Fraction(lo) and Fraction(hi) <= upper_fraction(b)
    # Disjoint enclosures cannot both be valid: the fast one (first) is kept there.
    out = svd_mod._intersect_ends(balls([1.0], [2.0]), balls([3.0], [4.0]))
    assert out.lower.tolist() == [1.0] and out.upper.tolist() == [2.0]


@pytest.mark.parametrize("k", [1, 3, 128, 1536, 2**20])
def test_inflate_in_place_is_inflate_bit_for_bit(k):
    from certbound.enclose import fperror

    rng = np.random.default_rng(k)
    v = np.concatenate([rng.random(50) * 10.0 ** rng.integers(-300, 300, 50), [0.0, 5e-324, 1e308, 1.7e308]])
    with np.errstate(over="ignore"):
        expected = fperror._inflate(v.copy(), k)
        got = fperror._inflate_in_place(w := v.copy(), k)
    assert got is w and np.array_equal(got, expected)
    # and it bounds the exact sum model of Lemma 2.2 (v an exact k-term value here): (v + kη)/(1 − γ_k) ≤ result
    u = Fraction(1, 2**53)
    for x, y in zip(v.tolist()[:10], got.tolist()[:10]):
        assert (Fraction(x) + k * Fraction(1, 2**1074)) / (1 - k * u / (1 - k * u)) <= Fraction(y)
