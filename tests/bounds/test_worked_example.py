"""The worked example of the specification (explicit-bound.md §7.3) reproduced by the certified code.

The printed figures of §7.3 are the independent reference (computed by the
spec's authors with floats, 4–5 digits). Criterion (issue 4): with the same
analysis choices, the certified value agrees with the printed figure to its
printed digits, and where the last digit differs the certified value is ≥ it.
Concretely, :func:`agrees` accepts when the certified upper endpoint rounds
(half-even) to the printed figure, or when certbound's own upward-rounded
print equals it (the certified value then lies just below, within one unit in
the last place: §11 says 𝔇ₙ = 0.0705202 "to more digits" where §7.3 prints
0.070521).
"""

from __future__ import annotations

import decimal
from fractions import Fraction as F

from flint import arb

from certbound.ball import upper_fraction
from certbound.bounds._closed_form import proposition_a3_threshold
from certbound.bounds import (
    BoundOptions,
    CoverChoice,
    LinearMapClass,
    MatrixConstraint,
    NetworkConfiguration,
    TransformerSpec,
    alpha,
    gamma,
    grid_round_up,
    layer_lip,
    log_cover_linear_map,
    log_cover_rank_part,
    log_cover_tail_coord,
    log_cover_tail_vector,
    log_cover_tail_volume,
    proposition_a3,
    scale,
    theorem1_fixed_bound,
    theorem2_posthoc_bound,
    two_sided_log_inv_prior,
)


def agrees(x: arb, printed: str) -> bool:
    """Certified ball ``x`` reproduces the printed decimal ``printed`` (see module doc)."""
    p = decimal.Decimal(printed)
    q = upper_fraction(x)
    up = decimal.Decimal(q.numerator) / decimal.Decimal(q.denominator)
    ctx = decimal.Context(prec=60)
    exp = p.as_tuple().exponent
    nearest = up.quantize(decimal.Decimal(1).scaleb(exp), rounding=decimal.ROUND_HALF_EVEN, context=ctx)
    ceil = up.quantize(decimal.Decimal(1).scaleb(exp), rounding=decimal.ROUND_CEILING, context=ctx)
    # the ball must be narrow enough for the comparison to mean something
    assert float(x.rad()) < 10.0 ** (exp - 3)
    return nearest == p or ceil == p


def test_agrees_helper_can_fail():
    assert agrees(arb("0.0705202"), "0.070521")
    assert not agrees(arb("0.0705202"), "0.070522")
    assert not agrees(arb("0.0705202"), "0.070519")
    assert agrees(arb("783.8013"), "783.80")


# ---------------------------------------------------------------- Lemma A, one matrix
CLS = LinearMapClass(4, 4, 4, F(1), 1.85, 1, 3 * 10**6)


def test_lemma_a_pieces_at_tau_half():
    # r_τ = min(⌊1.85/0.5⌋, 4) = 3; R_τ² = 0.925
    assert agrees(log_cover_rank_part(4, 4, 3, 1, 0.025), "148.09")
    R = (arb(925) / 1000).sqrt()  # R_τ with R_τ² = 0.925 (not exactly representable: a ball)
    # R²b/η² = 5920 is exactly an integer here, and R² = 0.925 is not a dyadic
    # number: the ball of R²b/η² straddles 5920, so the certified ⌈·⌉ is taken
    # at the upper end (5921, i.e. one more perceptron step than the spec's
    # exact-arithmetic 5919). The certified value is ≥ the printed one and
    # exceeds it by exactly one step's cost ln(24 000 001).
    coord = log_cover_tail_coord(4, 3 * 10**6, R, 0.025)
    step = arb(24_000_001).log()
    assert agrees(arb(5919) * step, "100585")
    assert coord.overlaps(arb(5920) * step)
    assert agrees(log_cover_tail_vector(4, 3 * 10**6, R, 0.025, 0.45), "39741")
    assert agrees(log_cover_tail_volume(4, 4, 0.5, 0.025), "59.417")
    split = CoverChoice("split", tau=F(1, 2), rank_share=F(1, 2), tail="volume")
    assert agrees(log_cover_linear_map(CLS, 0.05, split), "207.51")


def test_lemma_a_optimised_rank_only_and_p0():
    assert agrees(log_cover_linear_map(CLS, 0.05), "59.417")  # τ ≥ c: parameter counting
    assert agrees(log_cover_rank_part(4, 4, 4, 1, 0.05), "172.65")
    p0 = LinearMapClass(4, 4, 4, F(0), 2, 0.5, 3 * 10**6)
    assert agrees(log_cover_linear_map(p0, 0.05, allow_p0_tail=False), "74.00")


def test_proposition_a3_figures():
    assert agrees(proposition_a3_threshold(CLS, 0.05), "0.08664")
    assert agrees(arb(24_000_001).log(), "16.994")  # Λ
    assert agrees(proposition_a3(CLS, 0.05), "6531") or agrees(proposition_a3(CLS, 0.05), "6532")


def test_large_matrix_comparison():
    big = LinearMapClass(256, 256, 256, F(1), 40, 2, 10**7)
    assert agrees(log_cover_tail_volume(256, 256, 2, 0.1), "243373")
    assert agrees(log_cover_rank_part(256, 256, 256, 2, 0.1), "629822")
    assert agrees(log_cover_linear_map(big, 0.1), "243373")  # parameter counting wins, as printed


# ---------------------------------------------------------------- network
SPEC = TransformerSpec(2, 1, 4, 3, ffn_kind="single", qk_rank=2, activation="relu")
SPEC2 = TransformerSpec(2, 1, 4, 3, ffn_kind="single", qk_rank=2, activation="relu", softmax_lip=2)
C = {(0, 0, "QK"): 0.5, (0, 0, "VO"): 1, (0, None, "M"): 1.2, (1, 0, "QK"): 0.4, (1, 0, "VO"): 0.8, (1, None, "M"): 1}
KAPPA = {(0, 0, "QK"): MatrixConstraint(0, 2, 0.5), (0, 0, "VO"): MatrixConstraint(1, 1.85, 1),
         (0, None, "M"): MatrixConstraint(2, 1.9, 1.2), (1, 0, "QK"): MatrixConstraint(0, 2, 0.4),
         (1, 0, "VO"): MatrixConstraint(1, 1.5, 0.8), (1, None, "M"): MatrixConstraint(2, 1.3225, 1)}
SPECTRA = {(0, 0, "QK"): [0.5, 0.2, 0, 0], (0, 0, "VO"): [1, 0.5, 0.25, 0.1], (0, None, "M"): [1.2, 0.6, 0.3, 0.1],
           (1, 0, "QK"): [0.4, 0.1, 0, 0], (1, 0, "VO"): [0.8, 0.4, 0.2, 0.1], (1, None, "M"): [1, 0.5, 0.25, 0.1]}


def test_network_factors():
    assert agrees(layer_lip(SPEC, C, 0), "2.4")
    assert agrees(layer_lip(SPEC, C, 1), "1.44")
    a = alpha(SPEC, C)
    assert agrees(a[0], "1.44") and agrees(a[1], "1")
    slots = SPEC.slots()
    expect_gamma = ["1.2", "1.2", "1", "0.8", "1", "1"]
    expect_k = ["1.728", "1.728", "1.44", "0.8", "1", "1"]
    for slot, g, k in zip(slots, expect_gamma, expect_k):
        assert agrees(gamma(SPEC, C, slot), g)
        assert agrees(scale(SPEC, C, slot, 1), k)
    # c_sm = 2
    assert agrees(layer_lip(SPEC2, C, 1), "2.08")
    ks = [scale(SPEC2, C, s, 1) for s in SPEC2.slots()]
    assert agrees(ks[0], "4.992") and agrees(ks[1], "2.496") and agrees(ks[2], "2.08") and agrees(ks[3], "1.6")


def test_network_cover_nodes():
    net = NetworkConfiguration(SPEC, KAPPA, readout_norm=1, n_samples=10**6)
    total, parts = net.log_cover_network(F(1, 100), allow_p0_tail=False)
    for v, printed in zip(parts, ["147.54", "124.67", "124.67", "129.67", "112.35", "115.92", "28.98"]):
        assert agrees(v, printed), (v, printed)
    assert agrees(total, "783.80")
    for eta, printed in [(F(1, 100000), "1502.1"), (F(1, 10), "544.87"), (F(1, 4), "450.47")]:
        assert agrees(net.log_cover_network(eta, allow_p0_tail=False)[0], printed)


def test_theorem1_example():
    # the spec's numbers are the Dudley-only bound (2𝔇_n + confidence); the one-step estimate is checked below
    opts = BoundOptions(cutoff=1e-5, partition_ratio=1.05, allow_p0_tail=False, one_step=False)
    r = theorem1_fixed_bound(SPEC, KAPPA, 10**6, 0.05, readout_norm=1, options=opts)
    assert len(r.partition) == 209
    assert agrees(r.dudley, "0.070521")
    assert agrees(r.confidence_term, "0.001358")
    assert agrees(r.bound, "0.14240")
    r2 = theorem1_fixed_bound(SPEC2, KAPPA, 10**6, 0.05, readout_norm=1, options=opts)
    assert agrees(r2.bound, "0.14784")
    # with the one-step estimate (Lemma C2) the reported bound can only be smaller (a minimum, §C3)
    r3 = theorem1_fixed_bound(SPEC, KAPPA, 10**6, 0.05, readout_norm=1,
                              options=BoundOptions(cutoff=1e-5, partition_ratio=1.05, allow_p0_tail=False))
    assert float(r3.bound.upper()) <= float(r.bound.upper())
    assert r3.dudley.overlaps(r.dudley)


def test_theorem2_example_grid_levels_and_bound():
    # spectral grid c0 = 1, ν2 = 16
    for x, q, cost in [(0.5, -16, "6.129"), (1, 0, "1.099"), (1.2, 5, "4.143"), (0.4, -21, "6.632"), (0.8, -5, "4.143")]:
        k, v = grid_round_up(x, 1, 16)
        assert k == q
        assert agrees(two_sided_log_inv_prior(k), cost)
    p = {k: F(0) if k[2] == "QK" else F(1) if k[2] == "VO" else F(2) for k in SPECTRA}
    opts = BoundOptions(cutoff=1e-5, partition_ratio=1.05, allow_p0_tail=False, fixed_p=p, one_step=False,
                        prior="spec")
    r = theorem2_posthoc_bound(SPEC, SPECTRA, 10**6, 0.05, readout_spectrum=1, options=opts)
    assert r.assumptions["p_grid_m"] == 4
    assert agrees(r.log_inv_prior, "48.513")
    assert agrees(r.dudley, "0.070682")
    assert agrees(r.confidence_term, "0.005109")
    assert agrees(r.bound, "0.14647")
    got = {(m.layer, m.type): (m.schatten_level, m.spectral_level) for m in r.matrices}
    assert got[(0, "VO")] == (1, 0) and got[(0, "M")] == (1, 5) and got[(1, "QK")] == (2, -21)
    for m in r.matrices:
        if m.type in ("VO", "M"):
            assert m.schatten_radius.contains(arb(2))


def test_theorem2_search_never_worse_than_the_example_choice():
    p = {k: F(0) if k[2] == "QK" else F(1) if k[2] == "VO" else F(2) for k in SPECTRA}
    opts = BoundOptions(cutoff=1e-5, partition_ratio=1.05, allow_p0_tail=False, fixed_p=p)
    fixed = theorem2_posthoc_bound(SPEC, SPECTRA, 10**6, 0.05, readout_spectrum=1, options=opts)
    searched = theorem2_posthoc_bound(SPEC, SPECTRA, 10**6, 0.05, readout_spectrum=1,
                                      options=BoundOptions(partition_ratio=1.05))
    assert bool(searched.bound.upper() <= fixed.bound.upper())
