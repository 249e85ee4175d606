"""Memory of the Theorem G path (issue 16): no scaled copy, no |W| copy, in-place scaling of our own copies.

References are independent of the code under test: mpmath at 320 bits for
singular values (tests.enclose.reference), exact Fractions for scaling exactness.
Memory is measured with tracemalloc (numpy reports its array allocations to
it), as a ratio to the matrix's own bytes, not as a time.
"""

from __future__ import annotations

import tracemalloc
from fractions import Fraction

import numpy as np
import pytest

import certbound.enclose._input as input_mod
import certbound.enclose.gram as gram_mod
from certbound.enclose import enclose_singular_values
from certbound.enclose._input import exact_float64_operand, power_of_two_scaling
from certbound.enclose.gram import unscaled_gram_ok
from tests.enclose.reference import contains_value, mp_singular_values


# --------------------------------------------------------------------------- Theorem G on the unscaled matrix


@pytest.mark.parametrize("scale", [0.02, 2.0**-200, 2.0**200, 3.0, 1.0])
@pytest.mark.parametrize("mode", ["gram", "auto"])
def test_unscaled_gram_against_mpmath(monkeypatch, scale, mode):
    W = np.random.default_rng(5).standard_normal((6, 15)) * scale
    assert unscaled_gram_ok(W)
    # As for a large matrix (a small one also gets auto's fast chain, which scales: proofs/enclosure.md §12).
    monkeypatch.setattr("certbound.enclose.svd.AUTO_SMALL_WORK", 0)
    calls = []
    real = input_mod.power_of_two_scaling
    monkeypatch.setattr("certbound.enclose.svd.power_of_two_scaling",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    enc = enclose_singular_values(W, mode=mode)
    assert enc.mode == "gram" and calls == []  # certified without a scaled copy
    for i, t in enumerate(mp_singular_values(W)):
        assert contains_value(enc.lower[i], enc.upper[i], t), (i, t)


@pytest.mark.parametrize("scale", [1e-300, 1e300, 2.0**-300])
def test_out_of_range_matrices_still_use_the_scaled_gram(scale):
    W = np.random.default_rng(6).standard_normal((5, 12)) * scale
    assert not unscaled_gram_ok(W)
    enc = enclose_singular_values(W, mode="gram")
    assert enc.mode == "gram"
    for i, t in enumerate(mp_singular_values(W)):
        assert contains_value(enc.lower[i], enc.upper[i], t), (i, t)


def test_unscaled_range_edges():
    assert unscaled_gram_ok(np.array([[2.0**-256]])) and not unscaled_gram_ok(np.array([[2.0**-257]]))
    assert unscaled_gram_ok(np.array([[-(2.0**256) * (1 - 2**-53)]])) and not unscaled_gram_ok(np.array([[2.0**256]]))
    assert not unscaled_gram_ok(np.zeros((0, 3)))


# --------------------------------------------------------------------------- operands: transposed views, ownership


@pytest.mark.parametrize("mode", ["fast", "gram", "auto", "tight"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_fortran_ordered_views_are_certified_and_left_unchanged(mode, dtype):
    t = np.random.default_rng(7).standard_normal((14, 5)).astype(dtype)
    W = t.T  # 5×14, Fortran-ordered: certified as t (C-ordered) without a copy
    before = t.copy()
    enc = enclose_singular_values(W, mode=mode)
    assert enc.shape == (5, 14) and len(enc.sigma) == 5
    for i, s in enumerate(mp_singular_values(W.astype(np.float64))):
        assert contains_value(enc.lower[i], enc.upper[i], s), (i, s)
    assert np.array_equal(t, before)


@pytest.mark.parametrize("mode", ["fast", "gram", "auto", "tight", "arb"])
def test_callers_arrays_are_never_scaled_in_place(mode):
    rng = np.random.default_rng(8)
    for W in (rng.standard_normal((4, 9)) * 0.01, np.asfortranarray(rng.standard_normal((9, 4)) * 1e-310),
              (rng.standard_normal((6, 6)) * 1e5)[::2, ::2], rng.standard_normal((5, 3)) * 1e-300):
        before = W.copy()
        enclose_singular_values(W, mode=mode)
        assert np.array_equal(W, before)


def test_operand_ownership():
    a = np.ones((3, 4))
    assert exact_float64_operand(a) == (a, False, False) or not exact_float64_operand(a).owned
    assert exact_float64_operand(a.astype(np.float32)).owned
    assert exact_float64_operand(a[:, ::2]).owned  # strided: a contiguous copy
    assert not exact_float64_operand([[1.0, 2.0]]).owned  # conservative for non-arrays
    op = exact_float64_operand(np.asfortranarray(a))
    assert op.transposed and op.array.shape == (4, 3) and not op.owned
    op = exact_float64_operand(np.asfortranarray(a), allow_transpose=False)
    assert not op.transposed and op.array.shape == (3, 4) and op.owned


def _fraction_scaling_exact(W, k):
    """Independent: scaling by 2^k is exact iff every fl(w·2^k) equals w·2^k as a rational."""
    two = Fraction(2) ** k
    return all(Fraction(float(x)) * two == Fraction(float(y)) for x, y in zip(W.ravel(), np.ldexp(W, k).ravel()))


@pytest.mark.parametrize("case", range(5))
def test_inplace_scaling_equals_the_copy(case):
    rng = np.random.default_rng(20 + case)
    W = [rng.standard_normal((4, 5)) * 1e-3,
         np.array([[1e300, 2.0**-1070, 0.0]]),          # scaling down rounds a subnormal
         np.array([[1e300, 2.0**-1022, -3.0]]),          # ... becomes subnormal but exact? (checked by Fractions)
         rng.standard_normal((3, 3)) * 2.0**-1060,       # all subnormal-ish: k > 1023 path
         np.array([[0.75, -0.5], [0.25, 1.5]])][case]
    Ws, k, exact = power_of_two_scaling(W)
    V = W.copy()
    Vs, k2, exact2 = power_of_two_scaling(V, inplace=True)
    assert Vs is V and k2 == k and exact2 == exact
    assert np.array_equal(Vs, Ws) and np.array_equal(np.signbit(Vs), np.signbit(Ws))
    assert exact == _fraction_scaling_exact(W, k)


# --------------------------------------------------------------------------- memory (tracemalloc ratios)


def _peak_bytes(fn):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("mode", ["gram", "auto"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_gram_path_allocates_a_fraction_of_the_matrix(mode, order):
    """Before issue 16's memory work the Gram path held a scaled copy and |W| (≥ 2× the matrix)."""
    rng = np.random.default_rng(11)
    W = rng.standard_normal((96, 6000)) * 0.02  # 4.6 MB; Gram matrix 74 KB
    if order == "F":
        W = np.asfortranarray(W.T).T.copy(order="F")  # a Fortran-ordered 96×6000 array
    assert (W.flags.f_contiguous and not W.flags.c_contiguous) == (order == "F")
    enc = None

    def run():
        nonlocal enc
        enc = enclose_singular_values(W, mode=mode)

    peak = _peak_bytes(run)
    assert enc.mode == "gram"
    assert peak < 0.6 * W.nbytes, (peak, W.nbytes)


def test_abs_gram_norm_is_computed_without_abs_copy():
    W = np.random.default_rng(12).standard_normal((40, 20000))
    peak = _peak_bytes(lambda: gram_mod.abs_gram_norm_upper(W))
    assert peak < 0.5 * W.nbytes
