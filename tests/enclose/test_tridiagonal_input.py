"""Bad input to Theorem G-T's public helpers is a ValueError naming the function and the shapes.

(A wrong shape used to surface as LAPACK's ``flapack.error``, a NumPy broadcasting message, or, in
``tridiagonal_theorem_g_intervals``, as a silently shorter list.)
"""

from __future__ import annotations

import numpy as np
import pytest
from flint import arb

from certbound.enclose import gram
from certbound.enclose import tridiagonal as tri


@pytest.mark.parametrize("G", [np.ones((3, 4)), np.ones(3), np.ones((2, 2, 2))], ids=["3x4", "vector", "3-d"])
def test_householder_tridiagonal_needs_a_square_matrix(G):
    with pytest.raises(ValueError, match=r"householder_tridiagonal: G must be a square matrix, got shape"):
        tri.householder_tridiagonal(G)


def test_eigenvalue_bounds_check_the_lengths():
    with pytest.raises(ValueError, match=r"tridiagonal_eigenvalue_bounds: d has 3 entries, e has 5 \(expected 2\)"):
        tri.tridiagonal_eigenvalue_bounds(np.ones(3), np.ones(5))
    with pytest.raises(ValueError, match=r"tridiagonal_eigenvalue_bounds: 2 approximate eigenvalues for order 3"):
        tri.tridiagonal_eigenvalue_bounds(np.ones(3), np.ones(2), approx=np.ones(2))
    with pytest.raises(ValueError, match=r"d has 0 entries, e has 1"):
        tri.tridiagonal_eigenvalue_bounds(np.zeros(0), np.ones(1))
    lo, hi = tri.tridiagonal_eigenvalue_bounds(np.zeros(0), np.zeros(0))  # order 0 is fine
    assert lo.size == hi.size == 0


def test_gershgorin_bounds_check_the_lengths():
    with pytest.raises(ValueError, match=r"gershgorin_bounds: d has 3 entries, e has 5"):
        tri.gershgorin_bounds(np.ones(3), np.ones(5))
    with pytest.raises(ValueError, match=r"gershgorin_bounds: d has 0 entries"):
        tri.gershgorin_bounds(np.zeros(0), np.zeros(0))
    assert tri.gershgorin_bounds(np.array([2.0]), np.zeros(0)) == (2.0, 2.0)


@pytest.mark.parametrize("name", ["tridiagonal_theorem_g_float_bounds", "tridiagonal_theorem_g_intervals"])
def test_theorem_gt_ends_need_as_many_lower_as_upper_ends(name):
    with pytest.raises(ValueError, match=rf"{name}: 3 lower but 2 upper eigenvalue ends"):
        getattr(gram, name)(np.ones(3), np.ones(2), arb(0), arb(0), arb(0))
