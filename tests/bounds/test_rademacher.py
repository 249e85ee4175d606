"""Lemma C0 (floor B_L/2), Lemma C2 (one-step bound) and the §C3 minimum (proofs/theory-chaining.md).

References are independent of the implementation: mpmath at 200 bits for the closed forms, and the exact
empirical Rademacher complexity of small finite classes (enumeration of all 2^n sign vectors, Fractions) with
brute-force covers.
"""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction as F

import mpmath
import numpy as np
import pytest
from flint import arb

from certbound.bounds import theorem2_posthoc_bound
from certbound.bounds._rademacher import (
    certified_rademacher_minimum,
    diameter_bound,
    one_step_bound,
    one_step_cutoff,
)
from certbound.bounds._spec import TransformerSpec


def _mp_one_step(alpha, H, n, B):
    with mpmath.workprec(200):
        return mpmath.mpf(alpha) + mpmath.mpf(B) / 2 * mpmath.sqrt(2 * mpmath.mpf(H) / n)


def _contains(ball: arb, x) -> bool:
    lo = mpmath.mpf(ball.lower().str(30, radius=False))
    hi = mpmath.mpf(ball.upper().str(30, radius=False))
    return lo - mpmath.mpf(10) ** -25 <= x <= hi + mpmath.mpf(10) ** -25


@pytest.mark.parametrize("alpha,H,n,B", [
    (F(1, 8), 50, 10**4, 1), (0.0015, 4.05e8, 10**9, 1), (F(1, 3), F(7, 3), 7, 4), (2.0**-30, 1e4, 469759, 4),
    (0.5, 0, 1, 1),
])
def test_one_step_bound_against_mpmath(alpha, H, n, B):
    v = one_step_bound(alpha, H, n, B)
    a = mpmath.mpf(alpha.numerator) / alpha.denominator if isinstance(alpha, F) else mpmath.mpf(alpha)
    h = mpmath.mpf(H.numerator) / H.denominator if isinstance(H, F) else mpmath.mpf(H)
    ref = _mp_one_step(a, h, n, B)
    assert _contains(v, ref)
    assert v.rad() < 1e-30 * (1 + abs(float(v.mid())))


def test_one_step_bound_uses_upper_endpoint_and_unbounded_entropy():
    h = arb(100, 1)          # [99, 101] (radius rounded up): the bound must use (at least) 101
    v = one_step_bound(F(1, 4), h, 100, 1)
    ref = _mp_one_step(mpmath.mpf(1) / 4, 101, 100, 1)
    up = mpmath.mpf(v.upper().str(30, radius=False))
    assert ref <= up <= ref + mpmath.mpf(10) ** -9
    assert not one_step_bound(F(1, 4), arb.pos_inf(), 100, 1).is_finite()


def test_diameter_bound_against_exact():
    for B in (1, 4, F(7, 3), 0.1):
        v = diameter_bound(B)
        q = F(B)
        assert _contains(v, mpmath.mpf(q.numerator) / (2 * q.denominator))


@pytest.mark.parametrize("bad", [dict(cutoff=0), dict(cutoff=-1.0), dict(n_samples=0), dict(loss_bound=0)])
def test_one_step_bound_rejects_bad_input(bad):
    kw = dict(cutoff=F(1, 8), entropy=1, n_samples=10, loss_bound=1) | bad
    with pytest.raises(ValueError):
        one_step_bound(**kw)


def _exact_rademacher(V: list[tuple[F, ...]]) -> F:
    """E_σ max_v (1/n)<σ, v> exactly (all 2^n sign vectors)."""
    n = len(V[0])
    tot = F(0)
    for sig in itertools.product((-1, 1), repeat=n):
        tot += max(sum(s * x for s, x in zip(sig, v)) for v in V)
    return tot / (n * 2**n)


def _dinf(u, v):
    return max(abs(a - b) for a, b in zip(u, v))


def _greedy_cover_size(V, eps):
    """Size of a d^∞ ε-cover made of points of V (greedy): an upper bound on N(V, ε, d^∞)."""
    left = list(V)
    size = 0
    while left:
        c = left[0]
        left = [v for v in left if _dinf(v, c) > eps]
        size += 1
    return size


@pytest.mark.parametrize("seed", range(6))
def test_floor_and_one_step_dominate_exact_rademacher(seed):
    rng = random.Random(seed)
    n = rng.choice([4, 6, 8, 10])
    B = rng.choice([F(1), F(4)])
    V = [tuple(F(rng.randint(0, 8), 8) * B for _ in range(n)) for _ in range(rng.randint(2, 12))]
    exact = _exact_rademacher(V)
    assert exact <= F(B, 2)                                  # Lemma C0 itself
    assert float(diameter_bound(B).upper()) >= float(exact)
    for alpha in (F(1, 16) * B, F(1, 8) * B, F(1, 4) * B):
        N = _greedy_cover_size(V, alpha)
        # Lemma C2 on a finite class in [0, B]^n (the cover's elements lie in V ⊂ [0, B]^n)
        v = one_step_bound(alpha, math.log(N) * (1 + 1e-15) + 1e-300, n, B)
        assert float(v.upper()) >= float(exact), (alpha, N, exact)


def test_minimum_picks_smallest_upper_endpoint_and_skips_nan():
    est = {"diameter": arb(2), "one-step": arb("1.5 +/- 0.6"), "dudley": arb(2.05)}
    assert certified_rademacher_minimum(est)[0] == "diameter"           # 2.1 > 2
    est["one-step"] = arb("1.5 +/- 0.1")
    assert certified_rademacher_minimum(est)[0] == "one-step"
    assert certified_rademacher_minimum({"dudley": arb("nan"), "diameter": arb(1)})[0] == "diameter"
    with pytest.raises(ValueError):
        certified_rademacher_minimum({})


def test_one_step_cutoff_minimises_float_objective():
    # Ĥ(α) = d·ln(1 + 1/α): the float optimum satisfies 1 = (B/2)√(2/n)·d/(2√H·α(1+α)) approximately
    d, n, B = 100.0, 10**6, 1.0
    H = lambda a: d * np.log1p(1.0 / np.asarray(a))
    a = one_step_cutoff(H, n, B)
    grid = np.geomspace(1e-8, 0.5, 20001)
    obj = grid + B / 2 * np.sqrt(2 * H(grid) / n)
    best = obj.min()
    assert a + B / 2 * math.sqrt(2 * float(H(a)) / n) <= best * (1 + 1e-3)


SPEC_P = TransformerSpec(2, 1, 4, 3, ffn_kind="single", qk_rank=2, activation="relu")
SPECTRA = {(0, 0, "QK"): [0.5, 0.2, 0, 0], (0, 0, "VO"): [1, 0.5, 0.25, 0.1], (0, None, "M"): [1.2, 0.6, 0.3, 0.1],
           (1, 0, "QK"): [0.4, 0.1, 0, 0], (1, 0, "VO"): [0.8, 0.4, 0.2, 0.1], (1, None, "M"): [1, 0.5, 0.25, 0.1]}


@pytest.mark.parametrize("n", [10, 10**3, 10**6])
def test_reported_term_is_the_minimum_and_floor_replaces_fallback(n):
    r = theorem2_posthoc_bound(SPEC_P, SPECTRA, n, 0.05)
    ups = {k: float(v.upper()) for k, v in r.rademacher_estimates.items()}
    assert set(ups) == {"diameter", "one-step", "dudley"}
    assert float(r.rademacher.upper()) == min(ups.values())
    assert r.rademacher_method == min(ups, key=ups.get) or ups[r.rademacher_method] == min(ups.values())
    assert float(r.rademacher.upper()) <= 0.5            # never above the floor B_L/2 (B_L = 1)
    if n == 10:                                          # tiny n: nothing beats the floor
        assert r.rademacher_method == "diameter"
        assert r.rademacher.contains(arb(0.5))
    # the one-step value is re-evaluated from its recorded α (independent formula, mpmath)
    if r.one_step_cutoff is not None:
        assert float(r.rademacher_estimates["one-step"].lower()) > float(r.one_step_cutoff)
    assert "rademacher_estimate" in r.assumptions and r.rademacher_method in r.assumptions["rademacher_estimate"]


def test_slope_weights_are_a_valid_allocation():
    from certbound.bounds._rademacher import _slope_weights

    slopes = np.array([100.0, 1.0, 0.0, 5000.0])

    def entropies_at(weights, eta):       # H_j = d_j ln(1/(w_j η)) (parameter counting), d_3 = 0
        w = np.array([float(x) for x in weights])
        return slopes * np.log(1.0 / (w * eta))

    w = _slope_weights(entropies_at, 4, 1e-3)
    assert all(isinstance(x, F) and x > 0 for x in w) and sum(w, F(0)) <= 1
    wf = np.array([float(x) for x in w])
    assert wf[3] > wf[0] > wf[1] > wf[2]                 # proportional to the slopes (zero slope: a small share)
    assert abs(wf[3] / wf[0] - 50) < 1e-6
    # never worse than uniform on the float objective here
    assert entropies_at(w, 1e-3).sum() <= entropies_at([F(1, 4)] * 4, 1e-3).sum()
