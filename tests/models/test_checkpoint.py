"""certbound-pi checkpoints: round trip, clear errors, and the shipped demo checkpoint."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from certbound.models import (PiTransformer, PiTransformerConfig, demo_checkpoint_path, is_pi_checkpoint,
                              load_pi_checkpoint, save_pi_checkpoint)


def _net(**kw):
    cfg = PiTransformerConfig(d_model=5, n_layers=2, n_heads=2, d_head=2, seq_len=3, **kw)
    return PiTransformer.random(cfg, seed=11)


@pytest.mark.parametrize("kw", [{}, {"ffn_kind": "two", "d_ff": 7, "residual": True}])
def test_round_trip_bit_exact(tmp_path, kw):
    net = _net(**kw)
    save_pi_checkpoint(net, tmp_path / "ck", extra={"task": {"name": "x"}})
    assert is_pi_checkpoint(tmp_path / "ck") and is_pi_checkpoint(tmp_path / "ck" / "config.json")
    for p in (tmp_path / "ck", tmp_path / "ck" / "model.safetensors", tmp_path / "ck" / "config.json"):
        back, meta = load_pi_checkpoint(p)
        assert back.config == net.config and meta["task"] == {"name": "x"}
        for k in net.params:
            assert back.params[k].dtype == np.float64
            assert np.array_equal(back.params[k], net.params[k])
    assert not list((tmp_path / "ck").glob("*.tmp"))  # atomic writes leave no temp files


def test_errors_name_the_file_and_tensor(tmp_path):
    net = _net()
    d = save_pi_checkpoint(net, tmp_path / "ck")
    with pytest.raises(OSError, match="config.json"):
        load_pi_checkpoint(tmp_path / "missing")
    # wrong model_type
    cfg = json.loads((d / "config.json").read_text())
    bad = tmp_path / "bad1"
    shutil.copytree(d, bad)
    (bad / "config.json").write_text(json.dumps({**cfg, "model_type": "bert"}))
    with pytest.raises(ValueError, match="model_type"):
        load_pi_checkpoint(bad)
    assert not is_pi_checkpoint(bad)
    # shape mismatch with the config
    bad2 = tmp_path / "bad2"
    shutil.copytree(d, bad2)
    (bad2 / "config.json").write_text(json.dumps({**cfg, "d_model": 6}))
    with pytest.raises(ValueError, match=r"blocks\.0\.attn\.W_\w+ has shape"):
        load_pi_checkpoint(bad2)
    # NaN weights
    from safetensors.numpy import save_file

    bad3 = tmp_path / "bad3"
    shutil.copytree(d, bad3)
    p = dict(net.params)
    p["blocks.1.ffn.M"] = p["blocks.1.ffn.M"].copy()
    p["blocks.1.ffn.M"][0, 0] = np.nan
    save_file(p, str(bad3 / "model.safetensors"))
    with pytest.raises(ValueError, match=r"blocks\.1\.ffn\.M contains NaN"):
        load_pi_checkpoint(bad3)
    # truncated weights file
    bad4 = tmp_path / "bad4"
    shutil.copytree(d, bad4)
    raw = (bad4 / "model.safetensors").read_bytes()
    (bad4 / "model.safetensors").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ValueError, match="model.safetensors"):
        load_pi_checkpoint(bad4)
    # missing tensor
    bad5 = tmp_path / "bad5"
    shutil.copytree(d, bad5)
    p = {k: v for k, v in net.params.items() if k != "readout.w"}
    save_file(p, str(bad5 / "model.safetensors"))
    with pytest.raises(ValueError, match="readout.w"):
        load_pi_checkpoint(bad5)


def test_shipped_demo_checkpoint():
    d = demo_checkpoint_path()
    files = {p.name: p for p in Path(d).iterdir()}
    assert {"model.safetensors", "config.json", "README.md"} <= set(files)
    assert sum(p.stat().st_size for p in files.values()) < 1_000_000
    net, meta = load_pi_checkpoint(d)
    assert meta["model_type"] == "certbound-pi"
    readme = files["README.md"].read_text()
    seed = meta["training"]["settings"]["seed"]
    assert "certbound train-demo" in readme and f"seed {seed}" in readme
    assert meta["data"]["n_train"] >= 1 and meta["task"]["name"] == "sparse-majority"
    # The constraint the training enforces (the bound does not rely on it: it peels ‖w‖).
    assert np.linalg.norm(net.params["readout.w"]) <= net.config.readout_norm
    # The shipped model actually learned the task (0-1 test error well below chance).
    from certbound.models import SparseMajorityTask

    task = SparseMajorityTask.from_json_dict(meta["task"])
    X, y = task.sample(2000, stream=2)
    assert net.error_rate(X, y) < 0.2


@pytest.mark.slow
def test_shipped_checkpoint_is_reproduced_by_its_command(tmp_path):
    """Re-run the command recorded in the README; the weights must match bit for bit (same torch version)."""
    torch = pytest.importorskip("torch")
    import shlex

    from certbound.cli import main

    d = demo_checkpoint_path()
    net, meta = load_pi_checkpoint(d)
    readme = (Path(d) / "README.md").read_text()
    if f"torch {torch.__version__}" not in readme:
        pytest.skip("bit-exact reproduction is only expected with the torch version recorded in the README")
    cmd = readme.split("```\n", 1)[1].split("\n```", 1)[0]
    argv = shlex.split(cmd)[1:]
    i = argv.index("--out")
    argv[i + 1] = str(tmp_path / "again")
    assert main(argv + ["--quiet"]) == 0
    again, _ = load_pi_checkpoint(tmp_path / "again")
    for k in net.params:
        assert np.array_equal(again.params[k], net.params[k]), k


def test_adapter_yields_loader_records():
    pytest.importorskip("certbound.checkpoints")
    from certbound.models.adapter import pi_theory_matrices

    net, _ = load_pi_checkpoint(demo_checkpoint_path())
    recs = list(pi_theory_matrices(demo_checkpoint_path(), types=("QK", "VO", "M", "M_in", "M_out", "readout")))
    mine = list(net.theory_matrices())
    assert [(r.layer, r.head, r.type) for r in recs[:-1]] == [(m.layer, m.head, m.kind) for m in mine[:-1]]
    for r, m in zip(recs, mine):
        W = r.factors[0] @ r.factors[1].T if r.factors is not None else r.dense
        assert np.array_equal(W, m.matrix()) and r.logit_scale_d == 1
    assert recs[-1].type == "readout" and recs[-1].shape == (net.config.d_model, 1)
    with pytest.raises(ValueError, match="unknown matrix type"):
        list(pi_theory_matrices(demo_checkpoint_path(), types=("W_Q",)))
