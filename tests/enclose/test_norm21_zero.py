"""norm_21's zero test read off the column sums (no np.any pass): the exact 0 exactly for W = 0, the same balls otherwise."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from flint import arb

from certbound.ball import float_model_scope, lower_fraction, upper_fraction
from certbound.enclose._input import power_of_two_scaling
from certbound.enclose.quantities import _norm21_from_columns, _scaled_back, norm_21


def _reference(W: np.ndarray) -> arb:
    """The evaluation before the change: np.any, then the scaled columns (written out)."""
    m, n = W.shape
    if W.size == 0 or not np.any(W):
        return arb(0)
    Ws, k, exact = power_of_two_scaling(W.copy())
    return _scaled_back(_norm21_from_columns(Ws, None), k, arb(0) if exact else arb(n) * arb(m).sqrt(), "norm_21")


def _cases() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    out = [np.zeros((3, 4)), np.zeros((1, 1)), -np.zeros((2, 2)), np.array([[5e-324]]), np.array([[0.0, -5e-324], [0.0, 0.0]]),
           np.array([[1e-310, 0.0], [0.0, 2e-308]]), np.array([[1.7e308, -1.7e308]]), np.array([[1.0]])]
    for e in (-1070, -600, -300, -20, 0, 3, 200, 600, 1000):
        out.append(rng.standard_normal((7, 5)) * 2.0**e)
        w = np.zeros((6, 6))
        w[rng.integers(6), rng.integers(6)] = rng.standard_normal() * 2.0**e
        out.append(w)
    return out


@pytest.mark.parametrize("W", _cases())
def test_norm_21_zero_test_and_same_ball(W: np.ndarray) -> None:
    with float_model_scope():
        got, ref = norm_21(W), _reference(W)
    assert got.mid() == ref.mid() and got.rad() == ref.rad()
    if not W.any():
        assert got.is_exact() and got.is_zero()
    else:
        assert not (got.is_exact() and got.is_zero())
        # containment of the exact ‖W‖_{2,1} in Fractions: Σⱼ √(Σᵢ wᵢⱼ²), each root bracketed by integer roots
        lo = upper = Fraction(0)
        scale = 2**1200
        for c in W.T:
            s = sum(Fraction(x) ** 2 for x in c)
            r = math.isqrt(int(s * scale * scale))  # ⌊√(s)·2^1200⌋
            lo += Fraction(r, scale)
            upper += Fraction(r + 1, scale)
        assert lower_fraction(got) <= lo and upper <= upper_fraction(got)
