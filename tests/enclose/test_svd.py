"""Inclusion tests of the certified SVD against exact and mpmath references."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import example, given, strategies as st

import certbound.enclose.svd as svd_mod
from certbound.enclose import CertificateWarning, enclose_singular_values
from tests.enclose.reference import (
    built_exactly,
    contains_value,
    hadamard_orthogonal,
    mp_singular_values,
)

try:  # tight mode lives in its own module (error-free transformations)
    import certbound.enclose.tight  # noqa: F401

    ALL_MODES = ["fast", "tight", "arb"]
except ImportError:  # pragma: no cover - only while tight mode is missing
    ALL_MODES = ["fast", "arb"]


def assert_encloses(enc, true_values):
    k = min(enc.shape)
    assert len(enc.sigma) == k == len(enc.lower) == len(enc.upper)
    assert np.all(enc.lower >= 0)
    assert np.all(np.diff(enc.lower) <= 0) and np.all(np.diff(enc.upper) <= 0)
    for i, t in enumerate(true_values):
        assert contains_value(enc.lower[i], enc.upper[i], t), (i, enc.lower[i], t, enc.upper[i])
        assert enc.sigma[i].contains(t) if not hasattr(t, "_mpf_") else True
    # Values past the given ones are zero.
    for i in range(len(true_values), k):
        assert enc.lower[i] == 0.0


@st.composite
def exact_spectrum_matrices(draw):
    """(W, σ) with W = Q_m[:, :r] diag(σ) Q_nᵀ[:r] built exactly in float64."""
    m = draw(st.sampled_from([1, 4, 16]))
    n = draw(st.sampled_from([1, 4, 16]))
    r = draw(st.integers(0, min(m, n)))
    span = draw(st.sampled_from([4, 20, 40]))  # bits spanned by the spectrum
    mant = draw(st.lists(st.integers(1, 15), min_size=r, max_size=r))
    expo = draw(st.lists(st.integers(-span, 0), min_size=r, max_size=r))
    clustered = draw(st.booleans())
    if clustered and r:
        mant, expo = [mant[0]] * r, [expo[0]] * r
    sigma = np.sort(np.ldexp(np.array(mant, dtype=float), np.array(expo, dtype=np.int64)))[::-1]
    scale = draw(st.sampled_from([0, 900, -960, 30]))
    Qm, Qn = hadamard_orthogonal(m), hadamard_orthogonal(n)
    W = (Qm[:, :r] * sigma) @ Qn[:, :r].T if r else np.zeros((m, n))
    if not built_exactly(Qm, sigma, Qn, W):
        W = None
    return W, sigma, scale


@given(exact_spectrum_matrices(), st.sampled_from(ALL_MODES), st.booleans())
def test_exact_spectrum_is_enclosed(case, mode, transpose):
    W, sigma, scale = case
    if W is None:
        return  # construction not exact in float64 (rare); the mpmath test covers such W
    if transpose:
        W = W.T
    W = np.ldexp(W, scale)
    true = [float(np.ldexp(s, scale)) for s in sigma]
    enc = enclose_singular_values(W, mode=mode)
    assert enc.certified
    assert_encloses(enc, true)
    # Rank: certified lower bound never exceeds the truth, upper never below.
    assert enc.rank.lower <= len(sigma) <= enc.rank.upper


def test_hadamard_64_graded_and_clustered():
    Q = hadamard_orthogonal(64)
    sigma = np.ldexp(1.0, -np.repeat(np.arange(0, 54, 6), 4))[:32]  # 1 … 2^-48 in clusters of 4
    sigma = np.sort(sigma)[::-1]
    W = (Q[:, :32] * sigma) @ Q[:, 32:].T
    assert built_exactly(Q, sigma, Q[:, list(range(32, 64)) + list(range(32))], W)
    for mode in ALL_MODES:
        enc = enclose_singular_values(W, mode=mode)
        assert_encloses(enc, list(sigma))


def random_cases():
    rng = np.random.default_rng(7)
    out = []
    for shape in [(1, 7), (7, 1), (5, 5), (9, 4), (4, 9), (12, 12)]:
        out.append(rng.standard_normal(shape))
    # graded: σ spanning 1e-16 … 1
    U = np.linalg.qr(rng.standard_normal((10, 10)))[0]
    V = np.linalg.qr(rng.standard_normal((8, 8)))[0]
    out.append((U[:, :8] * np.logspace(0, -16, 8)) @ V.T)
    # rank-deficient stored product (exactly low rank only if exact; reference handles both)
    out.append(np.outer(rng.standard_normal(6), rng.standard_normal(5)))
    out.append(np.ones((6, 6)))
    # huge and tiny scales
    out.append(rng.standard_normal((5, 6)) * 1e270)
    out.append(rng.standard_normal((6, 5)) * 1e-290)
    # mixed magnitudes incl. subnormals next to huge entries
    M = rng.standard_normal((4, 4))
    M[0, 0], M[1, 1], M[2, 3] = 1e300, 5e-324, 1e-310
    out.append(M)
    out.append(np.full((3, 3), 1e154))  # squares overflow without scaling
    return out


@pytest.mark.parametrize("mode", ALL_MODES)
@pytest.mark.parametrize("index", range(len(random_cases())))
def test_random_matrices_against_mpmath(index, mode):
    W = random_cases()[index]
    enc = enclose_singular_values(W, mode=mode)
    assert enc.certified
    ref = mp_singular_values(W)
    for i, t in enumerate(ref):
        assert contains_value(enc.lower[i], enc.upper[i], t), (i, enc.lower[i], t, enc.upper[i])


@given(
    st.integers(1, 8),
    st.integers(1, 8),
    st.integers(0, 2**32 - 1),
    st.sampled_from(["float16", "float32", "float64"]),
)
@example(1, 1, 0, "float64")
@example(8, 1, 1, "float16")
def test_stored_dtypes_against_mpmath(m, n, seed, dtype):
    W = np.random.default_rng(seed).standard_normal((m, n)).astype(dtype)
    enc = enclose_singular_values(W)
    ref = mp_singular_values(W.astype(np.float64))  # widening is exact
    for i, t in enumerate(ref):
        assert contains_value(enc.lower[i], enc.upper[i], t)


@pytest.mark.parametrize("mode", ALL_MODES + ["gram"])
def test_empty_and_zero_matrices(mode):
    for shape in [(0, 5), (5, 0), (0, 0)]:
        enc = enclose_singular_values(np.zeros(shape), mode=mode)
        assert enc.shape == shape and len(enc.sigma) == 0
    enc = enclose_singular_values(np.zeros((3, 4)), mode=mode)
    assert list(enc.upper) == [0.0, 0.0, 0.0] and enc.rank.upper == 0


def test_fast_mode_widths_are_small():
    rng = np.random.default_rng(3)
    W = rng.standard_normal((200, 300))
    enc = enclose_singular_values(W)
    s = np.linalg.svd(W, compute_uv=False)
    rel = (enc.upper - enc.lower) / s
    assert np.median(rel) < 1e-10


@pytest.mark.parametrize("mode", ALL_MODES + ["gram"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_input_is_rejected(bad, mode):
    W = np.ones((3, 3))
    W[1, 2] = bad
    with pytest.raises(ValueError, match=r"NaN/Inf entries \(first at \(1, 2\)\)"):
        enclose_singular_values(W, mode=mode)


def test_bad_shapes_and_modes():
    with pytest.raises(ValueError, match="2-D"):
        enclose_singular_values(np.ones(3))
    with pytest.raises(ValueError, match="complex"):
        enclose_singular_values(np.ones((2, 2), dtype=complex))
    with pytest.raises(ValueError, match="unknown mode"):
        enclose_singular_values(np.ones((2, 2)), mode="quick")
    with pytest.raises(ValueError, match="too large"):
        enclose_singular_values(np.array([[2**60, 1]], dtype=np.int64))


def test_failed_certificate_returns_trivial_enclosure(monkeypatch):
    """Garbage from LAPACK must never become a wrong number."""

    def broken_svd(Ws, driver, overwrite=False):
        m, n = Ws.shape
        k = min(m, n)
        return 3 * np.ones((m, k)), np.ones(k), np.ones((n, k))  # far from orthonormal

    monkeypatch.setattr(svd_mod, "_float_svd", broken_svd)
    with pytest.warns(CertificateWarning, match="trivial enclosure"):
        enc = enclose_singular_values(np.eye(3) * 2)
    assert not enc.certified and enc.mode == "trivial"
    assert np.all(enc.lower == 0) and np.all(np.isinf(enc.upper))


def test_lapack_failure_falls_back(monkeypatch):
    calls = []
    real = svd_mod._float_svd

    def flaky(Ws, driver, overwrite=False):
        calls.append(driver)
        return None if driver == "gesdd" else real(Ws, driver, overwrite)

    monkeypatch.setattr(svd_mod, "_float_svd", flaky)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc = enclose_singular_values(np.diag([2.0, 1.0]))
    assert calls[:2] == ["gesdd", "gesvd"] and enc.certified
    assert enc.lower[0] <= 2 <= enc.upper[0]


def test_exact_rank_option_sets_exact_zeros():
    rng = np.random.default_rng(5)
    U = rng.integers(-3, 4, size=(7, 2)).astype(float)
    V = rng.integers(-3, 4, size=(2, 6)).astype(float)
    W = U @ V  # small integers: exact, rank ≤ 2
    enc = enclose_singular_values(W, exact_rank=True)
    from tests.enclose.reference import fraction_rank

    r = fraction_rank(W)
    assert enc.rank.lower == enc.rank.upper == r
    assert np.all(enc.upper[r:] == 0)


def test_json_form_brackets_the_balls():
    from fractions import Fraction

    from certbound.ball import lower_fraction, upper_fraction

    enc = enclose_singular_values(np.array([[1.0, 2.0], [3.0, 4.0]]))
    js = enc.to_json()
    ref = mp_singular_values(np.array([[1.0, 2.0], [3.0, 4.0]]))
    for q, t in zip(js["sigma"], ref):
        assert contains_value(float(q["lower"]), float(q["upper"]), t)
    for q, ball in zip(js["sigma"], enc.sigma):
        assert Fraction(q["lower"]) <= lower_fraction(ball) <= upper_fraction(ball) <= Fraction(q["upper"])


def _exact_ball_ends(x):
    """The exact real ends mid ∓ rad of an arb ball, as Fractions (independent of the code's floats)."""
    from fractions import Fraction

    def fr(v):
        man, exp = v.man_exp()
        return Fraction(int(man)) * (Fraction(2) ** int(exp))

    mid, rad = fr(x.mid()), fr(x.rad())
    return mid - rad, mid + rad


@pytest.mark.parametrize("seed", range(4))
def test_hull_balls_contain_their_float_ends_exactly(seed):
    """svd._hull_balls: every ball contains [lo, hi] exactly (checked in Fractions from the ball's exact midpoint
    and radius), is the exact point where lo == hi, and is never much wider than the hull (radius within an ulp of
    the midpoint plus Arb's 30-bit rounding); subnormal, zero, huge, reversed and non-finite ends included."""
    from fractions import Fraction

    rng = np.random.default_rng(seed)
    lo = np.ldexp(rng.random(300), rng.integers(-1074, 1020, 300))
    hi = lo * (1 + rng.random(300) * 10.0 ** rng.integers(-17, 2, 300))
    hi = np.where(rng.random(300) < 0.15, lo, hi)
    hi = np.where(rng.random(300) < 0.05, np.nextafter(lo, np.inf), hi)
    lo = np.where(rng.random(300) < 0.1, 0.0, lo)
    lo[:3], hi[:3] = [5e-324, 0.0, 1e308], [1e-323, 5e-324, 1.7e308]
    for b, x, y in zip(svd_mod._hull_balls(lo, hi), lo.tolist(), hi.tolist()):
        a, c = _exact_ball_ends(b)
        assert a <= Fraction(x) and Fraction(y) <= c, (x, y, b)
        if x == y:
            assert a == c == Fraction(x)
        else:
            slack = Fraction(np.spacing(y)) * 2 + (Fraction(y) - Fraction(x)) * Fraction(1, 2**28)
            assert c - a <= Fraction(y) - Fraction(x) + 2 * slack
    rev = svd_mod._hull_balls(np.array([2.0]), np.array([1.0]))[0]  # reversed ends: both still inside
    a, c = _exact_ball_ends(rev)
    assert a <= 1 and 2 <= c
    inf = svd_mod._hull_balls(np.array([1.0]), np.array([np.inf]))[0]
    assert not inf.is_finite() or inf.upper() > 1e308
