"""The Gram route's dense kernels (issue 13) against exact references.

Every check decides with exact rational arithmetic (``tests/enclose/exact_inertia.py``:
Sylvester inertia of Fraction matrices, no tolerance) or with Fractions re-deriving
Theorem G: the symmetric residual of Lemma 3.4, the upper-triangle chunked Gram
matrices of Lemmas G.1 and 3.1, the fused power iteration of Lemma G.2, Theorem G's
float evaluation (Lemma G.4) and whole enclosures with every chunk made tiny, on
subnormal, huge, rank-deficient (negative λ) and zero inputs.
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest
from flint import arb
from hypothesis import example, given, strategies as st

import certbound.enclose.fperror as fperror
import certbound.enclose.gram as gram_mod
import certbound.enclose.svd as svd_mod
from certbound.ball import float_upper, lower_fraction, upper_fraction
from certbound.enclose import enclose_singular_values
from certbound.enclose.gram import abs_gram_norm_upper, rounded_gram, theorem_g_float_bounds
from tests.enclose import exact_inertia as ex


def _sym_residual_exact(G, U, lam) -> list:
    return ex.residual(G, U, lam, U)


def _sym(rng, m, scale=1.0):
    A = rng.standard_normal((m, m)) * scale
    return np.triu(A) + np.triu(A, 1).T


# --------------------------------------------------------------------------- Lemma 3.4


@pytest.mark.parametrize("case", range(12))
def test_symmetric_residual_bounds_the_exact_norm(monkeypatch, case):
    """Random G, eigen-ish U, λ (signed), every block and chunk size down to 1; inertia decides."""
    rng = np.random.default_rng(700 + case)
    m = [1, 2, 3, 5, 6, 7][case % 6]
    scale = [1.0, 2.0**-1040, 2.0**500, 3.0][case % 4]
    G = _sym(rng, m, scale)
    lam, U = np.linalg.eigh(G)
    if case % 3 == 1:
        U = U + 1e-3 * rng.standard_normal(U.shape)  # poor vectors: a large computed residual
        lam = lam * (1 + 1e-3)
    if case % 5 == 2:
        lam = -lam  # wrong signs: the residual is about 2‖G‖
    cols, chunk = [(1, 1), (2, 1), (3, 2), (m, m)][case % 4]
    monkeypatch.setattr(fperror, "symmetric_residual_block_columns", lambda mm: cols)
    bound = fperror.symmetric_residual_norm_bound(G, U, lam, chunk=chunk)
    B = upper_fraction(bound)
    assert B is not None
    assert ex.symmetric_norm_at_most(_sym_residual_exact(G, U, lam), B)


def test_symmetric_residual_row_sums_include_the_mirrored_blocks(monkeypatch):
    """U = 0: the bound is (1+2u)·min(‖G‖_F, ‖G‖_∞) — tight for a tridiagonal G only with mirrored row sums."""
    m = 9
    G = np.diag(np.full(m - 1, 1.0), 1) + np.diag(np.full(m - 1, 1.0), -1)  # ‖G‖₂ = 2cos(π/10) ≈ 1.90
    monkeypatch.setattr(fperror, "symmetric_residual_block_columns", lambda mm: 2)
    bound = fperror.symmetric_residual_norm_bound(G, np.zeros((m, m)), np.zeros(m), chunk=1)
    B = upper_fraction(bound)
    assert ex.symmetric_norm_at_most(ex.fractions_of(G), B)
    assert B < Fraction(201, 100)  # ‖G‖_∞ = 2 (F-norm 4): the row sums were used, both halves of each row


def test_symmetric_residual_frobenius_counts_off_diagonal_blocks_twice(monkeypatch):
    """Arrowhead [[a, vᵀ], [v, 0]] with a = ‖v‖: ‖·‖₂ = 1.618‖v‖ > √2‖v‖ (the F-norm with one copy)."""
    m = 6
    G = np.zeros((m, m))
    G[0, 1:] = G[1:, 0] = 1.0
    G[0, 0] = np.sqrt(m - 1.0)  # ≈ ‖v‖ (a float)
    monkeypatch.setattr(fperror, "symmetric_residual_block_columns", lambda mm: 1)
    bound = fperror.symmetric_residual_norm_bound(G, np.zeros((m, m)), np.zeros(m))
    B = upper_fraction(bound)
    assert ex.symmetric_norm_at_most(ex.fractions_of(G), B)  # F-norm √3‖v‖ < ∞-norm here


@pytest.mark.parametrize("seed", range(16))
def test_symmetric_residual_covers_the_gemm_rounding(monkeypatch, seed):
    """G = 0, rank-one UΛUᵀ: the computed residual's F-norm is within rounding of the exact norm,
    so only the a-priori term γ_{b+1}‖|U||Λ||U|ᵀ‖₂ makes the bound valid."""
    rng = np.random.default_rng(900 + seed)
    m = 5
    U = rng.standard_normal((m, 3))
    lam = np.array([rng.standard_normal(), 0.0, 0.0])
    exact = abs(Fraction(lam[0])) * sum(Fraction(float(x)) ** 2 for x in U[:, 0])  # ‖λ u uᵀ‖₂
    monkeypatch.setattr(fperror, "symmetric_residual_block_columns", lambda mm: 2)
    bound = fperror.symmetric_residual_norm_bound(np.zeros((m, m)), U, lam, chunk=1)
    assert upper_fraction(bound) >= exact


@pytest.mark.parametrize("chunk", [2, 8])
def test_symmetric_residual_zero_computed_residual_needs_the_apriori_term(monkeypatch, chunk):
    """Products exact, one rounded addition: fl(1 + 2⁻⁶²) = 1 = Ĝ, so R̂ = 0 while R = −2⁻⁶²𝟙𝟙ᵀ."""
    m = 3
    U = np.column_stack([np.ones(m), np.full(m, 2.0**-31)])
    lam = np.array([1.0, 1.0])
    G = np.ones((m, m))  # = fl(1·1 + 2⁻³¹·2⁻³¹) in every order, with or without FMA
    monkeypatch.setattr(fperror, "symmetric_residual_block_columns", lambda mm: 2)
    bound = fperror.symmetric_residual_norm_bound(G, U, lam, chunk=chunk)
    assert ex.symmetric_norm_at_most(_sym_residual_exact(G, U, lam), upper_fraction(bound))
    assert upper_fraction(bound) >= 3 * Fraction(1, 2**62)


def test_symmetric_residual_refuses_asymmetric_and_reports_non_finite():
    G = np.array([[1.0, 2.0], [2.0 + 2.0**-50, 1.0]])
    with pytest.raises(ValueError, match="not exactly symmetric"):
        fperror.symmetric_residual_norm_bound(G, np.eye(2), np.ones(2))
    G = np.array([[np.inf, 0.0], [0.0, 1.0]])
    assert not fperror.symmetric_residual_norm_bound(G, np.eye(2), np.ones(2)).is_finite()
    big = np.full((2, 2), 1e300)
    assert not fperror.symmetric_residual_norm_bound(np.zeros((2, 2)), big, np.ones(2)).upper().is_finite()


# --------------------------------------------------------------------------- Lemmas G.1, G.2, 3.1 (upper triangles)


@pytest.mark.parametrize("case", range(10))
def test_rounded_gram_chunked_triangles_against_exact_deviation(case):
    """β ≥ ‖Ĝ − WWᵀ‖₂ exactly, for chunks of 1–3 columns, C- and F-ordered and strided W."""
    rng = np.random.default_rng(40 + case)
    m, n = [(3, 8), (4, 9), (1, 7), (5, 5), (2, 11)][case % 5]
    W = rng.standard_normal((m, n)) * [1.0, 2.0**-1030, 2.0**400][case % 3]
    if case % 2:
        W = np.asfortranarray(W)
    if case == 8:
        W = np.ascontiguousarray(rng.standard_normal((m, 2 * n)))[:, ::2]  # neither C- nor F-contiguous
    G, beta = rounded_gram(W, chunk=[1, 2, 3][case % 3])
    assert np.array_equal(G, G.T)
    Wf = ex.fractions_of(W)
    D = [[Fraction(float(G[i, j])) - sum((a * b for a, b in zip(Wf[i], Wf[j])), Fraction(0)) for j in range(m)]
         for i in range(m)]
    assert ex.symmetric_norm_at_most(D, upper_fraction(beta))


@pytest.mark.parametrize("seed", range(6))
def test_fused_power_iteration_bounds_the_spectral_radius(seed):
    """The first product accumulated during the SYRKs (``first``) and the fused second pass bound ρ(|W||W|ᵀ)."""
    rng = np.random.default_rng(60 + seed)
    m, n = [(3, 10), (4, 4), (2, 9), (5, 13), (1, 6), (6, 7)][seed]
    W = rng.standard_normal((m, n))
    if seed == 3:
        W[2] = 0.0  # a zero row: its ratio is 0, x stays positive
    N = [[sum((abs(a) * abs(b) for a, b in zip(r1, r2)), Fraction(0)) for r2 in ex.fractions_of(W)]
         for r1 in ex.fractions_of(W)]
    z = fperror._inflate(np.abs(W) @ fperror._inflate(np.abs(W).sum(axis=0), m), n)
    for first in (None, z):
        b = abs_gram_norm_upper(W, first=first)
        assert ex.symmetric_norm_at_most(N, upper_fraction(b))
    # The first product from rounded_gram's chunk loop is a valid bound too (β ≥ γ_k‖N‖ + 4nmη).
    _, beta = rounded_gram(W, chunk=2)
    k = fperror.chunked_gamma_length(n, 2)
    gk = Fraction(k, 2**53) / (1 - Fraction(k, 2**53))
    assert ex.symmetric_norm_at_most([[x * gk for x in row] for row in N], upper_fraction(beta))


@pytest.mark.parametrize("seed", range(8))
def test_per_chunk_power_bound_against_exact(monkeypatch, seed):
    """Lemma G.2′ (large Gram orders): β ≥ γ_k Σ_C ρ(N_C) ≥ γ_k ρ(|W||W|ᵀ) and β ≥ ‖Ĝ − WWᵀ‖₂, exactly."""
    monkeypatch.setattr(gram_mod, "PER_CHUNK_POWER_MIN_ORDER", 1)
    monkeypatch.setattr(gram_mod, "PER_CHUNK_POWER_MIN_ENTRIES", 1)
    rng = np.random.default_rng(70 + seed)
    m, n = [(3, 10), (4, 9), (2, 13), (5, 12), (1, 7), (6, 11), (4, 16), (3, 7)][seed]
    W = rng.standard_normal((m, n)) * [1.0, 2.0**-1030, 2.0**400, 3.0][seed % 4]
    if seed == 3:
        W[2] = 0.0  # a zero row
    if seed == 5:
        W = rng.standard_normal((m, 1)) @ rng.standard_normal((1, n))  # rank 1: one Perron direction
    chunk = [1, 2, 3][seed % 3]
    G, beta = rounded_gram(W, chunk=chunk)
    assert np.array_equal(G, G.T)
    Wf = ex.fractions_of(W)
    N = [[sum((abs(a) * abs(b) for a, b in zip(r1, r2)), Fraction(0)) for r2 in Wf] for r1 in Wf]
    k = fperror.chunked_gamma_length(n, chunk)
    gk = Fraction(k, 2**53) / (1 - Fraction(k, 2**53))
    B = upper_fraction(beta)
    assert ex.symmetric_norm_at_most([[x * gk for x in row] for row in N], B)
    D = [[Fraction(float(G[i, j])) - sum((a * b for a, b in zip(Wf[i], Wf[j])), Fraction(0)) for j in range(m)]
         for i in range(m)]
    assert ex.symmetric_norm_at_most(D, B)


def test_per_chunk_power_bound_is_close_to_the_global_one(monkeypatch):
    """A quality check (not a bound): Σ_C ρ(N_C) by in-chunk Collatz–Wielandt steps is within 1 % of the
    global power iteration on trained-like and Gaussian matrices."""
    monkeypatch.setattr(gram_mod, "PER_CHUNK_POWER_MIN_ENTRIES", 1)
    rng = np.random.default_rng(3)
    U = np.linalg.qr(rng.standard_normal((200, 200)))[0]
    V = np.linalg.qr(rng.standard_normal((800, 200)))[0]
    for W in ((U * (np.arange(1, 201) ** -0.7)) @ V.T, 0.02 * rng.standard_normal((200, 800))):
        _, b_global = rounded_gram(W)  # m = 200 ≥ 192: per chunk
        monkeypatch.setattr(gram_mod, "PER_CHUNK_POWER_MIN_ORDER", 10**9)
        _, b_power = rounded_gram(W)
        monkeypatch.setattr(gram_mod, "PER_CHUNK_POWER_MIN_ORDER", 192)
        assert float_upper(b_global) <= 1.01 * float_upper(b_power)


@pytest.mark.parametrize("case", range(8))
def test_gram_deviation_triangle_against_exact(case):
    rng = np.random.default_rng(80 + case)
    m, r = [(6, 3), (7, 7), (9, 4), (4, 4)][case % 4]
    X = np.linalg.qr(rng.standard_normal((m, r)))[0]
    if case % 2:
        X = np.asfortranarray(X + 1e-6 * rng.standard_normal(X.shape))
    if case == 6:
        X = X * 2.0**-520  # subnormal squares: the 4mrη term matters; diagonal far from 1 → +∞
    b = fperror.gram_deviation_bound(X, chunk=[1, 2, 3][case % 3], triangle=True)
    if case == 6:
        assert not b.upper().is_finite()
        return
    assert ex.symmetric_norm_at_most(ex.gram_deviation(X), upper_fraction(b))


def test_chunked_gamma_length_is_the_rounding_depth():
    """Lemma 2.5's b + q − 1: b roundings inside a chunk, q − 1 outer additions; chunks of 1 give Lemma 2.1's k."""
    for k in range(1, 60):
        for b in range(1, 9):
            q = -(-k // b)
            expect = k if k <= 2 * b else b + q - 1
            assert fperror.chunked_gamma_length(k, b) == expect <= k


@pytest.mark.parametrize("case", range(8))
def test_gram_deviation_block_columns_against_exact(case):
    """α with fl(XᵀX) in column blocks (GEMMs, mirrored strictly lower blocks; Theorem G-T's α of Q̂): an upper bound
    of the exact ‖XᵀX − I‖₂ for row chunks and column blocks that do not divide the sizes; as tight as the SYRK forms."""
    rng = np.random.default_rng(90 + case)
    m = [7, 9, 12, 5][case % 4]
    X = np.linalg.qr(rng.standard_normal((m, m)))[0]
    X = np.asfortranarray(X + [1e-6, 1e-9][case % 2] * rng.standard_normal(X.shape))
    chunk, nb = [1, 2, 3, 4][case % 4], [1, 2, 3, 5, 64][case % 5]
    b = fperror.gram_deviation_bound(X, chunk=chunk, absX=np.abs(X), block_columns=nb)
    assert ex.symmetric_norm_at_most(ex.gram_deviation(X), upper_fraction(b))
    b_syrk = fperror.gram_deviation_bound(X, chunk=chunk, triangle=True)
    assert float_upper(b) <= float_upper(b_syrk) * (1 + 1e-6) and float_upper(b_syrk) <= float_upper(b) * (1 + 1e-6)


# --------------------------------------------------------------------------- Lemma G.4 (float Theorem G)


def _fraction_theorem_g(lam, a: Fraction, c: Fraction):
    out = []
    for li in sorted((Fraction(float(x)) for x in lam), reverse=True):
        ends = [li * (1 - a), li * (1 + a)]
        out.append((min(ends) - c, max(ends) + c))
    return out


@given(
    st.lists(st.floats(-8, 8, allow_nan=False, width=32), min_size=1, max_size=6),
    st.sampled_from([0.0, 2.0**-40, 0.125, 0.5, 1 - 2.0**-52]),
    st.sampled_from([0.0, 2.0**-30, 0.25, 3.0]),
    st.sampled_from([0.0, 2.0**-50, 1.0]),
    st.sampled_from([0, 7, -3, -1060, 1000]),
)
@example([-0.5, 2.0], 0.25, 0.0, 1.0, 0)
@example([-0.0, 0.0], 0.0, 0.0, 0.0, 0)
@example([4.0, 1e-300], 0.0, 0.0, 0.0, -1060)  # subnormal ends: the Arb fallback
@example([1e-30, 3.0], 2.0**-40, 2.0**-30, 0.0, 1000)
def test_theorem_g_float_bounds_contain_the_exact_enclosure(lam, a, b, e, sc):
    res = theorem_g_float_bounds(np.array(lam), arb(a), arb(b), arb(e), sc)
    ref = _fraction_theorem_g(lam, Fraction(a), Fraction(b) + Fraction(e))
    if any(hi < 0 for _, hi in ref):
        return  # inconsistent data: the hypotheses cannot hold (None or any ball is fine)
    assert res is not None and len(res) == len(ref)
    two = Fraction(2) ** sc
    for i, (ball, (lo2, hi2)) in enumerate(zip(res, ref)):
        lo_b, hi_b = lower_fraction(ball), upper_fraction(ball)
        # Outward: squares compared exactly (a ball [0, h] may dip just below 0).
        assert max(lo_b, Fraction(0)) ** 2 <= max(lo2, Fraction(0)) * two**2
        assert (hi_b / two) ** 2 >= hi2
        if hasattr(res, "lower"):  # the float ends themselves
            assert Fraction(float(res.lower[i])) ** 2 <= max(lo2, Fraction(0)) * two**2
            assert (Fraction(float(res.upper[i])) / two) ** 2 >= hi2
            # …and only a few ulps of |λ| + c outside the exact ends in σ² (Lemma G.4's loss;
            # cancellation in λ − c is why the slack is absolute), plus 2⁻¹⁰⁶⁸ for subnormal steps.
            slack = (abs(Fraction(float(sorted(lam, reverse=True)[i]))) + Fraction(b) + Fraction(e)) / 2**48
            slack += Fraction(1, 2**1068)
            assert (Fraction(float(res.upper[i])) / two) ** 2 <= hi2 + slack
            if lo2 > slack:
                assert (Fraction(float(res.lower[i])) / two) ** 2 >= lo2 - slack


@pytest.mark.parametrize("seed", range(4))
def test_outward_squares_each_step_against_fractions(seed):
    """Lemma G.4 (a) entry by entry, with c = fl(λf) (total cancellation) so each step counts."""
    rng = np.random.default_rng(300 + seed)
    lv = rng.standard_normal(400) * 2.0 ** rng.integers(-60, 60, 400)
    lv[:5] = [0.0, -0.0, 5e-324, -5e-324, 1.0]
    f = 1.0 + rng.standard_normal(400) * 2.0**-30
    for c in (0.0, 2.0**-70, float(abs(lv[7] * f[7])), float(abs(lv[9] * f[9]))):
        lsq, hsq = gram_mod._outward_squares(lv, f, f, c)
        for x, y, lo, hi in zip(lv.tolist(), f.tolist(), lsq.tolist(), hsq.tolist()):
            exact = Fraction(x) * Fraction(y)
            assert Fraction(lo) <= exact - Fraction(c) and Fraction(hi) >= exact + Fraction(c), (x, y, c)


def test_outward_sqrt_against_fractions():
    """Lemma G.4 (b): lo² ≤ y ≤ hi², for random, subnormal and perfect-square y."""
    rng = np.random.default_rng(31)
    y = np.abs(rng.standard_normal(2000)) * 2.0 ** rng.integers(-1074, 1000, 2000)
    y[:6] = [0.0, 5e-324, 1e-310, 4.0, 2.0, 0.25]
    lo, hi = gram_mod._outward_sqrt(y, y)
    for v, a, b in zip(y.tolist(), lo.tolist(), hi.tolist()):
        assert Fraction(a) ** 2 <= Fraction(v) <= Fraction(b) ** 2, v
    lo, _ = gram_mod._outward_sqrt(np.array([-1.0, -0.0]), np.array([0.0, 0.0]))
    assert lo.tolist() == [0.0, 0.0]


def test_theorem_g_float_ends_at_the_smallest_normal():
    """σ within an ulp of 2⁻¹⁰²² after scaling: λ = 1 + 2⁻⁵² gives lo = pred(1) = 1 − 2⁻⁵³, whose ldexp by −1022
    ties *up* onto 2⁻¹⁰²² (not exact: the lower end must be strictly above 2⁻¹⁰²² to be kept); exact checks."""
    for lam in (1.0, float(np.nextafter(1.0, 2.0)), float(np.nextafter(1.0, 0.0)), 4.0, float(np.nextafter(4.0, 0.0))):
        for t in (-1022, -1023, -1021):
            res = theorem_g_float_bounds(np.array([lam]), arb(0), arb(0), arb(0), t)
            exact_sq = Fraction(lam) * Fraction(2) ** (2 * t)
            assert max(lower_fraction(res[0]), Fraction(0)) ** 2 <= exact_sq <= upper_fraction(res[0]) ** 2
            if hasattr(res, "lower"):
                assert res.lower[0] == 0 or res.lower[0] > 2.0**-1022
                assert Fraction(float(res.lower[0])) ** 2 <= exact_sq <= Fraction(float(res.upper[0])) ** 2


def test_theorem_g_float_bounds_refusals():
    lam = np.array([1.0])
    assert theorem_g_float_bounds(lam, arb(1), arb(0), arb(0)) is None
    assert theorem_g_float_bounds(lam, arb(0), arb.pos_inf(), arb(0)) is None
    assert theorem_g_float_bounds(lam, arb(0), arb(0), arb("nan")) is None
    assert theorem_g_float_bounds(np.array([-1.0]), arb(0.5), arb(0), arb(0.25)) is None  # h = -0.25 < 0


def test_theorem_g_float_bounds_huge_eigenvalue_falls_back_to_arb():
    res = theorem_g_float_bounds(np.array([1.7e308]), arb(0.5), arb(0), arb(0))
    assert res is not None and not hasattr(res, "lower")  # the Arb evaluation (θλ overflows a float)
    assert upper_fraction(res[0]) ** 2 >= Fraction(1.7e308) * Fraction(3, 2)


# --------------------------------------------------------------------------- whole enclosures, tiny chunks


def _exact_sigma_checks(W, enc):
    gram = ex.smaller_gram(ex.fractions_of(W))
    for i, ball in enumerate(enc.sigma):
        lo, hi = Fraction(float(enc.lower[i])), Fraction(float(enc.upper[i]))
        assert ex.singular_value_in(gram, i, lo, hi), (i, enc.lower[i], enc.upper[i])
        assert ex.singular_value_in(gram, i, max(lower_fraction(ball), Fraction(0)), upper_fraction(ball))


@pytest.mark.parametrize("case", range(12))
@pytest.mark.parametrize("mode", ["gram", "auto"])
def test_whole_gram_route_with_tiny_chunks_against_exact_inertia(monkeypatch, case, mode):
    monkeypatch.setattr(gram_mod, "GRAM_CHUNK", 2)
    monkeypatch.setattr(gram_mod, "GRAM_SMALL_CHUNK", 2)  # read at call time: these small matrices take it
    monkeypatch.setattr(gram_mod, "ALPHA_CHUNK", 2)
    monkeypatch.setattr(gram_mod, "RESIDUAL_CHUNK", 1)
    monkeypatch.setattr(gram_mod, "TRIDIAGONAL_RESIDUAL_CHUNK", 1)
    monkeypatch.setattr(fperror, "symmetric_residual_block_columns", lambda m: 2)
    if case % 3 != 2:
        monkeypatch.setattr(gram_mod, "TRIDIAGONAL_MIN_ORDER", 1)  # Theorem G-T (else Theorem G's eigh route)
    rng = np.random.default_rng(1200 + case)
    m, n = [(4, 9), (9, 4), (6, 6), (3, 8), (7, 2), (5, 10)][case % 6]
    W = rng.standard_normal((m, n))
    if case % 4 == 1:
        W = rng.standard_normal((m, 2)) @ rng.standard_normal((2, n))  # rank 2: λ ≈ 0 of either sign
    if case % 4 == 2:
        W[0] = 0.0  # a zero row
    W = W * [1.0, 2.0**-1050, 2.0**600, 2.0**-300, 2.0**300, 1.0][case % 6]  # subnormal / huge / unscaled ranges
    if case == 11:
        W = np.asfortranarray(W)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        enc = enclose_singular_values(W, mode=mode)
    assert enc.certified
    _exact_sigma_checks(W, enc)


def test_gram_route_with_alpha_not_below_one_falls_back(monkeypatch):
    """Theorem G refused (α ≥ 1): gram mode runs the fast chain, whose enclosure is still exact-checked."""
    original = fperror.gram_deviation_bound

    def alpha_two_for_the_gram_route(X, chunk=None, triangle=False):
        return arb(2) if chunk == gram_mod.ALPHA_CHUNK else original(X, chunk, triangle)

    monkeypatch.setattr(fperror, "gram_deviation_bound", alpha_two_for_the_gram_route)
    W = np.random.default_rng(5).standard_normal((4, 7))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc = enclose_singular_values(W, mode="gram")
    assert enc.mode == "fast"
    _exact_sigma_checks(W, enc)


def test_gram_route_thread_policy(monkeypatch):
    """One BLAS thread for the Gram route up to 2048×8192 (certbound._blas.threads_for_gram), whatever the load."""
    from certbound import _blas
    import certbound.enclose.svd as svd_mod

    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.setattr(_blas, "available_threads", lambda: 2)
    assert _blas.threads_for_gram(768, 3072) == _blas.threads_for_gram(3072, 768) == 1
    assert _blas.threads_for(768, 3072) == 2  # the SVD modes' policy is unchanged
    assert _blas.threads_for_gram(4096, 16384) == 2
    seen = []
    monkeypatch.setattr(svd_mod, "threads_for_gram", lambda m, n: seen.append((m, n)) or 1)
    enclose_singular_values(np.eye(3)[:2], mode="auto")
    enclose_singular_values(np.eye(3)[:2], mode="gram")
    assert seen == [(2, 3), (2, 3)]


# --------------------------------------------------------------------------- mode auto's Theorem G-R hook


def _tridiagonal_with_spectrum(lam, seed=0):
    """d, e of a tridiagonal T with eigenvalues ≈ lam (LAPACK dsytrd of Q diag(lam) Qᵀ), and eigvalsh(T)."""
    import scipy.linalg.lapack as lapack

    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.standard_normal((len(lam), len(lam))))[0]
    A = (Q * lam) @ Q.T
    A = np.triu(A) + np.triu(A, 1).T
    _, d, e, _, info = lapack.dsytrd(A, lower=1)
    assert info == 0
    T = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    return d, e, np.linalg.eigvalsh(T)


@pytest.mark.parametrize("lam_min", [1e-1, 3e-3, 1e-3, 3e-4, 1e-6])
@pytest.mark.parametrize("c", [1e-14, 1e-12, 1e-11])
def test_reconstruct_prediction_matches_the_width_rule(lam_min, c):
    # The go/no-go is the width rule on λ(T): every λᵢ ≥ μ, μ = c'/τ (or (c'/τ)²/(f²λ₁) when c'/τ ≤ f²λ₁),
    # c' = margin·c — recomputed here from numpy's eigenvalues of T (away from the threshold).
    lam = np.geomspace(1.0, lam_min, 60)
    d, e, ev = _tridiagonal_with_spectrum(lam)
    cm = c * gram_mod.RECONSTRUCT_ESTIMATE_MARGIN
    tau, f = svd_mod.AUTO_RELATIVE_TARGET, svd_mod.AUTO_SPECTRUM_FRACTION
    lam1 = float(np.max(d) + 2 * np.max(np.abs(e)))
    mu = cm / tau if cm / tau > f * f * lam1 else (cm / tau) ** 2 / (f * f * lam1)
    if abs(ev[0] - mu) < 0.01 * mu:
        pytest.skip("too close to the threshold for a float decision")
    # and the median rule: more than half of the λᵢ ≥ f²λ₁ are ≥ c'/t_m (relative width c'/λᵢ ≤ t_m)
    sel = ev[ev >= f * f * lam1]
    mu_med = cm / gram_mod.RECONSTRUCT_MEDIAN_TARGET
    median_ok = 2 * int(np.sum(sel >= mu_med)) > sel.size
    assert gram_mod._reconstruct_may_meet_target(d, e, c / 2, c / 2) == bool(ev[0] >= mu and median_ok)


@pytest.mark.parametrize("rho, expected", [(0.2, True), (0.8, False)])
def test_reconstruct_prediction_refuses_a_median_above_the_target(rho, expected):
    # Every λᵢ passes τ, but when most of them are small the median relative width c'/λᵢ exceeds
    # RECONSTRUCT_MEDIAN_TARGET: ρ of the 60 eigenvalues at 1e-2 (relative width ≈ 1.25e-9 for c = 1e-11), the rest 1.
    n = 60
    lam = np.where(np.arange(n) < int(rho * n), 1e-2, 1.0)[::-1].copy()
    d, e, ev = _tridiagonal_with_spectrum(lam, seed=3)
    c = 1e-11
    assert np.all(ev >= c * gram_mod.RECONSTRUCT_ESTIMATE_MARGIN / svd_mod.AUTO_RELATIVE_TARGET)  # τ holds
    assert gram_mod._reconstruct_may_meet_target(d, e, c / 2, c / 2) is expected


def test_meets_median_target_on_float_ends_and_balls():
    def balls(lo, hi):
        out = svd_mod._BallsWithEnds(arb(x).union(arb(y)) for x, y in zip(lo, hi))
        out.lower, out.upper = np.array(lo), np.array(hi)
        return out

    t = gram_mod.RECONSTRUCT_MEDIAN_TARGET
    # relative widths 0.5t, 0.5t, 3t among σᵢ ≥ 1e-2σ₁; the tiny σ (below 1e-2σ₁) is not counted however wide
    lo = [1.0, 0.5, 0.25, 1e-3]
    rel = [0.5 * t, 0.5 * t, 3 * t, 1e-3]
    hi = [x * (1 + r) for x, r in zip(lo, rel)]
    assert gram_mod._meets_median_target(balls(lo, hi))
    assert gram_mod._meets_median_target(list(balls(lo, hi)))  # from the balls themselves
    rel[1] = 2 * t  # now the median is 2t
    hi = [x * (1 + r) for x, r in zip(lo, rel)]
    assert not gram_mod._meets_median_target(balls(lo, hi))
    assert not gram_mod._meets_median_target(list(balls(lo, hi)))
    assert not gram_mod._meets_median_target([])


def test_reconstruct_prediction_refuses_degenerate_input():
    d, e = np.array([1.0, 2.0]), np.array([0.5])
    assert not gram_mod._reconstruct_may_meet_target(d, e, np.inf, 0.0)
    assert not gram_mod._reconstruct_may_meet_target(np.zeros(2), np.zeros(1), 1e-16, 0.0)
    assert not gram_mod._reconstruct_may_meet_target(d, e, 1.0, 1.0)  # μ ≥ λ₁: nothing can pass


class _FakeReconstruct:
    """A stand-in for certbound.enclose.reconstruct that records the hook's calls (the real one: its own tests)."""

    def __init__(self, outcome, min_order=192):
        import certbound.enclose.reconstruct as real

        self.RECONSTRUCT_MIN_ORDER = min_order
        self.real = real
        self.outcome = outcome
        self.calls = []
        self.predicted = []
        self.inside = False

    def householder_reflectors(self, G):
        self.calls.append("dsytrd")
        return self.real.householder_reflectors(G)

    def certify_reconstructed(self, G, beta, scale_exponent, reflectors=None, predict=None):
        self.calls.append("certify")
        assert reflectors is not None and predict is not None
        self.predicted.append(predict(0.0))
        if self.outcome == "none":
            return None
        # "wide": a valid but useless result (never meets τ); "median": meets τ, but its median relative width
        # (5e-9) is above RECONSTRUCT_MEDIAN_TARGET; "tri": G-T's own result, relabelled
        if self.outcome == "median":
            self.inside = True  # Theorem G-T's floats widened (its dsytrd is not the hook's)
            try:
                sig, a, e, _ = gram_mod._certify_tridiagonal(G, beta, scale_exponent)
            finally:
                self.inside = False
            lo, hi = sig.lower * (1 - 2.5e-9), sig.upper * (1 + 2.5e-9)
            wide = svd_mod._BallsWithEnds(arb(x).union(arb(y)) for x, y in zip(lo.tolist(), hi.tolist()))
            wide.lower, wide.upper = lo, hi
            assert svd_mod.meets_width_target(wide)
            return wide, a, e, "gram-rec"
        if self.outcome == "wide":
            sig = svd_mod._BallsWithEnds([arb(0).union(arb(1e300))] * G.shape[0])
            sig.lower, sig.upper = np.zeros(G.shape[0]), np.full(G.shape[0], 1e300)
            return sig, arb(0), arb(0), "gram-rec"
        self.inside = True  # Theorem G-T's floats relabelled (its dsytrd is not the hook's)
        try:
            sig, a, e, _ = gram_mod._certify_tridiagonal(G, beta, scale_exponent)
        finally:
            self.inside = False
        return sig, a, e, "gram-rec"


@pytest.mark.parametrize("outcome, expected", [("tri", "gram-rec"), ("wide", "gram-tri"), ("median", "gram-tri"),
                                               ("none", "gram-tri")])
def test_auto_takes_theorem_g_r_only_when_it_meets_the_target(monkeypatch, outcome, expected):
    import sys

    fake = _FakeReconstruct(outcome)
    monkeypatch.setitem(sys.modules, "certbound.enclose.reconstruct", fake)
    import certbound.enclose as enclose_pkg

    monkeypatch.setattr(enclose_pkg, "reconstruct", fake, raising=False)
    dsytrd_calls = []
    import certbound.enclose.tridiagonal as tri

    real_ht = tri.householder_tridiagonal
    def counted(G):
        if not fake.inside:
            dsytrd_calls.append(1)
        return real_ht(G)

    monkeypatch.setattr(tri, "householder_tridiagonal", counted)
    W = 0.02 * np.random.default_rng(5).standard_normal((200, 600))
    enc = svd_mod.enclose_singular_values(W, mode="auto")
    assert enc.mode == expected
    assert fake.calls == ["dsytrd", "certify"] and dsytrd_calls == []  # one dsytrd, shared with Theorem G-T
    assert fake.predicted == [True]  # Gaussian 200×600: λ_min/λ₁ ≈ 0.08, far above the threshold
    s = np.linalg.svd(W, compute_uv=False)
    assert np.all(enc.lower <= s) and np.all(s <= enc.upper)
    # mode gram never asks for Theorem G-R
    fake.calls.clear()
    assert svd_mod.enclose_singular_values(W, mode="gram").mode == "gram-tri" and fake.calls == []


def test_auto_below_the_reconstruct_order_keeps_theorem_g_t(monkeypatch):
    import sys

    fake = _FakeReconstruct("tri", min_order=10**6)
    monkeypatch.setitem(sys.modules, "certbound.enclose.reconstruct", fake)
    import certbound.enclose as enclose_pkg

    monkeypatch.setattr(enclose_pkg, "reconstruct", fake, raising=False)
    W = 0.02 * np.random.default_rng(6).standard_normal((200, 600))
    assert svd_mod.enclose_singular_values(W, mode="auto").mode == "gram-tri" and fake.calls == []


def test_auto_skips_theorem_g_r_before_any_of_its_work_when_even_a_low_estimate_misses(monkeypatch):
    # σᵢ ∝ i^-1.5: λ_min/λ₁ ≈ 1e-7, so even e ≈ RECONSTRUCT_PREFILTER·√k·u·‖T‖_F misses τ: Theorem G-R is not called,
    # Theorem G-T runs on the same dsytrd output.
    import sys

    fake = _FakeReconstruct("tri")
    monkeypatch.setitem(sys.modules, "certbound.enclose.reconstruct", fake)
    import certbound.enclose as enclose_pkg

    monkeypatch.setattr(enclose_pkg, "reconstruct", fake, raising=False)
    rng = np.random.default_rng(7)
    U = np.linalg.qr(rng.standard_normal((200, 200)))[0]
    V = np.linalg.qr(rng.standard_normal((600, 200)))[0]
    W = (U * np.arange(1, 201) ** -1.5) @ V.T
    enc = svd_mod.enclose_singular_values(W, mode="auto")
    assert fake.calls == ["dsytrd"] and enc.mode in ("gram-tri", "fast+gram-tri")


def _auto_theorem_gt_ends(W):
    """Theorem G-T's float ends as mode auto computes them (its Ĝ chunks, gram.auto_gram_chunk), without G-R."""
    res = gram_mod.certify_gram(W, arb(0), 0, chunk=gram_mod.auto_gram_chunk(W.shape))
    assert res is not None and res[4] == "gram-tri"
    return np.maximum(res[0].lower, 0.0), res[0].upper


@pytest.mark.parametrize("p", [0.3, 0.6])
def test_auto_keeps_the_real_theorem_g_r_only_within_the_median_target(p):
    # k = 512, σᵢ ∝ i^-p: at p = 0.3 Theorem G-R meets τ with a median ≈ 2e-10; at p = 0.6 it met τ too but with a
    # median ≈ 1.5e-9 > RECONSTRUCT_MEDIAN_TARGET (measured, session 7), so auto keeps Theorem G-T's floats there.
    import certbound.enclose.reconstruct as rec

    m = rec.RECONSTRUCT_MIN_ORDER
    rng = np.random.default_rng(13)
    U = np.linalg.qr(rng.standard_normal((m, m)))[0]
    V = np.linalg.qr(rng.standard_normal((4 * m, m)))[0]
    W = (U * np.arange(1, m + 1) ** -p) @ V.T
    auto = svd_mod.enclose_singular_values(W, mode="auto")
    s = np.linalg.svd(W, compute_uv=False)
    assert np.all(auto.lower <= s) and np.all(s <= auto.upper)
    sel = s >= svd_mod.AUTO_SPECTRUM_FRACTION * s[0]
    median = float(np.median(((auto.upper - auto.lower) / s)[sel]))
    assert median <= gram_mod.RECONSTRUCT_MEDIAN_TARGET
    if p == 0.3:
        assert auto.mode == "gram-rec"
    else:
        lo, _ = _auto_theorem_gt_ends(W)
        assert auto.mode == "gram-tri" and np.array_equal(auto.lower, lo)


@pytest.mark.parametrize("kind", ["gaussian", "decaying"])
def test_auto_with_the_real_theorem_g_r(kind):
    # k = 512 = RECONSTRUCT_MIN_ORDER: a Gaussian matrix (λ_min/λ₁ ≈ 0.2) takes Theorem G-R within τ; σᵢ ∝ i^-1
    # (λ_min/λ₁ ≈ 4e-6) does not even try it (prefilter) and gets Theorem G-T's floats exactly.
    import certbound.enclose.reconstruct as rec

    m = rec.RECONSTRUCT_MIN_ORDER
    rng = np.random.default_rng(11)
    if kind == "gaussian":
        W = 0.02 * rng.standard_normal((m, 2 * m))
    else:
        U = np.linalg.qr(rng.standard_normal((m, m)))[0]
        V = np.linalg.qr(rng.standard_normal((2 * m, m)))[0]
        W = (U * np.arange(1, m + 1) ** -1.0) @ V.T
    auto = svd_mod.enclose_singular_values(W, mode="auto")
    gram = svd_mod.enclose_singular_values(W, mode="gram")
    assert gram.mode == "gram-tri"
    s = np.linalg.svd(W, compute_uv=False)
    assert np.all(auto.lower <= s) and np.all(s <= auto.upper)
    if kind == "gaussian":
        assert auto.mode == "gram-rec" and svd_mod.meets_width_target(list(auto.sigma))
    else:
        assert auto.mode in ("gram-tri", "fast+gram-tri")
        if auto.mode == "gram-tri":
            lo, hi = _auto_theorem_gt_ends(W)
            assert np.array_equal(auto.lower, lo) and np.array_equal(auto.upper, hi)


def test_auto_uses_its_own_gram_chunks(monkeypatch):
    """Mode auto's Ĝ is rounded_gram(chunk=AUTO_GRAM_CHUNK) from order TRIDIAGONAL_MIN_ORDER on (its β is that
    β exactly), mode gram's the default chunks; below the order both use the default; both enclosures are valid."""
    rng = np.random.default_rng(21)
    W = 0.02 * rng.standard_normal((200, 900))
    s = np.linalg.svd(W, compute_uv=False)
    auto = svd_mod.enclose_singular_values(W, mode="auto")
    gram = svd_mod.enclose_singular_values(W, mode="gram")
    assert gram_mod.auto_gram_chunk(W.shape) == gram_mod.AUTO_GRAM_CHUNK
    assert auto.beta.upper() == rounded_gram(W, chunk=gram_mod.AUTO_GRAM_CHUNK)[1].upper()
    assert gram.beta.upper() == rounded_gram(W)[1].upper() != auto.beta.upper()
    for enc in (auto, gram):  # float SVD far inside both (widths ≥ 1e-12 relative, SVD error ≈ 1e-15)
        assert np.all(enc.lower <= s * (1 - 1e-14)) and np.all(s * (1 + 1e-14) <= enc.upper)
    small = 0.02 * rng.standard_normal((100, 900))
    assert gram_mod.auto_gram_chunk(small.shape) is None
    a, g = (svd_mod.enclose_singular_values(small, mode=md) for md in ("auto", "gram"))
    assert a.beta.upper() == g.beta.upper()
