"""Lemma 11.3 (Lemma 11.2 with Theorem G-T, proofs/enclosure.md §11): the heads' d×d core without eigenvectors.

``product._theorem_gt_ends`` (taken for d ≥ ``THEOREM_GT_MIN_INNER``; here forced at small d) and its two stacked
pieces, ``_stacked.tridiagonal_residual_norm_upper`` and ``_stacked.tridiagonal_eigenvalue_brackets``. References
share no code with what they test: exact Fractions and Sylvester inertia (tests/enclose/exact_inertia.py,
tests/enclose/exact_tridiagonal.py), for the residual norms, the eigenvalues of T and the singular values of the
exact products. LAPACK's outputs are perturbed or replaced by garbage: the route assumes nothing about them.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import scipy.linalg.lapack as lapack

from certbound.enclose import _stacked
from certbound.enclose import product as P
from certbound.enclose.product import enclose_singular_values_of_products
from tests.enclose import exact_inertia as X
from tests.enclose import exact_tridiagonal as XT
from tests.enclose.test_heads_theorem_g import _assert_contains_exactly, _factors


def _tri(d, e) -> list:
    return XT.dense(d, e)


def _exact_residual(W, Q, d, e) -> list:
    """W − Q T Qᵀ exactly."""
    Qf = X.fractions_of(Q)
    T = _tri(d, e)
    return [[a - b for a, b in zip(wr, pr)]
            for wr, pr in zip(X.fractions_of(W), X.matmul(X.matmul(Qf, T), X.transpose(Qf)))]


def _householder_case(rng, h, r, scale=0):
    """(W, Q, d, e): LAPACK's tridiagonalisation of symmetric and non-symmetric W (a few perturbed)."""
    W = rng.standard_normal((h, r, r)) * 2.0**scale
    W = W + W.transpose(0, 2, 1)
    W[0] = W[0] + 1e-9 * rng.standard_normal((r, r)) * 2.0**scale  # not symmetric: R̂ is computed in full
    Q, dg, off, lam, ok = P._householder_stack(W)
    assert ok.all()
    return W, Q, dg, off


@pytest.mark.parametrize("scale", [0, 300, -1040])
@pytest.mark.parametrize("r", [1, 2, 5])
def test_tridiagonal_residual_bound_holds_exactly(scale, r):
    """‖W − Q̂TQ̂ᵀ‖₂ ≤ the bound (inertia, no tolerance): LAPACK's factors, perturbed ones, and W := fl(fl(Q̂T)Q̂ᵀ)
    (R̂ = 0: the a-priori term alone); subnormal scales exercise the η term."""
    rng = np.random.default_rng(700 + r + abs(scale))
    W, Q, dg, off = _householder_case(rng, 3, r, scale)
    Q[1] = Q[1] * (1 + 1e-7)  # a poor Q̂ only widens
    off[2] = off[2] * (1 - 1e-8) if r > 1 else off[2]
    T = np.zeros((3, r, r))
    for j in range(3):
        T[j] = np.diag(dg[j]) + np.diag(off[j], 1) + np.diag(off[j], -1)
    W[2] = (Q[2] @ T[2]) @ Q[2].T  # (not necessarily the kernel's floats; the bound holds for any W)
    got = _stacked.tridiagonal_residual_norm_upper(W, Q, dg, off)
    same = _stacked.tridiagonal_residual_norm_upper(W, Q, dg, off, np.abs(Q))
    assert np.array_equal(got, same)
    for j in range(3):
        assert np.isfinite(got[j])
        assert X.norm_at_most(_exact_residual(W[j], Q[j], dg[j], off[j]), Fraction(float(got[j]))), j


def test_tridiagonal_residual_bound_of_a_zero_computed_residual_rests_on_the_a_priori_term():
    """W built with the kernel's own two products: R̂ = 0 exactly, yet ‖W − Q̂TQ̂ᵀ‖₂ > 0 and is bounded."""
    rng = np.random.default_rng(71)
    r = 6
    Q = rng.standard_normal((2, r, r))
    dg, off = rng.standard_normal((2, r)), rng.standard_normal((2, r - 1))
    T = np.zeros((2, r, r))
    idx = np.arange(r)
    T[:, idx, idx] = dg
    T[:, idx[1:], idx[:-1]] = off
    T[:, idx[:-1], idx[1:]] = off
    W = np.matmul(np.matmul(Q, T), Q.transpose(0, 2, 1))
    got = _stacked.tridiagonal_residual_norm_upper(W, Q, dg, off)
    for j in range(2):
        R = _exact_residual(W[j], Q[j], dg[j], off[j])
        assert any(x != 0 for row in R for x in row)  # the exact residual is not zero …
        assert X.norm_at_most(R, Fraction(float(got[j])))  # … and the bound covers it


def test_tridiagonal_residual_bound_is_infinite_for_non_finite_data():
    rng = np.random.default_rng(72)
    W, Q, dg, off = _householder_case(rng, 3, 4)
    W[0, 1, 2] = np.nan
    Q[1, 0, 0] = np.inf
    dg[2, 1] = 1e308
    off[2] = 1e308
    got = _stacked.tridiagonal_residual_norm_upper(W, Q, dg, off)
    assert np.all(np.isinf(got[:2])) and np.isinf(got[2])


def _tridiagonal_cases(rng, h, r):
    """Symmetric tridiagonals: random, clustered, graded, with zero and tiny off-diagonals, at several scales."""
    dg = rng.standard_normal((h, r))
    off = rng.standard_normal((h, r - 1))
    for j in range(h):
        kind = j % 6
        if kind == 1:
            dg[j] = 1.0 + 1e-13 * rng.standard_normal(r)  # a cluster
            off[j] = 1e-14 * rng.standard_normal(r - 1)
        elif kind == 2:
            dg[j] = 2.0 ** -np.arange(r, dtype=float) * 4  # graded
            off[j] = 2.0 ** -np.arange(1, r, dtype=float)
        elif kind == 3 and r > 2:
            off[j, r // 2] = 0.0  # splits into two blocks
        elif kind == 4 and r > 1:
            off[j, 0] = 2.0**-320 * dg[j, 0]  # tiny after scaling: left to the per-matrix path
        elif kind == 5:
            dg[j] *= 2.0**-1070  # scaling up is exact; then scaling down of the ends is checked
            off[j] *= 2.0**-1070
        if kind != 5:
            k = 2.0 ** float(rng.choice([0, 40, -40, 700]))
            dg[j] *= k
            off[j] *= k * 2.0 ** float(rng.choice([0, 0, 1]))
    return dg, off


@pytest.mark.parametrize("approx", ["lapack", "perturbed", "garbage"])
def test_stacked_sturm_brackets_contain_the_exact_eigenvalues(approx):
    """Every bracket returned with ok contains its eigenvalue (exact inertia); LAPACK's own approximations give
    ok on the ordinary slices; garbage approximations only fail ok (never a wrong bracket)."""
    rng = np.random.default_rng({"lapack": 81, "perturbed": 82, "garbage": 83}[approx])
    checked = fast = 0
    for r in (1, 2, 3, 7, 12):
        dg, off = _tridiagonal_cases(rng, 12, r)
        lam = np.zeros_like(dg)
        for j in range(12):
            from certbound.enclose.tridiagonal import _dsterf

            got = _dsterf(dg[j], off[j])
            lam[j] = got if got is not None else 0.0
        if approx == "perturbed":
            lam = lam * (1 + 1e-12 * rng.standard_normal(lam.shape))
        elif approx == "garbage":  # (every other slice: the others keep LAPACK's and must still be ok)
            lam[::2] = rng.standard_normal(lam[::2].shape) * np.abs(dg[::2]).max(axis=1, keepdims=True)
        spread = np.abs(rng.standard_normal(12)) * 1e-14 * np.abs(dg).max(axis=1)
        lo, hi, ok = _stacked.tridiagonal_eigenvalue_brackets(dg, off, lam, spread)
        for j in np.flatnonzero(ok).tolist():
            fast += 1
            for i in range(r):
                assert lo[j, i] <= hi[j, i]
                assert XT.eigenvalue_in_descending(dg[j], off[j], i, XT.frac(lo[j, i]), XT.frac(hi[j, i])), (r, j, i)
                checked += 1
        if approx == "lapack":
            ordinary = [j for j in range(12) if j % 6 not in (4, 5)]
            assert ok[ordinary].all(), (r, ok)
            assert not ok[4] or r == 1  # the tiny off-diagonal: refused here (the per-matrix function's case)
    assert checked > 0 and fast > 0


def test_stacked_sturm_brackets_are_as_narrow_as_the_shifts():
    """With LAPACK's approximations the bracket of λⱼ is λ̂ⱼ ± (δⱼ + ρ) up to roundings: the route's widths."""
    rng = np.random.default_rng(84)
    dg, off = rng.standard_normal((4, 9)), rng.standard_normal((4, 8))
    from certbound.enclose.tridiagonal import _dsterf

    lam = np.stack([_dsterf(dg[j], off[j]) for j in range(4)])
    lo, hi, ok = _stacked.tridiagonal_eigenvalue_brackets(dg, off, lam, np.zeros(4))
    assert ok.all()
    scale = np.maximum(np.abs(dg).max(axis=1), np.abs(off).max(axis=1))[:, None]
    assert np.all(hi - lo <= 64 * 2.0**-52 * scale)


def test_stacked_sturm_brackets_agree_with_the_per_matrix_function():
    """Where the stacked path certifies, tridiagonal_eigenvalue_bounds (all shifts, retries) is never wider by
    more than its own retry; both contain the exact eigenvalues (the stacked one checked above)."""
    from certbound.enclose.tridiagonal import _dsterf, tridiagonal_eigenvalue_bounds

    rng = np.random.default_rng(85)
    dg, off = rng.standard_normal((6, 10)), rng.standard_normal((6, 9))
    lam = np.stack([_dsterf(dg[j], off[j]) for j in range(6)])
    lo, hi, ok = _stacked.tridiagonal_eigenvalue_brackets(dg, off, lam, np.full(6, 1e-15))
    for j in range(6):
        assert ok[j]
        l1, h1 = tridiagonal_eigenvalue_bounds(dg[j], off[j], approx=lam[j], spread=1e-15)
        assert np.all(np.maximum(lo[j], l1) <= np.minimum(hi[j], h1))  # overlapping brackets of one eigenvalue
        assert np.all((hi[j] - lo[j]) <= 2 * (h1 - l1) + 1e-300)


@pytest.fixture
def theorem_gt(monkeypatch):
    """Force Lemma 11.3 at every inner dimension."""
    monkeypatch.setattr(P, "THEOREM_GT_MIN_INNER", 0)


@pytest.mark.parametrize("ka,kb", [(0, 0), (40, -3), (-25, 17), (200, -200)])
def test_theorem_gt_route_contains_the_exact_singular_values(ka, kb, theorem_gt):
    """As Lemma 11.2's route test: every slice accepted, inside the exact spectrum (inertia), zeros past d."""
    rng = np.random.default_rng(11)
    As, Bs = _factors(rng, 4, 8, 6, 3, ka, kb)
    encs, _, _ = P._certify_stack_theorem_g(As, Bs)
    for enc, A, B in zip(encs, As, Bs):
        assert enc is not None and enc.certified and enc.mode == "product"
        assert enc.rank.upper == 3 and enc.upper[3] == 0.0
        _assert_contains_exactly(enc, A, B)


def test_theorem_gt_route_matches_theorem_g_widths(monkeypatch):
    """On well-conditioned heads both cores give balls of about the same width (the brackets of T cost ≈ 2⁻⁹c)."""
    rng = np.random.default_rng(12)
    As, Bs = _factors(rng, 6, 40, 30, 6)
    monkeypatch.setattr(P, "THEOREM_GT_MIN_INNER", 10**9)
    g, _, _ = P._certify_stack_theorem_g(As, Bs)
    monkeypatch.setattr(P, "THEOREM_GT_MIN_INNER", 0)
    gt, _, _ = P._certify_stack_theorem_g(As, Bs)
    for a, b in zip(g, gt):
        wa, wb = a.upper[:6] - a.lower[:6], b.upper[:6] - b.lower[:6]
        assert np.all(wb <= 3 * wa) and np.all(wa <= 3 * wb)


@pytest.mark.parametrize("bad", ["reflectors", "diagonal", "approx", "dorgqr", "lapack-error"])
def test_theorem_gt_route_is_valid_for_any_lapack_output(bad, theorem_gt, monkeypatch):
    """Lemma 11.3 holds for any Q̂, T and approximations: LAPACK's floats perturbed (or an error reported) only widen
    the balls or fail the route (width target off, so that wide balls are returned and checked exactly)."""
    monkeypatch.setattr(P, "AUTO_RELATIVE_TARGET", np.inf)
    rng = np.random.default_rng({"reflectors": 91, "diagonal": 92, "approx": 93, "dorgqr": 94, "lapack-error": 95}[bad])
    real_trd, real_org, real_sterf = lapack.dsytrd, lapack.dorgqr, lapack.dsterf

    def trd(a, **kw):
        c, d, e, tau, info = real_trd(a, **kw)
        if bad == "reflectors":
            c = c + 1e-6 * rng.standard_normal(c.shape)
        elif bad == "diagonal":
            d, e = d * (1 + 1e-7), e * (1 - 1e-7)
        elif bad == "lapack-error" and rng.random() < 0.5:
            info = -1
        return c, d, e, tau, info

    def org(a, tau, **kw):
        q, work, info = real_org(a, tau, **kw)
        return (q + 1e-5 * rng.standard_normal(q.shape) if bad == "dorgqr" else q), work, info

    def sterf(d, e, **kw):
        lam, info = real_sterf(d, e, **kw)
        return (lam * (1 + 1e-3 * rng.standard_normal(lam.shape)) if bad == "approx" else lam), info

    # the module attributes (what the kernel calls): a lying LAPACK for the Householder stack only here
    monkeypatch.setattr(lapack, "dsytrd", trd)
    monkeypatch.setattr(lapack, "dorgqr", org)
    monkeypatch.setattr(lapack, "dsterf", sterf)
    As, Bs = _factors(rng, 4, 9, 7, 4)
    encs, _, _ = P._certify_stack_theorem_g(As, Bs)
    assert any(e is not None for e in encs) or bad == "lapack-error"
    for enc, A, B in zip(encs, As, Bs):
        if enc is not None:
            _assert_contains_exactly(enc, A, B)
    # the public function still certifies every product (Lemma P-G for refused slices)
    for enc, A, B in zip(enclose_singular_values_of_products(As, Bs, mode="auto"), As, Bs):
        assert enc.certified
        _assert_contains_exactly(enc, A, B)


def test_theorem_gt_is_taken_from_the_threshold_on(monkeypatch):
    """d ≥ THEOREM_GT_MIN_INNER takes Lemma 11.3 (the Householder stack runs), below it Theorem G (eigh)."""
    rng = np.random.default_rng(13)
    calls = []
    real = P._householder_stack

    def spy(M):
        calls.append(M.shape)
        return real(M)

    monkeypatch.setattr(P, "_householder_stack", spy)
    for d in (P.THEOREM_GT_MIN_INNER - 1, P.THEOREM_GT_MIN_INNER):
        As, Bs = _factors(rng, 2, 6 * d, 5 * d, d)
        encs, _, _ = P._certify_stack_theorem_g(As, Bs)
        assert all(e is not None for e in encs)
    assert [s[1] for s in calls] == [P.THEOREM_GT_MIN_INNER]


def test_theorem_gt_route_refuses_overflow_and_keeps_the_others(theorem_gt):
    """A slice whose Gram matrix overflows (M̂ non-finite) is refused; the other slices of the stack are certified."""
    rng = np.random.default_rng(15)
    As, Bs = _factors(rng, 3, 10, 8, 3)
    As[1] = As[1] * 2.0**520
    encs, _, _ = P._certify_stack_theorem_g(As, Bs)
    assert encs[1] is None and encs[0] is not None and encs[2] is not None
    for j in (0, 2):
        _assert_contains_exactly(encs[j], As[j], Bs[j])
