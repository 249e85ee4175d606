"""Write large random checkpoints of real model shapes, one tensor at a time.

Used by ``bench/bench_llm_shape.py`` (LLaMA-7B shape, bf16) and for the
GPT-2-small memory measurement (f32). The writer computes the safetensors
header from the shapes first and then streams each tensor's bytes, so writing
a 13 GB checkpoint needs memory for one tensor, not for the model.

Values: N(0, 0.02²) random weights (the usual initialisation scale), stored as
float32 or as bfloat16 (the upper 16 bits of the float32 pattern, i.e.
truncation: any bf16 values are fine for a benchmark; what is certified is
what is stored).
"""

from __future__ import annotations

import json
import os
import struct
from typing import Iterator

import numpy as np

__all__ = ["SHAPES", "shape_tensors", "write_checkpoint"]

_ITEM = {"F32": 4, "BF16": 2}

#: name -> (config.json, dtype). Layer count in the config is the full model's.
SHAPES = {
    "gpt2-small": ({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": 768, "n_head": 12,
                    "n_layer": 12, "n_inner": None, "vocab_size": 50257, "n_positions": 1024,
                    "activation_function": "gelu_new"}, "F32"),
    "llama-7b": ({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 4096,
                  "num_attention_heads": 32, "num_key_value_heads": 32, "num_hidden_layers": 32,
                  "intermediate_size": 11008, "vocab_size": 32000, "max_position_embeddings": 4096,
                  "hidden_act": "silu", "rms_norm_eps": 1e-5, "tie_word_embeddings": False,
                  "torch_dtype": "bfloat16"}, "BF16"),
    "llama-70b": ({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 8192,
                   "num_attention_heads": 64, "num_key_value_heads": 8, "num_hidden_layers": 80,
                   "intermediate_size": 28672, "vocab_size": 32000, "max_position_embeddings": 4096,
                   "hidden_act": "silu", "rms_norm_eps": 1e-5, "tie_word_embeddings": False,
                   "torch_dtype": "bfloat16"}, "BF16"),
}


def shape_tensors(shape: str, layers: int | None = None) -> list[tuple[str, tuple[int, ...]]]:
    """(name, shape) of every tensor of the model (first ``layers`` layers), real HF names and layouts."""
    cfg, _ = SHAPES[shape]
    out: list[tuple[str, tuple[int, ...]]] = []
    if cfg["model_type"] == "gpt2":
        N, L, V = cfg["n_embd"], cfg["n_layer"], cfg["vocab_size"]
        F = cfg["n_inner"] or 4 * N
        out += [("wte.weight", (V, N)), ("wpe.weight", (cfg["n_positions"], N))]
        for i in range(L if layers is None else layers):
            b = f"h.{i}."
            out += [(b + "ln_1.weight", (N,)), (b + "ln_1.bias", (N,)),
                    (b + "attn.c_attn.weight", (N, 3 * N)), (b + "attn.c_attn.bias", (3 * N,)),
                    (b + "attn.c_proj.weight", (N, N)), (b + "attn.c_proj.bias", (N,)),
                    (b + "ln_2.weight", (N,)), (b + "ln_2.bias", (N,)),
                    (b + "mlp.c_fc.weight", (N, F)), (b + "mlp.c_fc.bias", (F,)),
                    (b + "mlp.c_proj.weight", (F, N)), (b + "mlp.c_proj.bias", (N,))]
        out += [("ln_f.weight", (N,)), ("ln_f.bias", (N,))]
        return out
    N, L, V, F = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["vocab_size"], cfg["intermediate_size"]
    kv = cfg["num_key_value_heads"] * (N // cfg["num_attention_heads"])
    out.append(("model.embed_tokens.weight", (V, N)))
    for i in range(L if layers is None else layers):
        b = f"model.layers.{i}."
        out += [(b + "input_layernorm.weight", (N,)),
                (b + "self_attn.q_proj.weight", (N, N)), (b + "self_attn.k_proj.weight", (kv, N)),
                (b + "self_attn.v_proj.weight", (kv, N)), (b + "self_attn.o_proj.weight", (N, N)),
                (b + "post_attention_layernorm.weight", (N,)),
                (b + "mlp.gate_proj.weight", (F, N)), (b + "mlp.up_proj.weight", (F, N)),
                (b + "mlp.down_proj.weight", (N, F))]
    out += [("model.norm.weight", (N,)), ("lm_head.weight", (V, N))]
    return out


def _values(shape: tuple[int, ...], rng: np.random.Generator, dtype: str, chunk: int = 1 << 24) -> Iterator[bytes]:
    n = int(np.prod(shape))
    for start in range(0, n, chunk):
        k = min(chunk, n - start)
        a = rng.standard_normal(k, dtype=np.float32)
        a *= np.float32(0.02)
        if len(shape) == 1:
            a += np.float32(1.0)  # norm weights near 1
        if dtype == "BF16":
            yield (a.view(np.uint32) >> np.uint32(16)).astype("<u2").tobytes()
        else:
            yield a.astype("<f4").tobytes()


def _write_file(path: str, tensors: list[tuple[str, tuple[int, ...]]], dtype: str, rng: np.random.Generator) -> None:
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    off = 0
    for name, shp in tensors:
        size = int(np.prod(shp)) * _ITEM[dtype]
        header[name] = {"dtype": dtype, "shape": list(shp), "data_offsets": [off, off + size]}
        off += size
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    tmp = path + ".partial"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for _, shp in tensors:
            for blob in _values(shp, rng, dtype):
                f.write(blob)
    os.replace(tmp, path)


def write_checkpoint(directory: str, shape: str, *, layers: int | None = None, shard_bytes: int = 2 << 30,
                     seed: int = 0) -> str:
    """Write ``config.json`` + (sharded) safetensors of ``shape`` into ``directory`` unless already there.

    ``layers`` < the full count writes a truncated model whose config says so
    (num_hidden_layers = layers), so the loader's layer checks stay honest.
    Returns the directory. Shards of about ``shard_bytes`` with a
    ``model.safetensors.index.json`` as Hugging Face writes them.
    """
    cfg, dtype = SHAPES[shape]
    cfg = dict(cfg)
    if layers is not None:
        cfg["n_layer" if cfg["model_type"] == "gpt2" else "num_hidden_layers"] = layers
    done = os.path.join(directory, ".complete")
    if os.path.exists(done):
        return directory
    os.makedirs(directory, exist_ok=True)
    tensors = shape_tensors(shape, layers)
    rng = np.random.default_rng(seed)
    shards: list[list[tuple[str, tuple[int, ...]]]] = [[]]
    size = 0
    for t in tensors:
        b = int(np.prod(t[1])) * _ITEM[dtype]
        if shards[-1] and size + b > shard_bytes:
            shards.append([])
            size = 0
        shards[-1].append(t)
        size += b
    if len(shards) == 1:
        _write_file(os.path.join(directory, "model.safetensors"), shards[0], dtype, rng)
    else:
        wm = {}
        for i, sh in enumerate(shards):
            fn = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
            _write_file(os.path.join(directory, fn), sh, dtype, rng)
            wm.update({n: fn for n, _ in sh})
        with open(os.path.join(directory, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {}, "weight_map": wm}, f, indent=1)
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    open(done, "w").close()
    return directory
