"""`certbound bound` and `certbound covering` end to end on small synthetic inputs."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from certbound.cli import main


def _tiny_bert(d: str, n: int = 8, ff: int = 16, heads: int = 2, layers: int = 1, act: str = "gelu") -> str:
    from safetensors.numpy import save_file

    rng = np.random.default_rng(0)
    w = {}
    for layer in range(layers):
        for k, s in [("attention.self.query", (n, n)), ("attention.self.key", (n, n)),
                     ("attention.self.value", (n, n)), ("attention.output.dense", (n, n)),
                     ("intermediate.dense", (ff, n)), ("output.dense", (n, ff))]:
            w[f"encoder.layer.{layer}.{k}.weight"] = (rng.standard_normal(s) * 0.2).astype(np.float32)
    save_file(w, os.path.join(d, "model.safetensors"))
    cfg = {"model_type": "bert", "hidden_size": n, "num_attention_heads": heads, "num_hidden_layers": layers,
           "intermediate_size": ff, "hidden_act": act, "max_position_embeddings": 16}
    with open(os.path.join(d, "config.json"), "w") as fh:
        json.dump(cfg, fh)
    return d


def test_bound_cli_json(tmp_path, capsys):
    model = _tiny_bert(str(tmp_path))
    out = tmp_path / "b.json"
    tex = tmp_path / "b.tex"
    rc = main(["bound", model, "--n", "1e12", "--delta", "0.05", "--json", str(out), "--latex", str(tex)])
    assert rc == 0
    d = json.loads(out.read_text())
    for k in ("bound", "dudley", "confidence_term", "log_inv_prior", "n", "delta", "assumptions", "matrices"):
        assert k in d
    assert d["n"] == 10**12 and d["delta"] == 0.05
    assert len(d["matrices"]) == 2 * 2 + 2 + 1  # QK, VO per head, M_in, M_out, readout
    assert {m["type"] for m in d["matrices"]} == {"QK", "VO", "M_in", "M_out", "readout"}
    assert "NOT" in d["assumptions"]["network"]
    assert float(d["bound"]["upper"]) >= float(d["rademacher"]["upper"]) * 2
    assert float(d["rademacher"]["upper"]) <= float(d["dudley"]["upper"])
    assert d["rademacher_method"] in d["rademacher_estimates"]
    text = capsys.readouterr().out
    assert "Pi-surrogate" in text and "bound" in text
    assert r"\begin{tabular}" in tex.read_text()


def test_bound_cli_fixed_mode(tmp_path):
    model = _tiny_bert(str(tmp_path))
    cons = [{"layer": 0, "head": h, "type": t, "p": 2, "schatten_radius": 50, "spectral_radius": 8}
            for h in range(2) for t in ("QK", "VO")]
    cons += [{"layer": 0, "head": None, "type": t, "p": 0, "schatten_radius": 8, "spectral_radius": 8}
             for t in ("M_in", "M_out")]
    cf = tmp_path / "k.json"
    cf.write_text(json.dumps(cons))
    out = tmp_path / "b.json"
    rc = main(["bound", model, "--n", "1e9", "--delta", "0.1", "--mode", "fixed", "--constraints", str(cf),
               "--json", str(out), "--quiet"])
    assert rc == 0
    d = json.loads(out.read_text())
    assert d["theorem"].startswith("Theorem 1") and d["log_inv_prior"]["upper"] == "0"


def test_bound_json_is_accepted_as_constraints(tmp_path):
    # `bound --json` output (e.g. of a pilot run on other data) can be fed back as --constraints: its
    # certified radii stand for their exact upper ends, p for p_exact.
    from fractions import Fraction

    from certbound.ball import ball_from_json, upper_fraction
    from certbound.pipeline._bound import _load_constraints

    model = _tiny_bert(str(tmp_path))
    post = tmp_path / "post.json"
    assert main(["bound", model, "--n", "1e9", "--delta", "0.1", "--json", str(post), "--quiet"]) == 0
    cons = _load_constraints(str(post))
    doc = json.loads(post.read_text())
    for m in doc["matrices"]:
        if m["type"] == "readout":
            continue
        c = cons[(m["layer"], m["head"] if m["type"] in ("QK", "VO") else None, m["type"])]
        assert Fraction(c.schatten_p) == Fraction(m["p_exact"])
        assert Fraction(c.schatten_radius) == upper_fraction(ball_from_json(m["schatten_radius"]))
    out = tmp_path / "fixed.json"
    assert main(["bound", model, "--n", "1e9", "--delta", "0.1", "--mode", "fixed", "--constraints", str(post),
                 "--json", str(out), "--quiet"]) == 0
    assert json.loads(out.read_text())["theorem"].startswith("Theorem 1")


def test_bound_cli_errors_leave_no_file(tmp_path):
    model = _tiny_bert(str(tmp_path))
    out = tmp_path / "b.json"
    assert main(["bound", model, "--n", "1e6", "--delta", "2", "--json", str(out)]) == 2
    assert main(["bound", model, "--n", "1.5", "--delta", "0.1", "--json", str(out)]) == 2
    assert main(["bound", str(tmp_path / "missing"), "--n", "10", "--delta", "0.1", "--json", str(out)]) == 2
    assert main(["bound", model, "--n", "10", "--delta", "0.1", "--mode", "fixed"]) == 2
    assert not out.exists()
    # an activation without a built-in constant needs --act-lip
    d2 = tmp_path / "tanh"
    d2.mkdir()
    m2 = _tiny_bert(str(d2), act="silu")
    assert main(["bound", m2, "--n", "10", "--delta", "0.1"]) == 2
    assert main(["bound", m2, "--n", "10", "--delta", "0.1", "--act-lip", "1.13", "--quiet"]) == 0


def test_covering_cli(tmp_path, capsys):
    W = np.diag([2.0, 1.0, 0.5, 0.0])
    p = tmp_path / "W.npy"
    np.save(p, W)
    out = tmp_path / "c.json"
    assert main(["covering", str(p), "--eps", "0.01", "--rows", "1e6", "--p", "0,1,2", "--rank", "3",
                 "--json", str(out)]) == 0
    d = json.loads(out.read_text())
    assert d["rank_bound"] == 3 and [r["p"] for r in d["results"]] == ["0", "1", "2"]
    # p = 0: min(rank counting 3·(4+4+1)·ln(1 + 6·2/0.01), parameter counting 16·ln(1 + 2·2/0.01))
    # (σ₁ = 2 certified up to rounding); here parameter counting wins
    import math

    ref = min(3 * 9 * math.log(1 + 6 * 2 / 0.01), 16 * math.log(1 + 2 * 2 / 0.01))
    v0 = float(d["results"][0]["log_covering_number"]["upper"])
    assert ref * (1 - 1e-12) <= v0 <= ref * (1 + 1e-9)
    assert main(["covering", str(p), "--eps", "-1", "--rows", "10"]) == 2
    np.save(tmp_path / "bad.npy", np.array([1.0, np.nan]))
    assert main(["covering", str(tmp_path / "bad.npy"), "--eps", "0.1", "--rows", "10"]) == 2


def test_bound_cli_on_certbound_pi_demo_model(tmp_path):
    """The shipped certbound-pi model (variant P, learned readout) goes through the same command."""
    from pathlib import Path

    demo = Path(__file__).resolve().parents[2] / "certbound" / "models" / "data" / "demo"
    if not (demo / "model.safetensors").exists():
        pytest.skip("demo checkpoint not present")
    out = tmp_path / "d.json"
    assert main(["bound", str(demo), "--n", "1e8", "--delta", "0.01", "--json", str(out), "--quiet"]) == 0
    d = json.loads(out.read_text())
    types = {m["type"] for m in d["matrices"]}
    assert "readout" in types and ("M" in types or "M_in" in types)
    assert "certbound-pi" in d["assumptions"]["network"]
    readout = [m for m in d["matrices"] if m["type"] == "readout"][0]
    assert readout["spectral_level"] is not None  # the certified readout norm was peeled


def test_bound_refuses_a_spectrum_report_of_other_weights(tmp_path, capsys):
    """Same shapes, one weight changed by one ulp: the report must not be reused."""
    import shutil

    from safetensors.numpy import load_file, save_file

    from certbound.models import demo_checkpoint_path

    src = demo_checkpoint_path()
    report = tmp_path / "spectrum.json"
    assert main(["spectrum", str(src), "--json", str(report)]) == 0
    assert len(json.loads(report.read_text())["weights_sha256"]) == 64
    # The unchanged model accepts its own report.
    assert main(["bound", str(src), "--n", "1000", "--delta", "0.01", "--spectra", str(report)]) == 0
    other = tmp_path / "other"
    shutil.copytree(src, other)
    weights = load_file(str(other / "model.safetensors"))
    name = sorted(weights)[0]
    w = weights[name].copy()
    w.flat[0] = np.nextafter(w.flat[0], np.inf)
    weights[name] = w
    save_file(weights, str(other / "model.safetensors"))
    capsys.readouterr()
    assert main(["bound", str(other), "--n", "1000", "--delta", "0.01", "--spectra", str(report)]) == 2
    assert "other weights" in capsys.readouterr().err


def test_bound_cli_ramp_loss(tmp_path, capsys):
    from fractions import Fraction

    model = _tiny_bert(str(tmp_path))
    out = tmp_path / "r.json"
    assert main(["bound", model, "--n", "1e8", "--delta", "0.05", "--loss", "ramp", "--margin", "0.1",
                 "--json", str(out)]) == 0
    d = json.loads(out.read_text())
    # B_L = 1 and L_L = 1/γ = 10 exactly, whatever the defaults
    assert Fraction(d["loss_bound"]["exact"]["upper"]) == 1 == Fraction(d["loss_bound"]["exact"]["lower"])
    assert Fraction(d["loss_lipschitz"]["exact"]["lower"]) == 10
    assert "ramp loss" in d["assumptions"]["loss"] and "a priori" in d["assumptions"]["loss"]
    assert d["rademacher_method"] in d["assumptions"]["rademacher_estimate"]
    text = capsys.readouterr().out
    assert "2 x Rademacher term" in text and "rademacher_estimate:" in text
    # the given-loss run with the same constants is the same bound (the ramp loss only fixes B_L, L_L)
    out2 = tmp_path / "g.json"
    assert main(["bound", model, "--n", "1e8", "--delta", "0.05", "--loss-bound", "1", "--loss-lipschitz", "10",
                 "--json", str(out2)]) == 0
    assert json.loads(out2.read_text())["bound"] == d["bound"]
    for bad in (["--loss", "ramp"], ["--loss", "ramp", "--margin", "0"], ["--margin", "0.1"],
                ["--loss", "ramp", "--margin", "0.1", "--loss-bound", "2"]):
        with pytest.raises((ValueError, SystemExit)):
            rc = main(["bound", model, "--n", "1e8", "--delta", "0.05", *bad])
            if rc != 0:
                raise ValueError(rc)


def test_shipped_example_constraints_run_on_the_demo_model(tmp_path):
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    example = os.path.join(root, "examples", "bound", "demo_constraints.json")
    demo = os.path.join(root, "certbound", "models", "data", "demo")
    out = tmp_path / "fixed.json"
    assert main(["bound", demo, "--n", "1e6", "--delta", "0.01", "--mode", "fixed", "--constraints", example,
                 "--json", str(out), "--quiet"]) == 0
    d = json.loads(out.read_text())
    assert d["theorem"].startswith("Theorem 1") and len(d["matrices"]) >= 4


def test_bound_summary_marks_the_readouts_missing_layer_and_head(capsys):
    import re
    from pathlib import Path

    demo = Path(__file__).resolve().parents[2] / "certbound" / "models" / "data" / "demo"
    assert main(["bound", str(demo), "--n", "1e6", "--delta", "0.01", "--all-matrices"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if re.match(r"^\s+\S+\s+\S+\s+(QK|VO|M_in|M_out|M|readout)\s", line)]
    assert [r[2] for r in rows].count("readout") == 1
    assert [r[:2] for r in rows if r[2] == "readout"] == [["-", "-"]]
    assert "None" not in out.split("all matrices:")[1].split("assumptions:")[0]
