"""Referee tests of the tridiagonal certificate (Sturm counts of T̂, Theorem G with T) against exact references.

References (no certbound code, no tolerance): :mod:`tests.enclose.exact_tridiagonal` (exact
inertia of a float tridiagonal ``T − μI`` over ℚ, exact bisection) and
:mod:`tests.enclose.exact_inertia` (dense Sylvester inertia). This file first checks the
references against each other, then the kernel's Sturm counts and brackets on adversarial
float tridiagonals (clusters, exact eigenvalue hits, zero / subnormal / huge entries, shifts
at the Gershgorin ends and at 2⁻¹⁰²²), then the whole dense route end to end.

Fast cases run by default; ``-m slow`` runs many more seeds.
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest

from certbound.enclose import enclose_singular_values, fperror, gram
from certbound.enclose import tridiagonal as tri
from tests.enclose.exact_inertia import (
    fractions_of,
    inertia,
    lower_fraction,
    matmul,
    symmetric_norm_at_most,
    transpose,
    upper_fraction,
)
from tests.enclose.exact_known import known_matrix
from tests.enclose.test_exact_gram import (
    _adversarial,
    _exact_arb,
    _layout,
    _random_internals,
    _theorem_g_case,
    check_inertia,
    check_known,
)
from tests.enclose.exact_tridiagonal import (
    count_at_most,
    count_below,
    dense,
    eigenvalue_in,
    eigenvalue_in_descending,
    frac,
    gershgorin,
    isolate,
    tridiagonal_inertia,
    weyl_count_window,
)

TINY = [0.0, 5e-324, 2.0**-1073, 2.0**-1022, 2.0**-1022 - 2.0**-1074, 2.0**-538, 2.0**-537, 2.0**-511]
HUGE = [2.0**511, 2.0**512, 2.0**1000, 1.7976931348623157e308]


# ---------------------------------------------------------------- the references themselves


def _small_integer_case(rng):
    n = int(rng.integers(1, 8))
    d = rng.integers(-2, 3, n).astype(float)
    e = rng.choice([0.0, 1.0, -1.0, 2.0], max(n - 1, 0))
    mu = float(rng.integers(-6, 7)) / 2
    return d, e, mu


def test_reference_inertia_matches_dense_sylvester():
    # Many exact zero pivots (integer data, half-integer shifts): the 2×2 pivots and splits are exercised.
    rng = np.random.default_rng(5001)
    zero_pivots = 0
    for _ in range(1500):
        d, e, mu = _small_integer_case(rng)
        n = len(d)
        T = dense(d, e)
        A = [[T[i][j] - (frac(mu) if i == j else 0) for j in range(n)] for i in range(n)]
        got = tridiagonal_inertia(d, e, mu)
        assert got == inertia(A), (d.tolist(), e.tolist(), mu)
        zero_pivots += got[2] > 0
    assert zero_pivots > 100


def test_reference_isolation_against_known_eigenvalues():
    # T = a·I + b·(path adjacency) on 2 nodes: a ± b; blocks of those (e = 0) and a scaled copy
    # at 2^-1060 (subnormal data, exact arithmetic does not care).
    for s in (1.0, 2.0**-1060, 2.0**900):
        d = [3 * s, 3 * s, -s, -s, 5 * s]
        e = [s, 0.0, 2 * s, 0.0]
        want = sorted(Fraction(x) for x in [2 * s, 4 * s, -3 * s, s, 5 * s])
        iso = isolate(d, e, frac(s) / 2**70)
        for k, ((a, b), w) in enumerate(zip(iso, want), 1):
            assert a <= w <= b and b - a <= frac(s) / 2**70
            assert eigenvalue_in(d, e, k, w, w)
            lo_out = w + Fraction(frac(s), 2**60)
            assert not eigenvalue_in(d, e, k, lo_out, None)
            assert not eigenvalue_in(d, e, k, None, w - Fraction(frac(s), 2**60))
    # 1-D Laplacian 2 − 2cos(kπ/(n+1)): irrational; the brackets hold the numpy values up to its error
    n = 12
    iso = isolate([2.0] * n, [-1.0] * (n - 1), Fraction(1, 2**40))
    ref = [2 - 2 * np.cos(k * np.pi / (n + 1)) for k in range(1, n + 1)]
    for (a, b), x in zip(iso, ref):
        assert b - a <= Fraction(1, 2**40) and float(a) - 1e-12 <= x <= float(b) + 1e-12


def test_reference_counts_monotone_and_gershgorin():
    rng = np.random.default_rng(5002)
    for _ in range(200):
        n = int(rng.integers(1, 10))
        d = rng.standard_normal(n) * 2.0 ** rng.integers(-40, 40, n)
        e = rng.standard_normal(max(n - 1, 0)) * 2.0 ** rng.integers(-40, 40, max(n - 1, 0))
        lo, hi = gershgorin(d, e)
        assert count_below(d, e, lo) == 0 and count_at_most(d, e, hi) == n
        pts = sorted(frac(x) for x in rng.standard_normal(6) * float(hi - lo) + float(lo))
        c = [count_below(d, e, p) for p in pts]
        assert c == sorted(c)


# ---------------------------------------------------------------- adversarial float tridiagonals



def _wilkinson(n: int) -> tuple[np.ndarray, np.ndarray]:
    """W_{2n+1}⁺: d = |n − i|, e = 1 — pairs of eigenvalues equal to ≈ 15 digits."""
    return np.abs(np.arange(-n, n + 1, dtype=float)), np.ones(2 * n)


def adversarial_tridiagonal(rng) -> tuple[np.ndarray, np.ndarray]:
    """Float d, e aimed at Lemma S's guards and the evaluation's scaling and zeroing steps."""
    kind = int(rng.integers(0, 14))
    k = int(rng.integers(1, 10))
    d = rng.standard_normal(k)
    e = rng.standard_normal(k - 1)
    if kind == 0:  # integer data: exact eigenvalue hits at integer / half-integer shifts, exact zero pivots
        d = rng.integers(-3, 4, k).astype(float)
        e = rng.choice([0.0, 1.0, -1.0, 2.0], k - 1)
    elif kind == 1:
        d, e = _wilkinson(int(rng.integers(1, 6)))
    elif kind == 2:  # a tight cluster: e tiny relative to d
        d = 1.0 + rng.integers(-2, 3, k) * 2.0**-52
        e = rng.standard_normal(k - 1) * 2.0 ** -int(rng.integers(20, 60))
    elif kind == 3:  # off-diagonals around the zeroing threshold 2⁻³⁰⁰ of the normalised T (max |T| ≈ 1)
        d = rng.uniform(-1, 1, k)
        d[0] = 1.5
        e = rng.choice([2.0**-300, 2.0**-300 * (1 - 2.0**-53), 2.0**-301, 2.0**-299, 0.0, 0.5], k - 1)
        e = e * rng.choice([-1.0, 1.0], k - 1)
    elif kind == 4:  # e with squares below the normal range (or subnormal e), d of order one
        e = rng.choice(TINY + [1.0], k - 1) * rng.choice([-1.0, 1.0], k - 1)
    elif kind == 5:  # e with squares that overflow, or near it
        e = rng.choice(HUGE[:3] + [1.0], k - 1)
        d = d * 2.0**500
    elif kind == 6:  # everything subnormal or tiny
        d = rng.integers(-40, 40, k) * 5e-324
        e = rng.integers(-40, 40, k - 1) * 5e-324
    elif kind == 7:  # one huge entry, the rest far below: the scaled copy rounds into the subnormals
        d = rng.standard_normal(k) * 2.0**-1000
        e = rng.standard_normal(k - 1) * 2.0**-1040
        d[int(rng.integers(0, k))] = 2.0 ** int(rng.integers(0, 60))
    elif kind == 8:  # near overflow
        d = rng.uniform(-1, 1, k) * 1.7e308
        e = rng.uniform(-1, 1, k - 1) * 2.0**1022
    elif kind == 9:  # graded
        d = d * np.ldexp(1.0, -8 * np.arange(k))
        e = e * np.ldexp(1.0, -8 * np.arange(k - 1) - 4)
    elif kind == 10:  # tridiagonal of a Gram matrix with exact zero eigenvalues (dsytrd's own output)
        m = max(k, 2)
        r = int(rng.integers(0, m))
        A = rng.integers(-3, 4, (m, r)).astype(float)
        G = A @ A.T
        got = tri.householder_tridiagonal(G)
        if got is not None:
            _, d, e = got
    elif kind == 11:  # repeated diagonal, equal off-diagonals (eigenvalues d ± 2e cos(jπ/(k+1)))
        d = np.full(k, float(rng.choice([0.0, 1.0, -0.75])))
        e = np.full(k - 1, float(rng.choice([1.0, 2.0**-30, 0.5])))
    elif kind == 12:  # max |T| exactly a power of two / just below one (the scaling exponent's edge)
        d = rng.uniform(-1, 1, k)
        d[int(rng.integers(0, k))] = float(rng.choice([1.0, 2.0, 1 - 2.0**-53, 2 - 2.0**-52, 0.5]))
        e = rng.uniform(-0.5, 0.5, k - 1)
    else:  # zero matrix pieces, negative zeros (q = ±0 pivots at μ = ±0)
        d = rng.choice([0.0, -0.0, 1.0, -1.0], k)
        e = rng.choice([0.0, -0.0, 1.0, 1.0], k - 1)
    return np.asarray(d, dtype=float), np.asarray(e, dtype=float)


def _float_or_inf(q: Fraction) -> float:
    try:
        return float(q)
    except OverflowError:
        return float("inf") if q > 0 else float("-inf")


def adversarial_shifts(rng, d, e) -> np.ndarray:
    """Shifts at exact eigenvalues, at the entries, at the Gershgorin ends, at ±0, 2⁻¹⁰²² and their neighbours."""
    T = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    with np.errstate(all="ignore"):
        lam = np.linalg.eigvalsh(T) if np.all(np.isfinite(T)) and np.max(np.abs(T), initial=0) < 1e300 else d
        lo, hi = gershgorin(d, e)
        inside = [_float_or_inf(lo + (hi - lo) * Fraction(float(t))) for t in rng.uniform(0, 1, 6)]
        base = [_float_or_inf(lo), _float_or_inf(hi), 0.0, -0.0, 2.0**-1022, -(2.0**-1022), 5e-324, 1.0, 0.5, -1.0,
                8.0, -8.0, 16.0, 8.0 + 2.0**-49]
        base += list(d) + list(lam) + inside
        mus = np.array([x for x in base if np.isfinite(x)])
        mus = np.concatenate([mus, np.nextafter(mus, np.inf), np.nextafter(mus, -np.inf)])
    return mus[np.isfinite(mus)]


def check_sturm_counts(d, e, mus, fn=None) -> int:
    """Every count that passed the guards lies in Weyl's window ``[#{λ < μ − ρ}, #{λ < μ + ρ}]`` (exactly)."""
    rho = tri.sturm_perturbation(e)
    counts, valid = (fn or tri.sturm_counts)(d, e, mus)
    checked = 0
    for mu, c, v in zip(mus.tolist(), counts.tolist(), valid.tolist()):
        if v:
            lo, hi = weyl_count_window(d, e, mu, rho)
            assert lo <= c <= hi, ("Lemma S", d.tolist(), e.tolist(), mu, c, (lo, hi), rho)
            checked += 1
    return checked


def _guarded(d, e, mus):
    # the general path with each guard as stated (sturm_counts picks it only outside the normalised range)
    with np.errstate(all="ignore"):
        s = e * e
        if not (np.all((e == 0) | (s > tri.MIN_NORMAL)) and np.all(np.isfinite(s))):
            return np.zeros(mus.size, dtype=np.int64), np.zeros(mus.size, dtype=bool)
    return tri._sturm_guarded(d, s, mus)


def _check_sturm(seed: int, cases: int) -> int:
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(cases):
        d, e = adversarial_tridiagonal(rng)
        mus = adversarial_shifts(rng, d, e)
        checked += check_sturm_counts(d, e, mus)
        checked += check_sturm_counts(d, e, mus, _guarded)
    return checked


def test_sturm_counts_lie_in_the_exact_weyl_window():
    assert _check_sturm(5101, 150) > 3000


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_sturm_counts_lie_in_the_exact_weyl_window_sweep(seed):
    _check_sturm(5200 + seed, 2000)


def test_sturm_guards_at_their_edges():
    # (G1) at its tie: e = 2⁻⁵¹¹ gives fl(e²) = 2⁻¹⁰²², which is not > 2⁻¹⁰²²: no count is valid.
    c, v = tri.sturm_counts(np.array([3.0, 0.0]), np.array([2.0**-511]), np.array([1.0]))
    assert not v.any()
    # Exact zero pivots, signed: q = −0 arises from d = −0, μ = +0 (and a zero quotient); continuing past it as
    # IEEE does (s/−0 = −∞) counts as if q < 0 but does not count q itself — outside the window.
    zero_pivots = [([-0.0, 1.0], [1.0]), ([1.0, -0.0, 0.5], [0.0, 1.0]), ([-0.0, -0.0, 2.0], [1.0, 1.0]),
                   ([1.0, 1.0, 5.0], [1.0, 1.0]), ([2.0, 2.0], [1.0]), ([-0.0], []), ([0.0, -0.0], [0.0])]
    for dd, ee in zero_pivots:
        d, e = np.array(dd), np.array(ee)
        mus = np.array([0.0, -0.0, 1.0, 3.0, 2.0**-1074, -(2.0**-1074)])
        check_sturm_counts(d, e, mus)
        check_sturm_counts(d, e, mus, _guarded)
        check_sturm_counts(d * 16, e * 16, mus)  # the general path (|d| ≥ 2)
    # (G2) around its tie: fl(s/q) at or next to 2⁻¹⁰²² (the general path: |d| ≥ 2), checked by the window.
    rng = np.random.default_rng(5102)
    for _ in range(300):
        s_target = 2.0**-1022 * float(rng.choice([1.0, 1 - 2.0**-53, 1 + 2.0**-52, 1 - 2.0**-52]))
        qv = float(rng.choice([3.0, 1 + 2.0**-52, 2.0**52 + 1, 7.0, 2.0**-20 * 3]))
        # e² ≈ s_target·qv, so fl(s/q) lands at or next to 2⁻¹⁰²² (the general path: |d| ≥ 2 or |μ| > 8)
        ev = float(np.sqrt(s_target * qv))
        for ee in (ev, np.nextafter(ev, 0), np.nextafter(ev, np.inf)):
            d = np.array([qv + 16.0, float(rng.uniform(-1, 1)) + 16.0])
            mus = np.array([16.0, 16.0 + float(rng.uniform(-1, 1))])
            check_sturm_counts(d, np.array([ee]), mus)
            check_sturm_counts(d, np.array([ee]), mus, _guarded)


# ---------------------------------------------------------------- eigenvalue enclosures of T


def check_eigenvalue_bounds(d, e, lo, hi) -> None:
    """``lo[i] ≤ λ₍ᵢ₎(T) ≤ hi[i]`` (descending) for every i, decided exactly (±∞ ends allowed)."""
    k = len(d)
    assert lo.shape == hi.shape == (k,)
    for i in range(k):
        a = None if lo[i] == -np.inf else float(lo[i])
        b = None if hi[i] == np.inf else float(hi[i])
        assert not (np.isnan(lo[i]) or np.isnan(hi[i])), (i, lo[i], hi[i])
        assert eigenvalue_in_descending(d, e, i, a, b), ("λ(T) outside its bracket", d.tolist(), e.tolist(), i,
                                                          lo[i], hi[i])


def _approximations(rng, d, e):
    T = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    with np.errstate(all="ignore"):
        ok = np.all(np.isfinite(T)) and np.max(np.abs(T), initial=0) < 1e300
        lam = np.linalg.eigvalsh(T) if ok else np.sort(d)
    how = int(rng.integers(0, 7))
    if how == 0:
        return None
    if how == 1:
        return lam
    if how == 2:  # off by far more than the shift spread
        return lam * (1 + 1e-3 * rng.standard_normal(lam.size))
    if how == 3:  # all the same
        return np.full(lam.size, float(lam[0]))
    if how == 4:  # reversed sign, shuffled
        return -rng.permutation(lam)
    if how == 5:  # garbage including non-finite
        return rng.choice([np.nan, np.inf, -np.inf, 0.0, 1e300], lam.size)
    return np.nextafter(lam, rng.choice([-np.inf, np.inf], lam.size))  # off by one ulp


def _check_eigenvalue_bounds(seed: int, cases: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(cases):
        d, e = adversarial_tridiagonal(rng)
        approx = _approximations(rng, d, e)
        spread = float(rng.choice([0.0, 0.0, 2.0**-40, 1e-3, 5e-324, np.inf]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lo, hi = tri.tridiagonal_eigenvalue_bounds(d, e, approx=approx, spread=spread)
        check_eigenvalue_bounds(d, e, lo, hi)


def test_eigenvalue_bounds_contain_the_exact_eigenvalues():
    _check_eigenvalue_bounds(5111, 300)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_eigenvalue_bounds_contain_the_exact_eigenvalues_sweep(seed):
    _check_eigenvalue_bounds(5300 + seed, 3000)


def test_eigenvalue_bounds_are_narrow_where_they_can_be():
    # Not a soundness check: on well-separated spectra the brackets are a few ρ wide (a test that a
    # refactor did not silently fall back to Gershgorin everywhere). Widths are measured exactly.
    rng = np.random.default_rng(5112)
    for _ in range(20):
        k = int(rng.integers(2, 12))
        d, e = rng.standard_normal(k), rng.standard_normal(k - 1)
        lo, hi = tri.tridiagonal_eigenvalue_bounds(d, e)
        tmax = max(np.max(np.abs(d)), np.max(np.abs(e)))
        assert np.all(hi - lo <= 1e-12 * tmax), (hi - lo) / tmax


# ---------------------------------------------------------------- e: Lemma 3.4-T, ‖Ĝ − Q̂TQ̂ᵀ‖₂


def _exact_tridiagonal_residual(G, Q, d, e) -> list:
    """``Ĝ − Q̂ T Q̂ᵀ`` exactly (Fractions)."""
    Gf, Qf, T = fractions_of(G), fractions_of(Q), dense(d, e)
    return [[g - x for g, x in zip(rg, rx)] for rg, rx in zip(Gf, matmul(matmul(Qf, T), transpose(Qf)))]


def _residual_case(rng, m):
    kind = int(rng.integers(0, 10))
    A = rng.standard_normal((m, m))
    G = A + A.T
    if kind == 1:  # Gram matrix of a rank-deficient integer matrix (exact zero eigenvalues)
        B = rng.integers(-3, 4, (m, max(m // 2, 1))).astype(float)
        G = B @ B.T
    got = tri.householder_tridiagonal(G)
    Q, d, e = got if got is not None else (np.eye(m), np.diag(G).copy(), np.zeros(m - 1))
    if kind == 2:  # Q̂ far from orthogonal, T unrelated: the a-priori term and the computed residual are large
        Q = Q + 0.3 * rng.standard_normal((m, m))
    elif kind == 3:  # huge / tiny scales: the underflow constant and the 3·maxrow float
        s = 2.0 ** int(rng.choice([-540, -520, -300, 300]))
        G, d, e = G * s, d * s, e * s
    elif kind == 4:  # Q̂ and T scaled oppositely (exact), products near the subnormals
        G, Q, d, e = G * 2.0**-1000, Q * 2.0**-20, d * 2.0**-960, e * 2.0**-960
    elif kind == 5:  # subnormal T and Ĝ
        G = np.round(G * 4) * 5e-324
        d, e = np.round(d * 4) * 5e-324, np.round(e * 4) * 5e-324
        G = np.triu(G) + np.triu(G, 1).T
    elif kind == 6:  # the exact similarity's rounding only: G = fl(Q̂TQ̂ᵀ) mirrored
        with np.errstate(all="ignore"):
            P = Q @ (np.diag(d) + np.diag(e, 1) + np.diag(e, -1)) @ Q.T
        G = np.triu(P) + np.triu(P, 1).T
    elif kind in (8, 9):  # Ĝ = the kernel's own fl(Q̂·fl(Q̂T)ᵀ), mirrored: computed residual 0, only the a-priori term is left
        if kind == 9:  # same-sign data: the roundings add up (|Q̂||T||Q̂|ᵀ ≈ |Q̂TQ̂ᵀ|)
            Q, d, e = np.abs(Q), np.abs(d), np.abs(e)
        Y = Q * d
        Y[:, 1:] += Q[:, :-1] * e
        Y[:, :-1] += Q[:, 1:] * e
        P = Q @ Y.T
        G = np.triu(P) + np.triu(P, 1).T
    elif kind == 7:  # R ≈ 𝟙𝟙ᵀ: the norm is attained by row sums of the completed residual
        with np.errstate(all="ignore"):
            P = Q @ (np.diag(d) + np.diag(e, 1) + np.diag(e, -1)) @ Q.T
        G = np.triu(P) + np.triu(P, 1).T + 1.0
    return np.asarray(G, dtype=float), np.asarray(Q, dtype=float), np.asarray(d, dtype=float), np.asarray(e, dtype=float)


def _check_tridiagonal_residual(seed: int, cases: int, max_m: int, min_m: int = 1, order: str = "C") -> int:
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(cases):
        m = int(rng.integers(min_m, max_m + 1))
        G, Q, d, e = _residual_case(rng, m)
        G, Q = np.asarray(G, order=order), np.asarray(Q, order=order)  # F: as certify_gram has Ĝ and dorgqr's Q̂
        if not (np.all(np.isfinite(G)) and np.array_equal(G, G.T)):
            continue
        chunk = int(rng.choice([64, 1, 2, 3]))
        bound = fperror.tridiagonal_residual_norm_bound(G, Q, d, e, chunk=chunk, symmetric=True)
        B = upper_fraction(bound)
        if B is None:
            continue
        assert symmetric_norm_at_most(_exact_tridiagonal_residual(G, Q, d, e), B), (
            "Lemma 3.4-T", G.tolist(), Q.tolist(), d.tolist(), e.tolist(), chunk)
        checked += 1
    return checked


def test_tridiagonal_residual_bound_exact():
    assert _check_tridiagonal_residual(5121, 150, 9) > 120
    # two column blocks (symmetric_residual_block_columns: ≥ 32 columns each) with inner chunks
    assert _check_tridiagonal_residual(5122, 1, 34, min_m=34) == 1


@pytest.mark.parametrize("nb", [None, 1, 2, 3])
def test_tridiagonal_residual_bound_exact_fortran_ordered(nb, monkeypatch):
    # Ĝ and Q̂ in Fortran order, as the route has them (Y = fl(Q̂T) whole, G[:J₁, J] read as G[J, :J₁]ᵀ; session 6),
    # with column blocks of nb (several blocks at exactly checkable sizes; None: the default width)
    if nb is not None:
        monkeypatch.setattr(fperror, "symmetric_residual_block_columns", lambda m: min(nb, m))
    assert _check_tridiagonal_residual(5123 + (nb or 0), 25, 9, order="F") > 15


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_tridiagonal_residual_bound_exact_sweep(seed):
    _check_tridiagonal_residual(5400 + seed, 500, 14)


# ---------------------------------------------------------------- Theorem G-T's float ends


def _theorem_gt_case(rng):
    """Descending exact-ish eigenvalues with brackets [a, b] around them, and α, β, e, t as in test_exact_gram."""
    lam, a, b, e, t = _theorem_g_case(rng)
    lv = np.sort(np.asarray(lam, dtype=float))[::-1]
    w = np.abs(lv) * float(rng.choice([0.0, 2.0**-52, 1e-6, 0.5])) + float(rng.choice([0.0, 5e-324, 2.0**-1000]))
    with np.errstate(all="ignore"):
        lo = np.nextafter(lv - w * rng.uniform(0, 1, lv.size), -np.inf)
        hi = np.nextafter(lv + w * rng.uniform(0, 1, lv.size), np.inf)
    if rng.random() < 0.3:  # brackets straddling 0 (zero eigenvalues of T)
        lo = np.where(rng.random(lv.size) < 0.5, -np.abs(lo), lo)
    # the brackets of a descending spectrum can be made monotone without loss (as the Sturm brackets are)
    lo = np.maximum.accumulate(lo[::-1])[::-1]
    hi = np.minimum.accumulate(hi)
    return lo, hi, a, b, e, t


def theorem_gt_ends_ok(al: float, bh: float, a: Fraction, b: Fraction, e: Fraction, t: int, lo: Fraction,
                       hi: Fraction) -> bool:
    """[lo, hi] ⊇ 2^t·[√max(min_θ θ·al − c, 0), √(max_θ θ·bh + c)], θ ∈ [1 − a, 1 + a], c = b + e (exactly)."""
    L, H = lo / Fraction(2) ** t, hi / Fraction(2) ** t
    qa, qb, c = Fraction(al), Fraction(bh), b + e
    lo_sq = min((1 - a) * qa, (1 + a) * qa) - c
    hi_sq = max((1 - a) * qb, (1 + a) * qb) + c
    return (L <= 0 or L * L <= lo_sq) and H >= 0 and H * H >= hi_sq


def _check_theorem_gt(fn, seed: int, cases: int) -> int:
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(cases):
        lo, hi, a, b, e, t = _theorem_gt_case(rng)
        out = fn(lo, hi, _exact_arb(a), _exact_arb(b), _exact_arb(e), t)
        if out is None:
            continue
        assert len(out) == lo.size
        ends = [(lower_fraction(x), upper_fraction(x)) for x in out]
        if hasattr(out, "lower"):
            ends += [(Fraction(float(x)), Fraction(float(y))) for x, y in zip(out.lower, out.upper)]
        for i, (L, H) in enumerate(ends):
            assert L is not None and H is not None
            j = i % lo.size
            assert theorem_gt_ends_ok(float(lo[j]), float(hi[j]), a, b, e, t, L, H), (
                "Theorem G-T", lo[j], hi[j], a, b, e, t)
            checked += 1
    return checked


@pytest.mark.parametrize("name", ["tridiagonal_theorem_g_float_bounds", "tridiagonal_theorem_g_intervals"])
def test_theorem_gt_ends_exact(name):
    assert _check_theorem_gt(getattr(gram, name), 5131, 400) > 400


@pytest.mark.slow
@pytest.mark.parametrize("name", ["tridiagonal_theorem_g_float_bounds", "tridiagonal_theorem_g_intervals"])
def test_theorem_gt_ends_exact_sweep(name):
    _check_theorem_gt(getattr(gram, name), 5132, 20000)


# ---------------------------------------------------------------- the whole route (Theorem G-T) end to end


def install_wrong_tridiagonal_lapack(rng, monkeypatch, p_wrong: float = 0.6) -> None:
    """LAPACK's dsytrd / dorgqr / dsterf return perturbed, sign-flipped, zeroed or garbage data on purpose."""
    import scipy.linalg.lapack as lapack

    orig_trd, orig_org, orig_erf = lapack.dsytrd, lapack.dorgqr, lapack.dsterf

    def dsytrd(*args, **kw):
        c, d, e, tau, info = orig_trd(*args, **kw)
        if rng.random() < p_wrong:
            d, e = d.copy(), e.copy()
            how = int(rng.integers(0, 6))
            if how == 0:
                d *= 1 + 1e-9 * rng.standard_normal(d.size)
            elif how == 1 and e.size:
                e[int(rng.integers(0, e.size))] = float(rng.choice([0.0, 2.0**-310, 5e-324, -e[0]]))
            elif how == 2:
                e = -e  # T with flipped off-diagonals: similar to T, but not to Q̂ᵀĜQ̂ any more
            elif how == 3:
                d = d[::-1].copy()
            elif how == 4 and rng.random() < 0.3:
                d[0] = float(rng.choice([np.nan, np.inf]))
            else:
                tau = tau * (1 + 1e-7)
        return c, d, e, tau, info

    def dorgqr(*args, **kw):
        q, work, info = orig_org(*args, **kw)
        if rng.random() < p_wrong:
            q = q + float(rng.choice([1e-12, 1e-6, 0.3])) * rng.standard_normal(q.shape)
            if rng.random() < 0.2:  # a non-finite Q̂ (not checked by householder_tridiagonal: by the bounds)
                q[int(rng.integers(0, q.shape[0])), int(rng.integers(0, q.shape[1]))] = float(
                    rng.choice([np.nan, np.inf, -np.inf]))
        return q, work, info

    def dsterf(*args, **kw):
        lam, info = orig_erf(*args, **kw)
        if rng.random() < p_wrong:
            how = int(rng.integers(0, 3))
            lam = (lam * (1 + 1e-4 * rng.standard_normal(lam.size)) if how == 0 else
                   rng.permutation(-lam) if how == 1 else np.full(lam.size, float(lam[0])))
        return lam, info

    monkeypatch.setattr(lapack, "dsytrd", dsytrd)
    monkeypatch.setattr(lapack, "dorgqr", dorgqr)
    monkeypatch.setattr(lapack, "dsterf", dsterf)


def _check_route(seed: int, cases: int, monkeypatch, wrong: bool) -> dict:
    rng = np.random.default_rng(seed)
    monkeypatch.setattr(gram, "TRIDIAGONAL_MIN_ORDER", 1)  # Theorem G-T on exactly checkable sizes
    if wrong:
        install_wrong_tridiagonal_lapack(rng, monkeypatch)
    modes: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(cases):
            _random_internals(rng, monkeypatch)
            monkeypatch.setattr(gram, "TRIDIAGONAL_RESIDUAL_CHUNK", int(rng.choice([48, 1, 2])))
            monkeypatch.setattr(gram, "TRIDIAGONAL_ALPHA_CHUNK", int(rng.choice([96, 1, 2])))
            monkeypatch.setattr(gram, "SHIFT_SPREAD", float(rng.choice([2.0**-10, 0.0, 1.0])))
            small = bool(rng.random() < 0.5)  # Lemma G.2′ (β's ρ(N) ≤ Σ_C ρ(N_C) over the SYRK's chunks) at small sizes
            monkeypatch.setattr(gram, "PER_CHUNK_POWER_MIN_ORDER", 1 if small else 192)
            monkeypatch.setattr(gram, "PER_CHUNK_POWER_MIN_ENTRIES", 1 if small else 1 << 21)
            m, n = int(rng.integers(1, 7)), int(rng.integers(1, 9))
            W = _adversarial(rng, m, n)
            Win = _layout(rng, W)
            for mode in ("gram", "auto"):
                enc = enclose_singular_values(Win, mode=mode)
                modes[enc.mode] = modes.get(enc.mode, 0) + 1
                check_inertia(np.asarray(Win, dtype=np.float64), enc)
    return modes


def test_tridiagonal_route_inertia(monkeypatch):
    modes = _check_route(5141, 100, monkeypatch, wrong=False)
    assert modes.get("gram-tri", 0) + modes.get("fast+gram-tri", 0) > 100, modes


def test_tridiagonal_route_inertia_under_wrong_lapack(monkeypatch):
    _check_route(5142, 80, monkeypatch, wrong=True)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(8))
def test_tridiagonal_route_inertia_sweep(seed, monkeypatch):
    _check_route(5500 + seed, 400, monkeypatch, wrong=bool(seed % 2))


def test_tridiagonal_route_known_medium(monkeypatch):
    # The default threshold (Theorem G-T from order TRIDIAGONAL_MIN_ORDER): known spectra, σ² checked exactly.
    rng = np.random.default_rng(5143)
    m0 = gram.TRIDIAGONAL_MIN_ORDER
    seen = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for m, n in [(m0, 2 * m0), (3 * m0 // 2, m0 + 5)]:
            got = None
            while got is None:
                got = known_matrix(rng, m, n, scale_exponent=int(rng.choice([0, -500, 400, -1060])))
            W, spec = got
            for mode in ("gram", "auto"):
                enc = enclose_singular_values(W, mode=mode)
                seen.add(enc.mode)
                check_known(enc, spec, (m, n, mode))
    assert seen & {"gram-tri", "fast+gram-tri"}, seen


# ------------------------------------- brackets at shifts where the float count is wrong (ρ is needed)


def _wrong_counts(rng, cases: int):
    """``(d, e, j, μ, side)``: float Sturm counts that differ from the exact count of T itself.

    side = "low": μ > λⱼ (ascending, 0-based) but the valid float count is ≤ j, so only ``λⱼ ≥ μ − ρ`` holds;
    side = "high": μ ≤ λⱼ but the float count is ≥ j + 1, so only ``λⱼ < μ + ρ`` holds. max|T| ∈ [1, 2) (no scaling).
    """
    out = []
    for _ in range(cases):
        k = int(rng.integers(3, 9))
        d, e = rng.uniform(-1, 1, k), rng.uniform(-1, 1, k - 1)
        d[0] = 1.5
        iso = isolate(d, e, Fraction(1, 2**90))
        for j, (a, _) in enumerate(iso):
            lam = float(a)
            mus = lam + np.arange(-24, 25) * np.spacing(lam)
            counts, valid = tri.sturm_counts(d, e, mus)
            for mu, c, v in zip(mus.tolist(), counts.tolist(), valid.tolist()):
                if v:
                    below = count_below(d, e, mu)  # exact #{λ(T) < μ}
                    if c <= j < below:
                        out.append((d, e, j, mu, "low"))
                    elif below <= j < c:
                        out.append((d, e, j, mu, "high"))
    return out


def _approx_hitting(d, e, j, mu, side, spread=0.0):
    """Approximations λ̂ for which tridiagonal_eigenvalue_bounds' own shift λ̂ⱼ ∓ δⱼ is exactly μ (or None)."""
    rho = tri.sturm_perturbation(e)
    base = spread + 2 * rho
    exact = [float(a) for a, _ in isolate(d, e, Fraction(1, 2**70))]
    sign = -1.0 if side == "low" else 1.0
    guess = mu - sign * (base + 8 * float(np.spacing(abs(mu))))
    for t in range(-12, 13):
        lam = guess + t * float(np.spacing(guess))
        delta = base + 8 * np.spacing(np.abs(lam))
        if (lam - delta if side == "low" else lam + delta) == mu:
            approx = np.array(exact)
            approx[j] = lam
            return approx if np.all(np.diff(approx) > 0) else None
    return None


def test_brackets_need_rho_where_float_counts_are_wrong():
    # Shifts placed (through the approximations) exactly where the float count of T̂ disagrees with T's
    # exact count: the bracket is right only because of Corollary S's ±ρ (a bracket without ρ misses λⱼ).
    rng = np.random.default_rng(5151)
    cases = _wrong_counts(rng, 20)
    sides = {"low": 0, "high": 0}
    for d, e, j, mu, side in cases:
        approx = _approx_hitting(d, e, j, mu, side)
        if approx is None:
            continue
        lo, hi = tri.tridiagonal_eigenvalue_bounds(d, e, approx=approx, spread=0.0)
        check_eigenvalue_bounds(d, e, lo, hi)
        sides[side] += 1
    assert sides["low"] >= 3 and sides["high"] >= 3, sides


# ------------- Lemma 3.4-T's a-priori term against a worst-case BLAS (products off by 0.9·γ_k|A||B|)


class _WorstCaseMatmulNumpy:
    """numpy, except ``matmul(a, b)`` returns fl(ab) + 0.9·γ_k·fl(|a||b|) (k = inner dimension).

    Lemma 2.1 allows every product a BLAS returns to be off by up to γ_k|a||b| (+ underflow): this is a
    legal BLAS under the model, and with it the a-priori term of Lemma 3.4-T is needed in full.
    """

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def matmul(a, b, out=None, **kw):
        k = a.shape[-1]
        r = np.matmul(a, b) + (0.9 * k * 2.0**-53) * np.matmul(np.abs(a), np.abs(b))
        if out is None:
            return r
        out[...] = r
        return out


def test_tridiagonal_residual_a_priori_term_against_a_worst_case_blas(monkeypatch):
    # Ĝ is the worst-case BLAS's own (mirrored) Q̂·fl(Q̂T)ᵀ, so the computed residual is ≈ 0 while the exact
    # one is ≈ 0.9γ_m‖|Q̂||T||Q̂|ᵀ‖: only γ_{b+3}ρ(|Q̂||T||Q̂|ᵀ) covers it (one block, one inner chunk: m ≤ 32).
    monkeypatch.setattr(fperror, "np", _WorstCaseMatmulNumpy())
    rng = np.random.default_rng(5161)
    for _ in range(12):
        m = int(rng.integers(3, 13))
        A = rng.standard_normal((m, m))
        Q, d, e = tri.householder_tridiagonal(A + A.T)
        Q, d, e = np.abs(Q), np.abs(d), np.abs(e)  # same signs: the roundings add up
        Y = Q * d
        Y[:, 1:] += Q[:, :-1] * e
        Y[:, :-1] += Q[:, 1:] * e
        P = _WorstCaseMatmulNumpy.matmul(Q, Y.T)
        G = np.triu(P) + np.triu(P, 1).T
        B = upper_fraction(fperror.tridiagonal_residual_norm_bound(G, Q, d, e, chunk=64, symmetric=True))
        assert B is not None
        assert symmetric_norm_at_most(_exact_tridiagonal_residual(G, Q, d, e), B), (m, G.tolist(), Q.tolist())


@pytest.mark.parametrize("n", [1200, 2500])
def test_gram_rounding_covered_by_the_per_chunk_rho(n, monkeypatch):
    # Lemma G.2′ (β's ρ(|W||W|ᵀ) ≤ Σ_C ρ(N_C), one Collatz–Wielandt step per SYRK chunk) and Theorem G-T at
    # tiny sizes: Ĝ's accumulated rounding over many chunks (tens of ulps) is covered only by β (test_exact_gram).
    from tests.enclose import test_exact_gram

    monkeypatch.setattr(gram, "PER_CHUNK_POWER_MIN_ORDER", 1)
    monkeypatch.setattr(gram, "PER_CHUNK_POWER_MIN_ENTRIES", 1)
    monkeypatch.setattr(gram, "TRIDIAGONAL_MIN_ORDER", 1)
    test_exact_gram.test_gram_rounding_of_long_same_sign_dot_products_is_covered(n, monkeypatch)


# ---------------------------------------------------------------- session 6: the real threshold under wrong LAPACK


def _check_known_medium_wrong(seed: int, shapes, monkeypatch, p_wrong: float) -> set:
    # Known spectra at orders ≥ TRIDIAGONAL_MIN_ORDER (Sturm counts over several 64-row pivot blocks, few-shift
    # retries, α by column blocks, e over several column blocks) while dsytrd / dorgqr / dsterf lie.
    rng = np.random.default_rng(seed)
    install_wrong_tridiagonal_lapack(rng, monkeypatch, p_wrong=p_wrong)
    seen = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for m, n in shapes:
            got = None
            while got is None:
                got = known_matrix(rng, m, n, scale_exponent=int(rng.choice([0, -500, 400])))
            W, spec = got
            for mode in ("gram", "auto"):
                enc = enclose_singular_values(W, mode=mode)
                seen.add(enc.mode)
                check_known(enc, spec, (m, n, mode, "wrong LAPACK"))
    return seen


def test_tridiagonal_route_known_medium_under_wrong_lapack(monkeypatch):
    m0 = gram.TRIDIAGONAL_MIN_ORDER
    _check_known_medium_wrong(6801, [(m0, m0 + 64)], monkeypatch, p_wrong=0.7)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_tridiagonal_route_known_medium_under_wrong_lapack_sweep(seed, monkeypatch):
    m0 = gram.TRIDIAGONAL_MIN_ORDER
    seen = _check_known_medium_wrong(6900 + seed, [(m0, 2 * m0), (m0 + 65, m0 + 65), (2 * m0 + 1, m0 + 3)],
                                     monkeypatch, p_wrong=0.5)
    assert seen, seen
