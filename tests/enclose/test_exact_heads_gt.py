"""Referee tests of Lemma 11.3 (the heads' d×d core by Theorem G-T, 0369ded) against exact references.

``product._theorem_gt_ends`` replaces Lemma 11.2's eigh-with-vectors by ``dsytrd`` + ``dorgqr`` + ``dsterf``
per slice, a stacked residual bound with a tridiagonal middle (``_stacked.tridiagonal_residual_norm_upper``)
and stacked Sturm brackets (``_stacked.tridiagonal_eigenvalue_brackets``); proofs/enclosure.md §11.
Attacked here, every ball decided by Sylvester inertia of the exact (ABᵀ)(ABᵀ)ᵀ
(:mod:`tests.enclose.exact_inertia`; no tolerance):

* the route forced at every inner dimension (d = 1, 2, … : the production threshold is 48) under a lying
  tridiagonal LAPACK (dsytrd / dorgqr / dsterf perturbed, sign-flipped, permuted or non-finite) and under a
  legal worst-case BLAS for the stacked products and sums of ``_stacked`` (:mod:`tests.enclose.exact_blas`);
* the residual bound when the product P = fl(YXᵀ) is snapped, within its legal window, onto W itself, so
  that the computed R̂ hides the error and only the a-priori γ_{r+3}‖N_T‖ + κη√(m·m) covers it — at
  ordinary, huge and subnormal scales (where the η part is all there is).
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest

from certbound.enclose import _stacked
from certbound.enclose import product as product_mod
from tests.enclose.exact_blas import HostileNumpy, hostile_product
from tests.enclose.exact_inertia import fractions_of, matmul, norm_at_most, transpose
from tests.enclose.exact_tridiagonal import dense
from tests.enclose.test_exact_heads import check_product_enclosure, _pairs
from tests.enclose.test_exact_tridiagonal import install_wrong_tridiagonal_lapack


def _route(seed: int, cases: int, monkeypatch, lying: bool, how: str | None) -> tuple[int, int]:
    rng = np.random.default_rng(seed)
    monkeypatch.setattr(product_mod, "AUTO_RELATIVE_TARGET", np.inf)  # return every slice the route certifies
    monkeypatch.setattr(product_mod, "THEOREM_GT_MIN_INNER", 0)       # Lemma 11.3 at every d
    taken = [0]
    orig = product_mod._theorem_gt_ends

    def spy(*a, **kw):
        taken[0] += 1
        return orig(*a, **kw)

    monkeypatch.setattr(product_mod, "_theorem_gt_ends", spy)
    if lying:
        install_wrong_tridiagonal_lapack(rng, monkeypatch, p_wrong=0.5)
    if how is not None:
        monkeypatch.setattr(_stacked, "np", HostileNumpy(how, rng, sums=True))
    accepted = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(cases):
            m, n = int(rng.integers(1, 7)), int(rng.integers(1, 7))
            d = int(rng.integers(1, min(m, n) + 1)) if rng.random() < 0.8 else min(m, n)
            pairs = _pairs(rng, int(rng.integers(1, 4)), m, n, d)
            encs = product_mod._certify_stack_theorem_g([p[0] for p in pairs], [p[1] for p in pairs])[0]
            for (A, B), enc in zip(pairs, encs):
                if enc is not None:
                    check_product_enclosure(A, B, enc, ("Lemma 11.3", m, n, d, lying, how))
                    accepted += 1
    return accepted, taken[0]


def test_lemma_11_3_route_contains_the_exact_singular_values(monkeypatch):
    accepted, taken = _route(9101, 40, monkeypatch, lying=False, how=None)
    assert taken >= 30 and accepted >= 40, (taken, accepted)


def test_lemma_11_3_route_under_a_lying_tridiagonal_lapack(monkeypatch):
    accepted, taken = _route(9102, 40, monkeypatch, lying=True, how=None)
    assert taken >= 30 and accepted >= 15, (taken, accepted)


@pytest.mark.parametrize("how", ["up", "down", "sign"])
def test_lemma_11_3_route_under_a_worst_case_blas(how, monkeypatch):
    accepted, taken = _route(9110 + len(how), 8, monkeypatch, lying=how == "sign", how=how)
    assert taken >= 5 and accepted >= 4, (taken, accepted)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_lemma_11_3_route_sweep(seed, monkeypatch):
    _route(9200 + seed, 200 if seed < 4 else 40, monkeypatch, lying=bool(seed % 2),
           how=None if seed < 4 else ("up", "down")[seed % 2])


# ------------- the residual bound with P snapped onto W: R̂ ≈ 0, only the a-priori part covers ‖W − XTXᵀ‖₂


class _SnappingNumpy:
    """``np`` for ``_stacked``, except that the first stacked product of shape (h, m, m) — P = fl(Y Xᵀ), the
    residual's (the later ones are matrix–vector chains) — returns, per entry, the float of its legal window
    nearest to W's entry (the residual then hides its own error)."""

    def __init__(self, W):
        self.W = [fractions_of(Wh) for Wh in W]
        self.snapped = 0

    def __getattr__(self, name):
        return getattr(np, name)

    def matmul(self, a, b, out=None, **kw):
        a, b = np.asarray(a), np.asarray(b)
        if not self.snapped and a.ndim == 3 and b.ndim == 3 and a.shape[0] == len(self.W) and a.shape[1] == b.shape[2] == len(self.W[0]) \
                and a.dtype == b.dtype == np.float64 and np.all(np.isfinite(a)) and np.all(np.isfinite(b)):
            self.snapped += 1
            r = np.stack([hostile_product(x, y, (lambda i, j, W=W: W[i][j])) for x, y, W in zip(a, b, self.W)])
        else:
            r = np.matmul(a, b)
        if out is None:
            return r
        out[...] = r
        return out


def _snap_case(rng, h: int, r: int, scale: int):
    """W ≈ XTXᵀ for LAPACK's X = Q̂, T of a random symmetric matrix, then X, d, e, W at 2^scale."""
    A = rng.standard_normal((h, r, r))
    A = A + A.transpose(0, 2, 1)
    Q, dg, off, lam, ok = product_mod._householder_stack(A)
    assert ok.all()
    Q = np.ascontiguousarray(Q)
    T = np.zeros((h, r, r))
    for j in range(h):
        T[j] = np.diag(dg[j]) + np.diag(off[j], 1) + np.diag(off[j], -1)
    W = np.matmul(np.matmul(Q, T), Q.transpose(0, 2, 1))
    W[0] += 2.0**-45 * rng.standard_normal((r, r))  # not symmetric, not exactly XTXᵀ
    s = 2.0**scale
    return W * s, Q * 2.0 ** (scale // 2), dg * 2.0 ** (scale - 2 * (scale // 2)), \
        off * 2.0 ** (scale - 2 * (scale // 2))


@pytest.mark.parametrize("scale", [0, 400, -1000, -1060])
@pytest.mark.parametrize("r", [1, 2, 4])
def test_tridiagonal_residual_bound_with_the_product_snapped_onto_w(scale, r, monkeypatch):
    rng = np.random.default_rng(9300 + r + abs(scale))
    h = 3
    with np.errstate(all="ignore"):
        W, Xs, dg, off = _snap_case(rng, h, r, scale)
    snap = _SnappingNumpy(W)
    monkeypatch.setattr(_stacked, "np", snap)
    with np.errstate(all="ignore"):
        bound = _stacked.tridiagonal_residual_norm_upper(W, Xs, dg, off)
    assert snap.snapped == 1, "the residual's product did not go through the adversary"
    for j in range(h):
        Xf = fractions_of(Xs[j])
        R = [[w - p for w, p in zip(wr, pr)] for wr, pr in
             zip(fractions_of(W[j]), matmul(matmul(Xf, dense(dg[j], off[j])), transpose(Xf)))]
        assert np.isfinite(bound[j]) and norm_at_most(R, Fraction(float(bound[j]))), \
            ("‖W − XTXᵀ‖₂ above the bound", scale, r, j, float(bound[j]))


# ------------- the stacked Sturm brackets where their outward steps matter (2×2 cases with known eigenvalues)


def _bracket_functions():
    from certbound.enclose.tridiagonal import tridiagonal_eigenvalue_bounds

    def stacked(dg, off, approx, spread):
        lo, hi, ok = _stacked.tridiagonal_eigenvalue_brackets(dg[None], off[None], approx[None], np.array([spread]))
        return (lo[0], hi[0]) if ok[0] else None

    def per_matrix(dg, off, approx, spread):
        return tridiagonal_eigenvalue_bounds(dg, off, approx=approx, spread=spread)

    return {"stacked": stacked, "per-matrix": per_matrix}


def _check_brackets(dg, off, lo, hi, what):
    from tests.enclose.exact_tridiagonal import eigenvalue_in_descending, frac

    for i in range(dg.size):
        assert eigenvalue_in_descending(dg, off, i, frac(lo[i]), frac(hi[i])), ("λ(T) outside its bracket", what, i,
                                                                               float(lo[i]), float(hi[i]))


@pytest.mark.parametrize("fn", ["stacked", "per-matrix"])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_brackets_at_gershgorin_edges_that_round_inward(fn, sign):
    # T = [[1, ε], [ε, 1]], ε = 3·2⁻⁶⁰: λ = 1 ± ε are exactly Gershgorin's ends, and fl(1 − ε) = fl(1 + ε) = 1
    # round inward. With both approximations at 1 every shift 1 ± δ (δ ≫ ε) lies beyond Gershgorin's interval, so
    # all four ends are Gershgorin's: they must have been stepped outward.
    f = _bracket_functions()[fn]
    dg = np.array([1.0, 1.0]) * sign
    off = np.array([3 * 2.0**-60])
    got = f(dg, off, dg.copy(), 0.0)
    assert got is not None, "the stacked path certifies this slice (every end is Gershgorin's)"
    _check_brackets(dg, off, *got, (fn, sign))


@pytest.mark.parametrize("fn", ["stacked", "per-matrix"])
@pytest.mark.parametrize("bits", [1, 8, 12])
def test_brackets_of_subnormal_eigenvalues_just_inside_a_grid_point(fn, bits):
    # T = 2⁻¹⁰³¹·[[3, δ], [δ, 1]] with δ = 2^(bits−43): entries subnormal multiples of η; λ = 2⁻¹⁰³¹(1 − δ²/2 − …)
    # and 2⁻¹⁰³¹(3 + δ²/2 + …) lie a hair inside the subnormal grid points 2⁻¹⁰³¹, 3·2⁻¹⁰³¹ — so scaling the
    # brackets back to 2⁻¹⁰³¹ rounds them onto those points, i.e. past the eigenvalues, unless stepped outward.
    f = _bracket_functions()[fn]
    g = 2.0**-1031
    dg = np.array([3 * g, g])
    off = np.array([2.0 ** (bits - 43) * g])
    assert off[0] >= 2.0**-1074 and off[0] / g == 2.0 ** (bits - 43)  # exactly representable
    got = f(dg, off, np.array([g, 3 * g]), 0.0)
    assert got is not None, "the stacked path certifies this slice"
    _check_brackets(dg, off, *got, (fn, bits))


# ------------- a shift where the float Sturm count is wrong: only Lemma S's ρ keeps the bracket valid

# (d, e, μ, j, float count, exact count): normalised T (max|T| = 1.5), μ within a few ulps of λⱼ (ascending, 0-based),
# where the float recurrence counts one eigenvalue too few (low shifts) or too many (high shifts). Found by scanning
# 81 floats around each eigenvalue of random / Wilkinson-like T; the premise is re-checked below (IEEE is deterministic).
_MISCOUNTS = [
    (['-0x1.f20387630795ep-1', '0x1.1d0a20d4d1b83p+0', '0x1.36f02a51e3ce6p-2', '-0x1.8000000000000p+0',
      '-0x1.fa27d20215478p-3', '-0x1.3d1e0694ffb25p-4', '-0x1.41ece02a5e68dp+0'],
     ['0x1.bbdf6f381820fp-1', '-0x1.6d827feb658e9p+0', '-0x1.9ba43a21eda4fp-2', '0x1.fad1b1cbe033ap-5',
      '-0x1.0688e97205f86p-2', '0x1.487c2155aac1dp-2'], '0x1.44568d684bbdcp-3', 5, 5, 6),
    (['0x1.6db6db6db6db6p-1', '0x1.e79e79e79e79dp-2', '0x1.e79e79e79e79dp-3', '0x0.0p+0', '0x1.e79e79e79e79dp-3',
      '0x1.e79e79e79e79dp-2', '0x1.6db6db6db6db6p-1'], ['0x1.8000000000000p+0'] * 6, '-0x1.a8902b7021f9cp+0', 1, 1, 2),
    (['0x1.6db6db6db6db6p-1', '0x1.e79e79e79e79dp-2', '0x1.e79e79e79e79dp-3', '0x0.0p+0', '0x1.e79e79e79e79dp-3',
      '0x1.e79e79e79e79dp-2', '0x1.6db6db6db6db6p-1'], ['0x1.8000000000000p+0'] * 6, '-0x1.6745e3c00014ap-1', 2, 3, 2),
    (['0x1.7af08bc346de4p+0', '0x1.93c2234ecf5e5p-2', '0x1.5ce3fa11acf3cp-2', '0x1.8000000000000p+0',
      '0x1.d4777b7fcbcafp-1', '0x1.d92cc9dc2c893p-1'],
     ['-0x1.6be1dd4b26dfcp+0', '-0x1.aaad1caf17eccp-2', '-0x1.52bf40b4ac2a4p+0', '-0x1.f431be85b49e8p-1',
      '-0x1.d2ff91cd78467p-1'], '0x1.0b434b6303f42p-3', 2, 3, 2),
]


def _approx_hitting(mu: float, rho: float, low: bool) -> float:
    """λ̂ with fl(λ̂ ∓ δ(λ̂)) == μ for the brackets' δ = fl(fl(0 + 2ρ) + 8·ulp(λ̂)) (spread 0)."""
    lam = mu + 2 * rho + 8 * np.spacing(abs(mu)) if low else mu - 2 * rho - 8 * np.spacing(abs(mu))
    for _ in range(200):
        delta = (0.0 + 2.0 * rho) + 8.0 * np.spacing(abs(lam))
        got = lam - delta if low else lam + delta
        if got == mu:
            return lam
        lam = np.nextafter(lam, -np.inf if got > mu else np.inf)
    raise AssertionError("no approximation puts the shift on μ")


@pytest.mark.parametrize("fn", ["stacked", "per-matrix"])
@pytest.mark.parametrize("case", range(len(_MISCOUNTS)))
def test_brackets_from_a_shift_the_float_recurrence_miscounts(case, fn):
    from certbound.enclose.tridiagonal import sturm_counts
    from tests.enclose.exact_tridiagonal import count_below

    dh, eh, muh, j, fc, ec = _MISCOUNTS[case]
    dg, off, mu = np.array([float.fromhex(x) for x in dh]), np.array([float.fromhex(x) for x in eh]), float.fromhex(muh)
    c, v = sturm_counts(dg, off, np.array([mu]))
    assert bool(v[0]) and int(c[0]) == fc and count_below(dg, off, mu) == ec, "premise: the float count is off by one"
    low = fc == j  # a low shift for λⱼ that (wrongly) certifies λⱼ ≥ μ; else a high shift certifying λⱼ ≤ μ
    rho = float(np.nextafter(_stacked._sturm_rho_factor() * np.abs(off).max(), np.inf))
    approx = np.linalg.eigvalsh(np.diag(dg) + np.diag(off, 1) + np.diag(off, -1))
    approx[j] = _approx_hitting(mu, rho, low)
    got = _bracket_functions()[fn](dg, off, approx, 0.0)
    assert got is not None, "the brackets are certified here (else the case tests nothing)"
    _check_brackets(dg, off, *got, (fn, case))
