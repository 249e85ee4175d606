"""One set of certificate modes and one default (``auto``) for every command and pipeline function.

The numbers printed in ``auto`` are checked against ``fast`` (an independent certificate of the same
quantities: every pair of balls must intersect, and the digits the commands print must agree on these
models) and, for the demo model's matrices, against an mpmath SVD at 200 bits.
"""

from __future__ import annotations

import inspect
import json
import re
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


#: Every command that certifies a spectrum; those with ``--mode`` as its deprecated spelling (before session 4).
COMMANDS = ["spectrum", "bound", "proxies", "sweep", "demo", "demo-figure", "covering"]
OLD_MODE_FLAG = {"spectrum", "proxies", "sweep", "demo", "demo-figure"}


def _subparser(command):
    return next(a for a in build_parser()._actions if a.dest == "command").choices[command]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_the_same_modes_and_default(command):
    sub = _subparser(command)
    visible = [a for a in sub._actions if a.dest == "spectrum_mode" and a.help != "==SUPPRESS=="]
    assert [a.option_strings for a in visible] == [["--spectrum-mode"]]  # one name in every command
    action = visible[0]
    assert tuple(action.choices) == MODES and action.default == "auto"
    assert "every mode is certified" in action.help
    assert "--spectrum-mode" in sub.format_help()
    mode_flag = [a for a in sub._actions if "--mode" in a.option_strings]
    if command == "bound":  # bound's --mode is the theorem's (posthoc/fixed), documented
        assert mode_flag[0].dest == "mode" and tuple(mode_flag[0].choices) == ("posthoc", "fixed")
    elif command in OLD_MODE_FLAG:  # the old spelling: hidden, same dest and choices
        assert mode_flag[0].dest == "spectrum_mode" and tuple(mode_flag[0].choices) == MODES
        assert mode_flag[0].help == "==SUPPRESS==" and not re.search(r"--mode\b", sub.format_help())
    else:
        assert mode_flag == []


@pytest.mark.parametrize("command", sorted(OLD_MODE_FLAG))
def test_the_old_mode_flag_still_works_and_warns(command, capsys):
    sub = _subparser(command)
    base = {"spectrum": [DEMO], "proxies": [DEMO], "sweep": ["--out", "x"], "demo": [], "demo-figure": []}[command]
    assert sub.parse_args(base + ["--mode", "tight"]).spectrum_mode == "tight"
    assert "--mode is deprecated, use --spectrum-mode" in capsys.readouterr().err
    assert sub.parse_args(base + ["--spectrum-mode", "tight"]).spectrum_mode == "tight"
    assert capsys.readouterr().err == ""


def test_the_old_mode_flag_runs_the_command(tmp_path, capsys):
    out = tmp_path / "p.json"
    assert main(["proxies", DEMO, "--mode", "fast", "--json", str(out)]) == 0
    assert "certbound proxies: warning: --mode is deprecated, use --spectrum-mode" in capsys.readouterr().err
    assert '"spectrum_mode": "fast"' in out.read_text()


#: Pipeline functions taking the mode as ``spectrum_mode`` (with ``mode=`` deprecated where marked True).
SPECTRUM_MODE_FUNCTIONS = [
    (Model.spectra, True), (Model.proxies, True), (_proxies.model_quantities, True),
    (_proxies.model_quantities_of, False), (_sweep.run_sweep, True), (covering_report, True), (_demo.run_demo, True),
    (_demo.enclose_model_spectra, False), (_demo.demo_point, False), (_demo.counterfactual_curve, False),
    (_bound.model_spectra, True), (_bound.model_spectra_of, False),
    (_spectrum.spectrum_run, True), (_spectrum.spectrum_run_of, True), (_spectrum.spectrum_report, True),
    (_spectrum.spectrum_report_of, True),
]


@pytest.mark.parametrize("func, old_alias", SPECTRUM_MODE_FUNCTIONS, ids=lambda f: getattr(f, "__qualname__", ""))
def test_every_pipeline_function_defaults_to_auto_and_documents_the_modes(func, old_alias):
    params = inspect.signature(func).parameters
    assert params["spectrum_mode"].default == "auto"
    assert ("mode" in params) == old_alias and (not old_alias or params["mode"].default is None)
    doc = inspect.getdoc(func) or ""
    lines = doc.splitlines()
    assert 'spectrum_mode : {"fast", "tight", "arb", "gram", "auto"}' in lines  # the whole set, documented
    if old_alias:
        assert "Deprecated name of ``spectrum_mode`` (warns)." in doc
    assert BoundSettings().spectrum_mode == "auto"


@pytest.mark.parametrize("call", [
    lambda **kw: Model.proxies(None, **kw),  # checked before the model is touched
    lambda **kw: _proxies.model_quantities("no/such/model", **kw),
    lambda **kw: _sweep.run_sweep(["no/such/model"], **kw),
    lambda **kw: covering_report(np.eye(2), eps=1, rows=1, **kw),
    lambda **kw: _demo.run_demo("no/such/model", **kw),
    lambda **kw: _bound.model_spectra("no/such/model", **kw),
    lambda **kw: _spectrum.spectrum_run("no/such/model", **kw),
    lambda **kw: _spectrum.spectrum_report("no/such/model", **kw),
])
def test_the_old_mode_keyword_warns_and_conflicts_are_refused(call):
    with pytest.warns(DeprecationWarning, match="mode= is deprecated: use spectrum_mode="):
        with pytest.raises(ValueError, match="`spectrum_mode`: unknown certificate mode 'exact'"):
            call(mode="exact")  # the alias is used (and checked) like spectrum_mode
    with pytest.raises(ValueError, match="`mode` is the deprecated name of `spectrum_mode`: give one of them"):
        call(mode="fast", spectrum_mode="tight")


def test_the_old_mode_keyword_gives_the_same_result(monkeypatch):
    monkeypatch.setattr(_demo, "measure_gap", lambda *a, **k: None)  # a pass over 10^6 samples, mode-independent
    model = certbound.open_model(DEMO)
    with pytest.warns(DeprecationWarning):
        old = model.spectra(mode="fast")
    new = model.spectra(spectrum_mode="fast")
    assert old.to_json()["matrices"] == new.to_json()["matrices"]
    assert model.spectra("fast").to_json()["matrices"] == new.to_json()["matrices"]  # positional, as before
    res = _demo.run_demo(spectrum_mode="fast", search_nonvacuous=False)
    with pytest.warns(DeprecationWarning, match="DemoResult.mode is deprecated"):
        assert res.mode == res.spectrum_mode == "fast"


@pytest.mark.parametrize("call", [
    lambda: Model.proxies(None, spectrum_mode="exact"),  # checked before the model is touched
    lambda: _proxies.model_quantities("no/such/model", spectrum_mode="exact"),
    lambda: _sweep.run_sweep(["no/such/model"], spectrum_mode="exact"),
    lambda: covering_report(np.eye(2), eps=1, rows=1, spectrum_mode="exact"),
    lambda: _demo.run_demo("no/such/model", spectrum_mode="exact"),
    lambda: BoundSettings(spectrum_mode="exact"),
    lambda: _spectrum.spectrum_run("no/such/model", spectrum_mode="exact"),
    lambda: _bound.model_spectra("no/such/model", spectrum_mode="exact"),
])
def test_an_unknown_mode_is_refused_first_naming_the_modes(call):
    with pytest.raises(ValueError, match="unknown certificate mode 'exact'; choose one of fast, tight, arb, gram, "
                                         "auto"):
        call()


def test_an_unknown_mode_on_the_command_line_is_an_argparse_error(capsys):
    assert main(["proxies", DEMO, "--spectrum-mode", "exact"]) == 2
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
    assert main(["demo", "--no-search", "--spectrum-mode", "gram", "--json", str(out)]) == 0
    capsys.readouterr()
    d = json.loads(out.read_text())
    assert d["spectrum_mode"] == "gram"
    assert d["spectrum_certificates"] == {"L0 H0 QK": "product", "L0 H0 VO": "product", "L0 M_in": "gram",
                                 "L0 M_out": "gram", "readout": "gram"}


# ------------------------------------------------------------------------------------ proxies, sweep


def test_proxies_auto_overlap_fast_and_print_the_same_digits():
    model = certbound.open_model(DEMO)
    reps = {m: model.proxies(spectrum_mode=m) for m in ("fast", "auto")}
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
    reps = {m: covering_report(W, eps="0.01", rows=1000, ps=[0, Fraction(1, 2), 1, 2], spectrum_mode=m)
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
        with pytest.raises(ValueError, match="`max_mode` must be one of fast, tight, arb"):
            audit_file('[[claim]]\nid = "e"\nquantity = "exp(1)"\nrelation = ">"\nvalue = "2"\n', max_mode=bad)
        with pytest.raises(ValueError, match="escalation ladder"):
            precision_schedule(256, bad)
    assert main(["audit", "x.toml", "--max-mode", "gram"]) == 2
    assert "invalid choice: 'gram'" in capsys.readouterr().err


def test_the_audit_help_states_the_ladder_and_why_gram_auto_are_no_rung():
    from certbound.enclose import enclose_singular_values

    help_text = " ".join(_subparser("audit").format_help().split())
    assert "escalation ladder fast -> tight -> arb (more cost for narrower balls)" in help_text
    assert "gram and auto are no rung: they buy speed, not width" in help_text
    # what the help claims, on a matrix with σ from 1 down to 1e-4: gram is far wider than fast at the small σ
    # (its widths grow like (σ₁/σᵢ)²), tight is narrower
    rng = np.random.default_rng(0)
    U = np.linalg.qr(rng.standard_normal((120, 60)))[0]
    V = np.linalg.qr(rng.standard_normal((200, 60)))[0]
    W = (U * np.logspace(0, -4, 60)) @ V.T
    width = {m: (lambda e: (e.upper - e.lower)[-1])(enclose_singular_values(W, mode=m))
             for m in ("fast", "tight", "gram")}
    assert width["gram"] > 100 * width["fast"] and width["fast"] > width["tight"]
