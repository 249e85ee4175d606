"""Lemma 11.2 (Theorem G for a product, proofs/enclosure.md §11): ``product._certify_stack_theorem_g``.

References share no code with what they test: exact Fractions and Sylvester inertia
(tests/enclose/exact_inertia.py) for β, ε and the singular values themselves, mpmath at
400 bits where a product of two spectral norms is needed.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest

from certbound.enclose import _stacked
from certbound.enclose import product as P
from certbound.enclose.product import enclose_singular_values_of_products
from certbound.enclose.svd import meets_width_target
from tests.enclose import exact_inertia as X


def _factors(rng, h, m, n, d, ka=0, kb=0):
    As = [rng.standard_normal((m, d)) * 2.0**ka for _ in range(h)]
    Bs = [rng.standard_normal((n, d)) * 2.0**kb for _ in range(h)]
    return As, Bs


def _exact_product_gram(A, B):
    W = X.matmul(X.fractions_of(A), X.transpose(X.fractions_of(B)))
    return X.smaller_gram(W)


def _assert_contains_exactly(enc, A, B):
    gram = _exact_product_gram(A, B)
    k = min(A.shape[0], B.shape[0])
    for i in range(k):
        lo, hi = Fraction(float(enc.lower[i])), Fraction(float(enc.upper[i]))
        assert X.singular_value_in(gram, i, lo, hi), i
        assert X.singular_value_in(gram, i, X.lower_fraction(enc.sigma[i]), X.upper_fraction(enc.sigma[i])), i


def _mp_norm2(F: list) -> mpmath.mpf:
    with mpmath.workprec(400):
        M = mpmath.matrix([[mpmath.mpf(x.numerator) / x.denominator for x in row] for row in F])
        return max(abs(x) for x in mpmath.svd_r(M, compute_uv=False))


@pytest.mark.parametrize("ka,kb", [(0, 0), (40, -3), (-25, 17), (300, -300), (-500, 0)])
def test_congruence_core_beta_and_eps_bound_the_exact_quantities(ka, kb):
    """β ≥ ‖M̂ − LᵀAᵀAL‖₂ decided exactly (inertia); ε ≥ ‖AᵀA‖₂‖BᵀB − LLᵀ‖₂ (exact matrices, mpmath norms)."""
    rng = np.random.default_rng(5)
    As, Bs = _factors(rng, 3, 9, 7, 3, ka, kb)
    As[2][:, 2] = As[2][:, 0] + 2.0**-20 * As[2][:, 2]  # cancellation in LᵀĜ_AL
    SA, SB = np.stack(As), np.stack(Bs)
    GA = np.stack([F.T @ F for F in SA])
    GB = np.stack([F.T @ F for F in SB])
    nKA = _stacked.abs_gram_norm2_upper(np.abs(SA))
    nKB = _stacked.abs_gram_norm2_upper(np.abs(SB))
    L, M, beta, eps, ok = P._congruence_core(GA, GB, nKA, nKB, 9, 7)
    assert np.all(ok)
    for j in range(3):
        Af, Bf, Lf = X.fractions_of(As[j]), X.fractions_of(Bs[j]), X.fractions_of(L[j])
        GAe = X.matmul(X.transpose(Af), Af)
        target = X.matmul(X.matmul(X.transpose(Lf), GAe), Lf)
        D = [[a - b for a, b in zip(r1, r2)] for r1, r2 in zip(X.fractions_of(M[j]), target)]
        assert X.norm_at_most(D, Fraction(float(beta[j]))), j
        EB = [[a - b for a, b in zip(r1, r2)] for r1, r2 in zip(X.matmul(X.transpose(Bf), Bf),
                                                                  X.matmul(Lf, X.transpose(Lf)))]
        with mpmath.workprec(400):
            assert _mp_norm2(GAe) * _mp_norm2(EB) <= mpmath.mpf(float(eps[j])), j


def test_abs_congruence_norm_upper_bounds_the_exact_infinity_norm():
    """N ≥ ‖|L|ᵀ|G||L|‖_∞ exactly, for a G that is not symmetric (the max(|G|, |G|ᵀ) step is needed then)."""
    rng = np.random.default_rng(1)
    L = np.tril(rng.standard_normal((2, 4, 4)))
    G = rng.standard_normal((2, 4, 4))
    G[1, 0, 3] = 50.0  # |G| far from symmetric
    got = P._abs_congruence_norm_upper(np.abs(L.transpose(0, 2, 1)), G)
    for j in range(2):
        aL = [[abs(x) for x in r] for r in X.fractions_of(L[j])]
        aG = [[abs(x) for x in r] for r in X.fractions_of(G[j])]
        N = X.matmul(X.matmul(X.transpose(aL), aG), aL)
        assert Fraction(float(got[j])) >= max(sum(r) for r in N)
        assert Fraction(float(got[j])) >= max(sum(c) for c in zip(*N))  # ‖·‖₁ too: ‖·‖₂ ≤ √(‖·‖₁‖·‖_∞)


@pytest.mark.parametrize("ka,kb", [(0, 0), (40, -3), (-25, 17), (200, -200)])
def test_theorem_g_route_contains_the_exact_singular_values(ka, kb):
    """Every slice accepted by the route (well conditioned) and inside the exact spectrum (inertia), zeros past d.

    (At 2^±300 the unscaled route's Frobenius sums of the B side underflow: its bounds carry a floor ≈ √η and
    the slices go to Lemma P-G, which scales; see the public-route test below.)"""
    rng = np.random.default_rng(11)
    As, Bs = _factors(rng, 4, 8, 6, 3, ka, kb)
    encs, _, _ = P._certify_stack_theorem_g(As, Bs)
    for enc, A, B in zip(encs, As, Bs):
        assert enc is not None and enc.certified and enc.mode == "product"
        assert enc.rank.upper == 3 and enc.upper[3] == 0.0
        assert meets_width_target(list(enc.sigma))
        _assert_contains_exactly(enc, A, B)


def test_theorem_g_route_refuses_what_it_cannot_do_well():
    """Overflowing Gram matrices, subnormal factors and an ill-conditioned product leave the route (None);
    the public function still returns certified enclosures of the exact spectra (Lemma P-G or the QR route)."""
    rng = np.random.default_rng(2)
    As, Bs = _factors(rng, 4, 8, 6, 3)
    As[0] = As[0] * 2.0**520  # AᵀA overflows
    As[1] = As[1] * 2.0**-1060  # subnormal: the η terms swamp the Gram matrix
    Bs[2][:, 2] = Bs[2][:, 0] + 2.0**-30 * Bs[2][:, 2]  # σ_3/σ_1 ≈ 2⁻³⁰: Theorem G's width grows like (σ₁/σ₃)²
    encs, _, _ = P._certify_stack_theorem_g(As, Bs)
    assert encs[0] is None and encs[1] is None and encs[2] is None and encs[3] is not None
    for enc, A, B in zip(enclose_singular_values_of_products(As, Bs, mode="auto"), As, Bs):
        assert enc.certified
        _assert_contains_exactly(enc, A, B)


@pytest.mark.parametrize("bad", ["cholesky", "eigvec", "eigval", "garbage"])
def test_theorem_g_route_is_valid_for_any_factor_and_any_eigenvectors(bad, monkeypatch):
    """Lemma 11.2 holds for any L, U, λ: perturbed ones only widen the balls (the width target switched off here
    so that the wide balls are returned and checked)."""
    monkeypatch.setattr(P, "AUTO_RELATIVE_TARGET", np.inf)
    rng = np.random.default_rng(8)
    real_chol, real_eigh = np.linalg.cholesky, np.linalg.eigh

    def chol(G):
        return real_chol(G) * (1 + 1e-6)

    def eigh(M):
        lam, U = real_eigh(M)
        if bad == "eigvec":
            return lam, U * (1 + 1e-7)
        if bad == "eigval":
            return lam * (1 - 1e-6), U
        return lam, U + 1e-3 * rng.standard_normal(U.shape)

    if bad == "cholesky":
        monkeypatch.setattr(np.linalg, "cholesky", chol)
    else:
        monkeypatch.setattr(np.linalg, "eigh", eigh)
    As, Bs = _factors(rng, 3, 7, 6, 3)
    encs, _, _ = P._certify_stack_theorem_g(As, Bs)
    for enc, A, B in zip(encs, As, Bs):
        assert enc is not None
        _assert_contains_exactly(enc, A, B)
        rel = (enc.upper[0] - enc.lower[0]) / enc.upper[0]
        assert rel > 1e-9  # the perturbation shows in the width: it is not hidden


def test_public_auto_route_matches_the_stack_route_and_shares_norms():
    """mode auto takes Lemma 11.2 for well-conditioned heads; the ‖·‖_{2,1} balls are norm_21_of_products' own."""
    from certbound.enclose import quantities as Q

    rng = np.random.default_rng(3)
    As, Bs = _factors(rng, 5, 12, 10, 4)
    direct, _, _ = P._certify_stack_theorem_g(As, Bs)
    encs, norms = P.enclose_singular_values_and_norms_21_of_products(As, Bs, mode="auto")
    ref = Q.norm_21_of_products(As, Bs)
    for e, r, x, y in zip(encs, direct, norms, ref):
        assert np.array_equal(e.lower, r.lower) and np.array_equal(e.upper, r.upper)
        assert Q.lower_fraction(x) == Q.lower_fraction(y) and Q.upper_fraction(x) == Q.upper_fraction(y)


@pytest.mark.parametrize("ka,kb", [(300, -300), (-300, 300), (600, -600), (-540, 0)])
def test_public_auto_route_at_extreme_scales_contains_the_exact_singular_values(ka, kb):
    """Scales where the unscaled route loses accuracy (or overflows) and hands over: still the exact spectra."""
    rng = np.random.default_rng(4)
    As, Bs = _factors(rng, 3, 8, 6, 3, ka, kb)
    for enc, A, B in zip(enclose_singular_values_of_products(As, Bs, mode="auto"), As, Bs):
        assert enc.certified
        _assert_contains_exactly(enc, A, B)


def _worst_legal_gram(F: np.ndarray, k: int) -> np.ndarray:
    """A float Gram matrix as far from FᵀF as Lemma 2.1 allows, in one direction: FᵀF + 0.9·γ_k|F|ᵀ|F| (rounded)."""
    Ff = X.fractions_of(F)
    aF = [[abs(x) for x in r] for r in Ff]
    G = X.matmul(X.transpose(Ff), Ff)
    K = X.matmul(X.transpose(aF), aF)
    u = Fraction(1, 2**53)
    g = Fraction(9, 10) * k * u / (1 - k * u)
    return np.array([[float(a + g * b) for a, b in zip(r1, r2)] for r1, r2 in zip(G, K)])


@pytest.mark.parametrize("side", ["A", "B"])
def test_congruence_core_covers_a_worst_case_rounded_gram(side):
    """Ĝ_A (resp. Ĝ_B) off by almost γ_m|A|ᵀ|A|: β (resp. ε) must carry ‖G − Ĝ‖₂'s bound, not only the d×d roundings."""
    rng = np.random.default_rng(7)
    m, n, d = 64, 64, 3
    A, B = np.abs(rng.standard_normal((m, d))) + 1.0, rng.standard_normal((n, d))
    if side == "B":
        A, B = rng.standard_normal((m, d)), np.abs(rng.standard_normal((n, d))) + 1.0
    GA = (_worst_legal_gram(A, m) if side == "A" else A.T @ A)[None]
    GB = (_worst_legal_gram(B, n) if side == "B" else B.T @ B)[None]
    nKA = _stacked.abs_gram_norm2_upper(np.abs(A)[None])
    nKB = _stacked.abs_gram_norm2_upper(np.abs(B)[None])
    L, M, beta, eps, ok = P._congruence_core(GA, GB, nKA, nKB, m, n)
    assert ok[0]
    Af, Bf, Lf = X.fractions_of(A), X.fractions_of(B), X.fractions_of(L[0])
    GAe = X.matmul(X.transpose(Af), Af)
    if side == "A":
        D = [[a - b for a, b in zip(r1, r2)] for r1, r2 in zip(X.fractions_of(M[0]),
                                                                X.matmul(X.matmul(X.transpose(Lf), GAe), Lf))]
        assert X.norm_at_most(D, Fraction(float(beta[0])))
        assert not X.norm_at_most(D, Fraction(float(beta[0])) / 4)  # the Gram error is most of β here
    else:
        EB = [[a - b for a, b in zip(r1, r2)] for r1, r2 in zip(X.matmul(X.transpose(Bf), Bf),
                                                                  X.matmul(Lf, X.transpose(Lf)))]
        with mpmath.workprec(400):
            assert _mp_norm2(GAe) * _mp_norm2(EB) <= mpmath.mpf(float(eps[0]))
            assert _mp_norm2(GAe) * _mp_norm2(EB) > mpmath.mpf(float(eps[0])) / 4


def test_route_adds_beta_for_the_core_it_was_given(monkeypatch):
    """A core M̂ off by Δ (‖Δ‖₂ = 10⁻⁶‖M̂‖₂) reported with β + ‖Δ‖₂: the enclosures must still hold, so β is used."""
    monkeypatch.setattr(P, "AUTO_RELATIVE_TARGET", np.inf)
    real = P._congruence_core

    def shifted(GA, GB, nKA, nKB, m, n):
        L, M, beta, eps, ok = real(GA, GB, nKA, nKB, m, n)
        size = np.linalg.norm(M, 2, axis=(1, 2))
        M = M - 1e-6 * size[:, None, None] * np.eye(M.shape[1])  # every eigenvalue 10⁻⁶‖M̂‖ too small
        return L, M, beta + 1.001e-6 * size, eps, ok
    monkeypatch.setattr(P, "_congruence_core", shifted)
    rng = np.random.default_rng(12)
    As, Bs = _factors(rng, 3, 7, 6, 3)
    encs, _, _ = P._certify_stack_theorem_g(As, Bs)
    for enc, A, B in zip(encs, As, Bs):
        assert enc is not None
        _assert_contains_exactly(enc, A, B)


def test_float_ends_lie_outside_theorem_g_exact_ends(monkeypatch):
    """Against Theorem G's ℓᵢ, hᵢ evaluated by mpmath (400 bits) from the recorded α, β + ε and e: a large α (U scaled
    by 1 + 10⁻⁶, λ divided by its square) and a negative λ (a rank-deficient A) exercise both sign cases."""
    monkeypatch.setattr(P, "AUTO_RELATIVE_TARGET", np.inf)
    real = np.linalg.eigh
    seen = {}

    def eigh(M):
        lam, U = real(M)
        lam = lam.copy()
        lam[:, 0] = -1e-3 * lam[:, -1]  # a clearly negative approximation of the zero eigenvalue
        seen["lam"] = lam / (1 + 1e-6) ** 2
        return seen["lam"], U * (1 + 1e-6)
    monkeypatch.setattr(np.linalg, "eigh", eigh)
    rng = np.random.default_rng(13)
    As, Bs = _factors(rng, 2, 7, 6, 3)
    for A in As:
        A[:, 2] = A[:, 0]  # rank 2: σ₃(ABᵀ) = 0
    encs, _, _ = P._certify_stack_theorem_g(As, Bs)
    for j, (enc, A, B) in enumerate(zip(encs, As, Bs)):
        assert enc is not None and float(enc.alpha.mid()) > 1e-6
        _assert_contains_exactly(enc, A, B)
        with mpmath.workprec(400):
            a = mpmath.mpf(float(enc.alpha.mid()))
            c = mpmath.mpf(float(enc.beta.mid())) + mpmath.mpf(float(enc.residual.mid()))
            for i, lv in enumerate(sorted(seen["lam"][j].tolist(), reverse=True)):
                lam = mpmath.mpf(lv)
                lo_f, hi_f = (1 - a, 1 + a) if lv >= 0 else (1 + a, 1 - a)  # θ⁻, θ⁺ by the sign of λ
                lo = mpmath.sqrt(max(lo_f * lam - c, 0))
                hi = mpmath.sqrt(hi_f * lam + c)
                # the floats are outside, up to the ulps by which c̄ = up(up(β + e) + ε) and β + ε + e differ
                assert mpmath.mpf(float(enc.lower[i])) <= lo * (1 + mpmath.mpf(2) ** -50)
                assert mpmath.mpf(float(enc.upper[i])) >= hi * (1 - mpmath.mpf(2) ** -50)
                assert mpmath.mpf(float(enc.upper[i])) <= hi * (1 + mpmath.mpf(2) ** -20)  # and close to them (σ₃: c̄ − |λ| cancels)


@pytest.mark.parametrize("mode", ["auto", "fast"])
@pytest.mark.parametrize("where", ["A", "B", "A-of-zero-B", "B-of-zero-A", "single"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_factor_entries_are_refused_with_the_usual_error(mode, where, bad):
    """Float64 factors are taken unchecked and their finiteness read off the Gram diagonals (mode auto): a NaN
    or ±∞ anywhere must still raise the ValueError of the input check, also next to a zero factor."""
    rng = np.random.default_rng(0)
    As, Bs = _factors(rng, 4, 8, 6, 3)
    j = 2
    if where == "A-of-zero-B":
        Bs[j] = np.zeros_like(Bs[j])
    if where == "B-of-zero-A":
        As[j] = np.zeros_like(As[j])
    F = As[j] if where in ("A", "A-of-zero-B", "single") else Bs[j]
    F[5 % F.shape[0], 1] = bad
    name = "A" if F is As[j] else "B"
    with pytest.raises(ValueError, match=f"^{name}: matrix has 1 NaN/Inf entries"):
        if where == "single":
            P.enclose_singular_values_of_product(As[j], Bs[j], mode=mode)
        else:
            enclose_singular_values_of_products(As, Bs, mode=mode)


@pytest.mark.parametrize("chain", [True, False])
def test_grams_and_nu_bound_the_exact_values(chain, monkeypatch):
    """_grams_and_abs_gram_norms with ν's |F| buffer in several chunks: Ĝ = fl(FᵀF) slice by slice, and ν ≥ ‖F‖_F²
    (exact Fractions) ≥ ‖|F|ᵀ|F|‖₂ without the chain, ν ≥ ‖|F|ᵀ|F|‖_∞ (exact) with it; non-finite factors give ν = +∞."""
    monkeypatch.setattr(P, "FACTOR_CHUNK_BYTES", 2 * 13 * 4 * 8)  # chunks of two slices
    assert len(P._chunks(5, 13 * 4 * 8)) == 3
    rng = np.random.default_rng(6)
    Fs = [rng.standard_normal((13, 4)) for _ in range(5)]
    Fs[1] = np.abs(Fs[1])  # nonnegative: the chain is nearly attained
    Fs[2] = Fs[2] * 2.0**-1060  # subnormal entries: the η terms
    Fs[4] = Fs[4].copy()
    Fs[4][3, 2] = np.inf
    G, nu = P._grams_and_abs_gram_norms(Fs, chain=chain)
    assert G.shape == (5, 4, 4) and nu.shape == (5,)
    assert np.isinf(nu[4])
    for j in range(4):
        assert np.array_equal(G[j], Fs[j].T @ Fs[j]) or np.allclose(G[j], Fs[j].T @ Fs[j], rtol=1e-14)
        Ff = X.fractions_of(Fs[j])
        if chain:
            aF = [[abs(x) for x in r] for r in Ff]
            N = X.matmul(X.transpose(aF), aF)
            assert Fraction(float(nu[j])) >= max(sum(r) for r in N)
        else:
            assert Fraction(float(nu[j])) >= sum(x * x for r in Ff for x in r)


@pytest.mark.parametrize("d", [1, 5, P.GRAM_GEMM_MAX_INNER, P.GRAM_GEMM_MAX_INNER + 1])
@pytest.mark.parametrize("scale", [0, 500, -1040])
def test_gram_into_obeys_lemma_2_1_entrywise_on_both_branches(d, scale):
    """_gram_into (GEMM for d ≤ GRAM_GEMM_MAX_INNER, SYRK above): every entry within Lemma 2.1's
    γ_m Σ_k |f_ki||f_kj| + 2mη of the exact Σ_k f_ki f_kj (Fractions), subnormal products included, and the
    same results whichever factor layout numpy hands the BLAS (a Fortran-ordered factor is copied)."""
    rng = np.random.default_rng(d + abs(scale))
    m = 17
    F = rng.standard_normal((m, d)) * 2.0**scale
    F[0, 0] = 2.0**-1074 if scale < 0 else F[0, 0]  # a subnormal entry
    G = np.full((d, d), np.nan)
    P._gram_into(F, G)
    H = np.full((d, d), np.nan)
    P._gram_into(np.asfortranarray(F), H)
    assert np.array_equal(G, H)
    Ff = X.fractions_of(F)
    g = Fraction(m, 2**53) / (1 - Fraction(m, 2**53))  # γ_m
    eta = Fraction(1, 2**1074)
    for i in range(d):
        for j in range(d):
            exact = sum(Ff[k][i] * Ff[k][j] for k in range(m))
            absum = sum(abs(Ff[k][i] * Ff[k][j]) for k in range(m))
            assert abs(Fraction(float(G[i, j])) - exact) <= g * absum + 2 * m * eta, (i, j)


@pytest.mark.parametrize("order", ["reversed", "shuffled"])
def test_route_does_not_rely_on_the_eigenvalue_order(order, monkeypatch):
    """Theorem G sorts λ (the pairs (λᵢ, uᵢ) may come in any order): eigh's output permuted still encloses."""
    real = np.linalg.eigh
    rng = np.random.default_rng(14)

    def eigh(M):
        lam, U = real(M)
        p = np.arange(lam.shape[-1])[::-1] if order == "reversed" else rng.permutation(lam.shape[-1])
        return lam[..., p].copy(), U[..., :, p].copy()
    monkeypatch.setattr(np.linalg, "eigh", eigh)
    As, Bs = _factors(rng, 3, 7, 6, 3)
    As.append(np.eye(2))
    Bs.append(np.diag([1.0, 3.0]))  # σ = (3, 1) (s5-ref's DEFECT 1)
    for enc, A, B in zip(enclose_singular_values_of_products(As, Bs, mode="auto"), As, Bs):
        assert enc.certified and enc.mode == "product" and np.all(enc.lower <= enc.upper)
        _assert_contains_exactly(enc, A, B)


def _mp_norm21(A: np.ndarray, B: np.ndarray) -> mpmath.mpf:
    """‖A Bᵀ‖_{2,1} (sum of column norms) from the exact product in Fractions, roots at 400 bits."""
    W = X.matmul(X.fractions_of(A), X.transpose(X.fractions_of(B)))
    with mpmath.workprec(400):
        return sum(mpmath.sqrt(mpmath.mpf(s.numerator) / s.denominator)
                   for s in (sum(W[i][j] ** 2 for i in range(len(W))) for j in range(len(W[0]))))


def test_norms_of_the_accepted_products_only_when_some_are_rejected():
    """Lemma 11.2's ‖·‖_{2,1} for a batch where some products leave the route: balls (for the accepted ones
    only, from the right factors as they are) equal to norm_21_of_products' and containing the exact norm."""
    from certbound.enclose import quantities as Q

    rng = np.random.default_rng(21)
    As, Bs = _factors(rng, 5, 9, 7, 3)
    Bs[1][:, 2] = Bs[1][:, 0] + 2.0**-30 * Bs[1][:, 2]  # ill-conditioned: misses the width target
    As[3] = As[3] * 2.0**520  # AᵀA overflows
    encs, norms, _ = P._certify_stack_theorem_g(As, Bs, norms_21=True)
    assert [e is None for e in encs] == [False, True, False, True, False]
    assert [x is None for x in norms] == [False, True, False, True, False]
    ref = Q.norm_21_of_products(As, Bs)
    for j in (0, 2, 4):
        assert Q.lower_fraction(norms[j]) == Q.lower_fraction(ref[j])
        assert Q.upper_fraction(norms[j]) == Q.upper_fraction(ref[j])
        exact = _mp_norm21(As[j], Bs[j])
        with mpmath.workprec(400):
            assert mpmath.mpf(Q.lower_fraction(norms[j]).numerator) / Q.lower_fraction(norms[j]).denominator <= exact
            assert exact <= mpmath.mpf(Q.upper_fraction(norms[j]).numerator) / Q.upper_fraction(norms[j]).denominator
    _, every = P.enclose_singular_values_and_norms_21_of_products(As, Bs, mode="auto")
    for x, A, B in zip(every, As, Bs):
        exact = _mp_norm21(A, B)
        with mpmath.workprec(400):
            lo, hi = Q.lower_fraction(x), Q.upper_fraction(x)
            assert mpmath.mpf(lo.numerator) / lo.denominator <= exact <= mpmath.mpf(hi.numerator) / hi.denominator


def _int_norm21(A: np.ndarray, B: np.ndarray, scale: int) -> mpmath.mpf:
    """‖A Bᵀ‖_{2,1} for factors whose entries are integers times 2^-scale: exact integer products, roots at 400 bits."""
    Ai = (A * 2.0**scale).astype(np.int64)
    Bi = (B * 2.0**scale).astype(np.int64)
    W = Ai @ Bi.T  # exact: |entries| ≤ d·2^20 ≪ 2^63
    with mpmath.workprec(400):
        return sum(mpmath.sqrt(mpmath.mpf(int(s))) for s in (W.astype(object) ** 2).sum(axis=0)) * mpmath.mpf(2) ** (-2 * scale)


@pytest.mark.parametrize("d", [P.FORMS_TRMM_MIN_INNER, 64])
def test_forms_by_trmm_bound_the_exact_quadratic_forms_and_norms(d, monkeypatch):
    """d ≥ FORMS_TRMM_MIN_INNER: Lemma 8.1's T = fl(B V) by one TRMM (V = Ĝ's doubled upper triangle). Each t_j is
    within Lemma 8.1's c₁q_j + c₀ of the exact s_j = ‖A b_j‖² (integers), for a Ĝ that is NOT symmetric too
    (the lemma holds for its mirrored upper triangle), and the shared route's ‖·‖_{2,1} balls contain the exact
    norms, as the GEMM evaluation's do."""
    from certbound.enclose import quantities as Q

    calls = []
    real = P._dtrmm
    monkeypatch.setattr(P, "_dtrmm", lambda *a, **k: calls.append(1) or real(*a, **k))
    rng = np.random.default_rng(d)
    m = n = 130  # d(m + n) ≤ mn: the shared route evaluates the norms by the forms
    As = [rng.integers(-1000, 1001, (m, d)) * 2.0**-10 for _ in range(2)]
    Bs = [rng.integers(-1000, 1001, (n, d)) * 2.0**-10 for _ in range(2)]
    # the forms directly, with a non-symmetric Ĝ_A (its lower triangle perturbed; V reads the upper one)
    GA, nKA = P._grams_and_abs_gram_norms(As)
    GA[1] += np.tril(np.full((d, d), 1e-3), -1)
    t, bb = np.empty((2, n)), np.empty((2, n))
    P._grams_and_abs_gram_norms(Bs, chain=False, forms=(GA, t, bb))
    assert len(calls) == 2
    c1 = Fraction(Q._lemma81_constants(m, d)[0])
    for j in range(2):
        Ai = (As[j] * 2.0**10).astype(np.int64).astype(object)
        Bi = (Bs[j] * 2.0**10).astype(np.int64).astype(object)
        s = ((Ai @ Bi.T) ** 2).sum(axis=0)  # exact ‖A b_l‖² · 2^40 per column l
        beta = Fraction(float(np.abs(Bs[j]).max()))
        c0 = 2 * m * Fraction(1, 2**1074) * (d * beta) ** 2 * 4 + 2 * d * d * beta * Fraction(1, 2**1074) * 2 \
            + 2 * d * Fraction(1, 2**1074)
        Gp = np.triu(GA[j]) + np.triu(GA[j], 1).T  # Ĝ': what the TRMM evaluation certifies against
        for l in range(0, n, 1 if j == 0 else 13):
            b = [Fraction(float(x)) for x in Bs[j][l]]
            q = Fraction(float(nKA[j])) * sum(x * x for x in b) * (1 + Fraction(1, 2**40))
            if j == 0:  # the exact s_l (Ĝ_A = fl(AᵀA) itself)
                assert abs(Fraction(int(s[l]), 2**40) - Fraction(float(t[j, l]))) <= c1 * q + c0, (j, l)
            else:  # against bᵀĜ'b exactly: only T's and t's roundings (T₂, T₃ of the proof)
                exact = sum(b[k] * Fraction(float(Gp[k, i])) * b[i] for k in range(d) for i in range(d))
                assert abs(exact - Fraction(float(t[j, l]))) <= c1 * q + c0, (j, l)
    for limit, more in ((P.FORMS_TRMM_MIN_INNER, 2), (10**9, 0)):  # TRMM, then GEMM
        monkeypatch.setattr(P, "FORMS_TRMM_MIN_INNER", limit)
        before = len(calls)
        encs, norms = P.enclose_singular_values_and_norms_21_of_products(As, Bs, mode="auto")
        assert len(calls) == before + more and all(e.mode == "product" for e in encs)
        for x, A, B in zip(norms, As, Bs):
            exact = _int_norm21(A, B, 10)
            with mpmath.workprec(400):
                lo, hi = Q.lower_fraction(x), Q.upper_fraction(x)
                assert mpmath.mpf(lo.numerator) / lo.denominator <= exact <= mpmath.mpf(hi.numerator) / hi.denominator
