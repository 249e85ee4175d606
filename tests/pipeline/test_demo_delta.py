"""run_demo reads a float δ as the smaller of its binary and decimal values (proofs/pipeline.md §1)."""

from fractions import Fraction

import pytest

from certbound.pipeline import _demo


class _Stop(Exception):
    pass


def test_float_delta_is_certified_at_the_smaller_reading(monkeypatch):
    seen = []

    def capture(net, spectra, readout, n, delta, options):
        seen.append(delta)
        raise _Stop

    monkeypatch.setattr(_demo, "pi_model_bound", capture)
    with pytest.raises(_Stop):
        _demo.run_demo(delta=0.01, n=1000, search_nonvacuous=False)
    # binary64 0.01 is 0.01000000000000000020…: certifying at it would overstate "probability ≥ 0.99"
    assert Fraction(seen[0]) == Fraction(1, 100) and Fraction(seen[0]) < Fraction(0.01)


# --------------------------------------------------------------- the certificates together (proofs/demo-task.md §3)


def _tiny_model(directory, n_train=200):
    from certbound.models import PiTransformer, PiTransformerConfig, SparseMajorityTask, save_pi_checkpoint

    task = SparseMajorityTask(seq_len=6, n_relevant=3, label_noise=0.1, seed=0)
    cfg = PiTransformerConfig(d_model=task.d_model, n_layers=1, n_heads=1, d_head=1, seq_len=6, ffn_kind="two",
                              d_ff=2)
    save_pi_checkpoint(PiTransformer.random(cfg, seed=3), directory,
                       extra={"task": task.to_json_dict(), "data": {"n_train": n_train, "n_test": 300},
                              "error_bound": {"loss": {"kind": "ramp", "margin": 1.0}}})
    return task


def _counting_mpmath(task, n, delta):
    import mpmath

    with mpmath.workprec(200):
        size = 2 ** (task.seq_len - 1)  # |X|: the input space
        return mpmath.sqrt((size * mpmath.log(2) + mpmath.log(mpmath.mpf(delta.denominator) / delta.numerator))
                           / (2 * n))


def _in_ball(ball, x) -> bool:
    from certbound.ball import lower_fraction, upper_fraction

    man, exp = x.man_exp  # exact (re-wrapping in mpf would round to the current precision)
    q = Fraction(int(man)) * Fraction(2) ** int(exp)
    return lower_fraction(ball) <= q + Fraction(1, 10**30) and q - Fraction(1, 10**30) <= upper_fraction(ball)


def test_split_delta_evaluates_each_statement_at_delta_over_k(tmp_path):
    from certbound._commands.demo import format_report
    from certbound.bounds import ramp_loss_constants, theorem2_posthoc_bound

    task = _tiny_model(tmp_path / "m")
    delta = Fraction(1, 100)
    each = _demo.run_demo(tmp_path / "m", delta=delta, search_nonvacuous=False)
    split = _demo.run_demo(tmp_path / "m", delta=delta, search_nonvacuous=False, split_delta=True)
    assert each.statements == split.statements == ("loss_gap", "error", "input_counting")
    assert (each.certificate_delta, split.certificate_delta) == (delta, delta / 3)
    assert (each.joint_confidence, split.joint_confidence) == (Fraction(97, 100), Fraction(99, 100))
    # every statement of the split run is the theorem at δ/3 (and so weaker than at δ)
    n = split.n
    ref = _demo.pi_model_bound(split.net, split.spectra, split.readout, n, delta / 3)
    assert (ref.bound.upper(), ref.bound.lower()) == (split.bound.bound.upper(), split.bound.bound.lower())
    assert split.bound.bound.upper() > each.bound.bound.upper()
    bl, ll = ramp_loss_constants(Fraction(1))
    ramp = theorem2_posthoc_bound(_demo.transformer_spec_of(split.net), split.spectra, n, delta / 3,
                                  readout_norm=split.net.config.readout_norm, readout_spectrum=split.readout,
                                  loss_bound=bl, loss_lipschitz=ll)
    assert ramp.bound.upper() == split.error.ramp_bound.bound.upper()
    assert _in_ball(split.input_counting, _counting_mpmath(task, n, delta / 3))
    assert _in_ball(each.input_counting, _counting_mpmath(task, n, delta))
    assert "all 3 together (union bound) with probability >= 0.97" in format_report(each)
    assert "δ = 0.01 split over the 3 certified lines" in format_report(split)
    assert "all 3 hold together with probability >= 0.99" in format_report(split)


def test_the_statements_are_decided_from_the_config_and_n(tmp_path):
    from certbound._commands.demo import format_report
    from certbound.models.checkpoint import load_pi_checkpoint

    _tiny_model(tmp_path / "m")
    net, meta = load_pi_checkpoint(tmp_path / "m")
    assert _demo.certified_statements(net, meta, 200) == ("loss_gap", "error", "input_counting")
    assert _demo.certified_statements(net, meta, 1000) == ("loss_gap", "input_counting")  # R̂_γ only at n_train
    del meta["task"]
    assert _demo.certified_statements(net, meta, 200) == ("loss_gap",)
    res = _demo.run_demo(tmp_path / "m", n=1000, delta="0.05", search_nonvacuous=False, split_delta=True)
    assert res.certificate_delta == Fraction(1, 40) and res.joint_confidence == Fraction(95, 100)
    assert "δ = 0.05 split over the 2 certified lines (each at δ/2 <= 0.025)" in format_report(res)
