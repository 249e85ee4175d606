"""Loading: directories and files, PyTorch .bin (torch extra), ONNX (onnx extra), bad input."""

import json
import os

import numpy as np
import pytest

from certbound.checkpoints import iter_tensors, load_checkpoint, open_checkpoint, theory_matrices
from tests.checkpoints.synth_checkpoints import expected_matrices, make_checkpoint, write_safetensors

N, H, F = 16, 4, 32


def test_missing_path():
    with pytest.raises(FileNotFoundError, match="no such file"):
        load_checkpoint("/nonexistent/model-dir")


def test_directory_without_weights(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match="no weights found"):
        load_checkpoint(tmp_path)


def test_unknown_extension(tmp_path):
    p = tmp_path / "weights.h5"
    p.write_bytes(b"x")
    with pytest.raises(ValueError, match="unknown weights format"):
        load_checkpoint(p)


def test_bad_config_json(tmp_path):
    make_checkpoint(str(tmp_path), "bert", L=1, N=N, H=H, F=F)
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match="config.json: not valid JSON"):
        load_checkpoint(tmp_path)


def test_single_file_picks_up_neighbouring_config(tmp_path):
    make_checkpoint(str(tmp_path), "bert", L=1, N=N, H=H, F=F)
    ck = load_checkpoint(tmp_path / "model.safetensors")
    assert ck.config["model_type"] == "bert" and ck.format == "safetensors"


def test_iter_tensors_yields_every_float_tensor(tmp_path):
    stored = make_checkpoint(str(tmp_path), "vit", L=1, N=N, H=H, F=F, dtype="F64")
    got = dict(iter_tensors(load_checkpoint(tmp_path)))
    assert set(got) == set(stored)
    assert all(np.array_equal(got[k], stored[k]) for k in stored)


# ----------------------------------------------------------------------------- torch


@pytest.mark.parametrize("dtype", ["F32", "BF16"])
def test_torch_bin_matches_the_papers_matrices(tmp_path, dtype):
    pytest.importorskip("torch", reason="the optional 'torch' extra is not installed")
    stored = make_checkpoint(str(tmp_path), "distilbert", L=2, N=N, H=H, F=F, fmt="torch", dtype=dtype)
    ck, lay = open_checkpoint(tmp_path)
    assert ck.format == "torch"
    name = "distilbert.transformer.layer.1.ffn.lin2.weight"
    assert ck.dtype(name) == dtype
    assert np.array_equal(ck.get(name), stored[name])
    for m in theory_matrices(ck, layout=lay):
        exp = expected_matrices(stored, "distilbert", m.layer, H)[(m.type, m.head)]
        np.testing.assert_allclose(m.to_dense(), exp, rtol=1e-12, atol=1e-12)


def test_torch_bin_refuses_pickled_code(tmp_path):
    torch = pytest.importorskip("torch", reason="the optional 'torch' extra is not installed")

    class Evil:
        def __reduce__(self):
            return (os.system, ("echo pwned",))

    p = tmp_path / "pytorch_model.bin"
    torch.save({"w": Evil()}, p)
    with pytest.raises(ValueError, match="weights_only=True"):
        load_checkpoint(p)


def test_torch_bin_corrupt(tmp_path):
    pytest.importorskip("torch", reason="the optional 'torch' extra is not installed")
    p = tmp_path / "pytorch_model.bin"
    p.write_bytes(b"PK\x03\x04 garbage")
    with pytest.raises(ValueError, match="pytorch_model.bin"):
        load_checkpoint(p)


# ----------------------------------------------------------------------------- ONNX


def _onnx_bert(path, L=2, seed=0, with_reshape=True):
    """A BERT-style ONNX graph the way torch.onnx exports Linear layers (MatMul by an
    unnamed (in, out) initialiser, then Add of the named bias)."""
    onnx = pytest.importorskip("onnx", reason="the optional 'onnx' extra is not installed")
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    inits, nodes, truth = [], [], {}
    x = "hidden_in"
    counter = [100]

    def linear(inp, out_f, in_f, name):
        w = rng.standard_normal((out_f, in_f)).astype(np.float32)  # torch layout (out, in)
        b = rng.standard_normal(out_f).astype(np.float32)
        truth[f"{name}.weight"] = w.astype(np.float64)
        counter[0] += 1
        wname = f"onnx::MatMul_{counter[0]}"
        inits.append(numpy_helper.from_array(np.ascontiguousarray(w.T), wname))
        inits.append(numpy_helper.from_array(b, f"{name}.bias"))
        mm = f"/{name}/MatMul_output_0"
        out = f"/{name}/Add_output_0"
        nodes.append(helper.make_node("MatMul", [inp, wname], [mm], name=f"/{name}/MatMul"))
        nodes.append(helper.make_node("Add", [f"{name}.bias", mm], [out], name=f"/{name}/Add"))
        return out

    for i in range(L):
        p = f"model.0.auto_model.encoder.layer.{i}."
        q = linear(x, N, N, p + "attention.self.query")
        linear(x, N, N, p + "attention.self.key")
        v = linear(x, N, N, p + "attention.self.value")
        if with_reshape:
            c2, c3 = f"/l{i}/Constant_2_output_0", f"/l{i}/Constant_3_output_0"
            nodes.append(helper.make_node("Constant", [], [c2], value=numpy_helper.from_array(np.array([H]))))
            nodes.append(helper.make_node("Constant", [], [c3], value=numpy_helper.from_array(np.array([N // H]))))
            nodes.append(helper.make_node("Concat", ["batch_dims", "seq_dims", c2, c3], [f"/l{i}/Concat"], axis=0))
            nodes.append(helper.make_node("Reshape", [q, f"/l{i}/Concat"], [f"/l{i}/Reshape"]))
        o = linear(v, N, N, p + "attention.output.dense")
        h = linear(o, F, N, p + "intermediate.dense")
        x = linear(h, N, F, p + "output.dense")
    graph = helper.make_graph(nodes, "bert", [helper.make_tensor_value_info("hidden_in", TensorProto.FLOAT, [1, N])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, N])], initializer=inits)
    onnx.save(helper.make_model(graph), str(path))
    return truth


def test_onnx_names_recovered_transposed_and_heads_inferred(tmp_path):
    p = tmp_path / "enc.onnx"
    truth = _onnx_bert(p)
    ck, lay = open_checkpoint(p)
    assert ck.format == "onnx"
    assert ck.config["num_attention_heads"] == H and ck.config["num_hidden_layers"] == 2
    assert "_inferred" in ck.config
    assert (lay.prefix, lay.hidden_size, lay.intermediate_size, lay.head_dim) == ("model.0.auto_model.", N, F, N // H)
    for name, w in truth.items():
        assert ck.shape(name) == w.shape
        assert np.array_equal(ck.get(name), w)
    assert not any(n.startswith("onnx::MatMul") for n in ck.names())
    stored = {k.replace("model.0.auto_model.", "bert."): v for k, v in truth.items()}
    for m in theory_matrices(ck, layout=lay):
        exp = expected_matrices(stored, "bert", m.layer, H)[(m.type, m.head)]
        np.testing.assert_allclose(m.to_dense(), exp, rtol=1e-12, atol=1e-12)


def test_onnx_without_head_information_needs_config(tmp_path):
    p = tmp_path / "enc.onnx"
    _onnx_bert(p, with_reshape=False)
    with pytest.raises(ValueError, match="give a `config` file"):
        load_checkpoint(p)
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"model_type": "bert", "hidden_size": N, "num_attention_heads": 2,
                               "num_hidden_layers": 2, "intermediate_size": F}))
    ck, lay = open_checkpoint(p, config=str(cfg))
    assert lay.num_heads == 2


def test_onnx_corrupt(tmp_path):
    pytest.importorskip("onnx", reason="the optional 'onnx' extra is not installed")
    p = tmp_path / "bad.onnx"
    p.write_bytes(b"\x08\x07garbage-not-protobuf\xff\xff")
    with pytest.raises(ValueError, match="bad.onnx"):
        load_checkpoint(p)


def test_safetensors_directory_preferred_over_bin(tmp_path):
    make_checkpoint(str(tmp_path), "bert", L=1, N=N, H=H, F=F)
    (tmp_path / "pytorch_model.bin").write_bytes(b"never read")
    assert load_checkpoint(tmp_path).format == "safetensors"


def test_unsupported_dtype_weight_names_tensor(tmp_path):
    stored = make_checkpoint(str(tmp_path), "bert", L=1, N=N, H=H, F=F)
    name = "bert.encoder.layer.0.attention.self.key.weight"
    write_safetensors(str(tmp_path / "model.safetensors"), stored, "F32", dtypes={name: "I32"})
    ck, lay = open_checkpoint(tmp_path)
    with pytest.raises(ValueError, match=r"'bert\.encoder\.layer\.0\.attention\.self\.key\.weight' has unsupported "
                                         r"dtype I32"):
        list(theory_matrices(ck, layout=lay))


def test_missing_bare_name_points_to_open_model(tmp_path):
    with pytest.raises(FileNotFoundError, match="all-MiniLM-L6-v2: no such file or directory; packaged names"):
        open_checkpoint("all-MiniLM-L6-v2")
    missing = str(tmp_path / "none.safetensors")  # an explicit path: no hint
    with pytest.raises(FileNotFoundError, match=r"none\.safetensors: no such file or directory$"):
        load_checkpoint(missing)
