"""Property tests of Lemma A's pieces (spec §9 items 1, 2, 3, 5, 6, 7, 8), on exact rationals or Arb balls."""

from __future__ import annotations

import math
from fractions import Fraction as F
from itertools import combinations

import mpmath
import numpy as np
from flint import arb
from hypothesis import assume, given
from hypothesis import strategies as st

from certbound.ball import float_lower, float_upper, upper_fraction
from certbound.bounds import (
    CoverChoice,
    LinearMapClass,
    log_cover_linear_map,
    log_cover_rank_part,
    log_cover_tail,
    proposition_a3,
    split_rank,
    tail_radii,
)
from certbound.bounds._closed_form import proposition_a3_threshold
from certbound.testing import matrices_with_singular_values, singular_value_lists

ps = st.integers(1, 8).map(lambda k: F(k, 4))  # p ∈ (0, 2]
dyadic_pos = st.builds(lambda k, e: F(k) * F(2) ** e, st.integers(1, 2**10), st.integers(-12, 0))


def _pow(x: F, p: F) -> arb:
    return arb(x.numerator) / arb(x.denominator) if p == 1 else (arb(x.numerator) / arb(x.denominator)) ** (
        arb(p.numerator) / arb(p.denominator))


# ------------------------------------------------------------------ item 1: split lemma
@given(singular_value_lists(6, min_count=1), ps, dyadic_pos)
def test_split_lemma(sig, p, tau):
    sig = [F(s) for s in sig]
    assume(max(sig) > 0)
    sp = sum((_pow(s, p) for s in sig if s > 0), arb(0))
    big = [s for s in sig if s > tau]
    tail = [s for s in sig if s <= tau]
    s1 = max(sig)
    m = min(tau, s1)
    # #{σ > τ} ≤ ⌈S_p τ^{-p}⌉ − 1 ≤ ⌊S_p τ^{-p}⌋: S_p τ^{-p} > #{σ > τ} unless that count is 0
    q = sp / _pow(tau, p)
    assert len(big) == 0 or not bool(q <= len(big))
    # Σ_{σ ≤ τ} σ² ≤ S_p min(τ, σ₁)^{2−p} ≤ rank · min(τ, σ₁)²  (equality cases allowed: "not provably >")
    t2 = sum((x * x for x in tail), F(0))
    t2a = arb(t2.numerator) / t2.denominator
    assert not bool(t2a > sp * _pow(m, 2 - p))
    rank = sum(1 for s in sig if s > 0)
    assert t2 <= rank * m * m
    # the code's r_τ, τ̄ and R_τ for the class built from the certified S_p are valid
    cls = LinearMapClass(6, 6, 6, p, sp.upper(), float(s1), 10)
    assert split_rank(cls, tau) >= len(big)
    tbar, R = tail_radii(cls, tau)
    assert upper_fraction(tbar) >= max(tail, default=F(0))
    assert upper_fraction(R * R) >= t2


# ------------------------------------------------------------------ item 2: Lemma Z as an algorithm
def _lemma_z(zs, w, eps, B2):
    """The perceptron cover of Lemma Z in exact arithmetic; returns (ŵ, steps)."""
    eta = eps / B2
    what = [F(0)] * len(w)
    steps = 0
    while True:
        bad = None
        for k, z in enumerate(zs):
            g = sum((a - b) * c for a, b, c in zip(what, w, z))
            if abs(g) > eps:
                bad = (k, 1 if g > 0 else -1)
                break
        if bad is None:
            return what, steps
        k, sgn = bad
        what = [a - eta * sgn * c for a, c in zip(what, zs[k])]
        steps += 1


small_q = st.integers(-8, 8).map(lambda k: F(k, 8))


@given(st.lists(st.lists(small_q, min_size=3, max_size=3), min_size=1, max_size=5),
       st.lists(small_q, min_size=3, max_size=3), st.sampled_from([F(1, 4), F(1, 8), F(1, 16)]))
def test_lemma_z_constructive(zs, w, eps):
    B2 = max(max(sum(c * c for c in z) for z in zs), F(1, 64))
    R2 = max(sum(c * c for c in w), F(1, 64))
    what, steps = _lemma_z(zs, w, eps, B2)
    T = math.ceil(R2 * B2 / eps**2) - 1
    assert steps <= T
    assert max(abs(sum((a - b) * c for a, b, c in zip(what, w, z))) for z in zs) <= eps
    assert sum((a - b) ** 2 for a, b in zip(what, w)) <= sum(c * c for c in w)


@given(st.integers(0, 2**31), st.sampled_from([0.3, 0.6, 1.0]), st.sampled_from([0.05, 0.1, 0.2]))
def test_a2b_vector_cover_constructive(seed, delta, eta):
    """A2b with b = 2 and an exact angle net (mpmath, 40 digits): steps and final error within the bound."""
    mp = mpmath.mp
    with mpmath.workdps(40):
        rng = np.random.default_rng(seed)
        K = int(mp.ceil(mp.pi / mp.asin(mp.mpf(delta) / 2)))  # adjacent chord 2 sin(π/K) ≤ δ
        net = [(mp.cos(2 * mp.pi * j / K), mp.sin(2 * mp.pi * j / K)) for j in range(K)]
        assert K <= (1 + 2 / delta) ** 2
        a = 3
        U = [[mp.mpf(float(x)) for x in r] for r in rng.uniform(-1, 1, (4, a)) / 2]
        W = [[mp.mpf(float(x)) for x in r] for r in rng.uniform(-1, 1, (a, 2))]
        R2 = mp.fsum(x * x for r in W for x in r)
        kap = 1 - mp.mpf(delta) ** 2 / 2
        Wh = [[mp.mpf(0)] * 2 for _ in range(a)]
        steps = 0
        while True:
            bad = None
            for u in U:
                g = [mp.fsum(u[i] * (Wh[i][j] - W[i][j]) for i in range(a)) for j in range(2)]
                ng = mp.sqrt(g[0] ** 2 + g[1] ** 2)
                if ng > eta:
                    bad = (u, g, ng)
                    break
            if bad is None:
                break
            u, g, ng = bad
            d = min(net, key=lambda v: (v[0] - g[0] / ng) ** 2 + (v[1] - g[1] / ng) ** 2)
            assert mp.sqrt((d[0] - g[0] / ng) ** 2 + (d[1] - g[1] / ng) ** 2) <= delta
            for i in range(a):
                for j in range(2):
                    Wh[i][j] -= eta * kap * u[i] * d[j]
            steps += 1
            assert steps <= 10**5
        T = int(mp.ceil(R2 / (mp.mpf(eta) ** 2 * kap**2))) - 1
        assert steps <= T


# ------------------------------------------------------------------ item 3: rank-net algebra
def _det(M):
    n = len(M)
    if n == 0:
        return F(1)
    if n == 1:
        return M[0][0]
    return sum(((-1) ** j) * M[0][j] * _det([r[:j] + r[j + 1:] for r in M[1:]]) for j in range(n))


def _is_psd(M):
    n = len(M)
    for k in range(1, n + 1):
        for idx in combinations(range(n), k):
            if _det([[M[i][j] for j in idx] for i in idx]) < 0:
                return False
    return True


@given(st.integers(0, 2**31), st.sampled_from([F(1, 8), F(1, 4)]), st.sampled_from([F(1, 16), F(1, 4)]),
       st.sampled_from([F(1, 2), F(1), F(2)]))
def test_rank_net_algebra(seed, eta1, eta2, c):
    from certbound.testing import dyadic_orthogonal

    rng = np.random.default_rng(seed)
    a, b, r = 4, 4, 2
    Q = [dyadic_orthogonal(a, rng=rng) for _ in range(2)]
    P = [dyadic_orthogonal(b, rng=rng) for _ in range(2)]
    U = [[F(x) for x in row[:r]] for row in Q[0]]
    V = [[F(x) for x in row[:r]] for row in P[0]]
    U2 = [[F(x) for x in row[:r]] for row in Q[1]]
    V2 = [[F(x) for x in row[:r]] for row in P[1]]
    # Û = (1 − η₁/2)U + (η₁/2)U₂: ‖U − Û‖₂ ≤ η₁ and ‖Û‖₂ ≤ 1 exactly (both have orthonormal columns)
    Uh = [[(1 - eta1 / 2) * x + eta1 / 2 * y for x, y in zip(r1, r2)] for r1, r2 in zip(U, U2)]
    Vh = [[(1 - eta1 / 2) * x + eta1 / 2 * y for x, y in zip(r1, r2)] for r1, r2 in zip(V, V2)]
    sig = [c * F(int(k), 8) for k in rng.integers(0, 9, r)]
    sigh = [min(c, max(F(0), s + eta2 * F(int(k), 4))) for s, k in zip(sig, rng.integers(-4, 5, r))]
    D = [[sum(U[i][t] * sig[t] * V[j][t] - Uh[i][t] * sigh[t] * Vh[j][t] for t in range(r)) for j in range(b)]
         for i in range(a)]
    bound2 = (2 * c * eta1 + eta2) ** 2
    DtD = [[sum(D[k][i] * D[k][j] for k in range(a)) for j in range(b)] for i in range(b)]
    M = [[(bound2 if i == j else 0) - DtD[i][j] for j in range(b)] for i in range(b)]
    assert _is_psd(M)  # ‖D‖₂² ≤ (2cη₁ + η₂)², exactly


# ------------------------------------------------------------------ items 5, 6
@given(st.integers(1, 6), st.integers(1, 6), st.integers(0, 8), dyadic_pos, dyadic_pos, st.integers(1, 10**9))
def test_p0_is_rank_counting(a, b, s, c, eps, M):
    r = min(a, b)
    cls = LinearMapClass(a, b, r, 0, s, c, M)
    v = log_cover_linear_map(cls, eps, allow_p0_tail=False)
    if eps >= c:
        assert v.is_zero()
        return
    r0 = min(s, r)
    with mpmath.workdps(50):
        ref = r0 * (a + b + 1) * mpmath.log(1 + 6 * mpmath.mpf(c.numerator) / c.denominator / (mpmath.mpf(eps.numerator) / eps.denominator))
    assert abs(float(v.mid()) - float(ref)) <= 1e-9 * (1 + float(ref)) and bool(v.upper() >= float(ref) * (1 - 1e-15))
    # independent of M; with the τ ≥ c tail allowed: ≤ rank counting
    cls2 = LinearMapClass(a, b, r, 0, s, c, M * 1000 + 7)
    assert bool(log_cover_linear_map(cls2, eps, allow_p0_tail=False).overlaps(v))
    assert float_upper(log_cover_linear_map(cls, eps)) <= float_upper(v)


@given(ps, dyadic_pos, dyadic_pos, st.integers(1, 10**6))
def test_trivial_regimes(p, s, c, M):
    cls = LinearMapClass(5, 3, 3, p, s, c, M)
    for e in (c, c * 2, c + 1):
        assert log_cover_linear_map(cls, e).is_zero()
    # H_tail = 0 for η ≥ min(τ̄, R_τ)
    tau = c / 2
    tbar, R = tail_radii(cls, tau)
    thr = tbar.min(R).upper()
    for kind in ("coord", "vector", "volume"):
        assert log_cover_tail(cls, tau, thr * 2, kind, 0.5).is_zero()


# ------------------------------------------------------------------ item 7 (Lemma A part)
@given(ps, dyadic_pos, dyadic_pos, dyadic_pos, st.integers(1, 10**6), st.sampled_from(["rank", "coord", "vector", "volume"]),
       st.sampled_from([F(1, 2), F(1, 8), F(0)]))
def test_lemma_a_monotone_fixed_choice(p, s, c, eps, M, kind, share):
    assume(eps < c)
    tau = c / 3
    ch = CoverChoice("rank") if kind == "rank" else CoverChoice("split", tau=tau, rank_share=share, tail=kind,
                                                                sphere_delta=F(1, 2))
    base = log_cover_linear_map(LinearMapClass(4, 5, 3, p, s, c, M), eps, ch)
    bigger = [
        LinearMapClass(4, 5, 3, p, s * 2, c, M), LinearMapClass(4, 5, 3, p, s, c * 2, M),
        LinearMapClass(4, 5, 3, p, s, c, M * 3), LinearMapClass(5, 5, 3, p, s, c, M),
        LinearMapClass(4, 6, 3, p, s, c, M), LinearMapClass(4, 5, 4, p, s, c, M),
    ]
    for cls in bigger:
        assert float_upper(log_cover_linear_map(cls, eps, ch)) >= float_lower(base)
    assert float_upper(log_cover_linear_map(LinearMapClass(4, 5, 3, p, s, c, M), eps / 2, ch)) >= float_lower(base)


# ------------------------------------------------------------------ item 8 (Proposition A3)
@given(ps, st.sampled_from([F(1, 2), F(2), F(8)]), st.sampled_from([F(1, 2), F(1), F(4)]),
       st.sampled_from([F(1, 100), F(1, 10), F(1, 3)]), st.sampled_from([10, 10**4, 10**8]),
       st.sampled_from([(4, 4, 4), (8, 3, 3), (16, 16, 8)]))
def test_a3_dominates(p, s, c, eps, M, shape):
    a, b, r = shape
    assume(eps < c)
    cls = LinearMapClass(a, b, r, p, s, c, M)
    a3 = proposition_a3(cls, eps)
    # at A3's own parameters (τ*, ε/2, coordinate tail) Lemma A is ≤ A3 (the proof of A3) ...
    tau = F(float_upper(proposition_a3_threshold(cls, eps)))
    at_a3 = log_cover_linear_map(cls, eps, CoverChoice("split", tau=tau, rank_share=F(1, 2), tail="coord"))
    assert float_upper(at_a3) <= float_lower(a3) * (1 + 1e-12) + 1e-9
    # ... and the optimised value is never worse than A3
    assert float_upper(log_cover_linear_map(cls, eps)) <= float_lower(a3) * (1 + 1e-12) + 1e-9


def test_rank_part_edge_cases():
    assert log_cover_rank_part(3, 3, 0, 1, 0.1).is_zero()
    assert log_cover_rank_part(3, 3, 2, 1, 1).is_zero()
    assert not log_cover_rank_part(3, 3, 2, 1, 0).is_finite()


@given(matrices_with_singular_values(4, 5, min_rank=1))
def test_strategy_matrix_has_prescribed_singular_values(pair):
    W, s = pair
    got = np.linalg.svd(W, compute_uv=False)
    assert np.allclose(got, s, atol=1e-12 * (1 + max(s)))
