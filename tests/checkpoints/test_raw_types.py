"""Raw per-layer matrices asked for one at a time, on a fused-QKV model (GPT-2) and an unfused one (BERT).

References come from the real ``transformers`` modules in float64: each projection applied to the identity
(bias subtracted) is its row-vector matrix x ↦ xW; GPT-2's fused ``c_attn`` output is split into Q, K, V
as the module splits it (``split(n_embd, dim=-1)``). Tiny configs, random weights, ``save_pretrained``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from certbound.checkpoints import RAW_TYPES, open_checkpoint, theory_matrices  # noqa: E402

N, L = 16, 2


def _apply_to_identity(linear) -> np.ndarray:
    with torch.no_grad():
        eye = torch.eye(linear.weight.shape[0] if isinstance(linear, transformers.pytorch_utils.Conv1D)
                        else linear.weight.shape[1], dtype=torch.float64)
        return (linear(eye) - linear.bias).numpy()


def _gpt2(tmp_path):
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(n_embd=N, n_layer=L, n_head=4, n_positions=16, vocab_size=32,
                                  bos_token_id=0, eos_token_id=0)
    model = transformers.GPT2Model(cfg)
    model.save_pretrained(tmp_path)
    model = model.double()  # the stored float32 weights, exactly, in float64
    refs = {}
    for i, block in enumerate(model.h):
        q, k, v = np.split(_apply_to_identity(block.attn.c_attn), 3, axis=1)
        refs[i] = {"W_Q": q, "W_K": k, "W_V": v, "W_O": _apply_to_identity(block.attn.c_proj)}
    return refs


def _bert(tmp_path):
    torch.manual_seed(1)
    cfg = transformers.BertConfig(hidden_size=N, num_hidden_layers=L, num_attention_heads=4, intermediate_size=32,
                                  vocab_size=32, max_position_embeddings=16)
    model = transformers.BertModel(cfg)
    model.save_pretrained(tmp_path)
    model = model.double()
    refs = {}
    for i, layer in enumerate(model.encoder.layer):
        a = layer.attention
        refs[i] = {"W_Q": _apply_to_identity(a.self.query), "W_K": _apply_to_identity(a.self.key),
                   "W_V": _apply_to_identity(a.self.value), "W_O": _apply_to_identity(a.output.dense)}
    return refs


SUBSETS = [s for r in (1, 2) for s in itertools.combinations(RAW_TYPES, r)]


@pytest.mark.parametrize("build", [_gpt2, _bert], ids=["gpt2-fused-qkv", "bert"])
def test_each_raw_type_alone_and_in_pairs_is_the_module_s_projection(build, tmp_path):
    refs = build(tmp_path)
    ck, layout = open_checkpoint(tmp_path)
    try:
        for types in SUBSETS:  # e.g. ("W_O",) alone raised KeyError('W_V') on GPT-2
            got = list(theory_matrices(ck, layout=layout, types=types))
            assert [(m.layer, m.type) for m in got] == [(i, t) for i in range(L) for t in RAW_TYPES if t in types]
            for m in got:
                np.testing.assert_allclose(m.dense, refs[m.layer][m.type], rtol=1e-12, atol=1e-15,
                                           err_msg=f"{types}: layer {m.layer} {m.type}")
    finally:
        ck.close()
