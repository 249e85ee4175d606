"""certbound-pi checkpoints through the generic loader (``certbound.checkpoints._pi``) and every command.

Synthetic checkpoints are written by hand here from the documented format
(tensor names and config fields of ``certbound/models/checkpoint.py`` and
``config.py``; row-vector convention, float64), with d_h ≠ N/H, for both FFN
variants. The expected matrices are re-derived independently from the
written arrays; a second test saves a model with ``certbound.models`` and
checks the loader returns exactly the matrices that model's forward pass uses.
"""

from __future__ import annotations

import json
from fractions import Fraction
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from certbound.checkpoints import open_checkpoint, theory_matrices
from certbound.cli import main

DEMO = Path(str(resources.files("certbound.models") / "data" / "demo"))


def write_pi_checkpoint(directory: Path, *, N: int, L: int, H: int, dh: int, ffn: str = "single", d_ff: int = 0,
                        residual: bool = False, seed: int = 0, **config_extra) -> dict[str, np.ndarray]:
    """Random certbound-pi checkpoint (format version 1); returns the stored tensors."""
    rng = np.random.default_rng(seed)
    HD = H * dh
    shapes: dict[str, tuple[int, ...]] = {}
    for layer in range(L):
        p = f"blocks.{layer}"
        shapes.update({f"{p}.attn.W_Q": (N, HD), f"{p}.attn.W_K": (N, HD), f"{p}.attn.W_V": (N, HD),
                       f"{p}.attn.W_O": (HD, N)})
        if ffn == "single":
            shapes[f"{p}.ffn.M"] = (N, N)
        else:
            shapes.update({f"{p}.ffn.M_in": (N, d_ff), f"{p}.ffn.M_out": (d_ff, N)})
    shapes["readout.w"] = (N,)
    tensors = {k: rng.standard_normal(s) for k, s in shapes.items()}
    directory.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(directory / "model.safetensors"))
    cfg = {"model_type": "certbound-pi", "format_version": 1, "d_model": N, "n_layers": L, "n_heads": H,
           "d_head": dh, "seq_len": 7, "ffn_kind": ffn, "residual": residual, "activation": "relu",
           "readout_norm": 2.0, "softmax_lip": 1.0,
           "loss": {"kind": "clipped-logistic", "loss_bound": 3.0, "loss_lip": 1.0, "clip": 3.0},
           "readout_learned": True}
    if ffn == "two":
        cfg["d_ff"] = d_ff
    cfg.update(config_extra)
    (directory / "config.json").write_text(json.dumps(cfg))
    return tensors


# (N, L, H, d_h, ffn, d_ff): H·d_h < N, H·d_h > N, and one head of full width
SHAPES = [(6, 2, 2, 2, "single", 0), (5, 1, 3, 3, "two", 7), (4, 2, 1, 4, "two", 3), (8, 1, 4, 3, "single", 0)]


@pytest.mark.parametrize("N,L,H,dh,ffn,d_ff", SHAPES)
def test_synthetic_layout_and_matrices(tmp_path, N, L, H, dh, ffn, d_ff):
    stored = write_pi_checkpoint(tmp_path, N=N, L=L, H=H, dh=dh, ffn=ffn, d_ff=d_ff)
    ck, lay = open_checkpoint(tmp_path)
    with ck:
        assert (lay.architecture, lay.num_layers, lay.hidden_size, lay.num_heads, lay.head_dim) == (
            "certbound-pi", L, N, H, dh)
        assert lay.ffn_kind == ffn and lay.attention_logit_scale is False and lay.has_readout
        assert lay.intermediate_size == (d_ff if ffn == "two" else N)
        ffn_types = ("M",) if ffn == "single" else ("M_in", "M_out")
        assert lay.matrix_types == ("QK", "VO") + ffn_types
        got = {(m.layer, m.head, m.type): m for m in theory_matrices(ck, layout=lay, types=lay.matrix_types
                                                                      + ("readout",), raw=True)}
    expected_keys = {(layer, h, t) for layer in range(L) for h in range(H) for t in ("QK", "VO")}
    expected_keys |= {(layer, None, t) for layer in range(L) for t in ffn_types + ("W_Q", "W_K", "W_V", "W_O")}
    expected_keys |= {(L - 1, None, "readout")}
    assert set(got) == expected_keys
    for layer in range(L):
        p = f"blocks.{layer}"
        wq, wk, wv, wo = (stored[f"{p}.attn.{r}"] for r in ("W_Q", "W_K", "W_V", "W_O"))
        for h in range(H):
            s = slice(h * dh, (h + 1) * dh)
            qk, vo = got[(layer, h, "QK")], got[(layer, h, "VO")]
            # head h: columns s of W_Q, W_K, W_V and rows s of W_O; no 1/sqrt(d_h) anywhere
            assert qk.logit_scale_d == 1 and qk.logit_scale_folded == 1
            assert np.array_equal(qk.factors[0], wq[:, s]) and np.array_equal(qk.factors[1], wk[:, s])
            assert np.array_equal(vo.factors[0], wv[:, s]) and np.array_equal(vo.factors[1], wo[s, :].T)
            assert qk.shape == vo.shape == (N, N) and qk.structural_rank_bound == min(dh, N)
            np.testing.assert_allclose(qk.to_dense(), wq[:, s] @ wk[:, s].T, rtol=0, atol=1e-13)
            np.testing.assert_allclose(vo.to_dense(), wv[:, s] @ wo[s, :], rtol=0, atol=1e-13)
        for t in ffn_types:
            assert np.array_equal(got[(layer, None, t)].dense, stored[f"{p}.ffn.{t}"])
            assert got[(layer, None, t)].sources == (f"{p}.ffn.{t}",)
        for r, w in zip(("W_Q", "W_K", "W_V", "W_O"), (wq, wk, wv, wo)):
            assert got[(layer, None, r)].shape == w.shape and np.array_equal(got[(layer, None, r)].dense, w)
    ro = got[(L - 1, None, "readout")]
    assert ro.shape == (N, 1) and np.array_equal(ro.dense[:, 0], stored["readout.w"])


def test_default_types_give_the_layouts_ffn_matrices(tmp_path):
    """The default MATRIX_TYPES (QK, VO, M_in, M_out) mean 'every theory matrix': variant P yields M."""
    write_pi_checkpoint(tmp_path / "p", N=6, L=2, H=2, dh=2)
    write_pi_checkpoint(tmp_path / "b", N=6, L=1, H=2, dh=2, ffn="two", d_ff=5)
    assert [m.type for m in theory_matrices(tmp_path / "p")] == ["QK", "QK", "VO", "VO", "M"] * 2
    assert [m.type for m in theory_matrices(tmp_path / "b")] == ["QK", "QK", "VO", "VO", "M_in", "M_out"]
    # the readout only on request, after the last layer, and only if that layer is selected
    assert [m.type for m in theory_matrices(tmp_path / "p", types=("readout",))] == ["readout"]
    assert [m.type for m in theory_matrices(tmp_path / "p", types=("readout",), layers=[0])] == []


def test_matches_the_models_own_matrices(tmp_path):
    """Saved by certbound.models: the loader yields exactly the matrices the numpy forward pass uses."""
    from certbound.models import PiTransformer, PiTransformerConfig, save_pi_checkpoint

    for i, cfg in enumerate([PiTransformerConfig(d_model=6, n_layers=2, n_heads=2, d_head=2, seq_len=5),
                             PiTransformerConfig(d_model=5, n_layers=1, n_heads=2, d_head=4, seq_len=3,
                                                 ffn_kind="two", d_ff=3, residual=True)]):
        net = PiTransformer.random(cfg, seed=i)
        d = save_pi_checkpoint(net, tmp_path / f"m{i}")
        ref = {}
        for f in net.theory_matrices():
            key = (cfg.n_layers - 1 if f.kind == "readout" else f.layer, f.head, f.kind)
            ref[key] = f.dense if f.dense is not None else (f.left, f.right)
        ck, lay = open_checkpoint(d)
        with ck:
            got = {(m.layer, m.head, m.type): m for m in
                   theory_matrices(ck, layout=lay, types=lay.matrix_types + ("readout",))}
            assert lay.theory_config["residual"] is cfg.residual and lay.theory_config["ffn_kind"] == cfg.ffn_kind
        assert set(got) == set(ref)
        for k, m in got.items():
            if m.factors is not None:
                assert all(np.array_equal(a, b) for a, b in zip(m.factors, ref[k]))
            else:
                assert np.array_equal(m.dense, ref[k])


def test_shipped_demo_layout_and_theory_config():
    cfg = json.loads((DEMO / "config.json").read_text())
    ck, lay = open_checkpoint(DEMO)
    ck.close()
    assert (lay.num_layers, lay.hidden_size, lay.num_heads, lay.head_dim) == (
        cfg["n_layers"], cfg["d_model"], cfg["n_heads"], cfg["d_head"])
    assert lay.num_heads * lay.head_dim != lay.hidden_size  # the case the BERT path would slice wrongly
    t = lay.theory_config
    assert (t["ffn_kind"], t["residual"], t["seq_len"], t["activation"]) == (
        cfg["ffn_kind"], cfg["residual"], cfg["seq_len"], "relu")
    assert (t["loss_bound"], t["loss_lip"], t["readout_norm"]) == (
        cfg["loss"]["loss_bound"], cfg["loss"]["loss_lip"], cfg["readout_norm"])
    summary = lay.summary()
    json.dumps(summary)  # JSON-friendly
    assert summary["architecture"] == "certbound-pi" and summary["attention_logit_scale"] is False


def test_demo_spectrum_cli_is_sound(tmp_path, capsys):
    """`certbound spectrum` on the shipped model: exact (Fraction) Frobenius norms lie inside the balls."""
    out = tmp_path / "r.json"
    assert main(["spectrum", str(DEMO), "--json", str(out)]) == 0
    assert "certbound-pi" in capsys.readouterr().out
    rep = json.loads(out.read_text())
    # (the learned readout may be listed last, as an N x 1 matrix)
    cfg = json.loads((DEMO / "config.json").read_text())
    per_layer = (["QK"] * cfg["n_heads"] + ["VO"] * cfg["n_heads"]
                 + (["M"] if cfg["ffn_kind"] == "single" else ["M_in", "M_out"]))
    assert [r["type"] for r in rep["matrices"] if r["type"] != "readout"] == per_layer * cfg["n_layers"]
    ck, lay = open_checkpoint(DEMO)
    with ck:
        mats = {(m.layer, m.head, m.type): m for m in
                theory_matrices(ck, layout=lay, types=lay.matrix_types + ("readout",))}
    for r in rep["matrices"]:
        m = mats[(r["layer"], r["head"], r["type"])]
        if m.factors is not None:
            assert r["rank"]["upper"] <= lay.head_dim
            A = [[Fraction(x) for x in row] for row in m.factors[0]]
            B = [[Fraction(x) for x in row] for row in m.factors[1]]
            W = [[sum(a * b for a, b in zip(ra, rb)) for rb in B] for ra in A]  # A Bᵀ exactly
        else:
            W = [[Fraction(x) for x in row] for row in m.dense]
        fro2 = sum(x * x for row in W for x in row)
        q = r["frobenius_norm"]
        assert Fraction(q["lower"]) ** 2 <= fro2 <= Fraction(q["upper"]) ** 2, (r["layer"], r["head"], r["type"])
        s1 = np.linalg.svd(np.array(W, dtype=float), compute_uv=False)[0]
        lo, up = float(r["spectral_norm"]["lower"]), float(r["spectral_norm"]["upper"])
        assert lo * (1 - 1e-12) <= s1 <= up * (1 + 1e-12)


def test_scale_logits_refused(capsys):
    assert main(["spectrum", str(DEMO), "--scale-logits"]) == 2
    assert "no logit scale to fold in: drop --scale-logits" in capsys.readouterr().err
    with pytest.raises(ValueError, match="no logit scale to fold in: drop `scale_logits`"):
        list(theory_matrices(DEMO, scale_logits=True))


def test_type_errors(tmp_path):
    write_pi_checkpoint(tmp_path / "p", N=6, L=1, H=2, dh=2)
    write_pi_checkpoint(tmp_path / "b", N=6, L=1, H=2, dh=2, ffn="two", d_ff=5)
    with pytest.raises(ValueError, match="variant P: its one feed-forward matrix is type 'M' \\(there is no M_in\\)"):
        list(theory_matrices(tmp_path / "p", types=("M_in",)))
    with pytest.raises(ValueError, match="two feed-forward matrices"):
        list(theory_matrices(tmp_path / "b", types=("M",)))


def test_readout_refused_for_bert(tmp_path):
    from tests.checkpoints.synth_checkpoints import make_checkpoint

    make_checkpoint(str(tmp_path), "bert", L=1, N=8, H=2, F=16)
    with pytest.raises(ValueError, match="no learned readout"):
        list(theory_matrices(tmp_path, types=("readout",)))


@pytest.mark.parametrize("change,message", [
    (dict(d_head=7), "d_head=7 exceeds d_model=6"),
    (dict(ffn_kind="three"), "ffn_kind='three'"),
    (dict(format_version=2), "format_version 2"),
    (dict(n_heads=0), "n_heads=0 is not a positive integer"),
    (dict(activation="gelu"), "activation 'gelu'"),
    (dict(softmax_lip=0.5), "softmax_lip=0.5 is < 1"),
    (dict(loss={"kind": "clipped-logistic", "clip": 3.0, "loss_bound": 2.0}), "loss_bound=2.0 disagrees"),
    (dict(residual="yes"), "residual='yes'"),
])
def test_bad_config(tmp_path, change, message):
    write_pi_checkpoint(tmp_path, N=6, L=1, H=2, dh=2, **change)
    with pytest.raises(ValueError, match=message) as e:
        open_checkpoint(tmp_path)
    assert "config.json" in str(e.value)


def test_variant_b_needs_d_ff(tmp_path):
    write_pi_checkpoint(tmp_path, N=6, L=1, H=2, dh=2, ffn="two", d_ff=4)
    cfg = json.loads((tmp_path / "config.json").read_text())
    del cfg["d_ff"]
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="lacks the required key 'd_ff'"):
        open_checkpoint(tmp_path)


def test_ramp_loss_lipschitz_is_exact(tmp_path):
    write_pi_checkpoint(tmp_path, N=6, L=1, H=2, dh=2, loss={"kind": "ramp", "margin": 0.3})
    ck, lay = open_checkpoint(tmp_path)
    ck.close()
    # 1/0.3 is not a float: kept as the exact rational 1/m of the float margin m the loss uses
    assert lay.theory_config["loss_lip"] == 1 / Fraction(0.3) and lay.theory_config["loss_bound"] == 1
    json.dumps(lay.summary())


@pytest.mark.parametrize("tensor,shape,message", [
    ("blocks.0.attn.W_O", None, "'blocks.0.attn.W_O' \\(W_O of layer 0\\) is missing"),
    ("readout.w", None, "'readout.w' \\(the readout\\) is missing"),
    ("blocks.0.attn.W_K", (6, 6), "'blocks.0.attn.W_K' has shape \\[6, 6\\].*2 heads of 2.*implies \\[6, 4\\]"),
    ("blocks.0.ffn.M", (6, 5), "'blocks.0.ffn.M' has shape \\[6, 5\\]"),
    ("readout.w", (6, 1), "'readout.w' has shape \\[6, 1\\].*implies \\[6\\]"),
])
def test_bad_tensors(tmp_path, tensor, shape, message):
    stored = write_pi_checkpoint(tmp_path, N=6, L=1, H=2, dh=2)
    if shape is None:
        del stored[tensor]
    else:
        stored[tensor] = np.zeros(shape)
    save_file(stored, str(tmp_path / "model.safetensors"))
    with pytest.raises(ValueError, match=message):
        open_checkpoint(tmp_path)


def test_nan_weight_named(tmp_path):
    stored = write_pi_checkpoint(tmp_path, N=6, L=1, H=2, dh=2)
    stored["blocks.0.ffn.M"][1, 2] = np.nan
    save_file(stored, str(tmp_path / "model.safetensors"))
    with pytest.raises(ValueError, match="blocks.0.ffn.M"):
        list(theory_matrices(tmp_path))


def test_bound_cli_agrees_with_demo(tmp_path):
    """`certbound bound` on the shipped model = `certbound demo`'s Theorem 2 number (same n, δ, options)."""
    from certbound.ball import ball_from_json
    from certbound.pipeline import run_demo

    for n in (1000, 469759):
        out = tmp_path / f"b{n}.json"
        assert main(["bound", str(DEMO), "--n", str(n), "--delta", "0.01", "--json", str(out), "--quiet"]) == 0
        rep = json.loads(out.read_text())
        assert rep["config"]["architecture"] == "certbound-pi"
        demo = run_demo(DEMO, n=n, delta=0.01, search_nonvacuous=False, n_test=10)
        b = ball_from_json(rep["bound"])
        # Both are certified upper bounds computed along slightly different Arb paths (the singular-value
        # enclosures differ in their last bits), so they agree closely rather than as overlapping balls.
        assert abs(float(b.mid()) - float(demo.bound.bound.mid())) <= 1e-12 * float(b.mid())
        assert rep["vacuous"] == demo.bound.vacuous


def test_bound_cli_picks_variant_and_residual_from_config(tmp_path):
    """A variant-B residual certbound-pi model: `certbound bound` = the models package's own Theorem 2 call."""
    from certbound.ball import ball_from_json
    from certbound.models import PiTransformer, PiTransformerConfig, save_pi_checkpoint
    from certbound.pipeline import run_demo

    cfg = PiTransformerConfig(d_model=6, n_layers=2, n_heads=2, d_head=2, seq_len=5, ffn_kind="two", d_ff=5,
                              residual=True, readout_norm=2.0)
    d = save_pi_checkpoint(PiTransformer.random(cfg, seed=3), tmp_path / "m")
    out = tmp_path / "b.json"
    assert main(["bound", str(d), "--n", "1e7", "--delta", "0.05", "--json", str(out), "--quiet"]) == 0
    rep = json.loads(out.read_text())
    assert rep["assumptions"]["residual"] is True and rep["assumptions"]["d_ff"] == 5
    assert rep["assumptions"]["seq_len"] == 5 and rep["loss_bound"]["upper"] == "4"
    assert {m["type"] for m in rep["matrices"]} == {"QK", "VO", "M_in", "M_out", "readout"}
    ref = run_demo(d, n=10**7, delta=0.05, search_nonvacuous=False).bound.bound
    b = ball_from_json(rep["bound"])
    assert abs(float(b.mid()) - float(ref.mid())) <= 1e-12 * float(ref.mid())


def test_bound_from_spectrum_report_equals_direct(tmp_path):
    spec = tmp_path / "s.json"
    assert main(["spectrum", str(DEMO), "--json", str(spec)]) == 0
    outs = []
    for extra in ([], ["--spectra", str(spec)]):
        out = tmp_path / f"b{len(extra)}.json"
        assert main(["bound", str(DEMO), "--n", "469759", "--delta", "0.01", "--json", str(out), "--quiet"]
                    + extra) == 0
        outs.append(json.loads(out.read_text())["bound"]["upper"])
    assert outs[0] == outs[1]


def test_proxies_and_audit_on_demo(tmp_path, capsys):
    # The paper's proxies need M_in and M_out: variant P is an input error (exit 2), not a crash;
    # the shipped demo model is variant B, so they apply to it.
    write_pi_checkpoint(tmp_path / "p", N=6, L=1, H=2, dh=2)
    assert main(["proxies", str(tmp_path / "p")]) == 2
    assert "M_in" in capsys.readouterr().err
    cfg = json.loads((DEMO / "config.json").read_text())
    assert cfg["ffn_kind"] == "two" and main(["proxies", str(DEMO)]) == 0
    capsys.readouterr()
    last, dh = cfg["n_layers"] - 1, cfg["d_head"]
    claims = tmp_path / "c.toml"
    claims.write_text(f'[models]\ndemo = "{DEMO}"\n\n'
                      f'[[claim]]\nid = "rank"\nmodel = "demo"\nquantity = \'rank(layer={last}, head=0, type="QK")\'\n'
                      f'relation = "<="\nvalue = "{dh}"\n\n'
                      f'[[claim]]\nid = "dh"\nmodel = "demo"\nquantity = "head_dim()"\nrelation = "="\nvalue = "{dh}"\n')
    assert main(["audit", str(claims), "--json", str(tmp_path / "a.json"), "--quiet"]) == 0
