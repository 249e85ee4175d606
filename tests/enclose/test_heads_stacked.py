"""The symmetric a-priori chain and the |M|-sharing variants of :mod:`certbound.enclose._stacked` (session 6).

``residual_norm_upper(W, X, s, X)`` (Y is X: Cholesky and eigen-residuals of Lemmas 11.1, 11.2) bounds
``‖|X||S||X|ᵀ‖₂`` by one chain (:func:`_stacked.abs_symmetric_product_norm2_upper`, proofs/enclosure.md
§10). Every bound is checked against the exact matrix by Sylvester inertia (Fractions, no tolerance),
including residuals whose computed part is 0 (W := fl(X·fl(diag(s)Xᵀ))), where the bound rests on the
a-priori term alone; and the new bounds are never larger than the two-chain ones they replace.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from certbound.enclose import _stacked
from tests.enclose.exact_inertia import fractions_of, matmul, norm_at_most, residual, symmetric_norm_at_most, transpose
from tests.enclose.test_exact_containment import _factor, _orthonormal


def _ub(x: float) -> Fraction | None:
    return Fraction(float(x)) if np.isfinite(x) else None


def _symmetric_cases(rng, h: int, m: int, r: int, zero_residual: bool):
    """(W, X, s): X from eigh of a symmetric matrix (U, λ) or arbitrary factors; s any signs and scales."""
    Xs, ss = [], []
    for _ in range(h):
        kind = rng.integers(0, 3)
        if kind == 0 and r <= m:
            S = rng.standard_normal((m, m))
            lam, U = np.linalg.eigh(S + S.T)
            X, s = U[:, :r].copy(), lam[:r].copy()
        elif kind == 1:
            X, s = _orthonormal(rng, m, r), rng.standard_normal(r)
        else:
            X, s = _factor(rng, m, r), rng.standard_normal(r)
        s = s * 2.0 ** float(rng.choice([0, 0, -500, -1060, 200]))
        if rng.random() < 0.2:
            s[rng.integers(0, r)] = rng.choice([0.0, 5e-324])
        Xs.append(X)
        ss.append(s)
    X, s = np.stack(Xs), np.stack(ss)
    with np.errstate(all="ignore"):
        P = np.matmul(X, s[:, :, None] * X.transpose(0, 2, 1))
    if zero_residual:
        W = P
    else:
        W = P + 1e-3 * np.abs(P).max() * rng.standard_normal(P.shape) * rng.choice([0.0, 1.0])
        for j in range(h):
            if rng.random() < 0.5:
                W[j] = rng.standard_normal((m, m))
    return W, X, s


def _check(seed: int, stacks: int) -> int:
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(stacks):
        h = int(rng.integers(1, 4))
        m, r = (int(v) for v in rng.integers(1, 6, size=2))
        zero = rng.random() < 0.5
        W, X, s = _symmetric_cases(rng, h, m, r, zero)
        if not np.all(np.isfinite(W)) or np.max(np.abs(W), initial=0) > 2.0**256:
            continue
        sym = _stacked.residual_norm_upper(W, X, s, X)
        two = _stacked.residual_norm_upper(W, X, s, X.copy())  # Y a different array: Lemma 2.4's two chains
        shared = _stacked.residual_norm_upper(W, X, s, X, np.abs(X))
        assert np.array_equal(sym, shared)
        assert np.all(sym <= two), (sym, two)
        chain = _stacked.abs_symmetric_product_norm2_upper(np.abs(X), s)
        chains = _stacked.abs_product_norm2_upper(np.abs(X), s, np.abs(X).transpose(0, 2, 1))
        assert np.all(chain <= chains)
        one = _stacked.residual_norm_upper(W, X, None, X)  # s = 𝟙 (the Cholesky residual's form)
        for j in range(h):
            if _ub(sym[j]) is not None:
                assert norm_at_most(residual(W[j], X[j], s[j], X[j]), _ub(sym[j])), (W[j], X[j], s[j])
                checked += 1
            if _ub(one[j]) is not None:
                assert norm_at_most(residual(W[j], X[j], np.ones(r), X[j]), _ub(one[j]))
            if _ub(chain[j]) is not None:
                aX = fractions_of(np.abs(X[j]))
                aS = [[abs(x) if i == k else Fraction(0) for k in range(r)] for i, x in enumerate(fractions_of(s[j]))]
                assert symmetric_norm_at_most(matmul(matmul(aX, aS), transpose(aX)), _ub(chain[j]))
    return checked


def test_symmetric_residual_chain_exact():
    assert _check(6601, 60) > 60


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_symmetric_residual_chain_exact_sweep(seed):
    _check(6610 + seed, 1000)


def test_zero_computed_residual_rests_on_the_symmetric_chain():
    """W = fl(X·fl(diag(s)Xᵀ)) exactly as the kernel computes it: R̂ = 0, the bound is a-priori only."""
    rng = np.random.default_rng(6620)
    for _ in range(40):
        h, m, r = (int(v) for v in rng.integers(1, 6, size=3))
        X = np.stack([_factor(rng, m, r) for _ in range(h)])
        s = rng.standard_normal((h, r))
        with np.errstate(all="ignore"):
            W = np.matmul(X, s[:, :, None] * X.transpose(0, 2, 1))
        if not (np.all(np.isfinite(W)) and np.max(np.abs(W), initial=0) <= 2.0**256):
            continue
        e = _stacked.residual_norm_upper(W, X, s, X)
        for j in range(h):
            assert np.isfinite(e[j]) and norm_at_most(residual(W[j], X[j], s[j], X[j]), _ub(e[j]))


@pytest.mark.parametrize("shape", [(3, 4, 5), (2, 1, 7), (4, 6, 1), (5, 32, 32)])
def test_norm2_upper_from_a_given_absolute_value_is_the_same_bound(shape):
    """``norm2_upper(M, |M|)`` equals ``norm2_upper(M)`` and ``norm2_upper(|M|)``, and bounds ‖M‖₂ exactly."""
    rng = np.random.default_rng(6630)
    M = rng.standard_normal(shape) * 2.0 ** rng.integers(-600, 600, size=(shape[0], 1, 1)).astype(float)
    a, b, c = _stacked.norm2_upper(M), _stacked.norm2_upper(M, np.abs(M)), _stacked.norm2_upper(np.abs(M))
    assert np.array_equal(a, b) and np.array_equal(a, c)
    if shape[1] * shape[2] <= 42:
        for j in range(shape[0]):
            if np.isfinite(a[j]):
                assert norm_at_most(fractions_of(M[j]), _ub(a[j]))
    bad = M.copy()
    bad[0, 0, 0] = np.nan
    assert np.isinf(_stacked.norm2_upper(bad)[0])


@pytest.mark.parametrize("k", [1, 7, 32, 768, 2**40])
def test_inflate_in_place_is_fperror_inflate_and_bounds_the_exact_sums(k):
    """_stacked._inflate_in_place (no error-state context, cached constants) gives fperror._inflate's floats, and
    _mv bounds the exact nonnegative products (Fractions) with subnormal, huge and zero entries."""
    from certbound.enclose import fperror

    rng = np.random.default_rng(k % 1000)
    v = np.abs(rng.standard_normal(50)) * 2.0 ** rng.choice([0, -1070, 900, -30], 50)
    v[:3] = [0.0, 2.0**-1074, np.inf]
    with np.errstate(over="ignore"):
        assert np.array_equal(_stacked._inflate_in_place(v.copy(), k), fperror._inflate(v, k))
    M = np.abs(rng.standard_normal((3, 4, 5))) * 2.0 ** rng.choice([0, -1072, 500], (3, 4, 5))
    x = np.abs(rng.standard_normal((3, 5)))
    with np.errstate(over="ignore"):
        got = _stacked._mv(M, x)
    for j in range(3):
        exact = matmul(fractions_of(M[j]), [[t] for t in fractions_of(x[j:j + 1])[0]])
        assert all(Fraction(float(got[j, i])) >= exact[i][0] for i in range(4))


def test_inflate_constants_refuse_what_the_error_model_does_not_cover():
    with pytest.raises(ValueError, match="too large"):
        _stacked._inflate_constants(2**40 + 1)


def test_ones_are_shared_and_read_only():
    a = _stacked._ones(3, 4)
    assert a is _stacked._ones(3, 4) and not a.flags.writeable and np.array_equal(a, np.ones((3, 4)))
