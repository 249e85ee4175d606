"""scaled_enclosure: exact-zero σᵢ (a head's zero tail) are scaled without arithmetic, to the same values.

Reference: each σ ball multiplied by the scale in Arb and its float ends taken by float_lower/float_upper, as
scaled_enclosure did before session 7, and exact Fractions for the containment of c·σᵢ.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from flint import arb

from certbound.ball import DEFAULT_PREC, float_lower, float_upper, lower_fraction, upper_fraction, working_precision
from certbound.enclose import enclose_singular_values_of_product
from certbound.pipeline._spectrum import scaled_enclosure


@pytest.mark.parametrize("d", [2, 32, 7])
def test_scaled_zero_tail_is_the_product_with_the_scale(d):
    rng = np.random.default_rng(d)
    A, B = rng.standard_normal((40, 3)), rng.standard_normal((30, 3))  # rank 3: 27 σᵢ proved 0
    enc = enclose_singular_values_of_product(A, B, mode="auto")
    assert sum(1 for s in enc.sigma if s.is_exact() and s.is_zero()) >= 20
    with working_precision(DEFAULT_PREC):
        scale = 1 / arb(d).sqrt()
        want = [s * scale if s.is_finite() else arb(0).union(arb.pos_inf()) for s in enc.sigma]
    got = scaled_enclosure(enc, scale)
    assert [(s.mid().man_exp(), s.rad().man_exp()) for s in got.sigma] == \
        [(s.mid().man_exp(), s.rad().man_exp()) for s in want]
    assert got.lower.tolist() == [max(float_lower(s), 0.0) for s in want]
    assert got.upper.tolist() == [float_upper(s) for s in want]
    # containment of c·σᵢ for every point of the original balls' ends (exact)
    for s, g in zip(enc.sigma, got.sigma):
        for v in (lower_fraction(s), upper_fraction(s)):
            c_lo, c_hi = lower_fraction(scale), upper_fraction(scale)
            assert lower_fraction(g) <= max(Fraction(0), v * c_lo) and v * c_hi <= upper_fraction(g)
