"""The public Hypothesis strategies of certbound.testing produce what they promise (exactly)."""

from __future__ import annotations

from fractions import Fraction as F

import mpmath
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from certbound.testing import (
    constraint_configurations,
    dyadic_orthogonal,
    matrices_with_singular_values,
    matrix_from_svd,
    orthogonal_matrices,
    pi_transformer_output,
    singular_value_lists,
    small_pi_transformers,
)


@given(st.integers(1, 20), st.integers(0, 2**31))
def test_dyadic_orthogonal_is_exactly_orthogonal(n, seed):
    Q = dyadic_orthogonal(n, seed)
    Qf = [[F(x) for x in r] for r in Q]
    for i in range(n):
        for j in range(n):
            assert sum(Qf[k][i] * Qf[k][j] for k in range(n)) == (1 if i == j else 0)


@given(orthogonal_matrices(5))
def test_orthogonal_strategy(Q):
    assert np.array_equal(Q.T @ Q, np.eye(5))


@given(singular_value_lists(5))
def test_singular_value_lists_descending_dyadic(s):
    assert s == sorted(s, reverse=True) and all(x >= 0 for x in s)


@given(matrices_with_singular_values(3, 4))
def test_prescribed_singular_values_exact(pair):
    W, s = pair
    # exact check: the Gram matrix WᵀW has eigenvalues σ² (compare characteristic data exactly: trace and ‖·‖_F²)
    Wf = [[F(x) for x in r] for r in W]
    fro2 = sum(x * x for r in Wf for x in r)
    assert fro2 == sum(F(x) ** 2 for x in s)


def test_matrix_from_svd_refuses_inexact():
    raised = 0
    for seed in range(10):
        try:
            matrix_from_svd([1.0, 1.0 + 2**-52, 2.0**-60], 8, 8, seed=seed)
        except ValueError as exc:
            assert "not exact" in str(exc)
            raised += 1
    assert raised > 0


@given(small_pi_transformers())
def test_small_networks_have_unit_rows_and_bounded_output(net):
    f, inputs = pi_transformer_output(net, return_inputs=True, dps=30)
    cw = mpmath.sqrt(mpmath.fsum(mpmath.mpf(float(x)) ** 2 for x in net.readout))
    assert abs(f) <= cw * (1 + mpmath.mpf(10) ** -25)  # F6: |f| ≤ C_w
    for key, rows in inputs.items():
        if key == "readout" or key[2] in ("QK", "VO", "M_in"):
            for r in rows:
                assert mpmath.fsum(x * x for x in r) <= 1 + mpmath.mpf(10) ** -25


@given(st.data())
def test_constraint_configurations_cover_every_matrix(data):
    from certbound.bounds import TransformerSpec

    spec = TransformerSpec(2, 2, 4, 3, ffn_kind="two", d_ff=5, d_head=2)
    kappa = data.draw(constraint_configurations(spec))
    assert set(kappa) == {s.key for s in spec.slots()}
    assert all(0 <= k.schatten_p <= 2 for k in kappa.values())
