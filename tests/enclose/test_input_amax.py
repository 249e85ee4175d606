"""``_input.exact_float64_operand_amax``: exact_float64_operand plus max|w|, finiteness decided by the max and min.

Reference: exact_float64_operand itself (the same array, flags and errors) and max|w| over Python floats.
"""

from __future__ import annotations

import numpy as np
import pytest

from certbound.enclose._input import exact_float64_operand, exact_float64_operand_amax


def _cases(rng):
    base = rng.standard_normal((7, 5)) * 2.0 ** float(rng.integers(-1070, 1000))
    yield base
    yield np.asfortranarray(base)
    yield base[:, ::2]  # strided: converted
    with np.errstate(over="ignore"):
        yield base.astype(np.float32)
    yield (base * 0).astype(np.int64)
    yield np.zeros((0, 3))
    yield np.zeros((4, 4))
    yield np.array([[-5e-324, 1e308], [-1e308, 0.0]])


@pytest.mark.parametrize("seed", range(6))
def test_same_operand_and_the_exact_max_abs(seed):
    rng = np.random.default_rng(seed)
    for W in _cases(rng):
        try:
            ref = exact_float64_operand(W)
        except ValueError as exc:  # (a float32 cast of huge entries is infinite: both refuse it alike)
            with pytest.raises(ValueError, match=str(exc).replace("(", r"\(").replace(")", r"\)")):
                exact_float64_operand_amax(W)
            continue
        op, amax = exact_float64_operand_amax(W)
        assert op.transposed == ref.transposed and op.owned == ref.owned
        assert np.array_equal(op.array, ref.array) and op.array.flags.c_contiguous
        if isinstance(W, np.ndarray) and not ref.owned:
            assert np.shares_memory(op.array, W)
        flat = [abs(float(x)) for x in np.asarray(W, dtype=np.float64).ravel().tolist()]
        assert amax == (max(flat) if flat else 0.0)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("layout", ["C", "F", "strided", "float32"])
def test_non_finite_entries_raise_the_usual_error(bad, layout):
    rng = np.random.default_rng(7)
    W = rng.standard_normal((6, 4))
    W[3, 1] = bad
    W = {"C": W, "F": np.asfortranarray(W), "strided": W[:, ::1][::1, :3], "float32": W.astype(np.float32)}[layout]
    with pytest.raises(ValueError) as expected:
        exact_float64_operand(W, "X")
    with pytest.raises(ValueError) as got:
        exact_float64_operand_amax(W, "X")
    assert str(got.value) == str(expected.value)
