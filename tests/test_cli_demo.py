"""`certbound demo` and `certbound train-demo` through the CLI."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from certbound.cli import main

pytest.importorskip("certbound.bounds")


def _exact(s: str) -> Fraction:
    m, e = s.split("*2^")
    return Fraction(int(m)) * Fraction(2) ** int(e)


def test_demo_default_prints_bound_gap_and_nonvacuity(tmp_path, capsys):
    out_json = tmp_path / "demo.json"
    assert main(["demo", "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    for needle in ("certified bound", "measured gap", "non-vacuous", "time", "p at n*", "L0 H0 QK", "readout w"):
        assert needle in out, needle
    d = json.loads(out_json.read_text())
    upper = _exact(d["bound"]["bound"]["exact"]["upper"])
    assert upper >= Fraction(d["measured"]["gap"])  # the bound must be ≥ the measured gap
    assert d["measured"]["certified"] is False
    nv = d["nonvacuous"]
    assert nv["n"] is not None and _exact(nv["bound"]["exact"]["upper"]) < Fraction(nv["loss_bound"])
    assert len(d["bound"]["matrices"]) == d["config"]["n_layers"] * (2 * d["config"]["n_heads"] + 1) + 1
    # the printed certified bound is the JSON upper end rounded UP (5 significant digits)
    printed = next(line for line in out.splitlines() if line.startswith("certified bound"))
    value = Fraction(printed.split("<=")[1].split()[0])
    assert value >= upper


def test_demo_rejects_non_pi_checkpoints(tmp_path, capsys):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert"}))
    assert main(["demo", "--model", str(tmp_path)]) == 2
    assert "certbound-pi" in capsys.readouterr().err
    assert main(["demo", "--model", str(tmp_path / "nope")]) == 2
    assert main(["demo", "--n", "0"]) == 2


def test_train_demo_then_demo(tmp_path, capsys):
    pytest.importorskip("torch")
    out = tmp_path / "m"
    rc = main(["train-demo", "--out", str(out), "--seed", "1", "--epochs", "5", "--n-train", "64", "--n-test", "200",
               "--layers", "1", "--heads", "1", "--d-head", "2", "--seq-len", "6", "--quiet"])
    assert rc == 0
    assert {p.name for p in out.iterdir()} == {"model.safetensors", "config.json", "README.md"}
    meta = json.loads((out / "config.json").read_text())
    assert meta["training"]["settings"]["seed"] == 1 and meta["data"]["n_train"] == 64
    capsys.readouterr()
    assert main(["demo", "--model", str(out), "--no-search", "--json", str(tmp_path / "r.json")]) == 0
    d = json.loads((tmp_path / "r.json").read_text())
    assert d["n"] == 64 and _exact(d["bound"]["bound"]["exact"]["upper"]) >= Fraction(d["measured"]["gap"])
