"""``certbound spectrum``: report contents, JSON/CSV files, parallel workers, errors."""

import csv
import io
import json
import math
import os
from fractions import Fraction

import numpy as np
import pytest

from certbound.cli import main
from tests.checkpoints.synth_checkpoints import expected_matrices, make_checkpoint, write_safetensors

L, N, H, F = 2, 16, 4, 32
Q_KEYS = {"lower", "upper", "mid", "exact"}


@pytest.fixture()
def bert_dir(tmp_path):
    d = tmp_path / "model"
    stored = make_checkpoint(str(d), "bert", L=L, N=N, H=H, F=F)
    return d, stored


def _check_q(q):
    assert Q_KEYS <= set(q)
    assert Fraction(q["lower"]) <= Fraction(q["upper"])


def test_json_report_schema_and_soundness(bert_dir, tmp_path, capsys):
    d, stored = bert_dir
    out = tmp_path / "r.json"
    assert main(["spectrum", str(d), "--json", str(out)]) == 0
    captured = capsys.readouterr()
    assert "QK" in captured.out and "M_out" in captured.out and "sigma1<=" in captured.out
    assert captured.err == ""  # no progress bar: stderr is not a terminal
    rep = json.loads(out.read_text())
    assert rep["model"] == str(d)
    assert rep["config"]["num_heads"] == H and rep["config"]["head_dim"] == N // H
    ms = rep["matrices"]
    assert len(ms) == L * (2 * H + 2)
    for r in ms:
        assert {"layer", "head", "type", "shape", "spectral_norm", "frobenius_norm", "nuclear_norm", "norm_21",
                "rank", "sigma"} <= set(r)
        assert r["type"] in ("QK", "VO", "M_in", "M_out")
        assert isinstance(r["layer"], int) and (r["head"] is None) == (r["type"] in ("M_in", "M_out"))
        for k in ("spectral_norm", "frobenius_norm", "nuclear_norm", "norm_21"):
            _check_q(r[k])
        for q in r["sigma"]:
            _check_q(q)
        assert len(r["sigma"]) == min(r["shape"])
        # Independent reference: float64 SVD and norms of the formed matrix.
        W = expected_matrices(stored, "bert", r["layer"], H)[(r["type"], r["head"])]
        assert list(W.shape) == r["shape"]
        s = np.linalg.svd(W, compute_uv=False)
        tol = 1e-12 * s[0]
        for i, q in enumerate(r["sigma"]):
            assert float(q["lower"]) - tol <= s[i] <= float(q["upper"]) + tol
        fro = np.linalg.norm(W)
        n21 = np.linalg.norm(W, axis=0).sum()
        assert float(r["frobenius_norm"]["lower"]) - tol <= fro <= float(r["frobenius_norm"]["upper"]) + tol
        assert float(r["norm_21"]["lower"]) * (1 - 1e-12) <= n21 <= float(r["norm_21"]["upper"]) * (1 + 1e-12)
        assert r["rank"]["lower"] <= np.linalg.matrix_rank(W) <= r["rank"]["upper"]
        if r["type"] in ("QK", "VO"):
            assert r["rank"]["upper"] <= N // H
            assert all(q["upper"] == "0" for q in r["sigma"][N // H:])


def test_csv_report(bert_dir, tmp_path):
    d, _ = bert_dir
    out = tmp_path / "r.csv"
    assert main(["spectrum", str(d), "--csv", str(out), "--quiet", "--p", "1/2,1"]) == 0
    rows = list(csv.DictReader(io.StringIO(out.read_text(), newline="")))
    assert len(rows) == L * (2 * H + 2)
    r = rows[0]
    assert r["type"] == "QK" and r["head"] == "0" and r["rows"] == str(N)
    assert Fraction(r["S_1/2_lower"]) <= Fraction(r["S_1/2_upper"])
    assert Fraction(r["spectral_norm_lower"]) <= Fraction(r["spectral_norm_upper"])
    assert rows[-1]["type"] == "M_out" and rows[-1]["head"] == ""


def test_parallel_jobs_give_the_same_matrices(bert_dir, tmp_path):
    d, stored = bert_dir
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert main(["spectrum", str(d), "--json", str(a), "--quiet"]) == 0
    assert main(["spectrum", str(d), "--json", str(b), "--quiet", "--jobs", "2"]) == 0
    ra, rb = json.loads(a.read_text())["matrices"], json.loads(b.read_text())["matrices"]
    assert [(r["layer"], r["head"], r["type"]) for r in ra] == [(r["layer"], r["head"], r["type"]) for r in rb]
    for x, y in zip(ra, rb):
        # Both are valid enclosures of the same number, so they must intersect.
        assert Fraction(x["spectral_norm"]["lower"]) <= Fraction(y["spectral_norm"]["upper"])
        assert Fraction(y["spectral_norm"]["lower"]) <= Fraction(x["spectral_norm"]["upper"])
        assert x["rank"] == y["rank"]


def test_scale_logits_scales_qk_by_one_over_sqrt_dh(tmp_path):
    d = tmp_path / "m"
    stored = make_checkpoint(str(d), "bert", L=1, N=24, H=3, F=F)  # d_h = 8: kept as an Arb factor
    out = tmp_path / "s.json"
    assert main(["spectrum", str(d), "--json", str(out), "--quiet", "--scale-logits"]) == 0
    for r in json.loads(out.read_text())["matrices"]:
        W = expected_matrices(stored, "bert", 0, 3)[(r["type"], r["head"])]
        if r["type"] == "QK":
            assert r["logit_scale"] == {"sqrt_denominator": 8, "folded_exactly_into_weights": False}
            W = W / math.sqrt(8)
        s1 = np.linalg.svd(W, compute_uv=False)[0]
        assert float(r["spectral_norm"]["lower"]) * (1 - 1e-12) <= s1 <= float(r["spectral_norm"]["upper"]) * (
            1 + 1e-12)


def test_raw_and_layers(bert_dir, tmp_path):
    d, _ = bert_dir
    out = tmp_path / "r.json"
    assert main(["spectrum", str(d), "--json", str(out), "--quiet", "--raw", "--layers", "1"]) == 0
    types = [r["type"] for r in json.loads(out.read_text())["matrices"]]
    assert set(types) == {"QK", "VO", "M_in", "M_out", "W_Q", "W_K", "W_V", "W_O"}
    assert len(types) == 2 * H + 2 + 4


# ----------------------------------------------------------------------------- errors


def _assert_fails_cleanly(argv, tmp_path, capsys, *needles):
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2, err
    for n in needles:
        assert n in err, (n, err)
    leftovers = [f for f in os.listdir(tmp_path) if f.endswith((".json", ".csv", ".tmp")) and f != "config.json"]
    assert leftovers == []


def test_missing_model(tmp_path, capsys):
    _assert_fails_cleanly(["spectrum", str(tmp_path / "nope"), "--json", str(tmp_path / "o.json")], tmp_path, capsys,
                          "nope", "no such file")


def test_corrupt_safetensors(bert_dir, tmp_path, capsys):
    d, _ = bert_dir
    p = d / "model.safetensors"
    p.write_bytes(p.read_bytes()[:-100])
    _assert_fails_cleanly(["spectrum", str(d), "--json", str(tmp_path / "o.json"), "--csv", str(tmp_path / "o.csv")],
                          tmp_path, capsys, "model.safetensors", "truncated")


def test_nan_weight_fails_mid_run_without_partial_output(bert_dir, tmp_path, capsys):
    d, stored = bert_dir
    stored["bert.encoder.layer.1.output.dense.weight"][2, 3] = np.nan  # the very last matrix
    write_safetensors(str(d / "model.safetensors"), stored, "F64")
    _assert_fails_cleanly(["spectrum", str(d), "--json", str(tmp_path / "o.json")], tmp_path, capsys,
                          "bert.encoder.layer.1.output.dense.weight", "non-finite")


def test_nan_weight_with_jobs(bert_dir, tmp_path, capsys):
    d, stored = bert_dir
    stored["bert.encoder.layer.0.attention.self.query.weight"][0, 0] = np.inf
    write_safetensors(str(d / "model.safetensors"), stored, "F64")
    _assert_fails_cleanly(["spectrum", str(d), "--jobs", "2", "--json", str(tmp_path / "o.json")], tmp_path, capsys,
                          "attention.self.query.weight", "non-finite")


def test_unsupported_architecture(bert_dir, tmp_path, capsys):
    d, _ = bert_dir
    cfg = json.loads((d / "config.json").read_text())
    cfg["model_type"] = "toyformer"
    cfg["architectures"] = ["ToyformerForCausalLM"]
    (d / "config.json").write_text(json.dumps(cfg))
    _assert_fails_cleanly(["spectrum", str(d), "--json", str(tmp_path / "o.json")], tmp_path, capsys,
                          "toyformer", "--mapping", "distilbert")


def test_shape_mismatch(bert_dir, tmp_path, capsys):
    d, _ = bert_dir
    cfg = json.loads((d / "config.json").read_text())
    cfg["hidden_size"] = 20
    cfg["num_attention_heads"] = 4
    (d / "config.json").write_text(json.dumps(cfg))
    _assert_fails_cleanly(["spectrum", str(d), "--csv", str(tmp_path / "o.csv")], tmp_path, capsys,
                          "bert.encoder.layer.0.attention.self.query.weight", "has shape [16, 16]")


def test_output_directory_missing_fails_before_work(bert_dir, tmp_path, capsys):
    d, _ = bert_dir
    _assert_fails_cleanly(["spectrum", str(d), "--json", str(tmp_path / "no" / "o.json")], tmp_path, capsys,
                          "does not exist")


@pytest.mark.parametrize("argv, needle", [(["--jobs", "0"], "--jobs"), (["--p", "3"], "(0, 2]"),
                                          (["--p", "x"], "not a number"), (["--layers", "a"], "--layers")])
def test_bad_options(bert_dir, tmp_path, capsys, argv, needle):
    d, _ = bert_dir
    _assert_fails_cleanly(["spectrum", str(d), *argv], tmp_path, capsys, needle)


def test_existing_output_survives_a_failed_run(bert_dir, tmp_path, capsys):
    d, stored = bert_dir
    out = tmp_path / "keep.json"
    out.write_text('{"old": true}')
    stored["bert.encoder.layer.0.intermediate.dense.weight"][0, 0] = np.nan
    write_safetensors(str(d / "model.safetensors"), stored, "F64")
    assert main(["spectrum", str(d), "--json", str(out), "--quiet"]) == 2
    assert json.loads(out.read_text()) == {"old": True}
    err = capsys.readouterr().err
    # The file left behind is named and explained before the error.
    assert f"kept the {2 * H} record(s) certified before the error in {out}.records.jsonl (--resume" in err
    assert "tensor 'bert.encoder.layer.0.intermediate.dense.weight' contains 1 non-finite value" in err
    # The records of the matrices certified before the error stay, for --resume
    # once the tensor is fixed (layer 0's 2·H heads come before its M_in).
    assert sorted(os.listdir(tmp_path)) == ["keep.json", "keep.json.records.jsonl", "model"]
    lines = (tmp_path / "keep.json.records.jsonl").read_text().splitlines()
    assert len(lines) == 1 + 2 * H and all(json.loads(x)["record"]["layer"] == 0 for x in lines[1:])


def test_progress_bar_only_on_a_terminal():
    from certbound.pipeline import TerminalProgress

    class Tty(io.StringIO):
        def isatty(self):
            return True

    s, t = io.StringIO(), Tty()
    for stream in (s, t):
        p = TerminalProgress(stream)
        p(1, 2, "layer 0 head 0 QK")
        p(2, 2, "layer 0 M_in")
        p.close()
    assert s.getvalue() == ""
    assert "2/2" in t.getvalue() and "#" in t.getvalue()


def test_real_minilm_end_to_end_cli(tmp_path, capsys):
    from certbound.checkpoints import find_packaged_checkpoint

    try:
        find_packaged_checkpoint("all-MiniLM-L6-v2", verify=False)
    except LookupError as exc:
        pytest.skip(f"real checkpoint unavailable: {exc}")
    out = tmp_path / "mini.json"
    assert main(["spectrum", "all-MiniLM-L6-v2", "--layers", "5", "--json", str(out)]) == 0
    rep = json.loads(out.read_text())
    assert rep["config"]["num_heads"] == 12 and rep["config"]["head_dim"] == 32
    assert len(rep["matrices"]) == 26
    assert all(r["rank"]["upper"] <= 32 for r in rep["matrices"] if r["type"] in ("QK", "VO"))
    assert "12 heads of 32" in capsys.readouterr().out
