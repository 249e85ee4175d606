"""The library API: open_model from memory, from disk and from the local HF cache; typed results; CLI = API.

References are independent of the code under test: real ``transformers``
modules (their own parameters in float64 via torch), the CLI run on the same
weights saved by ``save_pretrained`` (a different reading path: our
safetensors reader instead of torch), exact Fractions.
"""

from __future__ import annotations

import json
import os
import re
from fractions import Fraction

import numpy as np
import pytest

import certbound
from certbound.ball import lower_fraction, upper_fraction
from certbound.cli import main

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

L, N, H, F = 2, 32, 4, 64


@pytest.fixture(scope="module")
def bert():
    cfg = transformers.BertConfig(hidden_size=N, num_hidden_layers=L, num_attention_heads=H, intermediate_size=F,
                                  vocab_size=40, max_position_embeddings=16, type_vocab_size=1)
    torch.manual_seed(0)
    return transformers.BertModel(cfg).eval()


@pytest.fixture(scope="module")
def bert_dir(bert, tmp_path_factory):
    d = tmp_path_factory.mktemp("bert")
    bert.save_pretrained(d)  # safetensors + config.json
    return d


def _exact(q):
    return q["exact"]


def test_in_memory_bert_spectra_are_a_frame_with_one_row_per_matrix(bert):
    pd = pytest.importorskip("pandas")
    m = certbound.open_model(bert)
    rep = m.spectra()
    df = rep.to_frame()
    assert isinstance(df, pd.DataFrame)
    assert len(df) == len(rep) == L * (2 * H + 2)
    assert list(df[["layer", "head", "type"]].iloc[0]) == [0, 0, "QK"]
    # the reference: the module's own parameters in float64, the head slice s_h of W_Q, W_K (row-vector form)
    att = bert.encoder.layer[1].attention.self
    s = slice(2 * (N // H), 3 * (N // H))
    wq = att.query.weight.detach().double().numpy()[s, :]
    wk = att.key.weight.detach().double().numpy()[s, :]
    sigma1 = np.linalg.svd(wq.T @ wk, compute_uv=False)[0]
    rec = rep.find(1, "QK", head=2)
    assert float(rec.spectral_norm.lower()) * (1 - 1e-12) <= sigma1 <= float(rec.spectral_norm.upper()) * (1 + 1e-12)
    row = df[(df["layer"] == 1) & (df["head"] == 2) & (df["type"] == "QK")].iloc[0]
    assert row.spectral_norm_upper >= sigma1 * (1 - 1e-12)
    assert rec.rank[1] <= N // H


def test_in_memory_gpt2():
    cfg = transformers.GPT2Config(n_embd=N, n_layer=L, n_head=H, n_positions=16, vocab_size=40, bos_token_id=0,
                                  eos_token_id=0)
    torch.manual_seed(1)
    gpt2 = transformers.GPT2LMHeadModel(cfg).eval()
    m = certbound.open_model(gpt2)
    assert m.layout.architecture == "gpt2" and m.source == "module"
    rep = m.spectra(layers=[1])
    assert len(rep) == 2 * H + 2 and {r.layer for r in rep} == {1}
    # GPT-2 stores Conv1D weights as (in, out): M_in = c_fc.weight as it is
    w = gpt2.transformer.h[1].mlp.c_fc.weight.detach().double().numpy()
    sigma1 = np.linalg.svd(w, compute_uv=False)[0]
    b = rep.find(1, "M_in").spectral_norm
    assert float(b.lower()) * (1 - 1e-12) <= sigma1 <= float(b.upper()) * (1 + 1e-12)
    res = m.bound(n=10**6, delta=0.01)
    assert res.n == 10**6 and "gpt2" in res.assumptions["network"]


def test_cli_and_api_give_identical_balls(bert, bert_dir, tmp_path):
    out = tmp_path / "spec.json"
    assert main(["spectrum", str(bert_dir), "--json", str(out), "--quiet"]) == 0
    cli = json.loads(out.read_text())
    api = certbound.open_model(bert).spectra().to_json()
    assert api["weights_sha256"] == cli["weights_sha256"]  # the same exact float64 matrices
    assert api["matrices"] == cli["matrices"]  # every ball, exactly
    # and the CSV the CLI writes is the report's to_csv()
    csv = tmp_path / "spec.csv"
    assert main(["spectrum", str(bert_dir), "--csv", str(csv), "--quiet"]) == 0
    assert csv.read_bytes() == certbound.open_model(str(bert_dir)).spectra(include_sigma=False).to_csv().encode()


def test_bound_of_the_in_memory_model_equals_the_cli_on_the_saved_weights(bert, bert_dir, tmp_path):
    out, tex = tmp_path / "b.json", tmp_path / "b.tex"
    assert main(["bound", str(bert_dir), "--n", "1e6", "--delta", "0.01", "--json", str(out), "--latex", str(tex),
                 "--quiet"]) == 0
    cli = json.loads(out.read_text())
    res = certbound.open_model(bert).bound(n=10**6, delta=0.01)
    doc = res.to_json()
    for key in ("bound", "rademacher", "dudley", "confidence_term", "log_inv_prior"):
        assert _exact(doc[key]) == _exact(cli[key]), key
    assert [(m["p"], m["schatten_level"], m["spectral_level"]) for m in doc["matrices"]] == \
        [(m["p"], m["schatten_level"], m["spectral_level"]) for m in cli["matrices"]]
    assert Fraction(cli["delta"]) >= Fraction(1, 100)
    # the same settings from disk give the same LaTeX table
    disk = certbound.open_model(str(bert_dir)).bound(n="1e6", delta="0.01")
    assert disk.to_latex() == tex.read_text()
    assert res.delta == disk.delta and res.bound.mid() == disk.bound.mid() and res.bound.rad() == disk.bound.rad()


def test_float_arguments_are_read_so_that_the_bound_holds_for_both_readings(bert):
    m = certbound.open_model(bert)
    # delta: the smaller of binary 0.01 (> 1/100) and decimal 1/100
    a, b = m.bound(n=1000, delta=0.01), m.bound(n=1000, delta=Fraction(1, 100))
    assert (lower_fraction(a.bound), upper_fraction(a.bound)) == (lower_fraction(b.bound), upper_fraction(b.bound))
    # an upper constant: the larger of binary 0.5 == 1/2 and, for 0.1, binary 0.1 (> 1/10)
    c = m.bound(n=1000, delta="0.01", loss_bound=0.1)
    d = m.bound(n=1000, delta="0.01", loss_bound=Fraction(0.1))
    assert upper_fraction(c.bound) == upper_fraction(d.bound)
    assert upper_fraction(c.theorem_result.loss_bound) >= Fraction(0.1) > Fraction(1, 10)


def test_state_dict_with_config_is_the_module(bert):
    a = certbound.open_model(bert).spectra(layers=[0]).to_json()
    b = certbound.open_model(bert.state_dict(), config=bert.config.to_dict()).spectra(layers=[0]).to_json()
    assert a["matrices"] == b["matrices"] and a["weights_sha256"] == b["weights_sha256"]
    with pytest.raises(ValueError, match="config"):
        certbound.open_model(bert.state_dict())


def test_half_precision_weights_are_widened_exactly(bert, tmp_path):
    half = transformers.BertModel(bert.config)
    half.load_state_dict(bert.state_dict())
    half = half.to(torch.bfloat16).eval()
    half.save_pretrained(tmp_path)  # BF16 safetensors: read by our own reader, not torch
    mem = certbound.open_model(half).spectra(layers=[1]).to_json()
    disk = certbound.open_model(str(tmp_path)).spectra(layers=[1]).to_json()
    assert mem["weights_sha256"] == disk["weights_sha256"] and mem["matrices"] == disk["matrices"]
    assert not os.path.exists(tmp_path / "model.safetensors.tmp")


def _hub_snapshot(home, repo, model, rev="0123456789abcdef0123456789abcdef01234567"):
    folder = home / "hub" / ("models--" + repo.replace("/", "--"))
    snap = folder / "snapshots" / rev
    model.save_pretrained(snap)
    (folder / "refs").mkdir(parents=True)
    (folder / "refs" / "main").write_text(rev)
    return snap


def test_hub_id_resolves_from_a_local_cache_without_network(bert, tmp_path, monkeypatch):
    pytest.importorskip("huggingface_hub")
    snap = _hub_snapshot(tmp_path, "org/tiny-bert", bert)
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    m = certbound.open_model("org/tiny-bert")
    assert m.source == "hub" and os.path.samefile(m.name, snap)
    assert m.spectra(layers=[0]).to_json()["matrices"] == \
        certbound.open_model(bert).spectra(layers=[0]).to_json()["matrices"]
    # HF_HUB_CACHE wins over HF_HOME
    other = tmp_path / "elsewhere"
    monkeypatch.setenv("HF_HUB_CACHE", str(other))
    with pytest.raises(FileNotFoundError) as err:
        certbound.open_model("org/tiny-bert")
    assert str(other / "models--org--tiny-bert") in str(err.value)


def test_every_command_resolves_a_cached_hub_id_as_open_model_does(bert, tmp_path, monkeypatch, capsys):
    pytest.importorskip("huggingface_hub")
    _hub_snapshot(tmp_path, "org/tiny-bert", bert)
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    out = tmp_path / "s.json"
    assert main(["spectrum", "org/tiny-bert", "--layers", "0", "--quiet", "--json", str(out)]) == 0
    via_cli = json.loads(out.read_text())["matrices"]
    assert via_cli == certbound.open_model(bert).spectra(layers=[0]).to_json()["matrices"]
    assert main(["proxies", "org/tiny-bert", "--variant", "paper"]) == 0
    assert main(["spectrum", "org/absent", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path / "hub" / "models--org--absent") in err and "never downloads" in err


def test_missing_hub_id_names_the_folders_searched(tmp_path, monkeypatch):
    pytest.importorskip("huggingface_hub")
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    with pytest.raises(FileNotFoundError) as err:
        certbound.open_model("org/absent")
    msg = str(err.value)
    assert str(tmp_path / "hub" / "models--org--absent") in msg and "never downloads" in msg
    assert main(["bound", "org/absent", "--n", "10", "--delta", "0.5"]) == 2


def test_progress_callback_sees_every_matrix(bert):
    seen = []
    certbound.open_model(bert).spectra(progress=lambda done, total, label: seen.append((done, total, label)))
    assert [d for d, _, _ in seen] == list(range(1, L * (2 * H + 2) + 1))
    assert {t for _, t, _ in seen} == {L * (2 * H + 2)} and seen[0][2] == "layer 0 head 0 QK"


def test_frames_need_pandas(bert, monkeypatch):
    import sys

    from certbound._optional import MissingDependencyError

    rep = certbound.open_model(bert).spectra(layers=[0], include_sigma=False)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(MissingDependencyError, match=r"certbound\[frame\]"):
        rep.to_frame()


def test_bad_sources_and_options_are_clear_errors(bert, tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        certbound.open_model(str(tmp_path / "a" / "b" / "c"))
    with pytest.raises(TypeError, match="cannot open a int"):
        certbound.open_model(3)
    m = certbound.open_model(bert)
    with pytest.raises(ValueError, match="no option 'seqlen'"):
        m.bound(n=10, delta=0.5, seqlen=3)
    with pytest.raises(ValueError, match="delta"):
        m.bound(n=10, delta=1.5)
    with pytest.raises(ValueError, match="out of range"):
        m.spectra(layers=[L])


def test_audit_is_callable_and_returns_a_report():
    rep = certbound.audit('[[claim]]\nid = "e"\nquantity = "exp(1)"\nrelation = "<"\nvalue = "2.718"\n')
    assert isinstance(rep, certbound.AuditReport)
    assert [v.status for v in rep.verdicts] == ["refuted"] and rep.exit_code == 1
    assert rep.to_json()["summary"]["refuted"] == 1
    from certbound.audit import load_claims  # the package is still the package

    assert callable(load_claims)


def test_jobs_on_disk_equal_one_job_and_memory_needs_one_job(bert, bert_dir):
    m = certbound.open_model(str(bert_dir))
    one = m.spectra(layers=[1]).to_json()
    two = m.spectra(layers=[1], jobs=2).to_json()
    assert one["matrices"] == two["matrices"] and one["weights_sha256"] == two["weights_sha256"]
    with pytest.raises(ValueError, match="one job"):
        certbound.open_model(bert).spectra(jobs=2)


@pytest.mark.parametrize("layers, needle", [
    ("10", "not the string '10'"),                 # would have been layers 1 and 0
    (1, "not the number 1 (layer 1 alone: [1])"),
    ([0, 0], "repeats a layer"),
    ([L], f"layer {L} out of range"),
    ([0.5], "0.5 is not a layer index"),
    ([True], "True is not a layer index"),
])
def test_spectra_refuses_a_layers_argument_it_would_misread(bert, layers, needle):
    with pytest.raises(certbound.OptionError, match=re.escape(needle)):
        certbound.open_model(bert).spectra(layers=layers)


def test_spectra_layers_accepts_any_integer_sequence(bert):
    model = certbound.open_model(bert)
    ref = model.spectra(layers=[1, 0], include_sigma=False).to_json()["matrices"]
    assert model.spectra(layers=(1, 0), include_sigma=False).to_json()["matrices"] == ref
    assert model.spectra(layers=np.array([1, 0]), include_sigma=False).to_json()["matrices"] == ref
    assert [m["layer"] for m in ref][:1] == [1]  # in the order given


def test_proxies_layers_is_a_depth_or_the_prefix_list(bert):
    model = certbound.open_model(bert)
    by_depth = model.proxies("paper", layers=1)
    assert by_depth.info["used_layers"] == 1
    assert model.proxies("paper", layers=[0]).to_json() == by_depth.to_json()
    for bad, needle in (([1], "prefix sub-network 0..K-1"), ("1", "not the string"), (L + 1, "prefix depth must lie"),
                        (1.0, "a prefix depth K (an integer)")):
        with pytest.raises(certbound.OptionError, match=re.escape(needle)):
            model.proxies("paper", layers=bad)
