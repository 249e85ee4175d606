"""Adversarial soundness review (R2) of certbound.enclose and certbound.ball.

Every check compares against an exact (Fractions) or high-precision (mpmath,
320 bits, via tests/enclose/reference.py) reference; none copies an expected
value from the code under test.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from flint import arb
from hypothesis import example, given, settings, strategies as st

from certbound.ball import (
    ball_from_json,
    ball_to_json,
    decimal_lower,
    decimal_upper,
    float_lower,
    float_upper,
    lower_fraction,
    upper_fraction,
    working_precision,
)
from certbound.enclose import (
    CertificateWarning,
    enclose_singular_values,
    enclose_singular_values_of_product,
    frobenius_norm,
    norm_11,
    norm_21,
    nuclear_norm,
    schatten_quantity,
    spectral_norm,
    stable_rank,
)
from certbound.enclose._input import as_exact_float64_matrix, power_of_two_scaling
from tests.enclose.reference import mp_product_singular_values, mp_singular_values

DBL_MAX = np.finfo(np.float64).max
MODES = ("fast", "tight", "arb", "gram")



def _contains(enc, ref, prec: int = 320) -> None:
    """Float arrays and balls of ``enc`` contain every reference value.

    mpmath's SVD at ``prec`` bits is backward stable, so its values are off by
    about ``σ₁·2^-prec`` absolutely; the slack is ``σ₁·2^-(prec−60)``.
    """
    assert len(enc.sigma) == len(ref)
    top = max((mpmath.mpf(t) for t in ref), default=mpmath.mpf(0))
    slack = top * mpmath.mpf(2) ** -(prec - 60)
    for i, t in enumerate(ref):
        t = mpmath.mpf(t)
        lo_t, hi_t = t - slack, t + slack
        lo, hi = mpmath.mpf(float(enc.lower[i])), mpmath.mpf(float(enc.upper[i]))
        assert lo <= hi_t and lo_t <= hi, (i, float(enc.lower[i]), float(enc.upper[i]), t)
        lf, uf = lower_fraction(enc.sigma[i]), upper_fraction(enc.sigma[i])
        if lf is not None:
            assert mpmath.mpf(lf.numerator) / lf.denominator <= hi_t, (i, t)
        if uf is not None:
            assert lo_t <= mpmath.mpf(uf.numerator) / uf.denominator, (i, t)
    assert np.all(enc.lower >= 0) and np.all(enc.lower <= enc.upper)
    assert np.all(enc.lower[:-1] >= enc.lower[1:]) and np.all(enc.upper[:-1] >= enc.upper[1:])


def _enc(W, mode, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CertificateWarning)
        return enclose_singular_values(W, mode=mode, **kw)


# --------------------------------------------------------------------------
# ball.py: outward float conversion at the ends of the binary64 range
# --------------------------------------------------------------------------


@pytest.mark.parametrize("e", [1024, 1025, 1030, 5000])
def test_float_lower_of_values_beyond_dbl_max_is_finite(e):
    # A value above DBL_MAX has DBL_MAX as its largest float lower bound; +inf
    # is NOT a lower bound (defect found in review: float_lower returned inf).
    with working_precision(128):
        x = arb(2) ** e
        xs = [x, x * 3 / 2, arb(DBL_MAX) + arb(2) ** 970]  # last: just above DBL_MAX
    for v in xs:
        q = lower_fraction(v)
        assert q > Fraction(DBL_MAX)
        lo, hi = float_lower(v), float_upper(v)
        assert lo == DBL_MAX and hi == math.inf
        up_neg = float_upper(-v)  # a finite float ≥ −q; −DBL_MAX is the best one
        assert math.isfinite(up_neg) and Fraction(up_neg) >= -q and up_neg <= -DBL_MAX * (1 - 2**-50)
        assert float_lower(-v) == -math.inf


def test_float_lower_just_below_smallest_normal():
    # 2^-1022 − 2^-1075 is a 53-bit dyadic; ldexp rounds it (ties to even) up to
    # 2^-1022, which must not be reported as a lower bound.
    q = Fraction(2**53 - 1, 2**1075)
    with working_precision(128):
        x = arb((2**53 - 1, -1075))
        assert x.is_exact()
    assert Fraction(float_lower(x)) <= q <= Fraction(float_upper(x))
    assert Fraction(float_upper(-x)) >= -q >= Fraction(float_lower(-x))


@settings(max_examples=60)
@given(st.integers(1, 2**53 - 1), st.integers(-1200, 1100))
@example(2**53 - 1, -1075)
@example(2**53 - 1, -1076)
@example(2**53 - 1, 971)
@example(1, -1075)
@example(3, -1076)
def test_float_endpoints_of_exact_dyadics(man, exp):
    q = Fraction(man) * Fraction(2) ** exp
    with working_precision(128):
        x = arb((man, exp))
    for v, t in ((x, q), (-x, -q)):
        lo, hi = float_lower(v), float_upper(v)
        assert lo == -math.inf or Fraction(lo) <= t
        assert hi == math.inf or Fraction(hi) >= t
        assert not (lo == math.inf) and not (hi == -math.inf)
        assert Fraction(decimal_lower(v, 7)) <= t <= Fraction(decimal_upper(v, 7))
        # Tightness: the two floats are adjacent (or equal) inside the finite range.
        if abs(t) < Fraction(DBL_MAX) and lo != -math.inf and hi != math.inf:
            assert hi == lo or math.nextafter(lo, math.inf) == hi


def test_json_round_trip_of_huge_and_tiny_balls():
    with working_precision(200):
        for x in (arb(2) ** 3000 / 3, arb(2) ** -3000 / 3, -(arb(2) ** 1500) / 7):
            js = ball_to_json(x, 5)
            assert Fraction(js["lower"]) <= lower_fraction(x)
            assert upper_fraction(x) <= Fraction(js["upper"])
            assert ball_from_json(js).contains(x)


# --------------------------------------------------------------------------
# _input.py: the certified matrix is exactly the stored one
# --------------------------------------------------------------------------


def test_longdouble_input_is_not_silently_rounded():
    if np.finfo(np.longdouble).nmant <= 52:
        pytest.skip("longdouble is binary64 on this platform")
    W = np.array([[1 + np.longdouble(2) ** -60, 0], [0, 1]], dtype=np.longdouble)
    with pytest.raises(ValueError, match="exactly"):
        as_exact_float64_matrix(W)
    # Exactly representable longdouble data is fine.
    ok = as_exact_float64_matrix(np.array([[0.5, -3]], dtype=np.longdouble))
    assert ok.dtype == np.float64 and ok.tolist() == [[0.5, -3.0]]


@pytest.mark.parametrize(
    "W",
    [
        np.array([[2**64 + 1, 1]], dtype=object),
        np.array([[Fraction(1, 3), 1]], dtype=object),
        np.array([["0.1", "1"]]),
    ],
)
def test_inexact_object_and_string_inputs_are_rejected(W):
    with pytest.raises(ValueError):
        as_exact_float64_matrix(W)


def test_exact_object_inputs_are_accepted():
    W = np.array([[Fraction(1, 4), 2**60, -3]], dtype=object)
    assert as_exact_float64_matrix(W).tolist() == [[0.25, 2.0**60, -3.0]]


@pytest.mark.parametrize(
    "entries",
    [
        [[5e-324, 0.0], [0.0, 1e-323]],  # max subnormal: scale exponent > 1023
        [[2.0**-1030, -(2.0**-1060)], [3 * 2.0**-1074, 2.0**-1023]],
    ],
)
def test_scaling_of_all_subnormal_matrices_is_exact(entries):
    W = np.array(entries)
    Ws, k, exact = power_of_two_scaling(W)
    assert exact and np.all(np.isfinite(Ws))
    assert 1 <= np.abs(Ws).max() < 2
    for a, b in zip(W.ravel(), Ws.ravel()):
        assert Fraction(float(b)) == Fraction(float(a)) * Fraction(2) ** k


@pytest.mark.parametrize("mode", MODES)
def test_all_subnormal_matrix_is_certified(mode):
    W = np.array([[5e-324, 0.0, 2e-323], [0.0, 1e-323, 0.0]])
    enc = _enc(W, mode)
    assert enc.certified  # was the trivial [0, inf] enclosure (scaling overflowed)
    _contains(enc, mp_singular_values(W))
    assert enc.upper[0] < 1e-300


# --------------------------------------------------------------------------
# Huge values: singular values above DBL_MAX
# --------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_sigma_above_dbl_max(mode):
    W = np.full((4, 4), 1e308)  # σ₁ = 4e308 > DBL_MAX, the rest 0
    enc = _enc(W, mode)
    assert enc.lower[0] <= DBL_MAX < enc.upper[0] == math.inf
    assert enc.lower[0] > 1.7e308  # still informative
    with working_precision(200):
        true = arb(4) * arb(1e308)
    assert enc.sigma[0].contains(true)
    assert np.all(enc.lower[1:] == 0)


# --------------------------------------------------------------------------
# Exact references for k = min(m, n) ≤ 2, any dynamic range
# --------------------------------------------------------------------------


def _exact_small_gram(Wq: list[list[Fraction]]) -> list[list[Fraction]]:
    """The k×k Gram matrix (k = min(m, n) ≤ 2) of an exact rational matrix."""
    m, n = len(Wq), len(Wq[0])
    rows = Wq if m <= n else [list(c) for c in zip(*Wq)]
    return [[sum(a * b for a, b in zip(r, s)) for s in rows] for r in rows]


def _sq(x: Fraction | None) -> Fraction | None:
    return None if x is None else max(x, Fraction(0)) ** 2


def _check_exact_k_le_2(lowers, uppers, G) -> None:
    """Exact check that σᵢ ∈ [lowerᵢ, upperᵢ] from the Gram matrix G (Fractions).

    k = 1: σ² = g. k = 2: σ²₁,₂ = (tr ± √D)/2 with D = tr² − 4 det ≥ 0; each
    comparison with √D is decided by squaring with sign cases.
    """
    k = len(G)
    if k == 1:
        g = G[0][0]
        lo, hi = lowers[0], uppers[0]
        assert lo is None or _sq(lo) <= g, (lo, g)
        assert hi is None or g <= hi**2, (hi, g)
        return
    tr = G[0][0] + G[1][1]
    D = tr * tr - 4 * (G[0][0] * G[1][1] - G[0][1] * G[1][0])
    assert D >= 0

    def le_sqrt_D(x):  # x ≤ √D
        return x <= 0 or x * x <= D

    def ge_sqrt_D(x):  # x ≥ √D
        return x >= 0 and x * x >= D

    (l1, l2), (h1, h2) = lowers, uppers
    if l1 is not None:
        assert le_sqrt_D(2 * _sq(l1) - tr), ("σ1 lower", l1)
    if h1 is not None:
        assert ge_sqrt_D(2 * h1**2 - tr), ("σ1 upper", h1)
    if l2 is not None:
        assert ge_sqrt_D(tr - 2 * _sq(l2)), ("σ2 lower", l2)
    if h2 is not None:
        assert le_sqrt_D(tr - 2 * h2**2), ("σ2 upper", h2)


def _check_enc_exact(enc, Wq) -> None:
    G = _exact_small_gram(Wq)
    fl = [Fraction(float(x)) for x in enc.lower]
    fu = [Fraction(float(x)) if math.isfinite(x) else None for x in enc.upper]
    _check_exact_k_le_2(fl, fu, G)
    bl = [lower_fraction(s) for s in enc.sigma]
    bu = [upper_fraction(s) for s in enc.sigma]
    _check_exact_k_le_2(bl, bu, G)
    assert np.all(enc.lower >= 0) and np.all(enc.lower <= enc.upper)


@st.composite
def adversarial_entries(draw, size):
    """Floats spanning a chosen window of binades, with zeros, −0 and subnormals."""
    top = draw(st.integers(-1074, 1023))
    span = draw(st.sampled_from([0, 1, 30, 200, 1100]))
    out = []
    for _ in range(size):
        kind = draw(st.integers(0, 9))
        if kind == 0:
            out.append(draw(st.sampled_from([0.0, -0.0])))
            continue
        man = draw(st.integers(1, 2**53 - 1))
        e = draw(st.integers(max(top - span, -1200), top)) - 53
        x = math.ldexp(man, e) if e + 53 <= 1024 else 0.0
        out.append(-x if draw(st.booleans()) else x)
    return out


@st.composite
def thin_matrices(draw):
    k = draw(st.integers(1, 2))
    other = draw(st.integers(1, 5))
    m, n = (k, other) if draw(st.booleans()) else (other, k)
    W = np.array(draw(adversarial_entries(m * n)), dtype=np.float64).reshape(m, n)
    if draw(st.booleans()) and m > 1:
        W[-1] = W[0] * draw(st.sampled_from([1.0, -2.0, 0.5]))  # rank deficiency
    return W


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=40)
@given(W=thin_matrices())
@example(W=np.array([[1e307, 1e307], [1e307, -1e307]]))
@example(W=np.array([[1e308, 1e308, 1e308], [1e308, 1e308, 1e308]]))
@example(W=np.array([[5e-324, 1.7976931348623157e308]]))
@example(W=np.array([[1.0, 1.0], [1.0, 1.0 + 2.0**-52]]))  # condition number ≈ 2^53
@example(W=np.array([[2.0**-1000, 0.0], [0.0, 2.0**1000]]))
@example(W=np.array([[-0.0, 0.0, 5e-324]]))
@example(W=np.array([[1.0, 2.0**-600], [2.0**-700, 2.0**-500]]))  # tight: TwoProduct skipped (tiny s, Y)
@example(W=np.array([[1.0, 2.0**-460, 3.0], [2.0**-1074, 2.0**-530, 1.0]]))  # masked split lines
@example(W=np.array([[3.0], [4.0], [2.0**-1074]]))
def test_thin_matrices_exact(mode, W):
    enc = _enc(W, mode)
    _check_enc_exact(enc, [[Fraction(float(x)) for x in row] for row in W])


@pytest.mark.parametrize("mode", MODES)
def test_exactly_known_huge_condition_number(mode):
    # diag(2^600, 1, 2^-600) rotated by exact dyadic Hadamard factors: the stored
    # matrix is exact (checked) and its σ are exactly 2^600, 1, 2^-600... after the
    # rotation the entries mix scales, so build it as a block instead.
    W = np.zeros((3, 4))
    W[0, 0], W[1, 1], W[2, 2] = 2.0**600, 1.0, 2.0**-600
    W = W[[2, 0, 1]][:, [3, 1, 0, 2]]  # permutations keep σ
    enc = _enc(W, mode)
    for i, t in enumerate([2.0**600, 1.0, 2.0**-600]):
        assert enc.lower[i] <= t <= enc.upper[i]
        assert enc.sigma[i].contains(arb(t))


def test_exact_checker_can_fail():
    # σ(diag(3, 1)) = 3, 1: intervals that miss either value must be rejected.
    G = _exact_small_gram([[Fraction(3), Fraction(0)], [Fraction(0), Fraction(1)]])
    F = Fraction
    _check_exact_k_le_2([F(3), F(1)], [F(3), F(1)], G)
    for lo, hi in (([F(3) + F(1, 10**9), F(0)], [None, None]), ([F(0), F(0)], [F(3), F(1) - F(1, 10**9)])):
        with pytest.raises(AssertionError):
            _check_exact_k_le_2(lo, hi, G)
    with pytest.raises(AssertionError):
        _check_exact_k_le_2([F(0), F(1) + F(1, 10**20)], [None, None], G)
    with pytest.raises(AssertionError):
        _check_exact_k_le_2([F(0), F(0)], [F(3) - F(1, 10**20), None], G)


# --------------------------------------------------------------------------
# Products A Bᵀ (never formed) with cancellation, exact references
# --------------------------------------------------------------------------


@st.composite
def thin_products(draw):
    k = draw(st.integers(1, 2))
    other = draw(st.integers(1, 4))
    m, n = (k, other) if draw(st.booleans()) else (other, k)
    d = draw(st.integers(1, 4))
    A = np.array(draw(adversarial_entries(m * d)), dtype=np.float64).reshape(m, d)
    B = np.array(draw(adversarial_entries(n * d)), dtype=np.float64).reshape(n, d)
    if draw(st.booleans()):
        # Cancellation: B's rows are A's first row with one entry nudged/negated.
        amax = np.abs(A).max()
        B = np.array(draw(adversarial_entries(n * d)), dtype=np.float64).reshape(n, d)
        if amax > 0:
            B = np.tile(A[0] / amax, (n, 1))
            B[:, -1] = -B[:, -1] * draw(st.sampled_from([1.0, 1 + 2.0**-52, 1 - 2.0**-53]))
    return A, B


def _exact_product(A, B):
    Aq = [[Fraction(float(x)) for x in r] for r in A]
    Bq = [[Fraction(float(x)) for x in r] for r in B]
    return [[sum(a * b for a, b in zip(ra, rb)) for rb in Bq] for ra in Aq]


@pytest.mark.parametrize("mode", ["fast", "tight", "arb", "gram"])
@settings(max_examples=30)
@given(AB=thin_products())
@example(AB=(np.array([[1.0, 1.0]]), np.array([[1.0, -1.0 + 2.0**-52]])))  # W = 2^-52
@example(AB=(np.array([[1e300, 1e300]]), np.array([[1e300, -1e300]])))  # W = 0 exactly, huge factors
@example(AB=(np.array([[1e200, 3.0], [1.0, 1.0]]), np.array([[1e200, 1.0], [2.0, -1e-200]])))
def test_product_exact(mode, AB):
    A, B = AB
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CertificateWarning)
        enc = enclose_singular_values_of_product(A, B, mode=mode)
    _check_enc_exact(enc, _exact_product(A, B))
    assert enc.rank.upper <= A.shape[1]


def test_product_general_against_mpmath():
    rng = np.random.default_rng(7)
    for m, n, d in ((5, 4, 3), (3, 6, 2), (4, 4, 6)):
        A = rng.standard_normal((m, d)) * 2.0 ** rng.integers(-40, 40, (m, 1))
        B = rng.standard_normal((n, d))
        B[0] = A[0]  # correlated rows
        for mode in ("fast", "tight", "arb"):
            enc = enclose_singular_values_of_product(A, B, mode=mode)
            _contains(enc, mp_product_singular_values(A, B, prec=500), prec=500)


def test_product_rejects_unknown_mode():
    with pytest.raises(ValueError):
        enclose_singular_values_of_product(np.ones((2, 2)), np.ones((2, 2)), mode="fastest")


# --------------------------------------------------------------------------
# General small matrices against mpmath (precision adapted to the data's range)
# --------------------------------------------------------------------------


def _ref_prec(W) -> int:
    a = np.abs(np.asarray(W, dtype=np.float64))
    nz = a[a > 0]
    if nz.size == 0:
        return 320
    return 320 + int(np.log2(nz.max()) - np.log2(nz.min())) * 2


@st.composite
def small_matrices(draw):
    m, n = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    W = np.array(draw(adversarial_entries(m * n)), dtype=np.float64).reshape(m, n)
    variant = draw(st.integers(0, 3))
    if variant == 1 and m > 1:
        W[1] = W[0]  # repeated row: rank deficient
    elif variant == 2:
        W = np.asfortranarray(W)
    elif variant == 3:
        big = np.zeros((2 * m, 2 * n))
        big[::2, ::2] = W
        W = big[::2, ::2]  # non-contiguous view
    return W


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=25)
@given(W=small_matrices())
@example(W=np.array([[1e307, -1e307, 1e307], [1e307, 1e307, -1e307], [5e-324, 0.0, 1e-300]]))
@example(W=np.array([[-0.0, -0.0], [-0.0, -0.0]]))
@example(W=np.array([[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 2.0**33, 2.0**-53]]))  # arb: NaN before the fix
def test_small_matrices_against_mpmath(mode, W):
    enc = _enc(W, mode)
    prec = _ref_prec(W)
    _contains(enc, mp_singular_values(np.array(W), prec=prec), prec=prec)


@pytest.mark.parametrize("mode", MODES)
def test_repeated_singular_values_hadamard(mode):
    from tests.enclose.reference import hadamard_orthogonal

    H = hadamard_orthogonal(16)
    s = np.array([4.0] * 5 + [1.0] * 5 + [2.0**-30] * 3 + [0.0] * 3)
    W = (H * s) @ H.T  # exact: dyadic, few bits
    assert np.array_equal(W, W.T)
    enc = _enc(W[:, :12], mode)  # drop columns: σ of a submatrix via mpmath
    _contains(enc, mp_singular_values(W[:, :12]))
    enc = _enc(W, mode)
    for i, t in enumerate(sorted(s, reverse=True)):
        assert enc.lower[i] <= t <= enc.upper[i]


@pytest.mark.parametrize("dtype", ["float16", "float32", "int8", "int64", "uint16", "bool"])
def test_stored_dtypes_certify_the_stored_matrix(dtype):
    rng = np.random.default_rng(3)
    W = (rng.standard_normal((3, 5)) * 100).astype(dtype)
    W64 = W.astype(np.float64)  # exact widening (the certified matrix)
    for mode in MODES:
        _contains(_enc(W, mode), mp_singular_values(W64))
        _contains(_enc(W.T, mode), mp_singular_values(W64.T))


def test_int64_beyond_2_53_is_rejected():
    with pytest.raises(ValueError):
        enclose_singular_values(np.array([[2**53 + 1, 0]], dtype=np.int64))


def test_input_array_is_not_modified():
    rng = np.random.default_rng(5)
    for W in (rng.standard_normal((6, 4)), np.asfortranarray(rng.standard_normal((4, 6))),
              rng.uniform(1, 1.9, (5, 5))):  # max in [1, 2): scaling returns W itself
        before = W.copy()
        for mode in MODES:
            _enc(W, mode, exact_rank=True)
        enclose_singular_values_of_product(W, W)
        norm_21(W), norm_11(W)
        assert np.array_equal(before, W) and before.tobytes() == W.tobytes()


def test_arb_mode_certifies_when_gram_entries_are_inexact_zeros():
    # YᵀY − I has an entry ≈ 1.7e-52 that the arb_mat product holds as a ball
    # straddling 0; squaring it gave a ball with negative part and √ → NaN, so
    # the reference mode returned the trivial enclosure (found in review).
    W = np.array([[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 2.0**33, 2.0**-53]])
    enc = enclose_singular_values(W, mode="arb")
    assert enc.certified and enc.mode == "arb"
    _check_enc_exact(enc, [[Fraction(float(x)) for x in row] for row in W])


# --------------------------------------------------------------------------
# Derived quantities against exact Fractions / mpmath
# --------------------------------------------------------------------------


def _frac_in(ball, q: Fraction) -> bool:
    lf, uf = lower_fraction(ball), upper_fraction(ball)
    return (lf is None or lf <= q) and (uf is None or q <= uf)


@pytest.mark.parametrize(
    "W",
    [
        np.full((3, 3), 1e308),  # Σ|w| ≈ 9e308 overflows fsum (was an OverflowError)
        np.array([[1.7976931348623157e308, -1.7976931348623157e308, 5e-324]]),
        np.array([[5e-324, -1e-320], [0.0, 3e-310]]),
        np.array([[0.1, -0.2], [0.3, 1e300]]),
    ],
)
def test_norm_11_exact(W):
    exact = sum((abs(Fraction(float(x))) for x in W.ravel()), Fraction(0))
    b = norm_11(W)
    assert _frac_in(b, exact)
    assert upper_fraction(b) <= exact * (1 + Fraction(1, 2**40)) + Fraction(1, 2**1000)


@settings(max_examples=30)
@given(W=small_matrices())
def test_norm_21_exact(W):
    # Σⱼ √(Σᵢ wᵢⱼ²) compared exactly: lower ≤ value ⇔ checked per column via squares.
    b = norm_21(W)
    lf, uf = lower_fraction(b), upper_fraction(b)
    with mpmath.workprec(_ref_prec(W) + 200):
        val = mpmath.fsum(
            mpmath.sqrt(mpmath.fsum(mpmath.mpf(float(x)) ** 2 for x in col)) for col in np.asarray(W).T
        )
        slack = val * mpmath.mpf(2) ** -300
        assert lf is None or mpmath.mpf(lf.numerator) / lf.denominator <= val + slack
        assert uf is None or val - slack <= mpmath.mpf(uf.numerator) / uf.denominator


@pytest.mark.parametrize("mode", MODES)
def test_spectral_quantities_against_mpmath(mode):
    rng = np.random.default_rng(11)
    W = rng.standard_normal((5, 3)) * 2.0 ** rng.integers(-30, 30, (1, 3))
    W[4] = W[0] - W[1]  # (still rank 3)
    enc = _enc(W, mode)
    sv = mp_singular_values(W, prec=400)
    with mpmath.workprec(400):
        checks = [
            (spectral_norm(enc), sv[0]),
            (frobenius_norm(enc), mpmath.sqrt(mpmath.fsum(s**2 for s in sv))),
            (nuclear_norm(enc), mpmath.fsum(sv)),
            (schatten_quantity(enc, Fraction(1, 2)), mpmath.fsum(mpmath.sqrt(s) for s in sv)),
            (stable_rank(enc), mpmath.fsum(s**2 for s in sv) / sv[0] ** 2),
        ]
        for ball, t in checks:
            lf, uf = lower_fraction(ball), upper_fraction(ball)
            sl = abs(t) * mpmath.mpf(2) ** -300
            assert mpmath.mpf(lf.numerator) / lf.denominator <= t + sl
            assert t - sl <= mpmath.mpf(uf.numerator) / uf.denominator
    assert schatten_quantity(enc, 0).contains(3)


# --------------------------------------------------------------------------
# Exact rank over ℚ with extreme exponents
# --------------------------------------------------------------------------


@settings(max_examples=30)
@given(W=small_matrices())
@example(W=np.array([[5e-324, 1.7976931348623157e308], [1e-323, 2 * 0.8988465674311579e308]]))
@example(W=np.array([[2.0**-1074, 2.0**1023], [2.0**-1073, 2.0**1023]]))
def test_exact_rank_extreme_exponents(W):
    from certbound.enclose import certified_rank, exact_rank, rank_lower_bound_modp
    from tests.enclose.reference import fraction_rank

    r = fraction_rank(np.array(W))
    assert exact_rank(W) == r
    assert rank_lower_bound_modp(W) <= r
    assert certified_rank(W, exact=False).lower <= r <= certified_rank(W, exact=False).upper
    for mode in ("fast", "gram"):
        enc = _enc(W, mode, exact_rank=True)
        assert enc.rank.lower <= r <= enc.rank.upper
        assert np.all(enc.upper[r:] == 0)
        enc = _enc(W, mode)
        assert enc.rank.lower <= r <= enc.rank.upper


def test_schatten_exponent_is_taken_exactly():
    from decimal import Decimal

    from certbound.enclose.quantities import as_arb_exponent

    for p, exact in (
        (np.longdouble(1) / 3, None),
        (Decimal("0.3"), Fraction(3, 10)),
        (0.1, Fraction(0.1)),
        (np.float32(0.7), Fraction(float(np.float32(0.7)))),
    ):
        if exact is None:
            exact = Fraction(*p.as_integer_ratio())
        assert _frac_in(as_arb_exponent(p), exact), p
    if np.finfo(np.longdouble).nmant > 52:
        # The longdouble 1/3 differs from the float 1/3: the ball must not be the float.
        assert not as_arb_exponent(np.longdouble(1) / 3).contains(arb(1 / 3))
    with pytest.raises(ValueError):
        as_arb_exponent(float("nan"))


def test_stable_rank_is_intersected_with_its_range():
    # A 1×1 matrix has stable rank exactly 1; with σ₁ ∈ [1, 1.1] the plain
    # quotient of enclosures is [1/1.21, 1.21], the intersection with [1, rank]
    # is {1} (up to Arb's outward ball rounding).
    from certbound.enclose.svd import _build

    with working_precision(128):
        sig = arb(1).union(arb(11) / 10)
    enc = _build((1, 1), [sig], "fast", arb(0), arb(0), arb(0), rank_upper=1)
    b = stable_rank(enc)
    assert b.contains(1)
    assert lower_fraction(b) >= 1 - Fraction(1, 2**60) and upper_fraction(b) <= 1 + Fraction(1, 2**60)
    for mode in MODES:
        assert _frac_in(stable_rank(_enc(np.eye(2), mode)), Fraction(2))
