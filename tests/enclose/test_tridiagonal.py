"""Theorem G-T's ingredients (``certbound.enclose.tridiagonal``, Lemma 3.4-T) against exact references.

Sturm counts are compared with EXACT counts over ℚ: the LDLᵀ pivots of T − μI in
Fractions for the float d, e, μ (no tolerance; ``exact_inertia.inertia`` when a pivot is
exactly zero). Eigenvalue enclosures and residual bounds are decided by Sylvester
inertia of Fraction matrices (``tests/enclose/exact_inertia.py``), whole enclosures of
σ(W) likewise. No expected value comes from the code under test.
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest
from flint import arb

import certbound.enclose.fperror as fperror
import certbound.enclose.gram as gram_mod
import certbound.enclose.tridiagonal as tri
from certbound.ball import lower_fraction, upper_fraction
from certbound.enclose import enclose_singular_values
from tests.enclose import exact_inertia as ex

U = Fraction(1, 2**53)


@pytest.fixture(autouse=True)
def _tridiagonal_route_at_every_order(monkeypatch):
    """Theorem G-T is the default from order 192 on; here it runs on the small, exactly checkable matrices too."""
    monkeypatch.setattr(gram_mod, "TRIDIAGONAL_MIN_ORDER", 1)


def _fr(x: float) -> Fraction:
    return Fraction(*float(x).as_integer_ratio())


def exact_count_below(d, e, mu) -> int:
    """#{eigenvalues of tridiag(e, d, e) < μ}, exactly (Fraction pivots of T − μI; inertia on a zero pivot)."""
    return _count_fr(d, e, _fr(mu))


def _count_below_by_inertia(D, E, M) -> int:
    k = len(D)
    A = [[Fraction(0)] * k for _ in range(k)]
    for i in range(k):
        A[i][i] = D[i] - M
    for i in range(k - 1):
        A[i][i + 1] = A[i + 1][i] = E[i]
    return ex.inertia(A)[1]


def _weyl_window_ok(d, e, mu, count, rho) -> bool:
    """Lemma S's claim for one valid float count: #{λ < μ − ρ} ≤ count ≤ #{λ < μ + ρ} (exactly)."""
    return _count_fr(d, e, _fr(mu) - Fraction(rho)) <= count <= _count_fr(d, e, _fr(mu) + Fraction(rho))


def _count_fr(d, e, M: Fraction) -> int:
    """#{eigenvalues of tridiag(e, d, e) < M} for a Fraction M, exactly."""
    D, E = [_fr(x) for x in d], [_fr(x) for x in e]
    p = D[0] - M
    neg = int(p < 0)
    for i in range(1, len(D)):
        if p == 0:
            return _count_below_by_inertia(D, E, M)
        p = D[i] - M - E[i - 1] ** 2 / p
        neg += p < 0
    return neg


def eigenvalue_in(d, e, j: int, lo: Fraction, hi: Fraction) -> bool:
    """λ_{j+1}(T) (descending, 0-based j) ∈ [lo, hi], exactly: #{λ < lo} ≤ k − j − 1 and #{λ ≤ hi} ≥ k − j."""
    k = len(d)
    below_lo = _count_fr(d, e, lo)
    # #{λ ≤ hi} = k − #{λ > hi} = k − #{−λ < −hi}
    above_hi = _count_fr([-x for x in d], [-x for x in e], -hi)
    return below_lo <= k - j - 1 and k - above_hi >= k - j


# --------------------------------------------------------------------------- Sturm counts (Lemma S)


def _cases():
    rng = np.random.default_rng(90)
    out = []
    for k in (1, 2, 3, 5, 8, 13):
        out.append((rng.standard_normal(k), rng.standard_normal(k - 1)))
    # a zero off-diagonal (the matrix splits), a Wilkinson-type cluster, repeated diagonal
    d = rng.standard_normal(9)
    e = rng.standard_normal(8)
    e[3] = 0.0
    out.append((d, e))
    w = 10
    out.append((np.abs(np.arange(-w, w + 1, dtype=float)), np.ones(2 * w)))  # W21+: pairs within 1e-13
    out.append((np.ones(6), np.full(5, 1e-9)))  # a tight cluster around 1
    out.append((np.array([2.0, 2.0]), np.array([1.0])))  # eigenvalues 1 and 3, exactly
    return out


@pytest.mark.parametrize("case", range(len(_cases())))
def test_sturm_counts_equal_exact_counts_away_from_eigenvalues(case):
    d, e = _cases()[case]
    rng = np.random.default_rng(case)
    lam = np.linalg.eigvalsh(np.diag(d) + np.diag(e, 1) + np.diag(e, -1)) if d.size else np.zeros(0)
    rho = tri.sturm_perturbation(e)
    mus = np.concatenate([lam + s * 10.0 ** rng.uniform(-15, 0, lam.size) for s in (-1, 1)] + [rng.uniform(-5, 5, 20)])
    mus = np.concatenate([mus, lam, np.nextafter(lam, np.inf), np.nextafter(lam, -np.inf)])  # hits and neighbours
    counts, valid = tri.sturm_counts(d, e, mus)
    assert valid.mean() > 0.5
    for mu, c, v in zip(mus.tolist(), counts.tolist(), valid.tolist()):
        if not v:
            continue
        assert _weyl_window_ok(d, e, mu, c, rho), (case, mu, c)
        # far from every eigenvalue (exactly: no eigenvalue in [μ − ρ, μ + ρ]) the count is exact
        if _count_fr(d, e, _fr(mu) - Fraction(rho)) == _count_fr(d, e, _fr(mu) + Fraction(rho)):
            assert c == exact_count_below(d, e, mu), (case, mu, c)


def test_sturm_exact_eigenvalue_hit_is_rejected():
    """T − 1·I singular for T = [[2, 1], [1, 2]]: the last pivot is exactly 0, so the shift is discarded."""
    counts, valid = tri.sturm_counts(np.array([2.0, 2.0]), np.array([1.0]), np.array([1.0, 3.0, 0.5, 2.5]))
    assert valid.tolist() == [False, False, True, True]
    assert counts[2:].tolist() == [0, 1]


def test_sturm_guards_fire():
    # a square below the normal range: no count is valid
    c, v = tri.sturm_counts(np.array([1.0, 2.0]), np.array([1e-170]), np.array([1.5]))
    assert not v.any()
    # a quotient below 2⁻¹⁰²² (general path: |d| ≥ 2): fl(s/q) = 2⁻¹⁰²⁰/2¹⁰ underflows
    d = np.array([2.0**10 + 1.0, 0.0])
    e = np.array([2.0**-510])
    c, v = tri.sturm_counts(d, e, np.array([1.0]))
    assert not v.any()
    # an overflowing pivot: the shift is discarded
    c, v = tri.sturm_counts(np.array([1.0, 0.0]), np.array([1e200]), np.array([1.0 - 2.0**-52]))
    assert not v.any()
    # zero off-diagonals are exact: fl(0/q) = 0
    c, v = tri.sturm_counts(np.array([1.0, -1.0, 3.0]), np.zeros(2), np.array([0.0, 2.0]))
    assert v.all() and c.tolist() == [1, 2]


@pytest.mark.parametrize("scale", [2.0**-1040, 2.0**-600, 2.0**300, 2.0**1000])
def test_sturm_counts_general_path_on_huge_and_subnormal_entries(scale):
    rng = np.random.default_rng(4)
    d = rng.standard_normal(7) * scale
    e = rng.standard_normal(6) * scale
    mus = np.concatenate([rng.standard_normal(30) * scale, [0.0]])
    counts, valid = tri.sturm_counts(d, e, mus)
    rho = tri.sturm_perturbation(e)
    for mu, c, v in zip(mus.tolist(), counts.tolist(), valid.tolist()):
        if v:
            assert _weyl_window_ok(d, e, mu, c, rho), (scale, mu, c)


def test_sturm_normalised_and_guarded_paths_agree():
    """Same recurrence, two guard checks: on normalised data both give the same counts where both are valid."""
    rng = np.random.default_rng(8)
    d = rng.uniform(-1.9, 1.9, 30)
    e = rng.uniform(-1.9, 1.9, 29)
    mus = rng.uniform(-7, 7, 500)
    s = e * e
    c1, v1 = tri._sturm_normalised(d, s, mus)
    c2, v2 = tri._sturm_guarded(d, s, mus)
    both = v1 & v2
    assert both.mean() > 0.9 and np.array_equal(c1[both], c2[both])
    assert not np.any(v1 & ~v2)  # the normalised guard implies Lemma S's guards


def test_sturm_normalised_guard_rejects_small_pivots():
    d = np.array([1.0, 1.0])
    e = np.array([1.0])
    c, v = tri._sturm_normalised(d, e * e, np.array([1.0 - 2.0**-420, 0.5]))  # q₁ = 2⁻⁴²⁰ < 2⁻⁴⁰⁰
    assert v.tolist() == [False, True]


def _rounded_recurrence(d, s, mu):
    """Lemma S's float recurrence emulated exactly: each operation in Fractions, rounded by ``float(Fraction)``.

    ``float(Fraction)`` is correctly rounded (round to nearest, ties to even), so this is the
    binary64 recurrence, independent of numpy and of the code's vectorisation. Returns the count and
    whether every |qᵢ| ≥ 2⁻⁴⁰⁰ (the normalised guard; no quotient is formed after a failure).
    """
    q = float(_fr(d[0]) - _fr(mu))
    count, ok = int(q < 0), abs(q) >= 2.0**-400
    for i in range(1, len(d)):
        if not ok:
            break
        r = float(_fr(s[i - 1]) / _fr(q))
        q = float(_fr(float(_fr(d[i]) - _fr(mu))) - _fr(r))
        count += q < 0
        ok = abs(q) >= 2.0**-400
    return count, ok


@pytest.mark.parametrize("k, shifts", [(1, 3), (2, 30), (70, 5), (130, 8), (130, 9), (200, 40)])
def test_sturm_normalised_paths_equal_the_rounded_recurrence(k, shifts):
    """Both evaluations of the normalised recurrence (pivot blocks of 64 rows; Python scalars for
    ≤ SCALAR_SHIFTS shifts) give exactly the counts and guard decisions of the rounded recurrence,
    also across block boundaries and where a pivot falls below 2⁻⁴⁰⁰ or is exactly 0."""
    rng = np.random.default_rng(k + shifts)
    d = rng.uniform(-1.9, 1.9, k)
    e = rng.uniform(-1.9, 1.9, k - 1)
    e[rng.random(k - 1) < 0.2] = 0.0
    s = e * e
    lam = np.linalg.eigvalsh(np.diag(d) + np.diag(e, 1) + np.diag(e, -1))
    mus = np.concatenate([lam[: shifts // 2] + 1e-14, rng.uniform(-7, 7, shifts - shifts // 2)])
    d[0] = 2.0**-420
    mus[0] = d[0]  # q₁ = 0 exactly
    if shifts > 2:
        mus[1] = 0.0  # q₁ = 2⁻⁴²⁰ < 2⁻⁴⁰⁰
    ref = [_rounded_recurrence(d, s, mu) for mu in mus.tolist()]
    for run in (tri._sturm_normalised, tri._sturm_normalised_scalar):
        counts, valid = run(d, s, mus)
        assert valid.tolist() == [ok for _, ok in ref]
        assert [c for c, v in zip(counts.tolist(), valid.tolist()) if v] == [c for c, ok in ref if ok]
    assert not any(ok for _, ok in ref[:2])  # the two planted failures are detected


@pytest.mark.parametrize("shifts", [3, 40])
def test_sturm_normalised_paths_detect_a_zero_pivot_in_a_later_block(shifts):
    """A pivot that is exactly 0 at row 66 (the second block of 64 rows) invalidates the shift on both paths."""
    rng = np.random.default_rng(5)
    k = 90
    d = rng.uniform(0.5, 1.5, k)
    e = rng.uniform(0.1, 0.5, k - 1)
    s = e * e
    q = d[0]  # μ = 0: q₁ = d₁ exactly
    for i in range(1, 66):
        r = s[i - 1] / q
        q = d[i] - r
    d[66] = s[65] / q  # then q₆₇ = fl(d₆₇ − 0) − fl(s₆₆/q₆₆) = 0 exactly
    assert abs(d[66]) < 2
    mus = np.concatenate([[0.0], rng.uniform(3.0, 4.0, shifts - 1)])  # the others: above Gershgorin's range
    assert _rounded_recurrence(d, s, 0.0)[1] is False
    for run in (tri._sturm_normalised, tri._sturm_normalised_scalar):
        counts, valid = run(d, s, mus)
        assert not valid[0] and valid[1:].all() and (counts[1:] == k).all()


def test_sturm_perturbation_is_an_upper_bound():
    e = np.array([3.0, -7.0, 0.5])
    rho = Fraction(tri.sturm_perturbation(e))
    # ρ ≥ 2·max|e|·(f − 1) with f² = (1+u)²/(1−u)³: check (ρ/(2·7) + 1)² ≥ (1+u)²/(1−u)³ exactly
    assert (rho / 14 + 1) ** 2 >= (1 + U) ** 2 / (1 - U) ** 3
    assert rho < 14 * 3 * U  # and it is ≈ 5u·max|e|, not more
    assert tri.sturm_perturbation(np.zeros(3)) == 0.0
    # every magnitude, subnormal to huge (the float K·max|e| rounded up, no Arb per call), exactly in Fractions
    for emax in (5e-324, 2.0**-1070 * 3, 1e-300, 0.1, 1.0 + 2.0**-52, 7.0, 1e300, 1.7e308):
        r = tri.sturm_perturbation(np.array([emax, -emax / 2]))
        assert np.isfinite(r) and (Fraction(r) / (2 * Fraction(emax)) + 1) ** 2 >= (1 + U) ** 2 / (1 - U) ** 3
    assert tri.sturm_perturbation(np.array([1.0, np.nan])) == np.inf == tri.sturm_perturbation(np.array([np.inf]))


def test_gershgorin_bounds_are_outward():
    rng = np.random.default_rng(3)
    for _ in range(50):
        k = int(rng.integers(1, 8))
        d = rng.standard_normal(k) * 2.0 ** int(rng.integers(-30, 30))
        e = rng.standard_normal(k - 1) * 2.0 ** int(rng.integers(-30, 30))
        lo, hi = tri.gershgorin_bounds(d, e)
        D, E = [_fr(x) for x in d], [abs(_fr(x)) for x in e]
        for i in range(k):
            r = (E[i - 1] if i else 0) + (E[i] if i < k - 1 else 0)
            assert _fr(lo) <= D[i] - r and D[i] + r <= _fr(hi)


# --------------------------------------------------------------------------- eigenvalue enclosures


def _eig_cases():
    rng = np.random.default_rng(91)
    out = list(_cases())
    e = rng.standard_normal(11)
    e[[2, 5]] = [1e-200, -3e-310]  # tiny off-diagonals: zeroed, Weyl term added
    out.append((rng.standard_normal(12), e))
    out.append((rng.standard_normal(6) * 2.0**-1050, rng.standard_normal(5) * 2.0**-1050))  # subnormal
    out.append((rng.standard_normal(6) * 2.0**1000, rng.standard_normal(5) * 2.0**1000))  # huge
    out.append((rng.standard_normal(7) * 2.0**-1000, rng.standard_normal(6) * 2.0**-1060))  # scaling loses bits
    out.append((np.zeros(4), np.zeros(3)))
    out.append((np.zeros(3), np.array([1.0, 1.0])))  # eigenvalues −√2, 0, √2
    return out


@pytest.mark.parametrize("case", range(len(_eig_cases())))
@pytest.mark.parametrize("spread", [0.0, 1e-10])
def test_eigenvalue_bounds_against_exact_counts(case, spread):
    d, e = _eig_cases()[case]
    lo, hi = tri.tridiagonal_eigenvalue_bounds(d, e, spread=spread * float(np.max(np.abs(d))))
    k = d.size
    assert lo.shape == hi.shape == (k,)
    for j in range(k):
        assert eigenvalue_in(d, e, j, _fr(lo[j]), _fr(hi[j])), (case, j, lo[j], hi[j])
    scale = max(float(np.max(np.abs(d))), float(np.max(np.abs(e))) if e.size else 0.0)
    if scale > 0 and spread == 0:
        assert float(np.max(hi - lo)) <= 1e-10 * scale + 2.0**-1060  # tight, not just valid


def test_eigenvalue_bounds_with_shifts_at_the_eigenvalues_need_rho(monkeypatch):
    """Extra shifts at the floats nearest the exact eigenvalues: there the float counts are those of T̄(μ),
    whose eigenvalues differ from T's by up to ρ (about a fifth of them fall on the other side) — only the
    ±ρ of Corollary S keeps the ends valid."""
    import mpmath

    rng = np.random.default_rng(12)
    mpmath.mp.prec = 300
    original = tri._valid_counts
    wrong_side = 0
    for trial in range(8):
        k = 12
        d, e = rng.uniform(-1.9, 1.9, k), rng.uniform(-1.9, 1.9, k - 1)
        d[0] = 1.5  # max|T| in [1, 2): T is used unscaled
        A = mpmath.matrix(k)
        for i in range(k):
            A[i, i] = d[i]
        for i in range(k - 1):
            A[i, i + 1] = A[i + 1, i] = e[i]
        exact = np.array(sorted(float(x) for x in mpmath.eigsy(A, eigvals_only=True)))
        counts, valid = tri.sturm_counts(d, e, exact)
        wrong_side += sum(int(v and c != exact_count_below(d, e, x)) for x, c, v in zip(exact, counts, valid))
        monkeypatch.setattr(tri, "_valid_counts", lambda dd, ee, mus, glo, ghi: original(
            dd, ee, np.concatenate([mus, exact]), glo, ghi))
        lo, hi = tri.tridiagonal_eigenvalue_bounds(d, e)
        monkeypatch.setattr(tri, "_valid_counts", original)
        for j in range(k):
            assert eigenvalue_in(d, e, j, _fr(lo[j]), _fr(hi[j])), (trial, j)
    assert wrong_side >= 5  # the test does exercise counts of T̄ that differ from T's


@pytest.mark.parametrize("t", [1e-200, 3e-310, 2.0**-301])
def test_eigenvalue_bounds_keep_the_zeroed_off_diagonals(t):
    """[[1, t], [t, 1]] has eigenvalues 1 ± t: zeroing t (below 2⁻³⁰⁰) needs its Weyl term 2t."""
    for d, e in ((np.ones(2), np.array([t])), (np.ones(3), np.array([t, -t])), (np.array([1.0, 0.5]), np.array([t]))):
        lo, hi = tri.tridiagonal_eigenvalue_bounds(d, e)
        for j in range(d.size):
            assert eigenvalue_in(d, e, j, _fr(lo[j]), _fr(hi[j])), (t, d, j)


def test_eigenvalue_bounds_when_scaling_down_rounds_an_entry():
    """max|T| = 2¹⁰⁰⁰ brings x ≈ 2⁻⁶⁰ to ≈ 2⁻¹⁰⁵⁹ (subnormal): fl(2^t x) ≠ 2^t x, and 3η covers it."""
    x = 1.5 * 2.0**-60 * (1 + 2.0**-50)
    for e in (np.zeros(1), np.array([2.0**-200])):
        d = np.array([2.0**1000, x])
        lo, hi = tri.tridiagonal_eigenvalue_bounds(d, e)
        for j in range(2):
            assert eigenvalue_in(d, e, j, _fr(lo[j]), _fr(hi[j])), (e, j)


def test_eigenvalue_bounds_with_wrong_approximations():
    """The shifts may come from anywhere (here: a wrong λ̂): the enclosures stay valid, only wider."""
    rng = np.random.default_rng(11)
    d, e = rng.standard_normal(10), rng.standard_normal(9)
    for approx in (np.zeros(10), rng.standard_normal(10) * 5, np.full(10, np.nan)):
        lo, hi = tri.tridiagonal_eigenvalue_bounds(d, e, approx=approx)
        for j in range(10):
            assert eigenvalue_in(d, e, j, _fr(lo[j]), _fr(hi[j]))


def test_eigenvalue_bounds_of_one_by_one_are_exact():
    lo, hi = tri.tridiagonal_eigenvalue_bounds(np.array([-3.5]), np.zeros(0))
    assert lo.tolist() == hi.tolist() == [-3.5]


def test_eigenvalue_bounds_non_finite_input():
    lo, hi = tri.tridiagonal_eigenvalue_bounds(np.array([np.inf, 1.0]), np.array([1.0]))
    assert np.all(np.isinf(lo)) and np.all(np.isinf(hi))


# --------------------------------------------------------------------------- Householder data and Lemma 3.4-T


@pytest.mark.parametrize("k", [1, 2, 3, 7])
def test_householder_tridiagonal_is_a_similarity(k):
    rng = np.random.default_rng(k)
    A = rng.standard_normal((k, k))
    G = A + A.T
    Q, d, e = tri.householder_tridiagonal(G)
    T = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    assert Q.shape == (k, k) and d.shape == (k,) and e.shape == (max(k - 1, 0),)
    assert np.abs(Q.T @ Q - np.eye(k)).max() < 1e-13 and np.abs(Q @ T @ Q.T - G).max() < 1e-13 * max(1, np.abs(G).max())


def test_householder_tridiagonal_failures(monkeypatch):
    assert tri.householder_tridiagonal(np.array([[np.nan]])) is None
    monkeypatch.setattr(tri._lapack, "dsytrd", lambda *a, **k: (a[0], a[0][0], a[0][0], a[0][0], 1))
    assert tri.householder_tridiagonal(np.eye(3)) is None


def _tri_residual_exact(G, Q, d, e) -> list:
    k = len(d)
    T = np.diag(d) + (np.diag(e, 1) + np.diag(e, -1) if k > 1 else 0)
    Tf = ex.fractions_of(T)  # exact: T's entries are the floats d, e
    Qf = ex.fractions_of(Q)
    R = ex.matmul(ex.matmul(Qf, Tf), ex.transpose(Qf))
    Gf = ex.fractions_of(G)
    return [[g - r for g, r in zip(gr, rr)] for gr, rr in zip(Gf, R)]


@pytest.mark.parametrize("case", range(16))
def test_tridiagonal_residual_bounds_the_exact_norm(monkeypatch, case):
    rng = np.random.default_rng(800 + case)
    m = [1, 2, 3, 5, 6, 7, 8, 4][case % 8]
    scale = [1.0, 2.0**-1040, 2.0**500, 3.0, 2.0**-520][case % 5]
    A = rng.standard_normal((m, m)) * scale
    G = np.triu(A) + np.triu(A, 1).T
    Q, d, e = tri.householder_tridiagonal(G)
    if case % 3 == 1:
        Q = Q + 1e-3 * rng.standard_normal(Q.shape)  # poor basis: a large computed residual
        d = d * (1 + 1e-3)
    if case % 7 == 3:
        e = -e  # wrong signs
    if case % 6 == 5:
        d, e = np.zeros(m), np.zeros(m - 1)  # R = G: everything in the computed residual
    cols, chunk = [(1, 1), (2, 1), (3, 2), (m, m), (2, 3)][case % 5]
    monkeypatch.setattr(fperror, "symmetric_residual_block_columns", lambda mm: cols)
    bound = fperror.tridiagonal_residual_norm_bound(G, Q, d, e, chunk=chunk)
    B = upper_fraction(bound)
    assert B is not None
    assert ex.symmetric_norm_at_most(_tri_residual_exact(G, Q, d, e), B), case


@pytest.mark.parametrize("seed", range(4))
def test_tridiagonal_residual_covers_the_rounding_of_an_exact_similarity(monkeypatch, seed):
    """A computed residual near 0: the bound must still cover the rounding of Y = fl(QT) and of the GEMM."""
    rng = np.random.default_rng(60 + seed)
    m = 6
    d, e = rng.standard_normal(m), rng.standard_normal(m - 1)
    Q = np.linalg.qr(rng.standard_normal((m, m)))[0]
    T = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    G = Q @ T @ Q.T
    G = np.triu(G) + np.triu(G, 1).T
    monkeypatch.setattr(fperror, "symmetric_residual_block_columns", lambda mm: 2)
    for chunk in (1, 2, 6):
        B = upper_fraction(fperror.tridiagonal_residual_norm_bound(G, Q, d, e, chunk=chunk))
        assert ex.symmetric_norm_at_most(_tri_residual_exact(G, Q, d, e), B)


@pytest.mark.parametrize("chunk", [1, 2])
def test_tridiagonal_residual_zero_computed_residual_needs_the_apriori_term(monkeypatch, chunk):
    """fl(1 + 2⁻⁶⁰) = 1 in Y = fl(Q̂T) and in the GEMM, so R̂ = 0 while R = −2⁻⁵⁹𝟙𝟙ᵀ (‖R‖₂ = 2⁻⁵⁸)."""
    a = 2.0**-60
    Q = np.array([[1.0, a], [1.0, a]])
    d, e = np.array([1.0, 0.0]), np.array([1.0])  # T = [[1, 1], [1, 0]]
    G = np.ones((2, 2))
    monkeypatch.setattr(fperror, "symmetric_residual_block_columns", lambda mm: 1)
    B = upper_fraction(fperror.tridiagonal_residual_norm_bound(G, Q, d, e, chunk=chunk))
    assert ex.symmetric_norm_at_most(_tri_residual_exact(G, Q, d, e), B)
    assert B >= Fraction(1, 2**58)


def test_tridiagonal_abs_matvec_upper_against_fractions():
    rng = np.random.default_rng(13)
    for k in (1, 2, 3, 9):
        ad = np.abs(rng.standard_normal(k)) * 2.0 ** rng.integers(-1074, 300, k)
        ae = np.abs(rng.standard_normal(k - 1)) * 2.0 ** rng.integers(-1074, 300, max(k - 1, 0))
        v = np.abs(rng.standard_normal(k)) * 2.0 ** rng.integers(-1074, 300, k)
        out = fperror.tridiagonal_abs_matvec_upper(ad, ae, v)
        for i in range(k):
            exact = _fr(ad[i]) * _fr(v[i])
            if i > 0:
                exact += _fr(ae[i - 1]) * _fr(v[i - 1])
            if i < k - 1:
                exact += _fr(ae[i]) * _fr(v[i + 1])
            assert _fr(out[i]) >= exact, (k, i)


def test_tridiagonal_residual_input_checks():
    with pytest.raises(ValueError, match="not exactly symmetric"):
        fperror.tridiagonal_residual_norm_bound(np.array([[1.0, 2.0], [0.0, 1.0]]), np.eye(2), np.ones(2), np.ones(1))
    with pytest.raises(ValueError, match="shapes"):
        fperror.tridiagonal_residual_norm_bound(np.eye(2), np.eye(2), np.ones(2), np.ones(2))
    big = np.full((2, 2), 1e300)
    assert not fperror.tridiagonal_residual_norm_bound(np.zeros((2, 2)), big, np.ones(2), np.ones(1)).upper().is_finite()


# --------------------------------------------------------------------------- Theorem G-T in floats


@pytest.mark.parametrize("seed", range(3))
def test_tridiagonal_theorem_g_float_bounds_against_fractions(seed):
    rng = np.random.default_rng(500 + seed)
    checked = 0
    for _ in range(300):
        k = int(rng.integers(1, 6))
        a = np.sort(rng.standard_normal(k) * 2.0 ** rng.integers(-40, 40, k))[::-1]
        b = a + np.abs(rng.standard_normal(k)) * 2.0 ** rng.integers(-60, 0, k) * np.abs(a)
        b = np.where(rng.random(k) < 0.2, a, b)  # exact point enclosures too
        alpha, beta, e = (float(x) for x in np.abs(rng.standard_normal(3)) * 2.0 ** rng.integers(-50, -1, 3))
        t = int(rng.choice([0, -3, 7, -1021, 1000]))
        out = gram_mod.tridiagonal_theorem_g_float_bounds(a, b, arb(alpha), arb(beta), arb(e), t)
        if out is None:
            continue
        for i, x in enumerate(out):
            lo, hi = lower_fraction(x), upper_fraction(x)
            assert lo is not None and hi is not None
            assert _hull_ok(a, b, i, alpha, beta, e, t, lo, hi), (a, b, i, alpha, beta, e, t, str(x))
            checked += 1
        if hasattr(out, "lower"):
            for i, (lf, hf) in enumerate(zip(out.lower, out.upper)):
                assert _hull_ok(a, b, i, alpha, beta, e, t, _fr(lf), _fr(hf))
    assert checked > 100


def _hull_ok(a, b, i, alpha, beta, e, t, lo, hi) -> bool:
    """lo ≤ σᵢ ≤ hi for every admissible σ: lo² ≤ max_{j≥i} ℓⱼ and hi² ≥ min_{j≤i} hⱼ (monotone tightening)."""
    al, c = Fraction(alpha), Fraction(beta) + Fraction(e)
    f = Fraction(2) ** (2 * t)
    ell = [min((1 - al) * _fr(x), (1 + al) * _fr(x)) - c for x in a]
    h = [max((1 - al) * _fr(x), (1 + al) * _fr(x)) + c for x in b]
    lo_ok = lo <= 0 or lo * lo <= max(ell[i:]) * f
    hi_ok = hi >= 0 and hi * hi >= min(h[: i + 1]) * f
    return lo_ok and hi_ok


def test_tridiagonal_theorem_g_refusals():
    one = np.array([1.0])
    assert gram_mod.tridiagonal_theorem_g_float_bounds(one, one, arb(1), arb(0), arb(0)) is None
    assert gram_mod.tridiagonal_theorem_g_float_bounds(one, np.array([np.inf]), arb(0), arb(0), arb(0)) is None
    assert gram_mod.tridiagonal_theorem_g_float_bounds(-one, -one, arb(0.5), arb(0), arb(0.25)) is None
    res = gram_mod.tridiagonal_theorem_g_float_bounds(np.array([1.7e308]), np.array([1.7e308]), arb(0.5), arb(0), arb(0))
    assert res is not None and not hasattr(res, "lower")  # Arb fallback
    assert upper_fraction(res[0]) ** 2 >= Fraction(1.7e308) * Fraction(3, 2)


# --------------------------------------------------------------------------- the whole route


def _exact_sigma_checks(W, enc):
    G = ex.smaller_gram(ex.fractions_of(W))
    for i, ball in enumerate(enc.sigma):
        lo, hi = Fraction(float(enc.lower[i])), Fraction(float(enc.upper[i]))
        assert ex.singular_value_in(G, i, lo, hi), (i, enc.lower[i], enc.upper[i])
        assert ex.singular_value_in(G, i, max(lower_fraction(ball), Fraction(0)), upper_fraction(ball))


@pytest.mark.parametrize("case", range(14))
def test_tridiagonal_route_against_exact_inertia(monkeypatch, case):
    monkeypatch.setattr(gram_mod, "TRIDIAGONAL_RESIDUAL_CHUNK", [1, 2, 64][case % 3])
    monkeypatch.setattr(gram_mod, "TRIDIAGONAL_ALPHA_CHUNK", [2, 96][case % 2])
    monkeypatch.setattr(gram_mod, "GRAM_SMALL_CHUNK", [2, 256][case % 2])  # these orders take the small-order chunk
    rng = np.random.default_rng(1300 + case)
    m, n = [(1, 5), (2, 7), (4, 9), (9, 4), (6, 6), (3, 8), (7, 2)][case % 7]
    W = rng.standard_normal((m, n))
    if case % 4 == 1:
        W = rng.standard_normal((m, 1)) @ rng.standard_normal((1, n))  # rank 1
    if case % 5 == 2:
        W[0] = 0.0
    W = W * [1.0, 2.0**-1050, 2.0**600, 2.0**-300, 2.0**300, 1.0, 2.0**-530][case % 7]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        enc = enclose_singular_values(W, mode="gram")
    assert enc.certified and enc.mode in (("gram-tri",) if np.any(W) else ("zero",))
    _exact_sigma_checks(W, enc)


def test_tridiagonal_route_is_taken_and_recorded():
    rng = np.random.default_rng(2)
    W = rng.standard_normal((20, 60))
    res = gram_mod.certify_gram(W, arb(0), 0)
    assert res is not None and res[4] == "gram-tri"
    for mode, recorded in (("gram", "gram-tri"), ("auto", "fast+gram-tri")):  # auto: small, fast ∩ (§12)
        enc = enclose_singular_values(W, mode=mode)
        assert enc.mode == recorded
    assert enclose_singular_values(W.T, mode="gram").mode == "gram-tri"
    s = np.linalg.svd(W, compute_uv=False)
    assert np.all(enc.lower <= s) and np.all(s <= enc.upper)


def test_tridiagonal_route_with_wrong_data_stays_valid(monkeypatch):
    """Nothing about LAPACK is assumed: perturbed Q̂, d, e widen the enclosure but never break it."""
    original = tri.householder_tridiagonal
    rng = np.random.default_rng(3)

    def perturbed(G):
        Q, d, e = original(G)
        return Q + 1e-6 * rng.standard_normal(Q.shape), d * (1 + 1e-7), e + 1e-7

    monkeypatch.setattr(gram_mod.tridiagonal, "householder_tridiagonal", perturbed)
    W = rng.standard_normal((5, 8))
    enc = enclose_singular_values(W, mode="gram")
    assert enc.mode == "gram-tri"
    _exact_sigma_checks(W, enc)


def test_tridiagonal_route_alpha_refusal_falls_back_to_eigh(monkeypatch):
    monkeypatch.setattr(gram_mod.tridiagonal, "householder_tridiagonal",
                        lambda G: (3 * np.eye(G.shape[0], order="F"), np.diag(G).copy(), np.zeros(G.shape[0] - 1)))
    W = np.random.default_rng(4).standard_normal((4, 7))
    enc = enclose_singular_values(W, mode="gram")
    assert enc.mode == "gram"
    _exact_sigma_checks(W, enc)
