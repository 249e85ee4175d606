"""The light priors of proofs/theory-theorems.md §6.1b (Lemma 6.1b): exact rational partial sums + proved tails.

References: exact `Fraction` sums of the prior masses, compared with closed forms derived by hand
(not with the code's own output); mpmath for the reported ln(1/π) of a Theorem 2 result.
"""

from __future__ import annotations

from fractions import Fraction as F

import mpmath
import pytest

from certbound.bounds import BoundOptions, theorem2_posthoc_bound
from certbound.bounds._grids import (
    light_index_prior,
    light_rank_prior,
    light_spectral_prior,
    p_grid,
    p_grid_m,
    spectral_grid_round_up,
)
from certbound.bounds._spec import TransformerSpec


@pytest.mark.parametrize("m", range(1, 16))
def test_index_prior_sums_to_one_exactly(m):
    assert sum(light_index_prior(p, m) for p in p_grid(m)) == 1
    assert light_index_prior(F(0), m) == F(1, 2)


@pytest.mark.parametrize("rbar", [1, 2, 3, 4, 16, 32, 384])
def test_rank_prior_sums_to_one_exactly(rbar):
    assert sum(light_rank_prior(s, rbar) for s in range(rbar + 1)) == 1
    assert light_rank_prior(rbar, rbar) == F(1, 2)


def _octave_mass(j: int) -> F:
    # π₁(j) = 2/(3(|j|+1)(|j|+2)), written out here (not imported)
    return F(2, 3 * (abs(j) + 1) * (abs(j) + 2))


@pytest.mark.parametrize("steps", [1, 2, 3, 16])
@pytest.mark.parametrize("K", [0, 1, 2, 7, 40])
def test_spectral_prior_partial_sums_and_tail(steps, K):
    # every fine level q with |⌈q/ν⌉| ≤ K: q = ν(j−1)+1 … νj for j = −K … K
    fine = sum(light_spectral_prior(q, steps) for q in range(steps * (-K - 1) + 1, steps * K + 1))
    coarse = sum(light_spectral_prior(j, steps, coarse=True) for j in range(-K, K + 1))
    partial = fine + coarse
    closed = 1 - F(4, 3 * (K + 2))                       # Lemma 6.1b(c)
    assert partial == closed
    # per octave the fine levels carry exactly half of π₁(j), the coarse level the other half
    for j in (-K, 0, K):
        assert sum(light_spectral_prior(q, steps) for q in range(steps * (j - 1) + 1, steps * j + 1)) == _octave_mass(j) / 2
        assert light_spectral_prior(j, steps, coarse=True) == _octave_mass(j) / 2
    # proved tail: the remaining octaves |j| > K carry Σ_{|j|>K} π₁(j) = 4/(3(K+2)), checked on a long stretch
    far = sum(_octave_mass(j) for j in range(K + 1, K + 2001)) * 2
    assert far < F(4, 3 * (K + 2)) and F(4, 3 * (K + 2)) - far == 2 * (F(2, 3 * (K + 2002)))
    assert partial + F(4, 3 * (K + 2)) == 1


def test_spectral_levels_verified_on_both_resolutions():
    for x, steps in [(5e-10, 16), (19.1, 16), (0.1196, 16), (3.5, 4), (2.0**-21, 16)]:
        q, v, coarse, cost = spectral_grid_round_up(x, 1, steps)
        assert coarse == (x < 2.0**-20)
        res = 1 if coarse else steps
        # the level is the smallest with 2^{q/res} ≥ x (mpmath, 100 bits)
        with mpmath.workprec(100):
            assert mpmath.mpf(2) ** (mpmath.mpf(q) / res) >= x > mpmath.mpf(2) ** (mpmath.mpf(q - 1) / res)
            mass = light_spectral_prior(q, steps, coarse)
            assert abs(float(cost.mid()) - float(mpmath.log(mpmath.mpf(mass.denominator) / mass.numerator))) < 1e-12


SPEC_P = TransformerSpec(2, 1, 4, 3, ffn_kind="single", qk_rank=2, activation="relu")
SPECTRA = {(0, 0, "QK"): [0.5, 0.2, 0, 0], (0, 0, "VO"): [1, 0.5, 0.25, 0.1], (0, None, "M"): [1.2, 0.6, 0.3, 0.1],
           (1, 0, "QK"): [3e-9, 1e-9, 0, 0], (1, 0, "VO"): [0.8, 0.4, 0.2, 0.1], (1, None, "M"): [1, 0.5, 0.25, 0.1]}


@pytest.mark.parametrize("G", [1, 5])
def test_reported_log_inv_prior_matches_lemma_61b(G):
    r = theorem2_posthoc_bound(SPEC_P, SPECTRA, 10**6, 0.05, readout_spectrum=1.5,
                               options=BoundOptions(margin_grid_size=G))
    m = p_grid_m(2, 4)
    with mpmath.workprec(120):
        ref = mpmath.log(G)
        for mr in r.matrices:
            if mr.type != "readout":
                ref += mpmath.log(2) if mr.p == 0 else mpmath.log(4 * m)
                if mr.p == 0:
                    s = int(float(mr.schatten_radius.mid()))
                    ref += mpmath.log(2) if s == mr.rank_arch else mpmath.log(2 * mr.rank_arch)
                else:
                    k = abs(mr.schatten_level)
                    ref += mpmath.log(mpmath.mpf(3) * (k + 1) * (k + 2) / 2)
            q = mr.spectral_level
            j = q if mr.spectral_coarse else -((-q) // 16)
            ref += mpmath.log(mpmath.mpf(3) * (abs(j) + 1) * (abs(j) + 2) / 2) + mpmath.log(
                2 if mr.spectral_coarse else 32)
        assert abs(float(r.log_inv_prior.mid()) - float(ref)) < 1e-10
    coarse = {(mr.layer, mr.type) for mr in r.matrices if mr.spectral_coarse}
    assert coarse == {(1, "QK")}
    assert "light" in r.assumptions["prior"]


def test_light_prior_is_cheaper_here_and_spec_prior_still_available():
    light = theorem2_posthoc_bound(SPEC_P, SPECTRA, 10**6, 0.05, readout_spectrum=1.5)
    spec = theorem2_posthoc_bound(SPEC_P, SPECTRA, 10**6, 0.05, readout_spectrum=1.5,
                                  options=BoundOptions(prior="spec"))
    assert float(light.log_inv_prior.upper()) < float(spec.log_inv_prior.upper())
    with pytest.raises(ValueError, match="prior"):
        theorem2_posthoc_bound(SPEC_P, SPECTRA, 10**6, 0.05, options=BoundOptions(prior="uniform"))
    with pytest.raises(ValueError, match="margin_grid_size"):
        theorem2_posthoc_bound(SPEC_P, SPECTRA, 10**6, 0.05, options=BoundOptions(margin_grid_size=0))
