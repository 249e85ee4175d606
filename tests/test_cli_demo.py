"""`certbound demo` and `certbound train-demo` through the CLI."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from certbound.cli import main

pytest.importorskip("certbound.bounds")


def _exact(s: str) -> Fraction:
    if "*2^" not in s:
        return Fraction(s)
    m, e = s.split("*2^")
    return Fraction(int(m)) * Fraction(2) ** int(e)


def test_demo_default_is_non_vacuous_at_its_own_n_and_certified_above_measured(tmp_path, capsys):
    out_json = tmp_path / "demo.json"
    assert main(["demo", "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    for needle in ("certified loss-gap bound", "certified 0-1 error bound", "measured test error",
                   "input-counting bound", "if these weights had come from n samples", "time", "p at n*",
                   "L0 H0 QK", "readout w",
                   # three certificates at δ = 0.01 each: together only at 1 − 3δ (proofs/demo-task.md §3)
                   "each certified line holds with probability >= 0.99", "all 3 together (union bound) with "
                   "probability >= 0.97"):
        assert needle in out, needle
    d = json.loads(out_json.read_text())
    # top-level headline keys: certified quantities as balls (exact ends), the measured test error as a float
    n, loss_range = d["n_train"], _exact(d["loss_bound"]["exact"]["upper"])
    gap, err = _exact(d["gap_bound"]["exact"]["upper"]), _exact(d["error_bound"]["exact"]["upper"])
    assert n == d["n"] == d["measured"]["n_train"] >= 10**5
    # the acceptance criteria of issue 17: non-vacuous at the model's OWN training n, 0-1 bound < 1/2
    assert gap < loss_range and err < Fraction(1, 2)
    # certified ≥ measured: the loss-gap bound vs the measured gap, the error bound vs the test error
    assert gap >= Fraction(d["measured"]["gap"])
    assert err >= Fraction(d["test_error"]) and d["test_error"] == d["measured"]["test_error"]
    assert d["measured"]["certified"] is False
    assert d["certified_statements"] == ["loss_gap", "error", "input_counting"]
    assert Fraction(d["joint_confidence_lower"]) == 1 - 3 * Fraction(d["delta_per_statement_exact"]) == Fraction(97, 100)
    # the error bound is R_hat_gamma (certified, exact rational) + the ramp-loss gap bound
    assert err >= Fraction(d["error"]["empirical_ramp_upper"]) + _exact(d["error"]["ramp_bound"]["bound"]["exact"]["lower"])
    assert Fraction(d["error"]["empirical_ramp_upper"]) >= Fraction(d["measured"]["train_error"])  # ramp ≥ 0-1
    # the input space is far larger than n: the input-counting bound is vacuous
    assert _exact(d["input_counting_bound"]["exact"]["lower"]) > 1
    nv = d["nonvacuous"]
    assert nv["n"] is not None and nv["n"] < n and _exact(nv["bound"]["exact"]["upper"]) < Fraction(nv["loss_bound"])
    assert len(d["bound"]["matrices"]) == d["config"]["n_layers"] * (2 * d["config"]["n_heads"] + 2) + 1
    # the printed certified numbers are the JSON upper ends rounded UP (5 significant digits)
    printed = next(line for line in out.splitlines() if line.startswith("certified loss-gap bound"))
    assert Fraction(printed.split("<=")[1].split()[0]) >= gap
    printed = next(line for line in out.splitlines() if line.startswith("certified 0-1 error bound"))
    assert Fraction(printed.split("<=")[1].split()[0]) >= err and "vacuous" not in printed


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
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("certified 0-1 error bound"))
    assert _exact(d["error_bound"]["exact"]["lower"]) >= 1 and "vacuous: not below 1" in line  # n = 64
    assert d["n"] == 64 and _exact(d["bound"]["bound"]["exact"]["upper"]) >= Fraction(d["measured"]["gap"])
    assert meta["error_bound"]["loss"] == {"kind": "ramp", "loss_bound": 1.0, "loss_lip": 1.0, "margin": 1.0}
    assert _exact(d["error_bound"]["exact"]["upper"]) >= Fraction(d["test_error"])
    assert "certbound train-demo --out" in meta["training"]["command"]

