"""Regression tests for the R1 soundness review of certbound/bounds and the bound/demo/proxies commands.

Each test fails on the code before the matching fix (see the review report):
directed rounding of inputs and reported parameters, NaN handling in the proxies,
and the hypotheses of Lemma R (increasing partition).
"""

from __future__ import annotations

import decimal
import os
from fractions import Fraction

import numpy as np
import pytest
from flint import arb, ctx, fmpq

from certbound.ball import DEFAULT_PREC, lower_fraction, upper_fraction, working_precision


# --------------------------------------------------------------------------- proxies: NaN is not 0


def test_pow_nonnegative_of_nan_encloses_everything():
    from certbound.bounds.proxies import pow_nonnegative

    with working_precision(DEFAULT_PREC):
        r = pow_nonnegative(arb.nan(), arb(1) / 2)
    # before the fix: the exact 0, i.e. "the quantity is 0" for an unknown quantity
    assert not bool(r < 1)
    assert not bool(r <= 0)


def test_ball_min_with_nan_has_no_finite_lower_end():
    from certbound.bounds.proxies import ball_min

    with working_precision(DEFAULT_PREC):
        b = ball_min([arb(1), arb.nan()])
    # the NaN entry may hold any value, so min ≥ 1 must not be claimed (before the fix: exactly 1)
    assert not bool(b >= 1)
    assert not bool(b >= -10**30)


# --------------------------------------------------------------------------- as_arb: no rounding float()


@pytest.mark.parametrize("x", ["0.1", " 0.1 ", decimal.Decimal("0.1"), "1/10", "1e-1"])
def test_as_arb_reads_decimals_exactly(x):
    from certbound.bounds._arbutil import as_arb

    with working_precision(DEFAULT_PREC):
        assert as_arb(x).contains(fmpq(1, 10))  # float("0.1") ≠ 1/10


def test_as_arb_long_double_and_rationals_exact():
    from certbound.bounds._arbutil import as_arb

    with working_precision(DEFAULT_PREC):
        ld = np.longdouble(1) / np.longdouble(3)
        num, den = ld.as_integer_ratio()
        assert as_arb(ld).contains(fmpq(num, den))
        assert as_arb(fmpq(1, 3)).contains(fmpq(1, 3))
        f32 = np.float32(0.1)
        assert as_arb(f32).is_exact() and as_arb(f32) == arb(float(f32))
    with pytest.raises((TypeError, ValueError)):
        as_arb("not a number")


def test_theorem_inputs_given_as_decimal_strings_are_exact():
    """δ = "0.1": float("0.1") > 1/10, so the confidence term was evaluated at a *larger* δ
    (smaller ln(2/δ)): below the true B√(ln(2/δ)/(2n)) for the δ the caller wrote."""
    from certbound.bounds import MatrixConstraint, TransformerSpec, theorem1_fixed_bound
    from certbound.bounds._theorems import BoundOptions

    spec = TransformerSpec(1, 1, 2, 2, ffn_kind="single", activation="relu", readout_learned=False)
    kappa = {(0, 0, "QK"): MatrixConstraint(2, 1, 1), (0, 0, "VO"): MatrixConstraint(2, 1, 1),
             (0, None, "M"): MatrixConstraint(2, 1, 1)}
    opts = BoundOptions(cutoff=Fraction(1, 8), partition_ratio=2.0)
    with working_precision(DEFAULT_PREC):
        res = theorem1_fixed_bound(spec, kappa, 1000, "0.1", options=opts)
        exact_conf = ((2 / (arb(1) / 10)).log() / 2000).sqrt()
    assert res.confidence_term.overlaps(exact_conf)
    assert not bool(res.confidence_term < exact_conf)   # before: certainly below


def test_reported_delta_is_rounded_up():
    from certbound.bounds import MatrixConstraint, TransformerSpec, theorem1_fixed_bound
    from certbound.bounds._theorems import BoundOptions

    spec = TransformerSpec(1, 1, 2, 2, ffn_kind="single", activation="relu", readout_learned=False)
    kappa = {(0, 0, "QK"): MatrixConstraint(2, 1, 1), (0, 0, "VO"): MatrixConstraint(2, 1, 1),
             (0, None, "M"): MatrixConstraint(2, 1, 1)}
    opts = BoundOptions(cutoff=Fraction(1, 8), partition_ratio=2.0)
    res = theorem1_fixed_bound(spec, kappa, 1000, Fraction(3, 10), options=opts)
    assert Fraction(res.delta) >= Fraction(3, 10)    # float(3/10) = 0.29999999999999998…
    res = theorem1_fixed_bound(spec, kappa, 1000, 0.05, options=opts)
    assert res.delta == 0.05                         # exact for float inputs


# --------------------------------------------------------------------------- Lemma R hypotheses


def test_dudley_bound_rejects_non_increasing_partition():
    from certbound.bounds import dudley_bound, upper_riemann_sum

    with working_precision(DEFAULT_PREC):
        ent = [arb(100), arb(100)]
        # a decreasing partition makes (e_{k+1} − e_k) negative: the "bound" would drop below 4α
        with pytest.raises(ValueError):
            dudley_bound([Fraction(1, 4), Fraction(1, 8), Fraction(1, 16)], ent, 100, running_min=False)
        with pytest.raises(ValueError):
            dudley_bound([Fraction(0), Fraction(1, 8), Fraction(1, 4)], ent, 100, running_min=False)
        with pytest.raises(ValueError):
            dudley_bound([Fraction(1, 8), Fraction(1, 8), Fraction(1, 4)], ent, 100)
        with pytest.raises(ValueError):
            upper_riemann_sum(lambda e: arb(1), [Fraction(2), Fraction(1)])
        # a valid one still works: 4/16 + 12/10 · (1/16 + 1/8) · 10
        v = dudley_bound([Fraction(1, 16), Fraction(1, 8), Fraction(1, 4)], ent, 100, running_min=False)
        assert v.contains(arb(1) / 4 + arb(12) * 3 / 16)


# --------------------------------------------------------------------------- bound CLI: config constants


def test_bound_constant_from_config_float_is_not_rounded_down():
    from certbound.pipeline._bound import _constant

    # a certbound-pi config's clip 0.1 is the binary64 0.1000000000000000055…, the loss's true range
    v = _constant(None, {"loss_bound": 0.1}, "loss_bound", "--loss-bound")
    assert Fraction(v) >= Fraction(0.1)   # before: Fraction("0.1") = 1/10 < float 0.1
    assert _constant(None, {"loss_bound": 4.0}, "loss_bound", "--loss-bound") == 4
    assert _constant("0.1", None, "loss_bound", "--loss-bound") == Fraction(1, 10)


def _tiny_bert(d: str, layers: int) -> str:
    from tests.bounds.test_cli_bound import _tiny_bert as make

    os.makedirs(d, exist_ok=True)
    return make(d, layers=layers)


def test_bound_refuses_spectrum_report_of_another_model(tmp_path):
    from certbound.cli import main

    deep = _tiny_bert(str(tmp_path / "deep"), layers=2)
    shallow = _tiny_bert(str(tmp_path / "shallow"), layers=1)
    rep = tmp_path / "deep.json"
    assert main(["spectrum", deep, "--json", str(rep), "--quiet"]) == 0
    # the same report with its own model works ...
    assert main(["bound", deep, "--n", "1e9", "--delta", "0.1", "--spectra", str(rep), "--quiet"]) == 0
    # ... but with a 1-layer model it would silently certify layer 0 of the *other* model
    assert main(["bound", shallow, "--n", "1e9", "--delta", "0.1", "--spectra", str(rep), "--quiet"]) == 2


# --------------------------------------------------------------------------- demo: exact δ


def test_demo_default_delta_is_exactly_one_hundredth():
    from certbound.pipeline import DEFAULT_DELTA

    assert Fraction(DEFAULT_DELTA) == Fraction(1, 100)   # float 0.01 > 1/100


def test_demo_cli_parses_delta_exactly_and_prints_directed():
    import argparse

    from certbound._commands import demo as demo_cmd

    p = argparse.ArgumentParser()
    demo_cmd.add_arguments(p)
    args = p.parse_args(["--delta", "0.01"])
    assert Fraction(args.delta) == Fraction(1, 100)
    assert Fraction(p.parse_args(["--delta", "0.25"]).delta) == Fraction(1, 4)
    # 1 − δ is printed rounded down, δ rounded up
    assert demo_cmd._confidence_text(Fraction(1, 100)) == "0.99"
    assert Fraction(demo_cmd._confidence_text(0.01)) <= 1 - Fraction(0.01)
    assert Fraction(demo_cmd._confidence_text(Fraction(1, 10**9))) < 1   # ':g' printed "1"
    assert Fraction(demo_cmd._delta_text(Fraction(1, 3))) >= Fraction(1, 3)


# --------------------------------------------------------------------------- audit scalars


def test_exact_binomial_tail_inverse_accepts_a_float_delta():
    from certbound.audit.scalars import binomial_tail_inverse_upper

    with working_precision(DEFAULT_PREC):
        v = binomial_tail_inverse_upper(0, 10, 0.5, exact=True)   # before: ValueError from parse_decimal
        assert v.overlaps(1 - arb("0.5") ** (arb(1) / 10))


# --------------------------------------------------------------------------- Lemma 1.1b (tanh GELU) constant


def _tanh_gelu_bound_certified(k: arb, a: arb, B: arb) -> bool:
    """The bisection of proofs/theory-lipschitz.md Lemma 1.1b: |ψ_t'| < B on [−6, 6] (tails are analytic)."""

    def dpsi(x: arb) -> arb:
        u = k * (x + a * x**3)
        t = u.tanh()
        return (1 + t) / 2 + x * k * (1 + 3 * a * x * x) * (1 - t * t) / 2

    stack = [(arb(-6), arb(6))]
    while stack:
        lo, hi = stack.pop()
        x = arb((lo + hi) / 2, ((hi - lo) / 2).upper().mid())
        assert x.contains(lo) and x.contains(hi)
        v = dpsi(x)
        if v < B and v > -B:
            continue
        if not (hi - lo > arb("1e-9")):
            return False
        m = (lo + hi) / 2
        stack += [(lo, m), (m, hi)]
    return True


def test_tanh_gelu_constant_certified_for_every_name_that_uses_it():
    from certbound.bounds._spec import activation_constants

    old = ctx.prec
    ctx.prec = 80
    try:
        a = arb("0.044715")
        B = arb("1.128994")
        # gelu_new / gelu_pytorch_tanh: k = sqrt(2/pi); HF gelu_fast: k = 0.7978845608 (a decimal)
        assert _tanh_gelu_bound_certified((arb(2) / arb.pi()).sqrt(), a, B)
        assert _tanh_gelu_bound_certified(arb("0.7978845608"), a, B)
        # and the bound is tight enough to be meaningful (1.128993 fails, as the proof says)
        assert not _tanh_gelu_bound_certified((arb(2) / arb.pi()).sqrt(), a, arb("1.128993"))
    finally:
        ctx.prec = old
    for name in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast", "gelu_tanh"):
        lip, zero, growth = activation_constants(name)
        # a ball containing 1.128994 (its upper end bounds sup|ψ_t'|)
        lo, hi = lower_fraction(lip), upper_fraction(lip)
        assert lo <= Fraction(1128994, 10**6) <= hi and zero == 0 and growth == 1


def test_bound_refuses_a_model_whose_activation_is_unstated():
    """(A3) for an unknown activation: before, a config without hidden_act became the exact GELU."""
    from certbound.pipeline._bound import _activation

    with pytest.raises(ValueError, match="give `act_lip`, a proven upper bound") as exc:
        _activation({"model_type": "bert"}, None)
    assert "--" not in str(exc.value)
    act, lip = _activation({"model_type": "bert"}, "1.128994")
    assert lip == Fraction(1128994, 10**6)
    assert _activation({"hidden_act": "gelu"}, None) == ("gelu", None)
    assert _activation({"activation_function": "gelu_new"}, None) == ("gelu_new", None)


def test_theorem1_checks_the_readout_norm_when_given():
    """The readout's certified norm must be ≤ C_w; without it the assumptions say so."""
    from certbound.bounds import MatrixConstraint, TransformerSpec, theorem1_fixed_bound
    from certbound.bounds._theorems import BoundOptions
    from certbound.enclose import enclose_singular_values

    spec = TransformerSpec(1, 1, 2, 2, ffn_kind="single", activation="relu", readout_learned=False)
    kappa = {(0, 0, "QK"): MatrixConstraint(2, 1, 1), (0, 0, "VO"): MatrixConstraint(2, 1, 1),
             (0, None, "M"): MatrixConstraint(2, 1, 1)}
    opts = BoundOptions(cutoff=Fraction(1, 8), partition_ratio=2.0)
    res = theorem1_fixed_bound(spec, kappa, 1000, "0.1", options=opts)
    assert "readout norm ‖w‖ ≤ C_w NOT checked" in res.assumptions["configuration"]
    w_ok = enclose_singular_values(np.array([[0.75], [0.5]]))     # ‖w‖² = 13/16 exactly
    res = theorem1_fixed_bound(spec, kappa, 1000, "0.1", options=opts, readout_norm=1, readout_spectrum=w_ok)
    assert "readout norm checked" in res.assumptions["configuration"]
    # The floats 0.6 and 0.8 have ‖w‖² = 1 + 4.4e-17 > 1 exactly: the check must refuse it.
    w_big = enclose_singular_values(np.array([[0.6], [0.8]]))
    with pytest.raises(ValueError, match="readout"):
        theorem1_fixed_bound(spec, kappa, 1000, "0.1", options=opts, readout_norm=1, readout_spectrum=w_big)
