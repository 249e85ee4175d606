"""Synthetic checkpoints of every supported architecture, for tests.

Random weights under the *real* Hugging Face tensor names (including the
biases, LayerNorms and embeddings a real checkpoint has) and a real-looking
``config.json``. Safetensors files are written by hand (header + bytes) so that
bf16 can be produced and files can be corrupted on purpose.

The expected theory matrices are re-derived here independently from the
*torch layout* with the paper's formulas (paper-known.md §6):
QK = q_hᵀ k_h with q_h = W_query[s_h, :]; VO = v_hᵀ O_h with O_h = W_outᵀ[s_h, :];
M_in = W_intermediateᵀ, M_out = W_outputᵀ. GPT-2's Conv1D weights are
(in, out), so the torch-layout matrices are their transposes.
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any

import numpy as np

__all__ = ["ARCH_CONFIGS", "make_checkpoint", "write_safetensors", "expected_matrices", "to_bf16_bits"]

# name -> (config builder, per-layer linear names (torch layout (out, in) unless conv1d), prefix, conv1d?)
ARCH_CONFIGS = {
    "bert": dict(prefix="bert.", conv1d=False),
    "roberta": dict(prefix="roberta.", conv1d=False),
    "electra": dict(prefix="electra.", conv1d=False),
    "distilbert": dict(prefix="distilbert.", conv1d=False),
    "mpnet": dict(prefix="mpnet.", conv1d=False),
    "gpt2": dict(prefix="transformer.", conv1d=True),
    "vit": dict(prefix="vit.", conv1d=False),
}


def _config(arch: str, L: int, N: int, H: int, F: int) -> dict[str, Any]:
    if arch == "distilbert":
        return {"model_type": "distilbert", "architectures": ["DistilBertForMaskedLM"], "dim": N, "n_heads": H,
                "n_layers": L, "hidden_dim": F, "vocab_size": 50, "max_position_embeddings": 32,
                "activation": "gelu"}
    if arch == "gpt2":
        return {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": N, "n_head": H,
                "n_layer": L, "n_inner": F, "vocab_size": 50, "n_positions": 32, "activation_function": "gelu_new"}
    cls = {"bert": "BertForMaskedLM", "roberta": "RobertaForMaskedLM", "electra": "ElectraForPreTraining",
           "mpnet": "MPNetForMaskedLM", "vit": "ViTForImageClassification"}[arch]
    cfg = {"model_type": arch, "architectures": [cls], "hidden_size": N, "num_attention_heads": H,
           "num_hidden_layers": L, "intermediate_size": F, "hidden_act": "gelu", "layer_norm_eps": 1e-12}
    if arch != "vit":
        cfg.update({"vocab_size": 50, "max_position_embeddings": 32})
    else:
        cfg.update({"image_size": 8, "patch_size": 4, "num_channels": 3})
    return cfg


def _layer_tensors(arch: str, i: int, N: int, F: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Torch-layout tensors of layer i (Conv1D tensors already in (in, out))."""
    def lin(out_f: int, in_f: int) -> np.ndarray:
        return rng.standard_normal((out_f, in_f)) / np.sqrt(in_f)

    def vec(n: int) -> np.ndarray:
        return rng.standard_normal(n) * 0.1

    t: dict[str, np.ndarray] = {}
    if arch in ("bert", "roberta", "electra"):
        b = f"encoder.layer.{i}."
        for k in ("query", "key", "value"):
            t[b + f"attention.self.{k}.weight"] = lin(N, N)
            t[b + f"attention.self.{k}.bias"] = vec(N)
        t[b + "attention.output.dense.weight"] = lin(N, N)
        t[b + "attention.output.dense.bias"] = vec(N)
        t[b + "attention.output.LayerNorm.weight"] = 1 + vec(N)
        t[b + "attention.output.LayerNorm.bias"] = vec(N)
        t[b + "intermediate.dense.weight"] = lin(F, N)
        t[b + "intermediate.dense.bias"] = vec(F)
        t[b + "output.dense.weight"] = lin(N, F)
        t[b + "output.dense.bias"] = vec(N)
        t[b + "output.LayerNorm.weight"] = 1 + vec(N)
        t[b + "output.LayerNorm.bias"] = vec(N)
    elif arch == "vit":
        b = f"encoder.layer.{i}."
        for k in ("query", "key", "value"):
            t[b + f"attention.attention.{k}.weight"] = lin(N, N)
            t[b + f"attention.attention.{k}.bias"] = vec(N)
        t[b + "attention.output.dense.weight"] = lin(N, N)
        t[b + "attention.output.dense.bias"] = vec(N)
        t[b + "intermediate.dense.weight"] = lin(F, N)
        t[b + "intermediate.dense.bias"] = vec(F)
        t[b + "output.dense.weight"] = lin(N, F)
        t[b + "output.dense.bias"] = vec(N)
        t[b + "layernorm_before.weight"] = 1 + vec(N)
        t[b + "layernorm_after.weight"] = 1 + vec(N)
    elif arch == "mpnet":
        b = f"encoder.layer.{i}."
        for k in ("q", "k", "v", "o"):
            t[b + f"attention.attn.{k}.weight"] = lin(N, N)
            t[b + f"attention.attn.{k}.bias"] = vec(N)
        t[b + "attention.LayerNorm.weight"] = 1 + vec(N)
        t[b + "intermediate.dense.weight"] = lin(F, N)
        t[b + "output.dense.weight"] = lin(N, F)
        t[b + "output.LayerNorm.weight"] = 1 + vec(N)
    elif arch == "distilbert":
        b = f"transformer.layer.{i}."
        for k in ("q_lin", "k_lin", "v_lin", "out_lin"):
            t[b + f"attention.{k}.weight"] = lin(N, N)
            t[b + f"attention.{k}.bias"] = vec(N)
        t[b + "sa_layer_norm.weight"] = 1 + vec(N)
        t[b + "ffn.lin1.weight"] = lin(F, N)
        t[b + "ffn.lin1.bias"] = vec(F)
        t[b + "ffn.lin2.weight"] = lin(N, F)
        t[b + "ffn.lin2.bias"] = vec(N)
        t[b + "output_layer_norm.weight"] = 1 + vec(N)
    elif arch == "gpt2":
        b = f"h.{i}."
        t[b + "ln_1.weight"] = 1 + vec(N)
        t[b + "attn.c_attn.weight"] = lin(3 * N, N).T.copy()  # Conv1D: (in, out)
        t[b + "attn.c_attn.bias"] = vec(3 * N)
        t[b + "attn.c_proj.weight"] = lin(N, N).T.copy()
        t[b + "attn.c_proj.bias"] = vec(N)
        t[b + "mlp.c_fc.weight"] = lin(F, N).T.copy()
        t[b + "mlp.c_fc.bias"] = vec(F)
        t[b + "mlp.c_proj.weight"] = lin(N, F).T.copy()
        t[b + "mlp.c_proj.bias"] = vec(N)
    else:
        raise KeyError(arch)
    return t


def _extra_tensors(arch: str, N: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    if arch == "gpt2":
        return {"wte.weight": rng.standard_normal((50, N)), "wpe.weight": rng.standard_normal((32, N)),
                "ln_f.weight": np.ones(N)}
    if arch == "vit":
        return {"embeddings.cls_token": rng.standard_normal((1, 1, N)),
                "embeddings.patch_embeddings.projection.weight": rng.standard_normal((N, 3, 4, 4))}
    if arch == "distilbert":
        return {"embeddings.word_embeddings.weight": rng.standard_normal((50, N))}
    return {"embeddings.word_embeddings.weight": rng.standard_normal((50, N)),
            "embeddings.LayerNorm.weight": np.ones(N)}


def to_bf16_bits(a: np.ndarray) -> np.ndarray:
    """Round-to-nearest-even float32 → bfloat16 bit patterns (test data generation only)."""
    b = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


_NP_OF = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4"}


def _encode(a: np.ndarray, dtype: str) -> bytes:
    if dtype == "BF16":
        return to_bf16_bits(a).astype("<u2").tobytes()
    return np.ascontiguousarray(a).astype(_NP_OF[dtype]).tobytes()


def write_safetensors(path: str, tensors: dict[str, np.ndarray], dtype: str = "F32",
                      dtypes: dict[str, str] | None = None, metadata: dict[str, str] | None = None) -> None:
    """Write a safetensors file by hand (supports BF16); per-tensor dtype overrides in ``dtypes``."""
    header: dict[str, Any] = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    blobs = []
    off = 0
    for name, a in tensors.items():
        dt = (dtypes or {}).get(name, dtype)
        data = _encode(np.asarray(a), dt)
        header[name] = {"dtype": dt, "shape": list(np.shape(a)), "data_offsets": [off, off + len(data)]}
        blobs.append(data)
        off += len(data)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def stored_values(a: np.ndarray, dtype: str) -> np.ndarray:
    """The float64 values a tensor has *after* storage in ``dtype`` (numpy rounding, exact decode)."""
    if dtype == "BF16":
        bits = to_bf16_bits(a).astype(np.uint32) << np.uint32(16)
        return bits.view(np.float32).astype(np.float64)
    return np.asarray(a).astype(_NP_OF[dtype]).astype(np.float64)


def make_checkpoint(directory: str, arch: str, *, L: int = 2, N: int = 16, H: int = 4, F: int = 32,
                    dtype: str = "F32", fmt: str = "safetensors", prefix: str | None = None, seed: int = 0,
                    shards: int = 1) -> dict[str, np.ndarray]:
    """Write config.json + weights into ``directory``; return the stored values (float64) by name."""
    rng = np.random.default_rng(seed)
    os.makedirs(directory, exist_ok=True)
    prefix = ARCH_CONFIGS[arch]["prefix"] if prefix is None else prefix
    tensors: dict[str, np.ndarray] = {}
    for k, v in _extra_tensors(arch, N, rng).items():
        tensors[prefix + k] = v
    for i in range(L):
        for k, v in _layer_tensors(arch, i, N, F, rng).items():
            tensors[prefix + k] = v
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(_config(arch, L, N, H, F), f, indent=2)
    stored = {k: stored_values(v, dtype) for k, v in tensors.items()}
    if fmt == "safetensors":
        if shards == 1:
            write_safetensors(os.path.join(directory, "model.safetensors"), tensors, dtype, metadata={"format": "pt"})
        else:
            names = list(tensors)
            weight_map = {}
            for s in range(shards):
                part = names[s::shards]
                fn = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
                write_safetensors(os.path.join(directory, fn), {n: tensors[n] for n in part}, dtype)
                weight_map.update({n: fn for n in part})
            with open(os.path.join(directory, "model.safetensors.index.json"), "w") as f:
                json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f)
    elif fmt == "torch":
        import torch

        tdt = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "F64": torch.float64}[dtype]
        sd = {k: torch.from_numpy(np.asarray(v, dtype=np.float64)).to(tdt) for k, v in tensors.items()}
        stored = {k: t.to(torch.float64).numpy() for k, t in sd.items()}
        torch.save(sd, os.path.join(directory, "pytorch_model.bin"))
    else:
        raise ValueError(fmt)
    return stored


def torch_layout(stored: dict[str, np.ndarray], arch: str, layer: int, prefix: str | None = None
                 ) -> dict[str, np.ndarray]:
    """W_query, W_key, W_value, W_out, W_int, W_outp in torch (out, in) layout, re-derived by hand."""
    p = ARCH_CONFIGS[arch]["prefix"] if prefix is None else prefix
    i = layer
    if arch in ("bert", "roberta", "electra"):
        b = f"{p}encoder.layer.{i}."
        names = [b + "attention.self.query.weight", b + "attention.self.key.weight", b + "attention.self.value.weight",
                 b + "attention.output.dense.weight", b + "intermediate.dense.weight", b + "output.dense.weight"]
    elif arch == "vit":
        b = f"{p}encoder.layer.{i}."
        names = [b + "attention.attention.query.weight", b + "attention.attention.key.weight",
                 b + "attention.attention.value.weight", b + "attention.output.dense.weight",
                 b + "intermediate.dense.weight", b + "output.dense.weight"]
    elif arch == "mpnet":
        b = f"{p}encoder.layer.{i}."
        names = [b + f"attention.attn.{k}.weight" for k in "qkvo"] + [b + "intermediate.dense.weight",
                                                                      b + "output.dense.weight"]
    elif arch == "distilbert":
        b = f"{p}transformer.layer.{i}."
        names = [b + f"attention.{k}.weight" for k in ("q_lin", "k_lin", "v_lin", "out_lin")] + [
            b + "ffn.lin1.weight", b + "ffn.lin2.weight"]
    elif arch == "gpt2":
        b = f"{p}h.{i}."
        qkv = stored[b + "attn.c_attn.weight"].T  # torch layout (3N, N): rows [Q; K; V]
        N = qkv.shape[1]
        return {"q": qkv[:N], "k": qkv[N:2 * N], "v": qkv[2 * N:], "o": stored[b + "attn.c_proj.weight"].T,
                "int": stored[b + "mlp.c_fc.weight"].T, "out": stored[b + "mlp.c_proj.weight"].T}
    else:
        raise KeyError(arch)
    return dict(zip(["q", "k", "v", "o", "int", "out"], (stored[n] for n in names)))


def expected_matrices(stored: dict[str, np.ndarray], arch: str, layer: int, H: int,
                      prefix: str | None = None) -> dict[tuple[str, int | None], np.ndarray]:
    """The paper's QK/VO per head and M_in/M_out, formed in float64 from the torch layout."""
    t = torch_layout(stored, arch, layer, prefix)
    N = t["q"].shape[1]
    dh = N // H
    out: dict[tuple[str, int | None], np.ndarray] = {}
    for h in range(H):
        s = slice(h * dh, (h + 1) * dh)
        q_h, k_h, v_h = t["q"][s, :], t["k"][s, :], t["v"][s, :]
        O_h = t["o"].T[s, :]
        out[("QK", h)] = q_h.T @ k_h
        out[("VO", h)] = v_h.T @ O_h
    out[("M_in", None)] = t["int"].T
    out[("M_out", None)] = t["out"].T
    return out
