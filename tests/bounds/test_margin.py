"""Ramp loss and the certified 0-1 error (proofs/theory-theorems.md §T3): references in exact Fractions."""

from __future__ import annotations

import random
from fractions import Fraction as F

import numpy as np
import pytest
from flint import arb

from certbound.bounds import (
    BoundOptions,
    combine_ramp_upper,
    empirical_ramp_loss_upper,
    ramp_loss,
    ramp_loss_constants,
    ramp_upper_from_violations,
    theorem2_posthoc_bound,
    zero_one_error_bound,
)
from certbound.bounds._spec import TransformerSpec


def _ramp_exact(m: F, g: F) -> F:
    return min(F(1), max(F(0), 1 - m / g))


GAMMAS = [F(1, 10), F(1, 4), F(1, 3), F(2)]


@pytest.mark.parametrize("g", GAMMAS)
def test_ramp_dominates_zero_one_loss(g):
    # a dense set of margins including ties (0), the kinks (0, γ) and their float neighbours
    pts = sorted({0.0, float(g), -float(g), float(g) / 2, 5e-324, -5e-324, np.nextafter(float(g), 0),
                  np.nextafter(float(g), 9)} | set(np.linspace(-3, 3, 6001).tolist()))
    m = np.array(pts)
    r = ramp_loss(m, g)
    zero_one = (m <= 0).astype(float)
    assert np.all(r >= zero_one)
    assert np.all((r >= 0) & (r <= 1))
    # exact arithmetic on the same margins: 1{m ≤ 0} ≤ ℓ_γ(m) ≤ 1{m < γ} (Lemma T3.0(iii))
    for x in pts[::37] + [0.0, float(g)]:
        q = F(x)
        assert (1 if q <= 0 else 0) <= _ramp_exact(q, g) <= (1 if q < g else 0)
    # and the certified empirical bound dominates the empirical 0-1 error
    assert empirical_ramp_loss_upper(m, g) >= F(int(np.sum(m <= 0)), len(m))


@pytest.mark.parametrize("seed", range(5))
def test_empirical_upper_against_exact_fraction_mean(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    m = rng.normal(0.3, 0.4, size=n) * rng.choice([1e-6, 1.0, 10.0])
    m[: n // 10] = 0.25                       # exactly at a kink for γ = 1/4
    for g in GAMMAS:
        for tau in (F(0), F(1, 10**9), F(1, 3)):
            u = empirical_ramp_loss_upper(m, g, forward_error=tau)
            ref = sum((_ramp_exact(F(x) - tau, g) for x in m.tolist()), F(0)) / n
            assert ref <= u <= min(F(1), ref + F(1, 10**12)), (g, tau)


def test_chunks_and_violation_counts():
    rng = random.Random(3)
    m = np.array([rng.uniform(-1, 2) for _ in range(1000)])
    g = F(1, 4)
    whole = empirical_ramp_loss_upper(m, g)
    parts = [(empirical_ramp_loss_upper(m[i:i + 300], g), len(m[i:i + 300])) for i in range(0, 1000, 300)]
    assert combine_ramp_upper(parts) == whole          # exact sums: chunking changes nothing
    viol = ramp_upper_from_violations(int(np.sum(m < float(g))), len(m))
    assert viol >= whole
    with pytest.raises(ValueError):
        ramp_upper_from_violations(5, 3)


def test_bad_inputs():
    with pytest.raises(ValueError, match="margin"):
        ramp_loss_constants(0)
    with pytest.raises(ValueError, match="finite"):
        empirical_ramp_loss_upper(np.array([0.1, np.nan]), F(1, 4))
    with pytest.raises(ValueError, match="at least one"):
        empirical_ramp_loss_upper(np.array([]), F(1, 4))
    with pytest.raises(ValueError, match="forward_error"):
        empirical_ramp_loss_upper(np.array([0.1]), F(1, 4), forward_error=-1)
    with pytest.raises(ValueError):
        zero_one_error_bound(arb(0.1), F(3, 2))


SPEC_P = TransformerSpec(2, 1, 4, 3, ffn_kind="single", qk_rank=2, activation="relu")
SPECTRA = {(0, 0, "QK"): [0.5, 0.2, 0, 0], (0, 0, "VO"): [1, 0.5, 0.25, 0.1], (0, None, "M"): [1.2, 0.6, 0.3, 0.1],
           (1, 0, "QK"): [0.4, 0.1, 0, 0], (1, 0, "VO"): [0.8, 0.4, 0.2, 0.1], (1, None, "M"): [1, 0.5, 0.25, 0.1]}


def test_error_bound_is_ramp_upper_plus_gap_and_checks_constants():
    bl, ll = ramp_loss_constants("0.25")
    assert (bl, ll) == (1, 4)
    res = theorem2_posthoc_bound(SPEC_P, SPECTRA, 10**7, 0.05, loss_bound=bl, loss_lipschitz=ll,
                                 options=BoundOptions(margin_grid_size=1))
    err = zero_one_error_bound(res, F(1, 20), margin="0.25")
    gap_up = F(res.bound.upper().str(40, radius=False))          # decimal of the upper end (≥ rounding checked below)
    assert float(err.upper()) >= 0.05 + float(res.bound.upper())
    assert abs(float(err.upper()) - float(F(1, 20) + gap_up)) < 1e-12
    with pytest.raises(ValueError, match="ramp loss"):
        zero_one_error_bound(res, F(1, 20), margin="0.125")     # L_L = 4 < 1/γ = 8
