"""Issue 12 item 17: Lemma B's edge case K'_j = 0 (proofs/theory-network.md §B) as the proof states it.

With L_φ = 0 (a valid, if degenerate, activation constant) every matrix before
the last activation has K'_j = 0: it does not affect the output. The proof
chooses ε_j ≥ c_j ρ_j so H_A^{(j)} = 0 and its accuracy term K'_j ε_j = 0;
before the fix the code divided by K'_j = 0 and the cover was +∞.
"""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from certbound.bounds import TransformerSpec, log_cover_linear_map, theorem2_posthoc_bound
from certbound.bounds._network_cover import MatrixConstraint, NetworkConfiguration

TYPES = {"single": ("QK", "VO", "M"), "two": ("QK", "VO", "M_in", "M_out")}


def _net(kind):
    spec = TransformerSpec(n_layers=2, n_heads=1, d_model=4, seq_len=2, ffn_kind=kind, d_ff=4,
                           act_lip=0, act_norm_at_zero=1, act_growth=0)
    cons = {(l, 0 if t in ("QK", "VO") else None, t): MatrixConstraint(F(2), 1, 1)
            for l in range(2) for t in TYPES[kind]}
    return spec, NetworkConfiguration(spec, cons, readout_norm=1, n_samples=100)


@pytest.mark.parametrize("kind", ["single", "two"])
def test_silent_matrices_contribute_zero_and_the_cover_is_finite(kind):
    spec, net = _net(kind)
    silent = [j for j, k in enumerate(net.k_prime) if k == 0]
    assert silent, "the configuration must have K'_j = 0 matrices"
    eta = F(1, 10)
    total, parts = net.log_cover_network(eta)
    assert total.is_finite()
    for j in silent:
        assert parts[j] == 0
    # The rest are Lemma A at ε_j/ρ_j = w_j η / (K'_j ρ_j), here K'_j = 1 and ρ_j = φ₀ + φ₁·(…) = 1 (φ₁ = 0).
    J = len(parts)
    for j, part in enumerate(parts):
        if j not in silent:
            assert net.k_prime[j] == 1
            ref = log_cover_linear_map(net.classes[j], F(1, J) * eta)
            assert part.overlaps(ref) and ref.is_finite()


@pytest.mark.parametrize("kind", ["single", "two"])
def test_silent_matrix_accuracy_is_c_rho(kind):
    spec, net = _net(kind)
    w = [F(1, net.J)] * net.J
    for j, k in enumerate(net.k_prime):
        eps, rho = net.matrix_accuracy(j, F(1, 10), w)
        assert eps.is_finite() and rho.is_finite()
        if k == 0:
            assert (eps - net.classes[j].c * rho).contains(0)


def test_theorem2_with_silent_matrices_is_finite():
    spec, _ = _net("single")
    spectra = {}
    for l in range(2):
        spectra[(l, 0, "QK")] = [0.5, 0.25]
        spectra[(l, 0, "VO")] = [0.5]
        spectra[(l, None, "M")] = [0.5, 0.5, 0.25]
    res = theorem2_posthoc_bound(spec, spectra, n_samples=10**9, delta=0.1)
    assert res.bound.is_finite() and res.dudley.is_finite()
    assert not res.vacuous
