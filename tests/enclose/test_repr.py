"""The enclosure's repr is short (notebooks) and its printed σ₁ interval is outward."""

from fractions import Fraction

import numpy as np

from certbound import enclose_singular_values


def test_repr_is_short_and_outward():
    W = np.diag(np.arange(1.0, 769.0))  # σ₁ = 768 exactly
    W = np.hstack([W, np.zeros((768, 2304))])
    r = repr(enclose_singular_values(W))
    assert len(r) < 200 and "768x3072" in r and "rank 768" in r
    lo, hi = r.split("sigma_1 in [")[1].split("]")[0].split(", ")
    assert Fraction(lo) <= 768 <= Fraction(hi)


def test_repr_of_an_empty_enclosure():
    assert "no values" in repr(enclose_singular_values(np.zeros((0, 3))))
