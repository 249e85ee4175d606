"""Issue 12 items 6 (``--seq-len 0``), 14, 15, 16 and 17 (attention masks) on the bound orchestration."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from certbound.cli import main
from certbound.models import demo_checkpoint_path
from certbound.pipeline import BoundSettings, certified_bound
from tests.bounds.test_cli_bound import _tiny_bert

DEMO = str(demo_checkpoint_path())
DEMO_T = json.loads((demo_checkpoint_path() / "config.json").read_text())["seq_len"]


# -- item 6: --seq-len 0 is not "not given" ----------------------------------------------------------------


def test_seq_len_zero_is_refused(tmp_path, capsys):
    model = _tiny_bert(str(tmp_path))
    assert main(["bound", model, "--n", "1e9", "--delta", "0.1", "--seq-len", "0"]) == 2
    assert "--seq-len must be ≥ 1" in capsys.readouterr().err
    with pytest.raises(ValueError, match="^`seq_len` must be ≥ 1$"):  # the library names its parameter
        BoundSettings(seq_len=0)


# -- item 14: certbound-pi --seq-len below the config's T --------------------------------------------------


def test_pi_seq_len_below_config_is_refused(capsys):
    assert main(["bound", DEMO, "--n", "1000", "--delta", "0.1", "--seq-len", str(DEMO_T - 1)]) == 2
    assert "seq_len" in capsys.readouterr().err
    with pytest.raises(ValueError, match="below the certbound-pi config"):
        certified_bound(DEMO, 1000, "0.1", BoundSettings(seq_len=1))


def test_pi_seq_len_at_or_above_config_is_accepted():
    at, _, _, _ = certified_bound(DEMO, 10**6, "0.1", BoundSettings(seq_len=DEMO_T))
    above, _, _, _ = certified_bound(DEMO, 10**6, "0.1", BoundSettings(seq_len=4 * DEMO_T))
    assert at.assumptions["fixed_before_data"]["seq_len"] == DEMO_T
    assert above.assumptions["fixed_before_data"]["seq_len"] == 4 * DEMO_T
    # a longer T is a larger class: the certified bound cannot be smaller
    assert Fraction(above.to_json()["bound"]["upper"]) >= Fraction(at.to_json()["bound"]["lower"])


# -- item 15: --spectra binds the σ and rank records --------------------------------------------------------


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory):
    path = tmp_path_factory.mktemp("rep") / "spectrum.json"
    assert main(["spectrum", DEMO, "--json", str(path)]) == 0
    return path


def _edited(src, tmp_path, edit):
    rep = json.loads(src.read_text())
    edit(rep)
    out = tmp_path / "edited.json"
    out.write_text(json.dumps(rep))
    return out


def _lower_sigma(rep):
    rec = next(r for r in rep["matrices"] if r["type"] in ("M", "M_in", "M_out") and r.get("sigma"))
    q = rec["sigma"][0]
    assert q["exact"]["upper"] != "1*2^-30"
    q["exact"]["upper"] = q["exact"]["lower"] = "1*2^-30"  # a much smaller σ₁ (uncertified)
    q["upper"] = q["lower"] = "9.3e-10"


def _lower_rank(rep):
    rec = next(r for r in rep["matrices"] if r["rank"]["upper"] >= 1)
    rec["rank"]["upper"] -= 1  # a smaller rank bound (uncertified)
    rec["rank"]["lower"] = min(rec["rank"]["lower"], rec["rank"]["upper"])


@pytest.mark.parametrize("edit", [_lower_sigma, _lower_rank], ids=["sigma", "rank"])
def test_edited_report_records_are_refused(demo_report, tmp_path, capsys, edit):
    edited = _edited(demo_report, tmp_path, edit)
    capsys.readouterr()
    assert main(["bound", DEMO, "--n", "1000", "--delta", "0.1", "--spectra", str(edited)]) == 2
    assert "records digest" in capsys.readouterr().err


def test_report_without_records_digest_is_refused(demo_report, tmp_path, capsys):
    edited = _edited(demo_report, tmp_path, lambda rep: rep.pop("records_sha256"))
    capsys.readouterr()
    assert main(["bound", DEMO, "--n", "1000", "--delta", "0.1", "--spectra", str(edited)]) == 2
    assert "no records digest" in capsys.readouterr().err


def test_spectra_source_is_stated(demo_report, tmp_path):
    out = tmp_path / "b.json"
    assert main(["bound", DEMO, "--n", "1000", "--delta", "0.1", "--spectra", str(demo_report),
                 "--json", str(out)]) == 0
    a = json.loads(out.read_text())["assumptions"]
    assert "spectrum report" in a["spectra_source"] and str(demo_report) in a["spectra_source"]
    out2 = tmp_path / "b2.json"
    assert main(["bound", DEMO, "--n", "1000", "--delta", "0.1", "--json", str(out2)]) == 0
    assert "this run" in json.loads(out2.read_text())["assumptions"]["spectra_source"]


# -- item 16: the a-priori parameters are said in --help, the README and the assumptions -------------------

A_PRIORI_FLAGS = ["--seq-len", "--loss-bound", "--loss-lipschitz", "--readout-norm", "--p-grid-m", "--constraints"]


def test_help_says_what_is_a_priori(capsys):
    assert main(["bound", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "Fixed before seeing the data" in text and "invalidates delta" in text
    for flag in A_PRIORI_FLAGS:
        i = text.index(flag + " ", text.index("options:"))  # the option's own help line, not the usage
        assert "a priori" in text[i:i + 260], flag


def test_readme_says_what_is_a_priori():
    from pathlib import Path

    readme = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text().split())
    i = readme.index("Fixed before seeing the data")
    block = readme[i:i + 1200]
    for flag in A_PRIORI_FLAGS + ["ramp loss", "invalidates δ"]:
        assert flag in block, flag


def test_assumptions_list_the_a_priori_values(tmp_path):
    model = _tiny_bert(str(tmp_path))
    res, _, _, _ = certified_bound(model, 10**9, "0.1", BoundSettings(seq_len=7, loss_bound="1/2",
                                                                     readout_norm=3, p_grid_m=5))
    a = res.assumptions
    f = a["fixed_before_data"]
    assert f["seq_len"] == 7 and Fraction(f["loss_bound"]) == Fraction(1, 2) and Fraction(f["readout_norm"]) == 3 and f["p_grid_m"] == 5
    assert "invalidates delta" in a["choosing_among_runs"]


# -- item 17: the Π-surrogate's drop list names attention masks --------------------------------------------


def test_surrogate_says_attention_masks_are_dropped(tmp_path):
    model = _tiny_bert(str(tmp_path))
    res, _, _, _ = certified_bound(model, 10**9, "0.1")
    net = res.assumptions["network"]
    assert "attention masks" in net and "causal" in net and "padding" in net


# -- item 6: stored matrices the bounded network does not contain are named ---------------------------------


def _with_extra_tensors(d):
    import os

    import numpy as np
    from safetensors.numpy import load_file, save_file

    path = os.path.join(d, "model.safetensors")
    w = load_file(path)
    w["encoder.layer.0.adapter.down.weight"] = np.ones((4, 8), dtype=np.float32)  # inside a layer: not bounded
    w["pooler.dense.weight"] = np.eye(8, dtype=np.float32)  # outside the layers: dropped by design
    w["encoder.layer.0.attention.self.query.bias"] = np.zeros(8, dtype=np.float32)  # a vector: not listed
    save_file(w, path)
    return d


def test_unused_matrices_inside_layers_are_warned_and_stated(tmp_path):
    model = _with_extra_tensors(_tiny_bert(str(tmp_path)))
    with pytest.warns(UserWarning, match="encoder.layer.0.adapter.down.weight"):
        res, _, _, _ = certified_bound(model, 10**9, "0.1")
    unused = res.assumptions["weights_not_in_the_network"]
    assert unused["inside_layers"] == ["encoder.layer.0.adapter.down.weight"]
    assert unused["outside_layers"] == ["pooler.dense.weight"]


def test_a_plain_checkpoint_has_no_unused_matrices(tmp_path):
    import warnings

    model = _tiny_bert(str(tmp_path))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        res, _, _, _ = certified_bound(model, 10**9, "0.1")
    assert res.assumptions["weights_not_in_the_network"]["inside_layers"] == []


def test_constraints_without_mode_fixed_are_refused(tmp_path, capsys):
    # --constraints asks for Theorem 1; without --mode fixed it was silently ignored (Theorem 2 computed)
    example = str(Path(__file__).resolve().parents[2] / "examples" / "bound" / "demo_constraints.json")
    with pytest.raises(ValueError, match="`constraints` is only used when `mode` is 'fixed'"):
        BoundSettings(constraints=example)
    assert main(["bound", str(demo_checkpoint_path()), "--n", "1e6", "--delta", "0.01",
                 "--constraints", example]) == 2
    assert "--constraints is only used when --mode is 'fixed'" in capsys.readouterr().err
