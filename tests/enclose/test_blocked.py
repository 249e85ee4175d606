"""The blocked fast-mode certificate against exact references.

proofs/enclosure.md §1 (float evaluation of Theorem R), §3 Lemma 3.1 (chunked |X|ᵀ|X| bound) and Lemma 3.3
(residual in column blocks, both orientations, ragged last blocks and chunks). References are exact
rationals (``fractions.Fraction``) for the residual and Gram matrices and mpmath at high precision for
their spectral norms; nothing is shared with the code under test.
"""

from __future__ import annotations

import tracemalloc
import warnings
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import scipy.linalg.lapack
from flint import arb

from certbound.ball import float_lower, float_upper
from certbound.enclose import enclose_singular_values, fperror
from certbound.enclose import svd as svd_mod
from tests.enclose.reference import mp_singular_values


def _fr(a: np.ndarray) -> list[list[Fraction]]:
    return [[Fraction(float(v)) for v in row] for row in np.atleast_2d(a)]


def _mp_norm2(M: list[list[Fraction]]) -> mpmath.mpf:
    """Spectral norm of an exact rational matrix (mpmath, 1500 bits: entries span 2^±1100)."""
    with mpmath.workprec(1500):
        A = mpmath.matrix([[mpmath.mpf(x.numerator) / x.denominator for x in row] for row in M])
        if A.rows < A.cols:
            A = A.T
        s = mpmath.svd_r(A, compute_uv=False)
        return max(abs(s[i]) for i in range(min(A.rows, A.cols)))


def _exact_residual(W, X, s, Y) -> list[list[Fraction]]:
    Wf, Xf, Yf = _fr(W), _fr(X), _fr(Y)
    sf = [Fraction(float(v)) for v in s]
    m, n, r = W.shape[0], W.shape[1], X.shape[1]
    return [[Wf[i][j] - sum(Xf[i][l] * sf[l] * Yf[j][l] for l in range(r)) for j in range(n)] for i in range(m)]


def _exact_gram_deviation(X) -> list[list[Fraction]]:
    Xf = _fr(X)
    m, r = X.shape
    return [[sum(Xf[i][a] * Xf[i][b] for i in range(m)) - (1 if a == b else 0) for b in range(r)] for a in range(r)]


def _holds(bound: arb, exact: mpmath.mpf) -> bool:
    up = float_upper(bound)
    with mpmath.workprec(1500):
        return not np.isfinite(up) or exact <= mpmath.mpf(up)


@pytest.fixture
def small_blocks(monkeypatch):
    """Chunks of 2 columns and output blocks of 3 columns: many ragged chunks and blocks at small sizes."""
    monkeypatch.setattr(fperror, "CHUNK", 2)
    monkeypatch.setattr(fperror, "RESIDUAL_BLOCK_MIN_COLUMNS", 1)
    monkeypatch.setattr(fperror, "RESIDUAL_BLOCK_BYTES", 1)
    monkeypatch.setattr(fperror, "RESIDUAL_BLOCK_MAX_COLUMNS", 3)


def _factors(rng, m, n, kind):
    """(W, X, s, Y) of one adversarial kind; r = min(m, n)."""
    k = min(m, n)
    W = rng.standard_normal((m, n))
    if kind == "svd":  # the real use: tiny residual
        U, s, Vt = np.linalg.svd(W, full_matrices=False)
        return W, U, s, Vt.T
    if kind == "arbitrary":  # a residual as large as W
        return W, rng.standard_normal((m, k)), rng.standard_normal(k), rng.standard_normal((n, k))
    if kind == "huge_tiny":  # rows/columns scaled by 2^±500, s spanning 2^±400
        W = W * np.ldexp(1.0, rng.integers(-500, 500, (m, 1))) * np.ldexp(1.0, rng.integers(-40, 40, (1, n)))
        U, s, Vt = np.linalg.svd(W, full_matrices=False)
        s = s * np.ldexp(1.0, rng.integers(-400, 400, k))
        return W, U, s, Vt.T
    if kind == "subnormal":  # products and residual entries below 2^-1022: the η terms carry the bound
        W = np.ldexp(np.round(rng.standard_normal((m, n)) * 8), -1070)
        U, s, Vt = np.linalg.svd(np.ldexp(W, 1070), full_matrices=False)
        return W, U, np.ldexp(s, -1070), Vt.T
    if kind == "rounded_product":  # W = fl(X fl(SYᵀ)): the computed residual is ≈ 0, the exact one is not
        X, Y = rng.standard_normal((m, k)), rng.standard_normal((n, k))
        s = rng.standard_normal(k) * np.ldexp(1.0, rng.integers(-20, 20, k))
        return X @ (s[:, None] * Y.T), X, s, Y
    raise AssertionError(kind)


SHAPES = [(5, 13), (13, 5), (6, 6), (1, 9), (9, 1), (7, 8)]
KINDS = ["svd", "arbitrary", "huge_tiny", "subnormal", "rounded_product"]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kind", KINDS)
def test_blocked_residual_bound_contains_exact_residual_norm(shape, kind, small_blocks):
    rng = np.random.default_rng(abs(hash((shape, kind))) % 2**32)
    W, X, s, Y = _factors(rng, *shape, kind)
    e = fperror.residual_norm_bound(W, X, s, Y)
    assert _holds(e, _mp_norm2(_exact_residual(W, X, s, Y)))
    if kind in ("svd", "arbitrary", "subnormal", "rounded_product"):
        assert np.isfinite(float_upper(e))  # not vacuous


@pytest.mark.parametrize("shape", SHAPES)
def test_blocking_does_not_widen_the_residual_bound(shape, monkeypatch):
    """Blocks of 3 columns vs one block of all columns: the same bound up to rounding noise.

    (BLAS may round a block's GEMM entries differently from the whole product's — another order of the same
    dot products — so the computed residual R̂, of size ≈ u‖W‖, and its norm differ in their last digits.)
    """
    rng = np.random.default_rng(7)
    W, X, s, Y = _factors(rng, *shape, "svd")
    monkeypatch.setattr(fperror, "CHUNK", 2)
    one = float_upper(fperror.residual_norm_bound(W, X, s, Y))
    monkeypatch.setattr(fperror, "RESIDUAL_BLOCK_MIN_COLUMNS", 1)
    monkeypatch.setattr(fperror, "RESIDUAL_BLOCK_BYTES", 1)
    monkeypatch.setattr(fperror, "RESIDUAL_BLOCK_MAX_COLUMNS", 3)
    blocked = float_upper(fperror.residual_norm_bound(W, X, s, Y))
    assert blocked <= one * 1.1 and one <= blocked * 1.1


def test_blocked_residual_overflow_is_infinite_not_wrong(small_blocks):
    W = np.full((4, 7), 1e300)
    X = np.full((4, 4), 1e300)
    e = fperror.residual_norm_bound(W, X, np.ones(4), np.ones((7, 4)))
    assert not np.isfinite(float_upper(e))


@pytest.mark.parametrize("m,r", [(9, 4), (7, 7), (1, 1), (12, 3)])
@pytest.mark.parametrize("kind", ["orthonormal", "perturbed", "subnormal_entries"])
def test_chunked_gram_deviation_bound_contains_exact_norm(m, r, kind, monkeypatch):
    monkeypatch.setattr(fperror, "CHUNK", 2)  # m > 4: row chunks of 2, the last one ragged for odd m
    rng = np.random.default_rng(m * 31 + r)
    X = np.linalg.qr(rng.standard_normal((m, r)))[0]
    if kind == "perturbed":
        X = X * (1 + 1e-3 * rng.standard_normal(X.shape))
    elif kind == "subnormal_entries":
        small = np.abs(X) < 0.2
        X[small] = np.ldexp(1.0, -1074) * rng.integers(1, 9, int(small.sum()))
    D = _exact_gram_deviation(X)
    a = fperror.gram_deviation_bound(X)
    assert _holds(a, _mp_norm2(D))
    if all(-0.45 <= D[i][i] <= 0.9 for i in range(r)):  # diagonal of XᵀX well inside [1/2, 2]: not vacuous
        assert np.isfinite(float_upper(a))


@pytest.mark.parametrize("t", [0, -3, 5, 600, -600, -1060, -1074, 1000])
def test_theorem_r_float_bounds_contain_the_exact_ends(t):
    rng = np.random.default_rng(t % 1000)
    s = np.concatenate([np.abs(rng.standard_normal(6)) * 10.0 ** rng.integers(-5, 5, 6), [0.0, 1e-310, 1.5]])
    alpha, beta, e = 2.0**-30 * 3, 0.25, 1e-3
    got = svd_mod.theorem_r_float_bounds(s, arb(alpha), arb(beta), arb(e), t)
    assert got is not None and len(got) == len(s)
    # Float ends: the arrays of the float path, else the Arb balls' ends rounded outward (ball.float_lower/upper).
    lower = got.lower if hasattr(got, "lower") else [float_lower(x) for x in got]
    upper = got.upper if hasattr(got, "upper") else [float_upper(x) for x in got]
    assert hasattr(got, "lower") == (t > -1000), t  # the float path unless the scaled ends leave the normal range
    with mpmath.workprec(400):
        two = mpmath.mpf(2) ** t
        for i, si in enumerate(sorted(map(float, s), reverse=True)):
            lo = max(mpmath.mpf(si) * mpmath.sqrt((1 - mpmath.mpf(alpha)) * (1 - mpmath.mpf(beta))) - e, 0) * two
            hi = (mpmath.mpf(si) * mpmath.sqrt((1 + mpmath.mpf(alpha)) * (1 + mpmath.mpf(beta))) + e) * two
            assert mpmath.mpf(float(lower[i])) <= lo and hi <= mpmath.mpf(float(upper[i]))
    assert svd_mod.theorem_r_float_bounds(s, arb(1.0), arb(0), arb(0)) is None


@pytest.mark.parametrize("shape", [(5, 9), (9, 5), (6, 6), (1, 4), (4, 1)])
def test_gesdd_orientation_gives_a_factorisation(shape):
    W = np.random.default_rng(3).standard_normal(shape)
    X, s, Y = svd_mod._gesdd_thin(W)
    k = min(shape)
    assert X.shape == (shape[0], k) and Y.shape == (shape[1], k) and s.shape == (k,)
    assert np.allclose((X * s) @ Y.T, W, atol=1e-13)
    assert np.allclose(X.T @ X, np.eye(k), atol=1e-13) and np.allclose(Y.T @ Y, np.eye(k), atol=1e-13)


def test_gesdd_failure_falls_back_to_gesvd(monkeypatch):
    """LAPACK's info ≠ 0 from dgesdd: the chain goes on to gesvd and still certifies."""
    real = scipy.linalg.lapack.dgesdd
    monkeypatch.setattr(scipy.linalg.lapack, "dgesdd", lambda a, *p, **k: (*real(a, *p, **k)[:3], 1))
    W = np.random.default_rng(4).standard_normal((6, 9))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc = enclose_singular_values(W, mode="fast")
    assert enc.certified and enc.mode == "fast"
    for lo, hi, t in zip(enc.lower, enc.upper, mp_singular_values(W)):
        assert mpmath.mpf(float(lo)) <= t <= mpmath.mpf(float(hi))


@pytest.mark.parametrize("shape", [(7, 23), (23, 7), (11, 11)])
def test_fast_enclosure_with_small_blocks_contains_exact_singular_values(shape, small_blocks):
    rng = np.random.default_rng(sum(shape))
    W = rng.standard_normal(shape) * np.ldexp(1.0, rng.integers(-300, 300, (shape[0], 1)))
    enc = enclose_singular_values(W, mode="fast")
    assert enc.certified
    for lo, hi, t in zip(enc.lower, enc.upper, mp_singular_values(W, prec=2000)):
        assert mpmath.mpf(float(lo)) <= t <= mpmath.mpf(float(hi))


def _peak_bytes(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_certificate_workspace_is_small(monkeypatch):
    """Issue 16: no m×n copy in the residual (Lemma 3.3), no |Y| copy in the Gram bound (Lemma 3.1)."""
    monkeypatch.setattr(fperror, "RESIDUAL_BLOCK_MAX_COLUMNS", 256)  # blocks ≪ the matrix at this small size
    rng = np.random.default_rng(5)
    W = rng.standard_normal((64, 6000))
    X, s, Y = svd_mod._gesdd_thin(W)
    peak = _peak_bytes(lambda: fperror.residual_norm_bound(W, X, s, Y))
    # four 64×256 blocks (P, R, V_J, |Y_J|) ≈ 0.17×; the unblocked code held R, P, V, |Y| (≥ 4×)
    assert peak < 0.35 * W.nbytes, peak / W.nbytes
    peak = _peak_bytes(lambda: fperror.gram_deviation_bound(Y))
    assert peak < 0.2 * Y.nbytes, peak / Y.nbytes


@pytest.mark.parametrize("k", [-3, 4, -1030, -1060])
def test_residual_of_scaled_blocks_equals_residual_of_scaled_copy(k):
    """scale_exponent=k forms fl(2^k W) per block: the same floats, hence the same bound, as the scaled copy."""
    rng = np.random.default_rng(abs(k))
    W = rng.standard_normal((6, 11)) * np.ldexp(1.0, rng.integers(0, 40, (6, 1)))
    Ws = fperror.scale_by_power_of_two(W, k)
    X, s, Y = svd_mod._gesdd_thin(Ws if abs(k) < 1000 else W)
    for A, B in ((W, Ws), (W.T, Ws.T)):  # both orientations
        XX, YY = (X, Y) if A is W else (Y, X)
        one = fperror.residual_norm_bound(B, XX, s, YY)
        two = fperror.residual_norm_bound(A, XX, s, YY, scale_exponent=k)
        assert float_upper(one) == float_upper(two)


@pytest.mark.parametrize("dtype,scale", [(np.float64, 8.0), (np.float64, 1.0), (np.float32, 8.0)])
def test_callers_matrix_is_not_overwritten(dtype, scale):
    """The fast-mode SVD may destroy the kernel's own scaled copy, never the caller's array."""
    W = (np.random.default_rng(8).standard_normal((9, 14)) * scale).astype(dtype)
    W[0, 0] = 1.5 * scale  # max |w| ≥ 1: scaled unless in [1, 2)
    before = W.copy()
    enc = enclose_singular_values(W, mode="fast")
    assert np.array_equal(W, before) and enc.certified


def test_consumed_copy_is_restored_for_the_next_attempt(monkeypatch):
    """After the first (gesdd) SVD consumed the scaled copy and its certificate failed, gesvd gets the true matrix."""
    real = svd_mod._bounds_fast
    calls = []

    def fail_first(Ws, X, s, Y, source=None):
        calls.append(source is not None)
        if len(calls) == 1:
            inf = arb.pos_inf()
            return inf, inf, inf
        return real(Ws, X, s, Y, source)

    monkeypatch.setattr(svd_mod, "_bounds_fast", fail_first)
    monkeypatch.setitem(svd_mod._BOUNDS, "fast", fail_first)
    W = np.random.default_rng(9).standard_normal((7, 12)) * 5
    enc = enclose_singular_values(W, mode="fast")
    assert calls[0] and len(calls) == 2  # consumed, then a second (gesvd) attempt
    assert enc.certified
    for lo, hi, t in zip(enc.lower, enc.upper, mp_singular_values(W)):
        assert mpmath.mpf(float(lo)) <= t <= mpmath.mpf(float(hi))
