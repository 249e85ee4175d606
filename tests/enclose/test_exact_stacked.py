"""Referee tests of the stacked a-priori bounds (:mod:`certbound.enclose._stacked`) against exact references.

Every slice of every returned float is checked against the exact matrix by Sylvester inertia
(:mod:`tests.enclose.exact_inertia`; Fractions, no tolerance): ``‖M‖₂``, ``‖|A|diag|d||B|‖₂``,
``‖|X|ᵀ|X|‖₂``, ``‖XᵀX − I‖₂`` and ``‖W − X diag(s) Yᵀ‖₂``. Stacks mix slices of every kind
(near-orthonormal, saturated, ties, subnormal, 2^±500 …); targeted cases make the computed part
vanish — fl(XᵀX) = I exactly while XᵀX ≠ I, and W := the kernel's own fl(X·fl(diag(s)Yᵀ)), so the
computed residual is 0 — so the bound rests on its a-priori terms alone (proofs/enclosure.md §10).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from certbound.enclose import _stacked
from tests.enclose.exact_inertia import (
    fractions_of,
    gram_deviation,
    matmul,
    norm_at_most,
    residual,
    symmetric_norm_at_most,
    transpose,
)
from tests.enclose.test_exact_containment import _factor, _orthonormal, _residual_case


def _ub(x: float) -> Fraction | None:
    return Fraction(float(x)) if np.isfinite(x) else None


def _abs_fr(A) -> list:
    return fractions_of(np.abs(A))


def _check_slices(seed: int, stacks: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(stacks):
        h = int(rng.integers(1, 5))
        m, n, r = (int(v) for v in rng.integers(1, 7, size=3))
        # ---- gram deviation, |X|ᵀ|X|, ‖X‖₂
        X = np.stack([_factor(rng, m, r) for _ in range(h)])
        g = _stacked.gram_deviation_upper(X)
        a = _stacked.abs_gram_norm2_upper(np.abs(X))
        nx = _stacked.norm2_upper(X)
        for j in range(h):
            if _ub(g[j]) is not None:
                assert symmetric_norm_at_most(gram_deviation(X[j]), _ub(g[j])), ("gram_deviation_upper", X[j].tolist())
            aX = _abs_fr(X[j])
            if _ub(a[j]) is not None:
                assert symmetric_norm_at_most(matmul(transpose(aX), aX), _ub(a[j])), ("abs_gram_norm2_upper", X[j])
            if _ub(nx[j]) is not None:
                assert norm_at_most(fractions_of(X[j]), _ub(nx[j])), ("norm2_upper", X[j])
        # ---- residual
        cases = [_residual_case(rng, m, n, r) for _ in range(h)]
        W, Xr, s, Y = (np.stack([c[i] for c in cases]) for i in range(4))
        e = _stacked.residual_norm_upper(W, Xr, s, Y)
        p = _stacked.abs_product_norm2_upper(np.abs(Xr), s, np.abs(Y).transpose(0, 2, 1))
        for j in range(h):
            if _ub(e[j]) is not None:
                assert norm_at_most(residual(W[j], Xr[j], s[j], Y[j]), _ub(e[j])), ("residual_norm_upper", cases[j])
            if _ub(p[j]) is not None:
                aS = [[abs(x) if i == k else Fraction(0) for k in range(r)] for i, x in enumerate(fractions_of(s[j]))]
                N = matmul(matmul(_abs_fr(Xr[j]), aS), transpose(_abs_fr(Y[j])))
                assert norm_at_most(N, _ub(p[j])), ("abs_product_norm2_upper", cases[j])


def test_stacked_bounds_exact():
    _check_slices(601, 40)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_stacked_bounds_exact_sweep(seed):
    _check_slices(6000 + seed, 1500)


def test_stacked_gram_deviation_when_the_rounded_gram_is_the_identity():
    # fl(XᵀX) = I exactly, XᵀX − I = 2⁻⁵⁴ (or more) ≠ 0: only γ_m‖|X|ᵀ|X|‖ + 2mrη is left to cover it.
    Xs = [np.array([[1.0], [2.0**-27]]), np.array([[1.0], [2.0**-27], [2.0**-27], [-(2.0**-28)]]),
          np.array([[1.0], [5e-324]]), np.array([[1.0], [3 * 2.0**-29], [2.0**-28], [2.0**-28]])]
    for X in Xs:
        S = np.stack([X, X * -1.0])
        with np.errstate(all="ignore"):
            assert np.all(np.matmul(S.transpose(0, 2, 1), S) == 1.0)
        g = _stacked.gram_deviation_upper(S)
        for j in range(2):
            assert symmetric_norm_at_most(gram_deviation(S[j]), _ub(g[j])), X.tolist()
    # two columns: an off-diagonal entry lost to rounding as well
    X = np.array([[1.0, 2.0**-27], [2.0**-27, 1.0], [2.0**-28, -(2.0**-28)]])
    g = _stacked.gram_deviation_upper(X[None])
    assert symmetric_norm_at_most(gram_deviation(X), _ub(g[0]))


def test_stacked_residual_when_the_computed_residual_is_zero():
    # W := fl(X·fl(diag(s)Yᵀ)) by the kernel's own stacked operations, so R̂ = 0 while the exact
    # residual is the rounding error of that product: carried by γ_{r+1}‖|X||S||Y|ᵀ‖ and the η terms.
    rng = np.random.default_rng(611)
    for _ in range(40):
        h, m, n, r = (int(v) for v in rng.integers(1, 6, size=4))
        X = np.stack([_factor(rng, m, r) if rng.random() < 0.5 else _orthonormal(rng, m, r) for _ in range(h)])
        Y = np.stack([_factor(rng, n, r) for _ in range(h)])
        s = rng.standard_normal((h, r)) * 2.0 ** float(rng.choice([0, -500, -1060, 200]))
        with np.errstate(all="ignore"):
            W = np.matmul(X, s[:, :, None] * Y.transpose(0, 2, 1))
        if not (np.all(np.isfinite(W)) and np.max(np.abs(W), initial=0) <= 2.0**256):
            continue
        e = _stacked.residual_norm_upper(W, X, s, Y)
        for j in range(h):
            assert np.isfinite(e[j]) and norm_at_most(residual(W[j], X[j], s[j], Y[j]), _ub(e[j]))


# ---------------------------------------------------------------- session 6: Y is X (one symmetric chain), |X| passed in


def _sym_case(rng, m, r):
    """(W, X, s): W symmetric-ish m×m, X m×r, s real or None; the kinds of Cholesky / eigen-residuals."""
    X = _factor(rng, m, r) if rng.random() < 0.6 else _orthonormal(rng, m, r)
    s = None if rng.random() < 0.3 else rng.standard_normal(r) * 2.0 ** float(rng.choice([0, -500, -1060, 200, 400]))
    if s is not None and rng.random() < 0.2:
        s[rng.integers(0, r)] = float(rng.choice([0.0, -0.0, 5e-324]))
    how = int(rng.integers(0, 4))
    if how == 3:  # constant |X| and |s|: N = |X||S||X|ᵀ has equal row sums, so ‖N‖₂ = ‖N‖_∞ and every
        # upward step of the chain is needed (full-mantissa entries: the float sums round down as often as up)
        x = float(np.ldexp(float(rng.integers(2**52, 2**53)), -52))
        X = x * rng.choice([-1.0, 1.0], (m, r))
        if s is not None:
            s = np.full(r, float(np.ldexp(float(rng.integers(2**52, 2**53)), -52))) * rng.choice([-1.0, 1.0], r)
    with np.errstate(all="ignore"):
        S = np.ones(r) if s is None else s
        if how in (0, 3):  # the kernel's own product: computed residual 0, the a-priori chain carries it all
            W = np.matmul(X, S[:, None] * X.T)
        elif how == 1:
            A = rng.standard_normal((m, m))
            W = A + A.T
        else:  # same-sign data: the roundings add up
            X = np.abs(X)
            S = np.abs(S)
            s = None if s is None else S
            W = np.matmul(X, S[:, None] * X.T)
    return np.asarray(W, dtype=float), np.asarray(X, dtype=float), s


def _check_symmetric_chain(seed: int, stacks: int) -> int:
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(stacks):
        h = int(rng.integers(1, 5))
        m, r = int(rng.integers(1, 7)), int(rng.integers(1, 7))
        with_s = rng.random() < 0.7
        cases = []
        while len(cases) < h:
            W, X, s = _sym_case(rng, m, r)
            if (s is None) == with_s:
                continue
            cases.append((W, X, s))
        W = np.stack([c[0] for c in cases])
        X = np.stack([c[1] for c in cases])
        s = np.stack([c[2] for c in cases]) if with_s else None
        aX = np.abs(X)
        e_sym = _stacked.residual_norm_upper(W, X, s, X, aX)  # Y is X: the one-chain path
        p = _stacked.abs_symmetric_product_norm2_upper(aX, s)
        n_abs = _stacked.norm2_upper(X, aX)
        for j in range(h):
            sj = np.ones(r) if s is None else s[j]
            if _ub(e_sym[j]) is not None:
                assert norm_at_most(residual(W[j], X[j], sj, X[j]), _ub(e_sym[j])), (
                    "residual_norm_upper(W, X, s, X)", W[j].tolist(), X[j].tolist(), sj.tolist())
                checked += 1
            if _ub(p[j]) is not None:
                aS = [[abs(x) if i == k else Fraction(0) for k in range(r)] for i, x in enumerate(fractions_of(sj))]
                N = matmul(matmul(_abs_fr(X[j]), aS), transpose(_abs_fr(X[j])))
                assert symmetric_norm_at_most(N, _ub(p[j])), ("abs_symmetric_product_norm2_upper", X[j].tolist())
            if _ub(n_abs[j]) is not None:
                assert norm_at_most(fractions_of(X[j]), _ub(n_abs[j])), ("norm2_upper(X, |X|)", X[j].tolist())
                assert norm_at_most(_abs_fr(X[j]), _ub(n_abs[j])), ("norm2_upper(X, |X|) ≥ ‖|X|‖₂", X[j].tolist())
    return checked


def test_stacked_symmetric_residual_chain_exact():
    assert _check_symmetric_chain(621, 25) > 25


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_stacked_symmetric_residual_chain_exact_sweep(seed):
    _check_symmetric_chain(6100 + seed, 1500)


def test_stacked_symmetric_chain_refuses_non_finite_slices():
    rng = np.random.default_rng(622)
    X = np.stack([_orthonormal(rng, 5, 3) for _ in range(4)])
    s = rng.standard_normal((4, 3))
    with np.errstate(all="ignore"):
        W = np.matmul(X, s[:, :, None] * X.transpose(0, 2, 1))
    X[1, 2, 0], W[2, 0, 4], s[3, 1] = np.nan, np.inf, np.inf
    e = _stacked.residual_norm_upper(W, X, s, X, np.abs(X))
    assert np.isfinite(e[0]) and not np.any(np.isfinite(e[1:])), e.tolist()
    p = _stacked.abs_symmetric_product_norm2_upper(np.abs(X), s)
    assert np.isfinite(p[0]) and not np.isfinite(p[1]) and not np.isfinite(p[3]), p.tolist()
    # empty shapes
    assert _stacked.abs_symmetric_product_norm2_upper(np.zeros((2, 0, 3)), None).tolist() == [0.0, 0.0]
    assert _stacked.abs_symmetric_product_norm2_upper(np.zeros((2, 3, 0)), np.zeros((2, 0))).tolist() == [0.0, 0.0]
