"""Theory matrices of every supported architecture, against an independent re-derivation."""

import json
import os

import numpy as np
import pytest

from certbound.checkpoints import (
    ARCHITECTURES,
    MATRIX_TYPES,
    load_checkpoint,
    open_checkpoint,
    resolve_layout,
    theory_matrices,
)
from tests.checkpoints.synth_checkpoints import (
    ARCH_CONFIGS,
    expected_matrices,
    make_checkpoint,
    torch_layout,
)

L, N, H, F = 2, 16, 4, 32  # d_h = 4: not 64, and a power of 4


def test_every_builtin_architecture_has_a_fixture():
    """Each built-in architecture is tested here (synthetic) or against the real transformers module."""
    from tests.checkpoints.test_transformers_architectures import ARCH_OF, CASES

    real = {ARCH_OF.get(c, c) for c in CASES}
    assert set(ARCHITECTURES) == set(ARCH_CONFIGS) | real


@pytest.mark.parametrize("arch", sorted(ARCH_CONFIGS))
def test_matrices_match_the_papers_slicing(tmp_path, arch):
    stored = make_checkpoint(str(tmp_path), arch, L=L, N=N, H=H, F=F)
    ck, layout = open_checkpoint(tmp_path)
    assert (layout.architecture, layout.num_layers, layout.hidden_size, layout.num_heads, layout.head_dim,
            layout.intermediate_size) == (arch, L, N, H, N // H, F)
    assert layout.prefix == ARCH_CONFIGS[arch]["prefix"]
    ms = list(theory_matrices(ck, layout=layout))
    assert len(ms) == L * (2 * H + 2)
    seen = set()
    for m in ms:
        exp = expected_matrices(stored, arch, m.layer, H)[(m.type, m.head)]
        assert m.shape == exp.shape
        if m.type in ("QK", "VO"):
            assert m.factors is not None and m.dense is None
            A, B = m.factors
            assert A.shape == (N, N // H) and B.shape == (N, N // H)
            assert m.structural_rank_bound == N // H
            # The product is never formed by the loader; forming it here in
            # float64 must reproduce the paper's formula up to rounding.
            np.testing.assert_allclose(A @ B.T, exp, rtol=1e-12, atol=1e-12)
        else:
            assert m.factors is None
            assert np.array_equal(m.dense, exp)  # pure data movement: exact
        seen.add((m.layer, m.head, m.type))
    assert len(seen) == len(ms)


@pytest.mark.parametrize("arch", ["bert", "gpt2"])
def test_factors_are_exact_slices(tmp_path, arch):
    stored = make_checkpoint(str(tmp_path), arch, L=1, N=N, H=H, F=F)
    t = torch_layout(stored, arch, 0)
    dh = N // H
    for m in theory_matrices(tmp_path):
        if m.type == "QK":
            s = slice(m.head * dh, (m.head + 1) * dh)
            assert np.array_equal(m.factors[0], t["q"][s, :].T)
            assert np.array_equal(m.factors[1], t["k"][s, :].T)
        if m.type == "VO":
            s = slice(m.head * dh, (m.head + 1) * dh)
            assert np.array_equal(m.factors[0], t["v"][s, :].T)
            assert np.array_equal(m.factors[1], t["o"].T[s, :].T)


def test_raw_projections(tmp_path):
    stored = make_checkpoint(str(tmp_path), "gpt2", L=1, N=N, H=H, F=F)
    t = torch_layout(stored, "gpt2", 0)
    raw = {m.type: m for m in theory_matrices(tmp_path, raw=True, types=())}
    assert set(raw) == {"W_Q", "W_K", "W_V", "W_O"}
    for key, role in (("q", "W_Q"), ("k", "W_K"), ("v", "W_V"), ("o", "W_O")):
        assert np.array_equal(raw[role].dense, t[key].T)
        assert raw[role].head is None


@pytest.mark.parametrize("dtype", ["F16", "BF16", "F64"])
def test_half_precision_weights_convert_exactly(tmp_path, dtype):
    stored = make_checkpoint(str(tmp_path), "bert", L=1, N=N, H=H, F=F, dtype=dtype)
    ck = load_checkpoint(tmp_path)
    name = "bert.encoder.layer.0.intermediate.dense.weight"
    assert ck.dtype(name) == dtype
    assert np.array_equal(ck.get(name), stored[name])


def test_scale_logits_power_of_four_is_folded_exactly(tmp_path):
    make_checkpoint(str(tmp_path), "bert", L=1, N=N, H=H, F=F)  # d_h = 4 = 4^1
    plain = {(m.type, m.head): m for m in theory_matrices(tmp_path)}
    scaled = {(m.type, m.head): m for m in theory_matrices(tmp_path, scale_logits=True)}
    for h in range(H):
        a0, b0 = plain[("QK", h)].factors
        m = scaled[("QK", h)]
        assert m.logit_scale_d == 1 and m.logit_scale_folded == 4
        assert np.array_equal(m.factors[0], a0 / 2) and np.array_equal(m.factors[1], b0)
        assert scaled[("VO", h)].logit_scale_d == 1 and np.array_equal(scaled[("VO", h)].factors[0],
                                                                       plain[("VO", h)].factors[0])


def test_scale_logits_other_head_dims_stay_symbolic(tmp_path):
    make_checkpoint(str(tmp_path), "bert", L=1, N=24, H=3, F=F)  # d_h = 8: 1/sqrt(8) is irrational
    plain = {(m.type, m.head): m for m in theory_matrices(tmp_path)}
    for m in theory_matrices(tmp_path, scale_logits=True):
        if m.type == "QK":
            assert m.logit_scale_d == 8 and m.logit_scale_folded == 1
            assert np.array_equal(m.factors[0], plain[("QK", m.head)].factors[0])
            np.testing.assert_allclose(m.to_dense(), plain[("QK", m.head)].to_dense() / np.sqrt(8), rtol=1e-14)
            s = m.scale()
            assert (s * s * 8).contains(1)


def test_sharded_safetensors(tmp_path):
    stored = make_checkpoint(str(tmp_path), "roberta", L=2, N=N, H=H, F=F, shards=3)
    ck = load_checkpoint(tmp_path)
    assert ck.format == "safetensors-sharded"
    assert sorted(ck.names()) == sorted(stored)
    name = "roberta.encoder.layer.1.output.dense.weight"
    assert ck.file_of(name).endswith(".safetensors")
    assert np.array_equal(ck.get(name), stored[name])
    assert len(list(theory_matrices(tmp_path))) == 2 * (2 * H + 2)


def test_sharded_missing_shard_and_missing_tensor(tmp_path):
    make_checkpoint(str(tmp_path), "bert", L=1, N=N, H=H, F=F, shards=2)
    idx = tmp_path / "model.safetensors.index.json"
    d = json.loads(idx.read_text())
    d["weight_map"]["bert.extra.weight"] = "model-00001-of-00002.safetensors"
    idx.write_text(json.dumps(d))
    with pytest.raises(ValueError, match="'bert.extra.weight'"):
        load_checkpoint(tmp_path)
    os.remove(tmp_path / "model-00002-of-00002.safetensors")
    with pytest.raises(FileNotFoundError, match="model-00002-of-00002"):
        load_checkpoint(tmp_path)


def test_prefix_free_checkpoint_and_explicit_prefix_mapping(tmp_path):
    make_checkpoint(str(tmp_path / "a"), "bert", L=1, N=N, H=H, F=F, prefix="")
    _, lay = open_checkpoint(tmp_path / "a")
    assert lay.prefix == ""
    make_checkpoint(str(tmp_path / "b"), "bert", L=1, N=N, H=H, F=F, prefix="model.backbone.")
    _, lay = open_checkpoint(tmp_path / "b", mapping={"architecture": "bert", "prefix": "model.backbone."})
    assert lay.tensor_name("W_Q", 0) == "model.backbone.encoder.layer.0.attention.self.query.weight"


def test_head_count_comes_from_config(tmp_path):
    make_checkpoint(str(tmp_path), "bert", L=1, N=N, H=2, F=F)
    _, lay = open_checkpoint(tmp_path)
    assert (lay.num_heads, lay.head_dim) == (2, 8)
    ms = [m for m in theory_matrices(tmp_path) if m.type == "QK"]
    assert len(ms) == 2 and all(m.factors[0].shape == (N, 8) for m in ms)


def test_layers_selection_and_type_filter(tmp_path):
    make_checkpoint(str(tmp_path), "distilbert", L=3, N=N, H=H, F=F)
    ms = list(theory_matrices(tmp_path, layers=[2], types=["M_out"]))
    assert [(m.layer, m.type) for m in ms] == [(2, "M_out")]
    with pytest.raises(ValueError, match="out of range"):
        list(theory_matrices(tmp_path, layers=[3]))
    with pytest.raises(ValueError, match="unknown matrix type"):
        list(theory_matrices(tmp_path, types=["QQ"]))


def test_mapping_file_for_an_unknown_architecture(tmp_path):
    rng = np.random.default_rng(3)
    from tests.checkpoints.synth_checkpoints import write_safetensors

    t = {}
    for i in range(2):
        for r in ("wq", "wk", "wv", "wo"):
            t[f"blocks.{i}.attn.{r}"] = rng.standard_normal((N, N))
        t[f"blocks.{i}.ff.up"] = rng.standard_normal((F, N))
        t[f"blocks.{i}.ff.down"] = rng.standard_normal((N, F))
    write_safetensors(str(tmp_path / "model.safetensors"), t, "F64")
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "toyformer"}))
    with pytest.raises(ValueError) as ei:
        open_checkpoint(tmp_path)
    msg = str(ei.value)
    assert "toyformer" in msg and "bert" in msg and "gpt2" in msg and "--mapping" in msg
    mp = tmp_path / "map.json"
    mp.write_text(json.dumps({
        "layout": "linear", "num_layers": 2, "hidden_size": N, "num_heads": 2, "intermediate_size": F,
        "tensors": {"W_Q": "blocks.{layer}.attn.wq", "W_K": "blocks.{layer}.attn.wk",
                    "W_V": "blocks.{layer}.attn.wv", "W_O": "blocks.{layer}.attn.wo",
                    "M_in": "blocks.{layer}.ff.up", "M_out": "blocks.{layer}.ff.down"}}))
    ms = list(theory_matrices(tmp_path, mapping=str(mp)))
    assert len(ms) == 2 * (2 * 2 + 2)
    m_in = [m for m in ms if m.type == "M_in" and m.layer == 1][0]
    assert np.array_equal(m_in.dense, t["blocks.1.ff.up"].T)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"tensors": {"W_Q": "no-layer-placeholder"}}))
    with pytest.raises(ValueError, match="{layer}"):
        open_checkpoint(tmp_path, mapping=str(bad))


def test_shape_mismatch_with_config_names_tensor(tmp_path):
    make_checkpoint(str(tmp_path), "bert", L=1, N=N, H=H, F=F)
    cfg = json.loads((tmp_path / "config.json").read_text())
    cfg["intermediate_size"] = F + 1
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match=r"'bert\.encoder\.layer\.0\.intermediate\.dense\.weight' has shape") as ei:
        open_checkpoint(tmp_path)
    assert "model.safetensors" in str(ei.value)


def test_missing_layer_tensor(tmp_path):
    make_checkpoint(str(tmp_path), "electra", L=2, N=N, H=H, F=F)
    cfg = json.loads((tmp_path / "config.json").read_text())
    cfg["num_hidden_layers"] = 3
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match=r"electra\.encoder\.layer\.2\..*missing"):
        open_checkpoint(tmp_path)


def test_heads_must_divide_width(tmp_path):
    make_checkpoint(str(tmp_path), "bert", L=1, N=N, H=H, F=F)
    cfg = json.loads((tmp_path / "config.json").read_text())
    cfg["num_attention_heads"] = 5
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="not divisible"):
        open_checkpoint(tmp_path)


def test_nan_and_inf_weights_are_rejected_when_read(tmp_path):
    from tests.checkpoints.synth_checkpoints import write_safetensors

    stored = make_checkpoint(str(tmp_path), "bert", L=1, N=N, H=H, F=F, dtype="F64")
    bad = "bert.encoder.layer.0.attention.self.value.weight"
    stored[bad][3, 2] = np.nan
    stored["bert.encoder.layer.0.output.dense.weight"][0, 0] = np.inf
    write_safetensors(str(tmp_path / "model.safetensors"), stored, "F64")
    ck, lay = open_checkpoint(tmp_path)
    with pytest.raises(ValueError, match=r"model\.safetensors: tensor 'bert\.encoder\.layer\.0\.attention\.self"
                                         r"\.value\.weight' contains 1 non-finite"):
        list(theory_matrices(ck, layout=lay))
    with pytest.raises(ValueError, match=r"output\.dense\.weight' contains 1 non-finite"):
        list(theory_matrices(ck, layout=lay, types=["M_out"]))


def test_no_config_is_a_clear_error(tmp_path):
    make_checkpoint(str(tmp_path), "bert", L=1, N=N, H=H, F=F)
    os.remove(tmp_path / "config.json")
    with pytest.raises(ValueError, match="no config.json"):
        open_checkpoint(tmp_path)
    # ...and an explicit --config works.
    make_checkpoint(str(tmp_path / "c"), "bert", L=1, N=N, H=H, F=F)
    _, lay = open_checkpoint(tmp_path / "model.safetensors", config=str(tmp_path / "c" / "config.json"))
    assert lay.num_heads == H


def test_resolve_layout_reads_no_tensor_data(tmp_path, monkeypatch):
    make_checkpoint(str(tmp_path), "mpnet", L=2, N=N, H=H, F=F)
    ck = load_checkpoint(tmp_path)
    from certbound.checkpoints import SafetensorsFile

    def boom(self, name):
        raise AssertionError("data read during layout resolution")

    monkeypatch.setattr(SafetensorsFile, "get_float64", boom)
    lay = resolve_layout(ck)
    assert lay.architecture == "mpnet"


def test_matrix_types_constant():
    assert MATRIX_TYPES == ("QK", "VO", "M_in", "M_out")


def test_loader_memory_does_not_grow_with_depth(tmp_path):
    """One layer's tensors at a time: the traced peak for an 8-layer model stays
    within a small multiple of one layer's weights, the same as for 1 layer."""
    import tracemalloc

    n, ff = 64, 256
    peaks = {}
    for layers in (1, 8):
        d = tmp_path / f"L{layers}"
        make_checkpoint(str(d), "bert", L=layers, N=n, H=4, F=ff, dtype="F32")
        ck, lay = open_checkpoint(d)
        tracemalloc.start()
        for m in theory_matrices(ck, layout=lay, raw=True):
            pass
        peaks[layers] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        ck.close()
    largest = n * ff * 8
    assert peaks[8] <= 1.3 * peaks[1] + 65536
    assert peaks[8] <= 4 * largest, (peaks, largest)
