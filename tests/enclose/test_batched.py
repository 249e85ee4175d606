"""Batched product path, stacked a-priori bounds, directed rounding, BLAS thread control.

References never share code with what they test: exact Fractions for the
one-step directed rounding, mpmath at 320 bits for norms and singular values.
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, strategies as st

from certbound._blas import available_threads, blas_threads, threads_for
from certbound.enclose import CertificateWarning, enclose_singular_values_of_product
from certbound.enclose import _stacked
from certbound.enclose.product import enclose_singular_values_of_products
from tests.enclose.reference import contains_value, mp_product_singular_values

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@given(finite, finite)
def test_one_step_directed_rounding_brackets_exact_results(a, b):
    """Lemma 10.1: after a correctly rounded +, ×, one float outward bounds the exact value."""
    fa, fb = Fraction(a), Fraction(b)
    with np.errstate(all="ignore"):
        for op, exact in ((np.add, fa + fb), (np.multiply, fa * fb)):
            r = op(np.float64(a), np.float64(b))
            if not np.isfinite(r):
                continue
            hi, lo = _stacked.up(r), _stacked.down(r)
            assert (Fraction(float(lo)) if np.isfinite(lo) else -np.inf) <= exact
            assert exact <= (Fraction(float(hi)) if np.isfinite(hi) else np.inf)


@given(st.floats(min_value=0, max_value=1e300))
def test_one_step_directed_rounding_sqrt(x):
    r = np.sqrt(np.float64(x))
    hi, lo = Fraction(float(_stacked.up(r))), Fraction(float(_stacked.down(r)))
    assert (lo <= 0 or lo * lo <= Fraction(x)) and Fraction(x) <= hi * hi  # lo ≤ √x ≤ hi


def _mp_norm2(M: np.ndarray) -> mpmath.mpf:
    with mpmath.workprec(320):
        return max(mpmath.svd_r(mpmath.matrix(M.tolist()), compute_uv=False))


@pytest.mark.parametrize("seed", range(2))
def test_stacked_bounds_dominate_exact_values(seed):
    rng = np.random.default_rng(seed)
    X = np.linalg.qr(rng.standard_normal((4, 12, 4)))[0]
    W = rng.standard_normal((4, 12, 8))
    Y = rng.standard_normal((4, 8, 4))
    s = rng.standard_normal((4, 4))
    n2 = _stacked.norm2_upper(W)
    gd = _stacked.gram_deviation_upper(X)
    rs = _stacked.residual_norm_upper(W, X, s, Y)
    with mpmath.workprec(320):
        for j in range(4):
            assert _mp_norm2(W[j]) <= n2[j]
            Xm = mpmath.matrix(X[j].tolist())
            D = Xm.T * Xm - mpmath.eye(4)
            assert max(mpmath.svd_r(D, compute_uv=False)) <= gd[j]
            R = mpmath.matrix(W[j].tolist()) - Xm * mpmath.diag(s[j].tolist()) * mpmath.matrix(Y[j].tolist()).T
            assert max(mpmath.svd_r(R, compute_uv=False)) <= rs[j]


def _check(enc, A, B):
    d = A.shape[1]
    ref = mp_product_singular_values(A, B)
    for i, t in enumerate(ref):
        assert contains_value(enc.lower[i], enc.upper[i], t if i < d else 0), (i, enc.lower[i], t, enc.upper[i])


@pytest.mark.parametrize("mode", ["fast", "auto", "tight", "arb"])
def test_batched_products_contain_exact_spectra(mode):
    """Mixed shapes, a zero factor in the middle, float32 and scaled factors: each result as if alone."""
    rng = np.random.default_rng(7)
    As, Bs = [], []
    for j in range(7):
        m, n, d = (12, 10, 3) if j % 2 else (9, 14, 4)
        A = rng.standard_normal((m, d)) * 2.0 ** (40 * (j - 3))
        B = rng.standard_normal((n, d)).astype(np.float32)
        if j == 3:
            A = np.zeros((m, d))
        As.append(A)
        Bs.append(B)
    encs = enclose_singular_values_of_products(As, Bs, mode=mode)
    for j, (enc, A, B) in enumerate(zip(encs, As, Bs)):
        assert enc.shape == (A.shape[0], B.shape[0]) and enc.certified
        if j == 3:
            assert np.all(enc.upper == 0)
            continue
        _check(enc, A, B.astype(np.float64))
        assert enc.rank.upper <= A.shape[1]


def test_auto_product_gram_route_falls_back_for_rank_deficient_factor():
    """Lemma P-G needs full column rank; a rank-deficient factor goes through Lemma P (QR)."""
    rng = np.random.default_rng(3)
    A = rng.standard_normal((20, 4))
    A[:, 3] = A[:, 0] + A[:, 1]  # rank 3 exactly (small integers would keep it exact; here floats: near)
    A[:, 3] = A[:, 0]  # exactly rank 3
    B = rng.standard_normal((15, 4))
    enc = enclose_singular_values_of_products([A], [B], mode="auto")[0]
    _check(enc, A, B)
    assert enc.lower[3] == 0.0


def test_auto_product_matches_fast_widths_on_well_conditioned_heads():
    rng = np.random.default_rng(5)
    As = [rng.standard_normal((96, 8)).astype(np.float32).astype(np.float64) for _ in range(3)]
    Bs = [rng.standard_normal((96, 8)).astype(np.float32).astype(np.float64) for _ in range(3)]
    for a, f in zip(enclose_singular_values_of_products(As, Bs, mode="auto"),
                    enclose_singular_values_of_products(As, Bs, mode="fast")):
        wa = (a.upper[:8] - a.lower[:8]) / a.upper[:8]
        wf = (f.upper[:8] - f.lower[:8]) / f.upper[:8]
        assert np.all(wa < 1e-9) and np.all(wf < 1e-9)
        assert np.all(a.lower[:8] <= f.upper[:8]) and np.all(f.lower[:8] <= a.upper[:8])


def test_batched_bad_input_and_failure_chain():
    with pytest.raises(ValueError, match="left factors"):
        enclose_singular_values_of_products([np.ones((2, 1))], [])
    with pytest.raises(ValueError, match="inner dimensions"):
        enclose_singular_values_of_products([np.ones((3, 2))], [np.ones((3, 3))])
    with pytest.raises(ValueError, match="unknown mode"):
        enclose_singular_values_of_products([np.ones((3, 2))], [np.ones((3, 2))], mode="nope")
    # Entries near the float maximum: scaling keeps the certificate valid (or trivial with a warning).
    A = np.full((5, 2), 1.7e308)
    A[0, 0] = -1.7e308
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CertificateWarning)
        enc = enclose_singular_values_of_product(A, A)
    assert enc.upper[0] >= float(mp_product_singular_values(A, A)[0]) or not enc.certified


def test_blas_thread_policy():
    assert threads_for(384, 1536) == 1  # small: always one thread
    assert 1 <= available_threads()
    from threadpoolctl import threadpool_info

    with blas_threads(1):
        assert all(i["num_threads"] == 1 for i in threadpool_info() if i["user_api"] == "blas")
        with blas_threads(1):  # nested same limit: no change
            pass
        assert all(i["num_threads"] == 1 for i in threadpool_info() if i["user_api"] == "blas")


def test_blas_threads_when_the_count_is_already_set():
    """A block asking for the count every BLAS already has sets nothing; a nested different count is set and restored."""
    from threadpoolctl import threadpool_info, threadpool_limits

    def counts():
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    with threadpool_limits(limits=1, user_api="blas"):
        with blas_threads(1):
            assert counts() and all(c == 1 for c in counts())
            with blas_threads(2):  # set (as far as the BLAS allows) and restored
                pass
            assert all(c == 1 for c in counts())
        assert all(c == 1 for c in counts())


def test_blas_threads_respect_user_cap(monkeypatch):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    assert available_threads() == 1
    assert threads_for(4096, 16384) == 1


def test_auto_dense_takes_gram_when_the_target_is_met(monkeypatch):
    import certbound.enclose.svd as svd_mod
    from certbound.enclose import enclose_singular_values
    from certbound.enclose.svd import AUTO_RELATIVE_TARGET
    from tests.enclose.reference import mp_singular_values

    monkeypatch.setattr(svd_mod, "AUTO_SMALL_WORK", 0)  # as for a large matrix: small ones get fast ∩ gram (§12)
    W = np.random.default_rng(2).standard_normal((12, 30))
    enc = enclose_singular_values(W, mode="auto")
    assert enc.mode == "gram"
    ref = mp_singular_values(W)
    assert all(contains_value(lo, hi, t) for lo, hi, t in zip(enc.lower, enc.upper, ref))
    assert np.all(enc.upper - enc.lower <= AUTO_RELATIVE_TARGET * np.maximum(enc.lower, 1e-2 * enc.upper[0]))


def test_auto_dense_falls_back_to_fast_intersected_with_gram():
    """Tiny singular values miss the target under Theorem G: fast ∩ gram, never wider than fast."""
    from certbound.enclose import enclose_singular_values
    from tests.enclose.reference import mp_singular_values

    rng = np.random.default_rng(4)
    A = rng.integers(-4, 5, size=(10, 2)).astype(float)
    B = rng.integers(-4, 5, size=(14, 2)).astype(float)
    W = A @ B.T + np.ldexp(rng.standard_normal((10, 14)), -40)  # rank 2 plus a 1e-12 tail
    auto = enclose_singular_values(W, mode="auto")
    fast = enclose_singular_values(W, mode="fast")
    assert auto.mode == "fast+gram"
    ref = mp_singular_values(W)
    assert all(contains_value(lo, hi, t) for lo, hi, t in zip(auto.lower, auto.upper, ref))
    # never wider than fast, up to the radius rounding of one Arb ball (2^-29 of the width)
    slack = 2.0**-28 * (fast.upper - fast.lower)
    assert np.all(auto.lower >= fast.lower - slack) and np.all(auto.upper <= fast.upper + slack)
    assert np.sum(auto.upper - auto.lower) < np.sum(fast.upper - fast.lower)


@pytest.mark.parametrize("seed", range(3))
def test_chunked_products_bounds_dominate_exact_values(seed, monkeypatch):
    """Lemmas 2.5/3.1/3.2 with chunks: CHUNK shrunk to 2 so small matrices take the chunked path."""
    from certbound.ball import float_upper
    from certbound.enclose import fperror

    monkeypatch.setattr(fperror, "CHUNK", 2)
    rng = np.random.default_rng(seed)
    X = np.linalg.qr(rng.standard_normal((11, 7)))[0]
    Y = np.linalg.qr(rng.standard_normal((9, 7)))[0]
    s = np.sort(np.abs(rng.standard_normal(7)))[::-1] * 2.0 ** rng.integers(-3, 3)
    W = (X * s) @ Y.T + 1e-9 * rng.standard_normal((11, 9))
    assert fperror.chunked_gamma_length(11) == 2 + 6 - 1  # b + q − 1 (Lemma 2.5)
    a = float_upper(fperror.gram_deviation_bound(X))
    e = float_upper(fperror.residual_norm_bound(W, X, s, Y))
    with mpmath.workprec(320):
        Xm = mpmath.matrix(X.tolist())
        assert max(mpmath.svd_r(Xm.T * Xm - mpmath.eye(7), compute_uv=False)) <= a
        R = mpmath.matrix(W.tolist()) - Xm * mpmath.diag(s.tolist()) * mpmath.matrix(Y.tolist()).T
        assert max(mpmath.svd_r(R, compute_uv=False)) <= e
    # and the whole certificate on the chunked path still contains the exact spectrum
    from certbound.enclose import enclose_singular_values
    from tests.enclose.reference import mp_singular_values

    enc = enclose_singular_values(W)
    assert all(contains_value(lo, hi, t) for lo, hi, t in zip(enc.lower, enc.upper, mp_singular_values(W)))


@pytest.mark.parametrize("seed", range(3))
def test_chunked_gram_certificate_contains_exact_spectrum(seed, monkeypatch):
    from certbound.enclose import enclose_singular_values, fperror
    from tests.enclose.reference import mp_singular_values

    monkeypatch.setattr(fperror, "CHUNK", 2)
    W = np.random.default_rng(seed).standard_normal((5, 13)) * 2.0 ** (seed * 30 - 30)
    enc = enclose_singular_values(W, mode="gram")
    assert enc.mode == "gram"
    assert all(contains_value(lo, hi, t) for lo, hi, t in zip(enc.lower, enc.upper, mp_singular_values(W)))


def test_stacked_scaling_equals_the_scalar_scaling():
    """product._scaled_stack is the vectorised power_of_two_scaling (same arrays, exponents, exact flags)."""
    from certbound.enclose._input import power_of_two_scaling
    from certbound.enclose.product import _scaled_stack

    rng = np.random.default_rng(9)
    Fs = []
    for j, e in enumerate([0, 5, -7, 1000, 1000, -1000]):
        F = rng.standard_normal((6, 3)) * 2.0**e
        if j == 4:
            F[0, 0] = 3.0 * 2.0**-100  # becomes subnormal (and rounds) after scaling down by 2^-1001
        Fs.append(F)
    S, k, exact = _scaled_stack(Fs)
    for j, F in enumerate(Fs):
        Ws, kj, exj = power_of_two_scaling(F)
        assert np.array_equal(S[j], Ws) and k[j] == kj and exact[j] == exj
    assert not exact[4] and exact[3]
    enc = enclose_singular_values_of_products(Fs[3:5], Fs[3:5], mode="auto")
    for e, F in zip(enc, Fs[3:5]):
        _check(e, F, F)
