"""The demo pipeline: certified bound ≥ measured gap; the non-vacuity search; a bound that is really certified."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from flint import arb

from certbound.ball import upper_fraction
from certbound.models import PiTransformer, PiTransformerConfig, SparseMajorityTask, save_pi_checkpoint
from certbound.models.demo import measure_gap
from certbound.pipeline._demo import enclose_model_spectra, nonvacuous_sample_size, run_demo, transformer_spec_of

pytest.importorskip("certbound.bounds")


@pytest.fixture(scope="module")
def shipped():
    return run_demo(search_nonvacuous=True)


def test_certified_bound_is_at_least_the_measured_gap(shipped):
    b, m = shipped.bound, shipped.measured
    assert m is not None and m.n_train == shipped.n
    up = upper_fraction(b.bound)
    assert up is not None and up >= Fraction(m.gap)
    # Stronger: the bound also covers the gap to the test-loss estimate's 4-sigma upper end.
    assert up >= Fraction(m.gap + 4 * m.test_loss_stderr)
    # The shipped model learned the task (so the gap is a real measurement, not noise on chance level).
    assert m.test_error < 0.2


def test_nonvacuous_point_is_certified(shipped):
    nv = shipped.nonvacuity
    assert nv is not None and nv.n_certified is not None
    assert bool(nv.bound < arb(nv.loss_bound))
    assert nv.result.n_samples == nv.n_certified
    if nv.n_below is not None:
        assert nv.n_below < nv.n_certified <= 1.06 * nv.n_below + 1


def test_spectra_enclose_float_svd(shipped):
    """Every float singular value of every theory matrix lies in its certified ball (up to float error)."""
    for m in shipped.net.theory_matrices():
        if m.kind == "readout":
            continue
        enc = shipped.spectra[(m.layer, m.head, m.kind)]
        s = np.linalg.svd(m.matrix(), compute_uv=False)
        tol = 1e-12 * max(1.0, s[0])
        assert np.all(enc.lower[: len(s)] <= s + tol) and np.all(s <= enc.upper[: len(s)] + tol)


def test_nonvacuous_search_cases():
    f = lambda n: arb(100) / arb(n).sqrt()  # noqa: E731  (< 1 iff n > 10^4)
    up = nonvacuous_sample_size(f, arb(1), 10)
    assert up.n_below is not None and up.n_below <= 10**4 < up.n_certified <= 1.05 * 10**4 + 1
    down = nonvacuous_sample_size(f, arb(1), 10**9)  # already non-vacuous: search downwards
    assert down.n_below <= 10**4 < down.n_certified <= 1.05 * 10**4 + 1
    never = nonvacuous_sample_size(lambda n: arb(2), arb(1), 10, n_max=10**6)
    assert never.n_certified is None and never.n_below == 10**6
    always = nonvacuous_sample_size(lambda n: arb(0), arb(1), 100)
    assert always.n_certified == 1 and always.n_below is None


def test_tiny_model_bound_vs_gap_variant_b_residual(tmp_path):
    """Any certbound-pi checkpoint with a task works (variant B, residual); bound ≥ measured gap."""
    task = SparseMajorityTask(seq_len=5, n_relevant=3, label_noise=0.1, seed=3)
    cfg = PiTransformerConfig(d_model=task.d_model, n_layers=1, n_heads=1, d_head=2, seq_len=task.seq_len,
                              ffn_kind="two", d_ff=4, residual=True, readout_norm=2.0)
    net = PiTransformer.random(cfg, seed=1)
    save_pi_checkpoint(net, tmp_path / "m", extra={"task": task.to_json_dict(),
                                                   "data": {"n_train": 200, "n_test": 400}})
    res = run_demo(tmp_path / "m", search_nonvacuous=False)
    assert res.n == 200 and res.nonvacuity is None
    assert upper_fraction(res.bound.bound) >= Fraction(res.measured.gap)
    spec = transformer_spec_of(res.net)
    assert spec.n_matrices() == cfg.n_matrices and spec.residual and spec.ffn_kind == "two"
    # and without a task description the measurement is skipped but the bound is computed (n given)
    save_pi_checkpoint(net, tmp_path / "bare")
    with pytest.raises(ValueError, match="n_train"):
        run_demo(tmp_path / "bare", search_nonvacuous=False)
    res2 = run_demo(tmp_path / "bare", n=500, search_nonvacuous=False)
    assert res2.measured is None and res2.n == 500


def test_error_bound_components_against_direct_float_computation(tmp_path):
    """R_hat_gamma's certified upper end covers the float ramp risk (and is close to it); bound ≥ measured error."""
    task = SparseMajorityTask(seq_len=6, n_relevant=3, label_noise=0.1, seed=5)
    cfg = PiTransformerConfig(d_model=task.d_model, n_layers=1, n_heads=2, d_head=1, seq_len=task.seq_len,
                              ffn_kind="two", d_ff=2, readout_norm=2.0)
    net = PiTransformer.random(cfg, seed=3, scale=3.0)
    meta = {"task": task.to_json_dict(), "data": {"n_train": 300, "n_test": 500},
            "error_bound": {"loss": {"kind": "ramp", "margin": 0.25}}}
    save_pi_checkpoint(net, tmp_path / "m", extra=meta)
    res = run_demo(tmp_path / "m", search_nonvacuous=False)
    e = res.error
    assert e is not None and e.margin == Fraction(1, 4)
    X, y = task.sample(300, 1)
    ramp = np.clip(1.0 - y * net.forward(X) / 0.25, 0.0, 1.0).mean()
    assert float(e.empirical_ramp_upper) >= ramp - 1e-12 and float(e.empirical_ramp_upper) <= ramp + 1e-9
    assert e.ramp_bound.loss_lipschitz == 4 and e.ramp_bound.n_samples == 300
    assert upper_fraction(e.bound) >= e.empirical_ramp_upper + upper_fraction(e.ramp_bound.bound) - Fraction(1, 10**12)
    assert upper_fraction(e.bound) >= Fraction(res.measured.test_error)
    # at an n other than the training n there is no R_hat_gamma, hence no error bound
    assert run_demo(tmp_path / "m", n=1000, search_nonvacuous=False).error is None


def test_measure_gap_matches_direct_computation():
    task = SparseMajorityTask(seq_len=4, n_relevant=1, label_noise=0.0, seed=0)
    cfg = PiTransformerConfig(d_model=task.d_model, n_layers=1, n_heads=1, d_head=1, seq_len=4)
    net = PiTransformer.random(cfg, seed=2)
    g = measure_gap(net, task, 50, 60, chunk=16)  # chunks of 16: the regenerated slices must add up
    X, y = task.sample(50, 1)
    Xt, yt = task.sample(60, 2)
    # L = 1: outputs are midpoints of certified enclosures of width ~1e-12, hence the tolerance
    assert g.train_loss == pytest.approx(net.mean_loss(X, y), rel=1e-10)
    assert g.test_loss == pytest.approx(net.mean_loss(Xt, yt), rel=1e-10)
    assert g.gap == pytest.approx(abs(g.test_loss - g.train_loss), rel=1e-14)
    assert g.train_error == net.error_rate(X, y) and g.test_error == net.error_rate(Xt, yt)
    assert g.outputs_certified and np.all(g.train_margin_lower <= y * net.forward(X))
    deep = PiTransformer.random(PiTransformerConfig(d_model=task.d_model, n_layers=2, n_heads=1, d_head=1,
                                                    seq_len=4), seed=2)
    gd = measure_gap(deep, task, 50, 60, chunk=16)
    assert not gd.outputs_certified and gd.train_loss == pytest.approx(deep.mean_loss(X, y), rel=1e-12)
    spectra, ro = enclose_model_spectra(net)
    assert set(spectra) == {(0, 0, "QK"), (0, 0, "VO"), (0, None, "M")} and ro.shape == (task.d_model, 1)
