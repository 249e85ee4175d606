"""One set of certificate modes and one default (``auto``) for every command and pipeline function.

The numbers printed in ``auto`` are checked against ``fast`` (an independent certificate of the same
quantities: every pair of balls must intersect, and the digits the commands print must agree on these
models) and, for the demo model's matrices, against an mpmath SVD at 200 bits.
"""

from __future__ import annotations

import inspect
import json
from fractions import Fraction

import mpmath
import numpy as np
import pytest

import certbound
from certbound.ball import decimal_upper, lower_fraction, upper_fraction
from certbound.bounds import ramp_loss_constants, theorem2_posthoc_bound
from certbound.bounds.proxies import VARIANTS, paper_proxies, random_init_quantities
from certbound.cli import build_parser, main
from certbound.enclose import MODES
from certbound.models import demo_checkpoint_path
from certbound.models.checkpoint import load_pi_checkpoint
from certbound.pipeline import DEFAULT_SPECTRUM_MODE, SPECTRUM_MODES, BoundSettings, Model, covering_report
from certbound.pipeline import _bound, _demo, _proxies, _spectrum, _sweep

DEMO = str(demo_checkpoint_path())


def overlap(a, b) -> bool:
    """Do two balls share a point (two certificates of one number must)?"""
    return lower_fraction(a) <= upper_fraction(b) and lower_fraction(b) <= upper_fraction(a)


def test_one_definition_the_kernels():
    assert SPECTRUM_MODES is MODES and DEFAULT_SPECTRUM_MODE == "auto" in MODES


#: (command, option dest) of every command that certifies a spectrum.
COMMAND_OPTIONS = [("spectrum", "mode"), ("bound", "spectrum_mode"), ("proxies", "mode"), ("sweep", "mode"),
                   ("demo", "mode"), ("demo-figure", "mode"), ("covering", "spectrum_mode")]


@pytest.mark.parametrize("command, dest", COMMAND_OPTIONS)
def test_every_command_has_the_same_modes_and_default(command, dest):
    sub = next(a for a in build_parser()._actions if a.dest == "command").choices[command]
    action = next(a for a in sub._actions if a.dest == dest)
    assert tuple(action.choices) == MODES and action.default == "auto"
    assert "every mode is certified" in action.help


@pytest.mark.parametrize("func", [
    Model.spectra, Model.proxies, _proxies.model_quantities, _proxies.model_quantities_of, _sweep.run_sweep,
    covering_report, _demo.run_demo, _demo.enclose_model_spectra, _demo.demo_point, _demo.counterfactual_curve,
    _bound.model_spectra, _bound.model_spectra_of, _spectrum.spectrum_run, _spectrum.spectrum_report,
], ids=lambda f: f.__qualname__)
def test_every_pipeline_function_defaults_to_auto_and_documents_the_modes(func):
    assert inspect.signature(func).parameters["mode"].default == "auto"
    doc = inspect.getdoc(func) or ""
    for line in doc.splitlines():  # a numpydoc line for the mode lists the whole set
        if line.startswith("mode :"):
            assert line == 'mode : {"fast", "tight", "arb", "gram", "auto"}', line
    assert BoundSettings().spectrum_mode == "auto"


@pytest.mark.parametrize("call", [
    lambda: Model.proxies(None, mode="exact"),  # checked before the model is touched
    lambda: _proxies.model_quantities("no/such/model", mode="exact"),
    lambda: _sweep.run_sweep(["no/such/model"], mode="exact"),
    lambda: covering_report(np.eye(2), eps=1, rows=1, mode="exact"),
    lambda: _demo.run_demo("no/such/model", mode="exact"),
    lambda: BoundSettings(spectrum_mode="exact"),
    lambda: _spectrum.spectrum_run("no/such/model", mode="exact"),
    lambda: _bound.model_spectra("no/such/model", mode="exact"),
])
def test_an_unknown_mode_is_refused_first_naming_the_modes(call):
    with pytest.raises(ValueError, match="unknown certificate mode 'exact'; choose one of fast, tight, arb, gram, "
                                         "auto"):
        call()


def test_an_unknown_mode_on_the_command_line_is_an_argparse_error(capsys):
    assert main(["proxies", DEMO, "--mode", "exact"]) == 2
    assert "invalid choice: 'exact'" in capsys.readouterr().err


# ------------------------------------------------------------------------------------ demo


def _sv_mpmath(A: np.ndarray, B: np.ndarray | None = None) -> list:
    """Singular values of A (or of the exact product A Bᵀ, formed in mpmath) at 200 bits."""
    with mpmath.workprec(200):
        W = mpmath.matrix(np.asarray(A, dtype=np.float64).tolist())
        if B is not None:
            W = W * mpmath.matrix(np.asarray(B, dtype=np.float64).tolist()).T
        return [mpmath.mpf(s) for s in mpmath.svd_r(W, compute_uv=False)]


def test_demo_auto_encloses_the_true_singular_values_and_prints_fast_s_numbers():
    net, meta = load_pi_checkpoint(demo_checkpoint_path())
    fast, ro_fast = _demo.enclose_model_spectra(net, "fast")
    auto, ro_auto = _demo.enclose_model_spectra(net, "auto")
    assert {e.mode for e in auto.values()} | {ro_auto.mode} <= {"gram", "product", "fast+gram", "fast"}
    mats = {(m.layer, m.head, m.kind): m for m in net.theory_matrices()}
    for key, enc in [*auto.items(), ("readout", ro_auto)]:
        m = mats[key] if key != "readout" else next(x for x in mats.values() if x.kind == "readout")
        ref = sorted(_sv_mpmath(m.dense) if m.dense is not None else _sv_mpmath(m.left, m.right), reverse=True)
        for i, s in enumerate(ref[:len(enc.sigma)]):
            # an mpf is a dyadic: exact as a Fraction
            man, exp = s.man_exp if s != 0 else (0, 0)
            q = Fraction(int(man)) * Fraction(2) ** int(exp)
            assert lower_fraction(enc.sigma[i]) <= q + Fraction(1, 10**40) and q - Fraction(1, 10**40) <= \
                upper_fraction(enc.sigma[i]), (key, i)
        other = fast[key] if key != "readout" else ro_fast
        assert all(overlap(a, b) for a, b in zip(enc.sigma, other.sigma)), key
    # what `certbound demo` prints from the spectra: the Theorem 2 bound and the ramp-loss gap (5 digits)
    n, delta = int(meta["data"]["n_train"]), _demo.DEFAULT_DELTA
    b_fast = _demo.pi_model_bound(net, fast, ro_fast, n, delta)
    b_auto = _demo.pi_model_bound(net, auto, ro_auto, n, delta)
    for field in ("bound", "rademacher", "confidence_term", "log_inv_prior"):
        assert decimal_upper(getattr(b_auto, field), 5) == decimal_upper(getattr(b_fast, field), 5), field
        assert overlap(getattr(b_auto, field), getattr(b_fast, field))
    bl, ll = ramp_loss_constants(_demo.ramp_margin_of(meta))
    spec = _demo.transformer_spec_of(net)
    ramps = [theorem2_posthoc_bound(spec, s, n, delta, readout_norm=net.config.readout_norm, readout_spectrum=r,
                                    loss_bound=bl, loss_lipschitz=ll).bound for s, r in ((fast, ro_fast), (auto, ro_auto))]
    assert decimal_upper(ramps[0], 5) == decimal_upper(ramps[1], 5)
    # the counterfactual n*: the same certified crossing
    nv = [_demo.nonvacuous_sample_size(lambda k, s=s, r=r: _demo.pi_model_bound(net, s, r, k, delta),
                                       b_fast.loss_bound, n) for s, r in ((fast, ro_fast), (auto, ro_auto))]
    assert (nv[0].n_certified, nv[0].n_below, nv[0].evaluations) == (nv[1].n_certified, nv[1].n_below,
                                                                      nv[1].evaluations)


def test_demo_json_records_the_mode_and_each_certificate(tmp_path, capsys, monkeypatch):
    # the measurement (a pass over 10^6 samples) does not depend on the mode: skip it here
    monkeypatch.setattr(_demo, "measure_gap", lambda *a, **k: None)
    out = tmp_path / "d.json"
    assert main(["demo", "--no-search", "--mode", "gram", "--json", str(out)]) == 0
    capsys.readouterr()
    d = json.loads(out.read_text())
    assert d["spectrum_mode"] == "gram"
    assert d["spectrum_certificates"] == {"L0 H0 QK": "product", "L0 H0 VO": "product", "L0 M_in": "gram",
                                 "L0 M_out": "gram", "readout": "gram"}


# ------------------------------------------------------------------------------------ proxies, sweep


def test_proxies_auto_overlap_fast_and_print_the_same_digits():
    model = certbound.open_model(DEMO)
    reps = {m: model.proxies(mode=m) for m in ("fast", "auto")}
    assert reps["auto"].info["spectrum_mode"] == "auto" and reps["fast"].info["spectrum_mode"] == "fast"
    for v in VARIANTS:
        a, f = reps["auto"][v], reps["fast"][v]
        for name in ("B_ours", "B_edelman"):
            assert overlap(getattr(a, name), getattr(f, name))
            assert decimal_upper(getattr(a, name), 6) == decimal_upper(getattr(f, name), 6)


def test_random_init_control_auto_overlaps_fast():
    qs = {m: random_init_quantities(1, 64, num_heads=2, d_ff=256, seed=3, mode=m) for m in ("fast", "auto")}
    for qa, qf in zip(qs["auto"], qs["fast"]):
        assert overlap(qa.spectral, qf.spectral) and qa.rank == qf.rank
        assert np.all(qa.sigma_lower <= qf.sigma_upper) and np.all(qf.sigma_lower <= qa.sigma_upper)
    for v in VARIANTS:
        a, f = paper_proxies(qs["auto"], v), paper_proxies(qs["fast"], v)
        assert overlap(a.B_ours, f.B_ours) and overlap(a.B_edelman, f.B_edelman)
        assert decimal_upper(a.B_edelman, 6) == decimal_upper(f.B_edelman, 6)


# ------------------------------------------------------------------------------------ covering


def test_covering_auto_overlaps_fast_and_records_the_certificate():
    W = np.random.default_rng(5).standard_normal((40, 30))
    reps = {m: covering_report(W, eps="0.01", rows=1000, ps=[0, Fraction(1, 2), 1, 2], mode=m)
            for m in ("fast", "auto")}
    assert reps["auto"]["spectrum_mode"] == "auto" and reps["auto"]["certificate"] in ("gram", "fast+gram")
    assert reps["fast"]["certificate"] == "fast"
    for ra, rf in zip(reps["auto"]["results"], reps["fast"]["results"]):
        assert ra["p"] == rf["p"]
        ua, uf = (Fraction(r["log_covering_number"]["upper"]) for r in (ra, rf))
        assert abs(ua - uf) <= Fraction(1, 10**7) * uf  # the same certified upper bound to 1e-7
    assert reps["auto"]["_cells"] == reps["fast"]["_cells"]  # the printed table


def test_the_audit_escalation_ladder_is_its_own_set(capsys):
    from certbound.audit import audit_file
    from certbound.audit._verdict import ESCALATION_MODES, precision_schedule

    assert ESCALATION_MODES == ("fast", "tight", "arb") and set(ESCALATION_MODES) < set(MODES)
    for bad in ("gram", "auto"):  # cheaper than fast, not narrower: no rung of the ladder
        with pytest.raises(ValueError, match="--max-mode must be one of fast, tight, arb"):
            audit_file('[[claim]]\nid = "e"\nquantity = "exp(1)"\nrelation = ">"\nvalue = "2"\n', max_mode=bad)
        with pytest.raises(ValueError, match="escalation ladder"):
            precision_schedule(256, bad)
    assert main(["audit", "x.toml", "--max-mode", "gram"]) == 2
    assert "invalid choice: 'gram'" in capsys.readouterr().err
