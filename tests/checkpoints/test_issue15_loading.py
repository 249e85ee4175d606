"""What `bound` covers for the new layouts, mapping files for them, and the loader defects of issue 15.

Each defect test failed before its fix (noted per test). Checkpoints are
written by the real ``transformers`` (tiny configs, seeded random weights).
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from certbound.checkpoints import (  # noqa: E402
    MAPPING_EXAMPLE,
    MAPPING_HELP,
    load_checkpoint,
    open_checkpoint,
    theory_coverage,
    theory_matrices,
)
from certbound.pipeline import BoundSettings, certified_bound, spectrum_report  # noqa: E402
from certbound.pipeline._bound import spec_from_layout  # noqa: E402
from tests.checkpoints.synth_checkpoints import make_checkpoint  # noqa: E402
from tests.checkpoints.test_transformers_architectures import write_tiny_checkpoint  # noqa: E402


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """Checkpoints written by transformers, one directory per case, built on first use."""
    cache: dict = {}

    def get(name: str):
        if name not in cache:
            d = tmp_path_factory.mktemp(name)
            model, _ = write_tiny_checkpoint(name, d)
            cache[name] = (d, model)
        return cache[name]

    return get


# --------------------------------------------------------------------------- what `bound` covers

@pytest.mark.parametrize("name, block", [
    ("llama", "layers 0-1: gated feed-forward"),
    ("mixtral", "layer 0: mixture of 3 experts"),
    ("bart", "decoder layer 1: cross-attention"),
    ("flan-t5", "decoder layer 1: cross-attention"),
])
def test_bound_refuses_blocks_outside_the_theory_and_names_them(tiny, name, block):
    d, _ = tiny(name)
    with pytest.raises(ValueError, match="does not cover") as ei:
        certified_bound(str(d), 1000, "0.01", BoundSettings(seq_len=8))
    assert block in str(ei.value) and "certbound spectrum" in str(ei.value)
    # ... while spectrum works: every matrix certified
    rep = spectrum_report(str(d))
    assert rep["matrices"] and all(r["certified"] for r in rep["matrices"])


def test_spectrum_names_experts_and_cross_attention(tiny):
    rep = spectrum_report(str(tiny("mixtral")[0]))
    experts = {r["expert"] for r in rep["matrices"] if r["type"] == "M_gate"}
    assert experts == {0, 1, 2}
    kv = {(r["head"], r.get("kv_head", r["head"])) for r in rep["matrices"] if r["type"] == "QK"}
    assert kv == {(0, 0), (1, 0), (2, 1), (3, 1)}  # GQA pairing h -> floor(h * 2 / 4)
    import certbound

    api = certbound.open_model(str(tiny("mixtral")[0])).spectra(spectrum_mode="fast")
    assert api.find(0, "M_down", expert=1).expert == 1
    assert {r[2] for r in api.csv_rows()[1] if r[2].startswith("M_up")} == {"M_up[e0]", "M_up[e1]", "M_up[e2]"}
    rep = spectrum_report(str(tiny("bart")[0]))
    cross = [r for r in rep["matrices"] if r["type"] == "QK_cross"]
    assert {r["stack"] for r in cross} == {"decoder"} and len(cross) == 2  # decoder heads = 2
    assert {r["layer"] for r in cross} == {1}


def test_covered_layouts_get_a_bound_with_their_notes(tiny):
    d, _ = tiny("gpt_neox")
    res, _, layout, _ = certified_bound(str(d), 10**6, "0.01", BoundSettings())
    assert theory_coverage(layout).covered
    assert "rotary" in res.assumptions["architecture_notes"]
    assert res.assumptions["seq_len_source"].startswith("config")


def test_albert_shared_layer_certified_once_and_reported_for_each_use(tiny, monkeypatch):
    d, _ = tiny("albert")
    from certbound.pipeline import _spectrum

    calls = []
    real = _spectrum.certify_theory_matrices  # every record is made here (heads of a layer in one batch)
    monkeypatch.setattr(_spectrum, "certify_theory_matrices",
                        lambda ms, *a, **k: calls.extend(m.layer for m in ms) or real(ms, *a, **k))
    rep = spectrum_report(str(d))
    assert set(calls) == {0}  # the stored layer, once
    by = {(r["layer"], r["head"], r["type"]): r for r in rep["matrices"]}
    assert {k[0] for k in by} == {0, 1, 2}
    for (layer, head, t), r in by.items():
        if layer:
            assert r["same_as_layer"] == 0 and r["sigma"] == by[(0, head, t)]["sigma"]
    res, _, _, _ = certified_bound(str(d), 10**6, "0.01", BoundSettings())
    assert len([m for m in res.matrices if m.type == "QK"]) == 3 * 4  # every use of the shared layer


# --------------------------------------------------------------------------- mapping files

def test_mapping_help_example_is_valid_json():
    """Failed before: the example carried # comments."""
    example = json.loads(MAPPING_EXAMPLE)
    assert example["tensors"]["M_gate"].count("{layer}") == 1
    assert MAPPING_EXAMPLE in MAPPING_HELP


def test_unsupported_architecture_error_example_parses(tmp_path):
    make_checkpoint(str(tmp_path), "bert", L=1, N=8, H=2, F=16)
    cfg = json.loads((tmp_path / "config.json").read_text())
    cfg.update(model_type="toyformer", architectures=["Toy"])
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError) as ei:
        open_checkpoint(tmp_path)
    msg = str(ei.value)
    start = msg.index('{"layout"')
    depth, end = 0, start
    for end, ch in enumerate(msg[start:], start):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth == 0:
            break
    assert json.loads(msg[start:end + 1])["layout"] == "linear"


def test_undeclared_fused_layout_is_refused_and_declared_layouts_are_used(tiny, tmp_path):
    d, model = tiny("gpt_neox")
    tensors = {"W_QKV": "layers.{layer}.attention.query_key_value.weight", "W_O": "layers.{layer}.attention.dense.weight",
               "M_in": "layers.{layer}.mlp.dense_h_to_4h.weight", "M_out": "layers.{layer}.mlp.dense_4h_to_h.weight"}
    with pytest.raises(ValueError, match="qkv_layout.*never guesses"):
        open_checkpoint(d, mapping={"tensors": tensors})
    builtin = {(m.layer, m.head, m.type): m.to_dense() for m in theory_matrices(d)}
    mp = tmp_path / "neox.json"
    mp.write_text(json.dumps({"tensors": tensors, "qkv_layout": "per_head_interleaved"}))
    mapped = {(m.layer, m.head, m.type): m.to_dense() for m in theory_matrices(d, mapping=str(mp))}
    assert mapped.keys() == builtin.keys() and all(np.array_equal(mapped[k], builtin[k]) for k in builtin)
    # declaring the wrong layout gives other (wrong) heads: the layout matters
    mp.write_text(json.dumps({"tensors": tensors, "qkv_layout": "contiguous"}))
    wrong = {(m.layer, m.head, m.type): m.to_dense() for m in theory_matrices(d, mapping=str(mp))}
    assert not np.allclose(wrong[(0, 1, "QK")], builtin[(0, 1, "QK")])


def test_mapping_with_gqa_head_dim_and_gated_slots(tiny, tmp_path):
    d, _ = tiny("qwen3")  # 4 heads, 2 KV heads, head_dim 12 != 32 / 4
    t = {"W_Q": "layers.{layer}.self_attn.q_proj.weight", "W_K": "layers.{layer}.self_attn.k_proj.weight",
         "W_V": "layers.{layer}.self_attn.v_proj.weight", "W_O": "layers.{layer}.self_attn.o_proj.weight",
         "M_gate": "layers.{layer}.mlp.gate_proj.weight", "M_up": "layers.{layer}.mlp.up_proj.weight",
         "M_down": "layers.{layer}.mlp.down_proj.weight"}
    cfg = json.loads((d / "config.json").read_text())
    cfg["model_type"] = "toy-qwen"
    (d / "toy.json").write_text(json.dumps(cfg))
    mapping = {"tensors": t, "num_key_value_heads": 2, "head_dim": 12}
    mapped = {(m.layer, m.head, m.type): m.to_dense()
              for m in theory_matrices(load_checkpoint(d, config=str(d / "toy.json")), mapping=mapping)}
    builtin = {(m.layer, m.head, m.type): m.to_dense() for m in theory_matrices(d)}
    assert mapped.keys() == builtin.keys() and all(np.array_equal(mapped[k], builtin[k]) for k in builtin)


def test_mapping_with_shared_layers(tiny):
    d, _ = tiny("albert")
    base = "encoder.albert_layer_groups.0.albert_layers.0."
    t = {"W_Q": base + "attention.query.weight", "W_K": base + "attention.key.weight",
         "W_V": base + "attention.value.weight", "W_O": base + "attention.dense.weight",
         "M_in": base + "ffn.weight", "M_out": base + "ffn_output.weight"}
    with pytest.raises(ValueError, match="shared_layers"):
        open_checkpoint(d, mapping={"tensors": t})
    ck, lay = open_checkpoint(d, mapping={"tensors": t, "shared_layers": True, "num_layers": 3})
    mapped = {(m.layer, m.head, m.type): (m.to_dense(), m.same_as_layer) for m in theory_matrices(ck, layout=lay)}
    builtin = {(m.layer, m.head, m.type): (m.to_dense(), m.same_as_layer) for m in theory_matrices(d)}
    assert mapped.keys() == builtin.keys()
    for k, (w, same) in builtin.items():
        assert np.array_equal(mapped[k][0], w) and mapped[k][1] == same == (0 if k[0] else None)


@pytest.mark.parametrize("name, heads_key", [("t5", "num_heads"), ("opt", "num_attention_heads"),
                                             ("bart", "encoder_attention_heads")])
def test_mapping_reads_t5_opt_bart_size_keys(tiny, name, heads_key):
    """Failed before: num_heads / d_kv / ffn_dim / encoder_* were not read; T5's error said num_heads was missing."""
    d, _ = tiny(name)
    cfg = json.loads((d / "config.json").read_text())
    lay_builtin = open_checkpoint(d)[1]
    s0 = lay_builtin.stacks[0]
    mapping = {"tensors": {r: s0.templates[r] for r in ("W_Q", "W_K", "W_V", "W_O", "M_in", "M_out")},
               "prefix": lay_builtin.prefix}
    if name != "opt":
        mapping["num_layers"] = s0.num_layers  # the encoder stack only
    _, lay = open_checkpoint(d, mapping=mapping)
    assert (lay.num_heads, lay.head_dim, lay.intermediate_size) == (s0.num_heads, s0.head_dim, s0.intermediate_size)
    assert lay.num_heads == cfg[heads_key]


# --------------------------------------------------------------------------- smaller defects

def test_distilbert_activation_key_is_read_for_bound(tmp_path):
    """Failed before: `bound` refused every DistilBERT ('states no activation')."""
    make_checkpoint(str(tmp_path), "distilbert", L=1, N=8, H=2, F=16)
    ck, layout = open_checkpoint(tmp_path)
    assert "hidden_act" not in ck.config and layout.activation == "gelu"
    assert spec_from_layout(layout, ck.config).activation == "gelu"
    res, _, _, _ = certified_bound(str(tmp_path), 10**6, "0.01", BoundSettings())
    assert res.bound > 0


def test_gpt2_seq_len_defaults_to_n_positions(tmp_path):
    """Failed before: 512 was used, not n_positions (32 here)."""
    make_checkpoint(str(tmp_path), "gpt2", L=1, N=8, H=2, F=16)
    ck, layout = open_checkpoint(tmp_path)
    assert spec_from_layout(layout, ck.config).seq_len == 32


@pytest.mark.parametrize("flags, expect", [
    ({}, [4, 4]),
    ({"scale_attn_by_inverse_layer_idx": True}, [4, 16]),
    ({"scale_attn_weights": False}, [None, None]),
])
def test_gpt2_scale_flags(tmp_path, flags, expect):
    """Failed before: both flags were ignored (1/sqrt(d_h) in every layer)."""
    make_checkpoint(str(tmp_path), "gpt2", L=2, N=8, H=2, F=16)
    cfg = json.loads((tmp_path / "config.json").read_text()) | flags
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    _, layout = open_checkpoint(tmp_path)
    assert [layout.logit_scale_d(i) for i in range(2)] == expect
    assert layout.attention_logit_scale == (expect[0] is not None)


def test_vit_state_dict_with_transformers5_names(tmp_path):
    """Failed before: `layers.{i}.attention.q_proj` (transformers-5 module names) was refused."""
    m = transformers.ViTModel(transformers.ViTConfig(hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                                                     intermediate_size=24, image_size=8, patch_size=4))
    torch.save(m.state_dict(), tmp_path / "pytorch_model.bin")
    m.config.to_json_file(tmp_path / "config.json")
    ck, lay = open_checkpoint(tmp_path)
    sd = m.state_dict()
    raw = {(x.layer, x.type): x.dense for x in theory_matrices(ck, layout=lay, raw=True, types=("M_in",))}
    assert np.array_equal(raw[(1, "W_Q")], sd["layers.1.attention.q_proj.weight"].detach().double().numpy().T)
    assert np.array_equal(raw[(1, "M_in")], sd["layers.1.mlp.fc1.weight"].detach().double().numpy().T)


@pytest.mark.parametrize("shard", [None, "4KB"])
def test_variant_fp16_directories(tmp_path, shard):
    """Failed before: 'no weights found' for model.fp16.safetensors (and its sharded index)."""
    m = transformers.GPT2Model(transformers.GPT2Config(n_embd=16, n_layer=2, n_head=2, vocab_size=30,
                                                       n_positions=16)).half()
    kw = {"max_shard_size": shard} if shard else {}
    m.save_pretrained(tmp_path, variant="fp16", **kw)
    ck, lay = open_checkpoint(tmp_path)
    assert lay.num_layers == 2 and ck.dtype(lay.tensor_name("W_QKV", 1)) == "F16"
    w = {x.layer: x.dense for x in theory_matrices(ck, layout=lay, raw=True, types=()) if x.type == "W_Q"}
    assert np.array_equal(w[1], m.h[1].attn.c_attn.weight.detach().double().numpy()[:, :16])


def test_several_variants_are_ambiguous(tmp_path):
    m = transformers.GPT2Model(transformers.GPT2Config(n_embd=16, n_layer=1, n_head=2, vocab_size=30,
                                                       n_positions=16))
    m.save_pretrained(tmp_path, variant="a")
    m.save_pretrained(tmp_path, variant="b")
    with pytest.raises(ValueError, match="several weight variants"):
        load_checkpoint(tmp_path)


def _export_onnx(module, args, path):
    torch.onnx.export(module, args, str(path), dynamo=False, input_names=["x"])


def test_gpt2_onnx_conv1d_weights_are_not_transposed(tmp_path):
    """Failed before: Gemm(x, W, b) of Conv1D was transposed like nn.Linear's, so the shapes mismatched."""
    pytest.importorskip("onnx")
    model = transformers.GPT2Model(transformers.GPT2Config(n_embd=16, n_layer=1, n_head=2, vocab_size=30,
                                                           n_positions=16, n_inner=24)).eval()

    class Blocks(torch.nn.Module):  # tensor names h.0.attn.c_attn.weight ...
        def __init__(self):
            super().__init__()
            self.h = model.h

        def forward(self, x):
            return self.h[0](x)[0]

    _export_onnx(Blocks(), (torch.randn(1, 5, 16),), tmp_path / "model.onnx")
    model.config.to_json_file(tmp_path / "config.json")
    ck, lay = open_checkpoint(tmp_path)
    assert ck.format == "onnx"
    raw = {x.type: x.dense for x in theory_matrices(ck, layout=lay, raw=True, types=("M_in",))}
    c = model.h[0].attn.c_attn.weight.detach().double().numpy()
    assert np.array_equal(raw["W_K"], c[:, 16:32])
    assert np.array_equal(raw["M_in"], model.h[0].mlp.c_fc.weight.detach().double().numpy())


def test_transformers5_bert_onnx_head_count_without_config(tmp_path):
    """Failed before: Reshape to (b, t, -1, d_h) left the head count uninferred."""
    pytest.importorskip("onnx")
    model = transformers.BertModel(transformers.BertConfig(hidden_size=16, num_hidden_layers=2, num_attention_heads=4,
                                                           intermediate_size=24, vocab_size=30)).eval()
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g))

    class Enc(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = model

        def forward(self, ids):
            return self.bert(input_ids=ids).last_hidden_state

    _export_onnx(Enc(), (torch.randint(0, 30, (1, 5)),), tmp_path / "model.onnx")
    ck, lay = open_checkpoint(tmp_path / "model.onnx")
    assert ck.config_path is None and "_inferred" in ck.config
    assert (lay.num_layers, lay.num_heads, lay.head_dim, lay.intermediate_size) == (2, 4, 4, 24)
    raw = {x.layer: x.dense for x in theory_matrices(ck, layout=lay, raw=True, types=()) if x.type == "W_V"}
    want = model.encoder.layer[1].attention.self.value.weight.detach().double().numpy().T
    assert np.array_equal(raw[1], want)


def test_config_declaring_fewer_layers_than_the_weights_is_refused(tmp_path):
    make_checkpoint(str(tmp_path), "bert", L=3, N=8, H=2, F=16)
    cfg = json.loads((tmp_path / "config.json").read_text())
    cfg["num_hidden_layers"] = 2
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match=re.escape("layer 2, but the config declares 2 layers")):
        open_checkpoint(tmp_path)


# --------------------------------------------------------------------------- audit

def test_audit_addresses_experts_gated_and_cross_attention_matrices(tiny, tmp_path, capsys):
    import mpmath

    from certbound.cli import main

    d, model = tiny("mixtral")
    ex = model.layers[0].mlp.experts  # transformers-5 fused (E, 2F, N): gate rows first
    F = ex.intermediate_dim
    gate2 = ex.gate_up_proj[2, :F].detach().double().numpy()  # expert 2's gate, as the module applies it
    mpmath.mp.prec = 200
    s1 = max(mpmath.svd_r(mpmath.matrix(gate2.tolist()), compute_uv=False))
    true6 = mpmath.nstr(s1, 6, strip_zeros=False)
    bart, _ = tiny("bart")
    (tmp_path / "c.toml").write_text(f"""
[models]
mix = "{d}"
bart = "{bart}"

[[claim]]
id = "expert-gate"
model = "mix"
quantity = 'sigma(layer=0, type="M_gate", expert=2, i=1)'
relation = "="
value = "{true6}"

[[claim]]
id = "expert-gate-wrong"
model = "mix"
quantity = 'sigma(layer=0, type="M_gate", expert=1, i=1)'
relation = "="
value = "{true6}"

[[claim]]
id = "cross"
model = "bart"
quantity = 'spectral_norm(layer=1, head=1, type="QK_cross")'
relation = ">"
value = "0"
""")
    code = main(["audit", str(tmp_path / "c.toml"), "--json", str(tmp_path / "out.json")])
    capsys.readouterr()
    got = {c["id"]: c["status"] for c in json.loads((tmp_path / "out.json").read_text())["claims"]}
    assert got == {"expert-gate": "confirmed", "expert-gate-wrong": "refuted", "cross": "confirmed"}, got
    assert code == 1  # one refuted claim
    (tmp_path / "e.toml").write_text(f"""
[models]
mix = "{d}"

[[claim]]
id = "no-expert"
model = "mix"
quantity = 'sigma(layer=0, type="M_gate", i=1)'
relation = ">"
value = "0"
""")
    main(["audit", str(tmp_path / "e.toml"), "--json", str(tmp_path / "e.json")])
    out, err = capsys.readouterr()
    assert "give expert=0..2" in out + err + (tmp_path / "e.json").read_text()


def test_bf16_sharded_gqa_checkpoint_reads_the_stored_values(tmp_path):
    from tests.checkpoints.test_transformers_architectures import CASES

    cfg = CASES["llama"].config()
    model = transformers.AutoModel.from_config(cfg).to(torch.bfloat16)
    model.save_pretrained(tmp_path, max_shard_size="20KB")
    assert (tmp_path / "model.safetensors.index.json").exists()
    ck, lay = open_checkpoint(tmp_path)
    assert ck.format == "safetensors-sharded" and (lay.num_heads, lay.num_kv_heads) == (4, 2)
    attn = model.layers[1].self_attn
    wq = attn.q_proj.weight.detach().double().numpy().T  # exact bf16 -> float64
    wk = attn.k_proj.weight.detach().double().numpy().T
    qk = {m.head: m for m in theory_matrices(ck, layout=lay, types=("QK",), layers=[1])}
    d = lay.head_dim
    for h in range(4):
        g = h // 2  # repeat_kv pairing
        assert np.array_equal(qk[h].factors[0], wq[:, h * d:(h + 1) * d])
        assert np.array_equal(qk[h].factors[1], wk[:, g * d:(g + 1) * d])
    up = {m.type: m.dense for m in theory_matrices(ck, layout=lay, layers=[1]) if m.type.startswith("M_")}
    assert np.array_equal(up["M_up"], model.layers[1].mlp.up_proj.weight.detach().double().numpy().T)


def test_multimodal_gemma3_certifies_its_language_model(tmp_path):
    """Gemma 3 4B+ checkpoints are Gemma3ForConditionalGeneration: text_config, two layer stacks."""
    tc = transformers.Gemma3TextConfig(hidden_size=32, intermediate_size=40, num_hidden_layers=2,
                                       num_attention_heads=4, num_key_value_heads=2, head_dim=16, vocab_size=64)
    vc = transformers.SiglipVisionConfig(hidden_size=16, intermediate_size=24, num_hidden_layers=1,
                                         num_attention_heads=2, image_size=16, patch_size=8)
    model = transformers.Gemma3ForConditionalGeneration(
        transformers.Gemma3Config(text_config=tc.to_dict(), vision_config=vc.to_dict(), mm_tokens_per_image=4))
    model.save_pretrained(tmp_path)
    ck, lay = open_checkpoint(tmp_path)
    assert (lay.architecture, lay.num_layers, lay.num_kv_heads, lay.head_dim) == ("gemma3", 2, 2, 16)
    assert lay.prefix.startswith("language_model") and any("vision tower" in n for n in lay.notes)
    lm = model.model.language_model
    wq = lm.layers[1].self_attn.q_proj.weight.detach().double().numpy().T
    qk = {m.head: m for m in theory_matrices(ck, layout=lay, types=("QK",), layers=[1])}
    assert np.array_equal(qk[3].factors[0], wq[:, 48:64])
    down = [m for m in theory_matrices(ck, layout=lay, types=("M_down",), layers=[0])][0]
    assert np.array_equal(down.dense, lm.layers[0].mlp.down_proj.weight.detach().double().numpy().T)


@pytest.mark.parametrize("fmt", ["safetensors", "bin"])
def test_mixtral_transformers5_stacked_expert_tensors(tmp_path, fmt):
    """A state_dict with transformers-5 names: experts.gate_up_proj (E, 2F, N), experts.down_proj (E, N, F)."""
    from safetensors.torch import save_file

    from tests.checkpoints.test_transformers_architectures import CASES

    model = transformers.AutoModel.from_config(CASES["mixtral"].config(), experts_implementation="eager")
    sd = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    assert "layers.0.mlp.experts.gate_up_proj" in sd
    if fmt == "bin":
        torch.save(sd, tmp_path / "pytorch_model.bin")
    else:
        save_file(sd, str(tmp_path / "model.safetensors"))
    model.config.to_json_file(tmp_path / "config.json")
    ck, lay = open_checkpoint(tmp_path)
    ex = model.layers[0].mlp.experts
    F = ex.intermediate_dim
    got = {(m.type, m.expert): m.dense for m in theory_matrices(ck, layout=lay, layers=[0])
           if m.expert is not None}
    assert {e for _, e in got} == {0, 1, 2}
    for e in range(3):
        gu = ex.gate_up_proj[e].detach().double().numpy()
        assert np.array_equal(got[("M_gate", e)], gu[:F].T) and np.array_equal(got[("M_up", e)], gu[F:].T)
        assert np.array_equal(got[("M_down", e)], ex.down_proj[e].detach().double().numpy().T)
    x = torch.randn(5, lay.hidden_size, dtype=torch.float64)
    ex64 = ex.to(torch.float64)
    with torch.no_grad():
        want = ex64(x, torch.full((5, 1), 1), torch.ones(5, 1, dtype=torch.float64)).numpy()
    X = x.numpy()
    ref = (torch.nn.functional.silu(torch.from_numpy(X @ got[("M_gate", 1)])).numpy() * (X @ got[("M_up", 1)])
           ) @ got[("M_down", 1)]
    np.testing.assert_allclose(ref, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())


def test_t5_encoder_model_is_one_encoder_stack_and_covered(tmp_path):
    """T5EncoderModel checkpoints (sentence-T5, text encoders) hold only the encoder stack."""
    model = transformers.T5EncoderModel(transformers.T5Config(d_model=16, d_kv=4, d_ff=24, num_layers=2,
                                                              num_heads=4, vocab_size=30))
    model.save_pretrained(tmp_path)
    ck, lay = open_checkpoint(tmp_path)
    assert [s.name for s in lay.stacks] == ["encoder"] and lay.num_layers == 2
    assert not lay.attention_logit_scale and theory_coverage(lay).covered
    wo = model.encoder.block[1].layer[0].SelfAttention.o.weight.detach().double().numpy().T
    vo = {m.head: m for m in theory_matrices(ck, layout=lay, types=("VO",), layers=[1])}
    assert np.array_equal(vo[2].factors[1], wo[8:12, :].T)
    res, _, _, _ = certified_bound(str(tmp_path), 10**6, "0.01", BoundSettings(seq_len=16))
    assert res.bound > 0
