"""The product path σ(A Bᵀ) against exact spectra and mpmath on the exact product."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, strategies as st

from certbound.enclose import (
    enclose_singular_values,
    enclose_singular_values_of_product,
)
from tests.enclose.reference import contains_value, hadamard_orthogonal, mp_product_singular_values


@given(
    st.sampled_from([4, 16, 64]),
    st.sampled_from([4, 16, 64]),
    st.integers(1, 4),
    st.lists(st.integers(-30, 10), min_size=4, max_size=4),
    st.sampled_from([0, 800, -900]),
)
@example(64, 16, 4, [0, 0, 0, 0], 0)  # repeated singular values
def test_exact_product_spectrum(m, n, d, expo, scale):
    """A = Q_m[:, :d] diag(σ), B = Q_n[:, :d]: σ(A Bᵀ) = σ exactly (A is exact: σ dyadic)."""
    sigma = np.sort(np.ldexp(1.0, np.array(expo[:d], dtype=np.int64) + scale))[::-1]
    A = hadamard_orthogonal(m)[:, :d] * sigma
    B = hadamard_orthogonal(n)[:, :d]
    enc = enclose_singular_values_of_product(A, B)
    assert enc.certified and enc.shape == (m, n)
    for i in range(min(m, n)):
        t = sigma[i] if i < d else 0.0
        assert contains_value(enc.lower[i], enc.upper[i], float(t))
        if i >= d:
            assert enc.upper[i] == 0.0  # exactly zero past the inner dimension
    assert enc.rank.upper <= d and enc.rank.lower == d


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("dims", [(12, 9, 3), (5, 7, 5), (3, 8, 6), (10, 10, 1)])
def test_random_products_against_mpmath(seed, dims):
    m, n, d = dims
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, d)) * 0.02
    B = rng.standard_normal((n, d)).astype(np.float32)  # mixed dtypes: float32 stored factor
    enc = enclose_singular_values_of_product(A, B)
    ref = mp_product_singular_values(A, B.astype(np.float64))
    for i, t in enumerate(ref):
        # rank(A Bᵀ) ≤ d: mpmath's values past d are 1e-90-level noise of exact zeros.
        t = t if i < d else 0
        assert contains_value(enc.lower[i], enc.upper[i], t), (i, enc.lower[i], t, enc.upper[i])
    assert enc.rank.upper <= min(d, m, n)


def test_product_is_not_the_rounded_formed_product():
    """Certify the exact product: a factor pair whose formed float product rounds."""
    A = np.array([[1.0, 2.0**-60]])
    B = np.array([[1.0, 1.0]])
    enc = enclose_singular_values_of_product(A, B)
    exact = 1.0 + 2.0**-60  # not a float: the formed product would give 1.0
    from fractions import Fraction

    assert Fraction(enc.lower[0]) <= Fraction(1) + Fraction(1, 2**60) <= Fraction(enc.upper[0])
    assert exact == 1.0  # (documenting why a formed product cannot be certified)


def test_product_agrees_with_dense_enclosure_of_exactly_formed_product():
    rng = np.random.default_rng(11)
    A = rng.integers(-8, 8, size=(20, 3)).astype(float)
    B = rng.integers(-8, 8, size=(15, 3)).astype(float)
    W = A @ B.T  # small integers: formed exactly
    p = enclose_singular_values_of_product(A, B)
    q = enclose_singular_values(W)
    assert np.all(p.lower <= q.upper) and np.all(q.lower <= p.upper)


def test_product_bad_input():
    with pytest.raises(ValueError, match="inner dimensions"):
        enclose_singular_values_of_product(np.ones((3, 2)), np.ones((4, 3)))
    with pytest.raises(ValueError, match="A: matrix has 1 NaN"):
        enclose_singular_values_of_product(np.array([[np.nan, 1.0]]), np.ones((4, 2)))


def test_zero_factor_gives_exact_zeros():
    enc = enclose_singular_values_of_product(np.zeros((4, 2)), np.ones((3, 2)))
    assert list(enc.upper) == [0.0, 0.0, 0.0]
