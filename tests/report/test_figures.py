"""Figures and the ``proxies`` / ``sweep`` commands on tiny synthetic checkpoints."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil

import numpy as np
import pytest
from flint import arb

from certbound.ball import ball_from_json, lower_fraction, upper_fraction
from certbound.cli import main


def write_tiny_bert(directory, L=2, N=16, H=2, dff=64, seed=0):
    """A BERT-named safetensors checkpoint with random float32 weights."""
    from safetensors.numpy import save_file

    rng = np.random.default_rng(seed)
    w = {}
    for layer in range(L):
        for k, shape in [("attention.self.query", (N, N)), ("attention.self.key", (N, N)),
                         ("attention.self.value", (N, N)), ("attention.output.dense", (N, N)),
                         ("intermediate.dense", (dff, N)), ("output.dense", (N, dff))]:
            w[f"encoder.layer.{layer}.{k}.weight"] = rng.normal(0, 0.2, shape).astype(np.float32)
    os.makedirs(directory, exist_ok=True)
    save_file(w, os.path.join(directory, "model.safetensors"))
    cfg = {"model_type": "bert", "hidden_size": N, "num_attention_heads": H, "num_hidden_layers": L,
           "intermediate_size": dff}
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(cfg, f)
    return w


def test_proxies_command_outputs(tmp_path, capsys):
    d = tmp_path / "tiny"
    write_tiny_bert(d)
    js, cs, tx = tmp_path / "p.json", tmp_path / "p.csv", tmp_path / "p.tex"
    rc = main(["proxies", str(d), "--json", str(js), "--csv", str(cs), "--latex", str(tx), "--per-matrix"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "corrected / paper" in out and "B_ours" in out
    doc = json.loads(js.read_text())
    assert set(doc["variants"]) == {"paper", "corrected"}
    paper = doc["variants"]["paper"]
    assert paper["m"] == 5  # ceil(2 + ln 16) = ceil(4.77)
    assert len(paper["matrices"]) == 2 * (2 * 2 + 2)
    for m in paper["matrices"]:
        assert len(m["c"]) == 2 * paper["m"] + 1
        # the reported contribution's lower end is below every c(p)
        lo = lower_fraction(ball_from_json(m["contribution"]))
        ups = [upper_fraction(ball_from_json(c)) for c in m["c"]]
        assert lo <= min(ups)
    b = ball_from_json(paper["B_ours"])
    total = sum((ball_from_json(m["contribution"]) for m in paper["matrices"]), arb(0)) + arb(2).sqrt()
    assert b.overlaps(total)  # B_ours = Σ contributions + sqrt(L), re-summed from the JSON
    rows = list(csv.reader(cs.open()))
    assert rows[0][0] == "model" and len(rows) == 1 + 2 * 12
    tex = tx.read_text()
    assert "\\toprule" in tex and "\\bottomrule" in tex and tex.count("\\\\") == 3


def test_proxies_command_errors(tmp_path, capsys):
    assert main(["proxies", str(tmp_path / "missing")]) == 2
    assert "missing" in capsys.readouterr().err
    d = tmp_path / "tiny"
    write_tiny_bert(d)
    assert main(["proxies", str(d), "--layers", "5"]) == 2
    assert not (tmp_path / "x.json").exists()
    # --layers takes 0-based indices as in `spectrum`; the proxies need a prefix 0..K-1.
    assert main(["proxies", str(d), "--layers", "1"]) == 2
    assert "prefix" in capsys.readouterr().err


def test_prefix_layers_option(tmp_path, capsys):
    d = tmp_path / "tiny"
    write_tiny_bert(d, L=3)
    js = tmp_path / "p.json"
    assert main(["proxies", str(d), "--layers", "0-1", "--variant", "paper", "--json", str(js), "--no-grid"]) == 0
    doc = json.loads(js.read_text())
    assert doc["variant"] == "paper" and doc["L"] == 2 and "c" not in doc["matrices"][0]
    assert "prefix" in capsys.readouterr().out


def test_sweep_writes_tables_and_figures(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    d = tmp_path / "tiny"
    write_tiny_bert(d, L=3)
    out = tmp_path / "out"
    rc = main(["sweep", str(d), "--out", str(out), "--grid-L", "1,2", "--grid-N", "64,128"])
    assert rc == 0
    files = set(os.listdir(out))
    for stem in ("proxies_vs_N", "proxies_vs_L", "norms_vs_N", "singular_values", "contribution_curves"):
        assert {f"{stem}.pdf", f"{stem}.png"} <= files
        pdf = (out / f"{stem}.pdf").read_bytes()
        assert pdf.startswith(b"%PDF") and b"/FontFile2" in pdf and b"/Type3" not in pdf  # Type 42 fonts
    assert not [f for f in files if f.startswith(".")]  # no temporary files left
    doc = json.loads((out / "sweep.json").read_text())
    kinds = {m["kind"] for m in doc["models"]}
    assert kinds == {"trained", "prefix", "random-init"}
    assert any("p* = 0" in c for c in doc["claims"])
    assert any("sub-linear growth in N" in c for c in doc["claims"])
    assert any(c.startswith("[prefix] growth in L") for c in doc["claims"])
    assert all(v["caption"] for v in doc["figures"].values())
    assert "untrained" in doc["figures"]["proxies_vs_N"]["caption"]
    assert "different training recipes" in doc["figures"]["proxies_vs_L"]["caption"]
    for v in doc["figures"].values():  # captions say what was run, not how long it took, and hold no dict literal
        assert not re.search(r"\d s\.$", v["caption"]) and "{'" not in v["caption"]
    assert "layers 0, 1 (0-based" in doc["figures"]["singular_values"]["caption"]
    assert "[0..1]" in " ".join(m["name"] for m in doc["models"])  # prefix names 0-based like the tables
    tex = (out / "sweep.tex").read_text()
    assert tex.startswith("% certbound sweep: input this") and "\\documentclass" not in tex  # a fragment
    if shutil.which("pdflatex") or os.environ.get("CERTBOUND_REQUIRE_LATEX") == "1":
        from tests.report.test_latex_compile import compile_fragment

        assert "Overfull \\hbox" not in compile_fragment(tmp_path, tex)
    text = capsys.readouterr().out
    assert "Paper's qualitative claims" in text


def test_sweep_needs_something_to_run(tmp_path, capsys):
    assert main(["sweep", "--out", str(tmp_path / "o"), "--no-random-grid"]) == 2


def test_model_run_kind_is_checked():
    from certbound.report.figures import ModelRun

    with pytest.raises(ValueError, match="kind"):
        ModelRun("x", "pretrained", {})


def test_one_model_sweep_draws_no_empty_axes(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    import warnings

    d = tmp_path / "tiny"
    write_tiny_bert(d, L=2)
    out = tmp_path / "out"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. matplotlib's "No artists with labels found to put in legend"
        assert main(["sweep", str(d), "--out", str(out), "--no-random-grid", "--no-prefix"]) == 0
    doc = json.loads((out / "sweep.json").read_text())
    assert set(doc["figures_skipped"]) == {"proxies_vs_N", "proxies_vs_L"}
    assert not (out / "proxies_vs_N.png").exists()
    assert "not drawn" in capsys.readouterr().out


def test_trained_checkpoints_are_not_joined():
    from certbound.report.figures import _series

    class R:
        def __init__(self, name, L):
            self.name, self.kind, self.note, self.num_layers, self.width = name, "trained", "", L, 384

    groups = _series([R("a", 3), R("b", 6)], "L")
    assert all(len(v) == 1 for v in groups.values())  # one series per checkpoint: never a line through both


def test_save_figure_is_reproducible_and_not_private(tmp_path):
    pytest.importorskip("matplotlib")
    from certbound.report.figures import import_pyplot, save_figure

    plt = import_pyplot()
    old = os.umask(0o022)
    try:
        outs = []
        for name in ("a", "b"):
            (tmp_path / name).mkdir()
            fig, ax = plt.subplots()
            ax.plot([1, 2, 3], [3, 1, 2])
            outs.append(save_figure(fig, tmp_path / name, "f", "a caption"))
            plt.close(fig)
    finally:
        os.umask(old)
    for ext in ("pdf", "png"):
        a, b = (open(o[ext], "rb").read() for o in outs)
        assert a == b, ext  # no creation date or other run-dependent bytes
        assert os.stat(outs[0][ext]).st_mode & 0o777 == 0o644, ext
    assert b"CreationDate" not in open(outs[0]["pdf"], "rb").read()
    assert sorted(os.listdir(tmp_path / "a")) == ["f.pdf", "f.png"]  # no temporary file left


def test_proxies_prefix_is_labelled_with_the_0_based_layers_given(tmp_path, capsys):
    d = tmp_path / "tiny"
    write_tiny_bert(d, L=3)
    tex = tmp_path / "p.tex"
    assert main(["proxies", str(d), "--layers", "0-1", "--variant", "paper", "--latex", str(tex)]) == 0
    out = capsys.readouterr().out
    assert "[prefix: layers 0..1 of 3, 0-based]" in out and "1..2" not in out
    assert "prefix 0..1" in tex.read_text()
