"""Every built-in architecture against the real ``transformers`` module, in float64.

Each case builds a tiny model from a config with seeded random weights (biases
and norms included, so that ignoring them is exercised), writes it with
``save_pretrained`` (safetensors, float32) and loads it with certbound *without
a mapping file*. The references come from running the transformers module
itself in float64 (weights exactly the stored float32 values; biases then set
to zero in memory, since the theory's matrices ignore them), never from
certbound's slicing:

* **attention logits, per head**: a registered attention function captures the
  query/key/value tensors exactly as the module split them into heads, and
  the logits (query·keyᵀ)·scaling it computes; certbound's scaled QK must give
  X_q QK X_kᵀ equal to them (X_q, X_k: the inputs of the module's query and key
  projections, hooked). Rotary embeddings and per-head q/k norms are switched
  off for this comparison (the module's own ``apply_rotary_pos_emb`` patched
  to the identity, ``q_norm``/``k_norm`` replaced by the identity): certbound's
  QK is the bilinear form of the projections *before* the rotation/norm
  (``proofs/architectures.md`` §3). With the real rotation on, the diagonal
  logits (query position = key position) are checked too: there the rotation
  cancels. BLOOM, Falcon and DeBERTa-v2 do not use the attention interface:
  their projections are hooked and split into heads by the module's own
  ``_reshape`` / ``_split_heads`` / ``transpose_for_scores``.
* **per-head outputs**: with the captured attention probabilities P_h (random
  row-stochastic ones for the three modules above), P_h (X_k VO_h) must equal
  the module's own output projection applied to head h's block of P_h·value.
* **MLP outputs**: the module's MLP (each expert's, for Mixtral) on random
  inputs against φ(X M_in) M_out, or φ(X M_gate) ⊙ (X M_up) M_down, with φ
  the config's activation as certbound reports it (``ACT2FN``).
* **σ**: certified singular values of one QK head and one FFN matrix per case
  agree with the singular values of a reference recovered by least squares
  from the module's logits (resp. its MLP weights as the module applies them).

Tolerance: 1e-12 relative (float64 rounding of products of a few dozen terms).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
from typing import Any, Callable
from unittest import mock

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from transformers import AttentionInterface  # noqa: E402
from transformers.activations import ACT2FN  # noqa: E402
from transformers.masking_utils import AttentionMaskInterface, eager_mask  # noqa: E402

from certbound.checkpoints import open_checkpoint, theory_matrices  # noqa: E402

RTOL = 1e-12
ROTARY_RTOL = 1e-5  # transformers' float32 cos/sin tables
B, T = 2, 24  # B·T = 48 token rows ≥ every hidden width below: X has full column rank
_CAPTURED: list[dict[str, Any]] = []


def _capture_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, softcap=None,
                       **kwargs):
    """Eager attention in float64 that records what the module handed it."""
    if scaling is None:
        scaling = query.shape[-1] ** -0.5  # the SDPA default
    rep = query.shape[1] // key.shape[1]
    k = key.repeat_interleave(rep, dim=1)
    v = value.repeat_interleave(rep, dim=1)
    z = torch.matmul(query, k.transpose(-1, -2)) * scaling
    rec = {"module": module, "query": query.detach().clone(), "key": key.detach().clone(),
           "value": value.detach().clone(), "scaling": float(scaling), "logits": z.detach().clone()}
    if softcap:
        z = torch.tanh(z / softcap) * softcap
    if attention_mask is not None:
        if attention_mask.dtype == torch.bool:
            z = z.masked_fill(~attention_mask[..., : k.shape[-2]], float("-inf"))
        else:
            z = z + attention_mask[..., : k.shape[-2]]
    p = torch.softmax(z, dim=-1)
    rec["probs"] = p.detach().clone()
    _CAPTURED.append(rec)
    return torch.matmul(p, v).transpose(1, 2).contiguous(), p


AttentionInterface.register("certbound_capture", _capture_attention)
AttentionMaskInterface.register("certbound_capture", eager_mask)


@dataclasses.dataclass
class Attn:
    """One attention block of a model: where its inputs and output projection are."""

    layer: int  # certbound's global layer index
    kind: str  # "self" or "cross"
    module: Any
    q_in: Any  # the module whose input is X_q (query projection or fused qkv)
    k_in: Any  # the module whose input is X_k
    o: Any  # the output projection
    split: Callable[[Any, Any, Any], tuple[Any, Any, Any]] | None = None  # non-interface modules


@dataclasses.dataclass
class Case:
    config: Callable[[], Any]
    attns: Callable[[Any], list[Attn]]
    mlps: Callable[[Any], list[tuple[int, int | None, Callable[[Any], Any]]]]  # (layer, expert, f)
    modeling: str
    rotary: bool = True
    qk_norm: bool = False
    interface: bool = True
    forward_kwargs: Callable[[Any], dict[str, Any]] = lambda ids: {"input_ids": ids}


V = 64  # vocabulary (≥ 3 + B·T: every token of the test input distinct)


def _llama_attns(m):
    return [Attn(i, "self", l.self_attn, l.self_attn.q_proj, l.self_attn.k_proj, l.self_attn.o_proj)
            for i, l in enumerate(m.layers)]


def _llama_mlps(m):
    return [(i, None, l.mlp) for i, l in enumerate(m.layers)]


def _mixtral_mlps(m):
    out = []
    for i, l in enumerate(m.layers):
        ex = l.mlp.experts
        for e in range(ex.num_experts):
            def f(x, ex=ex, e=e):
                flat = x.reshape(-1, x.shape[-1])
                idx = torch.full((flat.shape[0], 1), e, dtype=torch.long)
                return ex(flat, idx, torch.ones(flat.shape[0], 1, dtype=x.dtype)).reshape(x.shape)
            out.append((i, e, f))
    return out


def _fc_mlp(layer, fc1="fc1", fc2="fc2", act="activation_fn"):
    return lambda x: getattr(layer, fc2)(getattr(layer, act)(getattr(layer, fc1)(x)))


def _bloom_split(module, fused, _x):
    return module._reshape(fused)


def _falcon_split(module, fused, _x):
    q, k, v = module._split_heads(fused)
    return q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)


def _deberta_split(module, outs, _x):
    q, k, v = outs
    H = module.num_attention_heads
    return tuple(module.transpose_for_scores(t, H).reshape(t.shape[0], H, t.shape[1], -1) for t in (q, k, v))


def _t5_attns(m):
    enc, dec = m.encoder.block, m.decoder.block
    out = [Attn(i, "self", b.layer[0].SelfAttention, b.layer[0].SelfAttention.q, b.layer[0].SelfAttention.k,
                b.layer[0].SelfAttention.o) for i, b in enumerate(enc)]
    for i, b in enumerate(dec):
        sa, ca = b.layer[0].SelfAttention, b.layer[1].EncDecAttention
        out.append(Attn(len(enc) + i, "self", sa, sa.q, sa.k, sa.o))
        out.append(Attn(len(enc) + i, "cross", ca, ca.q, ca.k, ca.o))
    return out


def _t5_mlps(m):
    ne = len(m.encoder.block)
    return ([(i, None, b.layer[1].DenseReluDense) for i, b in enumerate(m.encoder.block)]
            + [(ne + i, None, b.layer[2].DenseReluDense) for i, b in enumerate(m.decoder.block)])


def _bart_attns(m):
    ne = len(m.encoder.layers)
    out = [Attn(i, "self", l.self_attn, l.self_attn.q_proj, l.self_attn.k_proj, l.self_attn.out_proj)
           for i, l in enumerate(m.encoder.layers)]
    for i, l in enumerate(m.decoder.layers):
        out.append(Attn(ne + i, "self", l.self_attn, l.self_attn.q_proj, l.self_attn.k_proj, l.self_attn.out_proj))
        out.append(Attn(ne + i, "cross", l.encoder_attn, l.encoder_attn.q_proj, l.encoder_attn.k_proj,
                        l.encoder_attn.out_proj))
    return out


def _bart_mlps(m):
    ne = len(m.encoder.layers)
    return ([(i, None, _fc_mlp(l)) for i, l in enumerate(m.encoder.layers)]
            + [(ne + i, None, _fc_mlp(l)) for i, l in enumerate(m.decoder.layers)])


def _seq2seq(ids):
    return {"input_ids": ids, "decoder_input_ids": ids.flip(-1)}


def _albert_attns(m):
    layer = m.encoder.albert_layer_groups[0].albert_layers[0]
    a = layer.attention
    return [Attn(i, "self", a, a.query, a.key, a.dense) for i in range(m.config.num_hidden_layers)]


def _albert_mlps(m):
    layer = m.encoder.albert_layer_groups[0].albert_layers[0]
    return [(i, None, lambda x, l=layer: l.ffn_output(l.activation(l.ffn(x))))
            for i in range(m.config.num_hidden_layers)]


C = transformers
SMALL = dict(vocab_size=V, max_position_embeddings=64)

CASES: dict[str, Case] = {
    "llama": Case(lambda: C.LlamaConfig(hidden_size=32, intermediate_size=40, num_hidden_layers=2,
                                        num_attention_heads=4, num_key_value_heads=2, **SMALL),
                  _llama_attns, _llama_mlps, "llama"),
    "mistral": Case(lambda: C.MistralConfig(hidden_size=32, intermediate_size=40, num_hidden_layers=1,
                                            num_attention_heads=8, num_key_value_heads=2, **SMALL),
                    _llama_attns, _llama_mlps, "mistral"),
    "mixtral": Case(lambda: C.MixtralConfig(hidden_size=16, intermediate_size=24, num_hidden_layers=1,
                                            num_attention_heads=4, num_key_value_heads=2, num_local_experts=3,
                                            num_experts_per_tok=2, **SMALL),
                    _llama_attns, _mixtral_mlps, "mixtral"),
    "qwen2": Case(lambda: C.Qwen2Config(hidden_size=32, intermediate_size=40, num_hidden_layers=1,
                                        num_attention_heads=4, num_key_value_heads=2, **SMALL),
                  _llama_attns, _llama_mlps, "qwen2"),
    "qwen3": Case(lambda: C.Qwen3Config(hidden_size=32, intermediate_size=40, num_hidden_layers=1,
                                        num_attention_heads=4, num_key_value_heads=2, head_dim=12, **SMALL),
                  _llama_attns, _llama_mlps, "qwen3", qk_norm=True),
    "gemma": Case(lambda: C.GemmaConfig(hidden_size=32, intermediate_size=40, num_hidden_layers=1,
                                        num_attention_heads=4, num_key_value_heads=1, head_dim=16, **SMALL),
                  _llama_attns, _llama_mlps, "gemma"),
    "gemma2": Case(lambda: C.Gemma2Config(hidden_size=32, intermediate_size=40, num_hidden_layers=2,
                                          num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                                          query_pre_attn_scalar=24, **SMALL),
                   _llama_attns, _llama_mlps, "gemma2"),
    "gemma3": Case(lambda: C.Gemma3TextConfig(hidden_size=32, intermediate_size=40, num_hidden_layers=1,
                                              num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                                              query_pre_attn_scalar=16, **SMALL),
                   _llama_attns, _llama_mlps, "gemma3", qk_norm=True),
    "phi": Case(lambda: C.PhiConfig(hidden_size=32, intermediate_size=40, num_hidden_layers=1,
                                    num_attention_heads=4, **SMALL),
                lambda m: [Attn(i, "self", l.self_attn, l.self_attn.q_proj, l.self_attn.k_proj, l.self_attn.dense)
                           for i, l in enumerate(m.layers)], _llama_mlps, "phi"),
    "phi3": Case(lambda: C.Phi3Config(hidden_size=32, intermediate_size=40, num_hidden_layers=1,
                                      num_attention_heads=4, num_key_value_heads=2, pad_token_id=0, **SMALL),
                 lambda m: [Attn(i, "self", l.self_attn, l.self_attn.qkv_proj, l.self_attn.qkv_proj,
                                 l.self_attn.o_proj) for i, l in enumerate(m.layers)], _llama_mlps, "phi3"),
    "gpt_neox": Case(lambda: C.GPTNeoXConfig(hidden_size=32, intermediate_size=40, num_hidden_layers=1,
                                             num_attention_heads=4, **SMALL),
                     lambda m: [Attn(i, "self", l.attention, l.attention.query_key_value,
                                     l.attention.query_key_value, l.attention.dense) for i, l in enumerate(m.layers)],
                     _llama_mlps, "gpt_neox"),
    "bloom": Case(lambda: C.BloomConfig(hidden_size=32, n_layer=1, n_head=4, vocab_size=V),
                  lambda m: [Attn(i, "self", l.self_attention, l.self_attention.query_key_value,
                                  l.self_attention.query_key_value, l.self_attention.dense, _bloom_split)
                             for i, l in enumerate(m.h)],
                  lambda m: [(i, None, lambda x, l=l: l.mlp(x, torch.zeros_like(x))) for i, l in enumerate(m.h)],
                  "bloom", rotary=False, interface=False),
    "falcon": Case(lambda: C.FalconConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=4, **SMALL),
                   lambda m: [Attn(i, "self", l.self_attention, l.self_attention.query_key_value,
                                   l.self_attention.query_key_value, l.self_attention.dense, _falcon_split)
                              for i, l in enumerate(m.h)],
                   lambda m: [(i, None, l.mlp) for i, l in enumerate(m.h)], "falcon", interface=False),
    "falcon-gqa": Case(lambda: C.FalconConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=8,
                                              num_kv_heads=2, new_decoder_architecture=True, **SMALL),
                       lambda m: [Attn(i, "self", l.self_attention, l.self_attention.query_key_value,
                                       l.self_attention.query_key_value, l.self_attention.dense, _falcon_split)
                                  for i, l in enumerate(m.h)],
                       lambda m: [(i, None, l.mlp) for i, l in enumerate(m.h)], "falcon", interface=False),
    "falcon-mha": Case(lambda: C.FalconConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                                              multi_query=False, new_decoder_architecture=False, alibi=True,
                                              **SMALL),
                       lambda m: [Attn(i, "self", l.self_attention, l.self_attention.query_key_value,
                                       l.self_attention.query_key_value, l.self_attention.dense, _falcon_split)
                                  for i, l in enumerate(m.h)],
                       lambda m: [(i, None, l.mlp) for i, l in enumerate(m.h)], "falcon", rotary=False,
                       interface=False),
    "opt": Case(lambda: C.OPTConfig(hidden_size=32, ffn_dim=40, num_hidden_layers=1, num_attention_heads=4,
                                    word_embed_proj_dim=32, **SMALL),
                lambda m: [Attn(i, "self", l.self_attn, l.self_attn.q_proj, l.self_attn.k_proj, l.self_attn.out_proj)
                           for i, l in enumerate(m.decoder.layers)],
                lambda m: [(i, None, _fc_mlp(l)) for i, l in enumerate(m.decoder.layers)], "opt", rotary=False),
    "gptj": Case(lambda: C.GPTJConfig(n_embd=32, n_layer=1, n_head=4, rotary_dim=4, n_positions=64, vocab_size=V),
                 lambda m: [Attn(i, "self", l.attn, l.attn.q_proj, l.attn.k_proj, l.attn.out_proj)
                            for i, l in enumerate(m.h)],
                 lambda m: [(i, None, l.mlp) for i, l in enumerate(m.h)], "gptj"),
    "gpt2": Case(lambda: C.GPT2Config(n_embd=32, n_layer=2, n_head=4, n_positions=64, vocab_size=V,
                                      scale_attn_by_inverse_layer_idx=True),
                 lambda m: [Attn(i, "self", l.attn, l.attn.c_attn, l.attn.c_attn, l.attn.c_proj)
                            for i, l in enumerate(m.h)],
                 lambda m: [(i, None, l.mlp) for i, l in enumerate(m.h)], "gpt2", rotary=False),
    "distilbert": Case(lambda: C.DistilBertConfig(dim=32, hidden_dim=40, n_layers=1, n_heads=4, vocab_size=V,
                                                  activation="relu", max_position_embeddings=64),
                       lambda m: [Attn(i, "self", l.attention, l.attention.q_lin, l.attention.k_lin,
                                       l.attention.out_lin) for i, l in enumerate(m.transformer.layer)],
                       lambda m: [(i, None, l.ffn) for i, l in enumerate(m.transformer.layer)], "distilbert",
                       rotary=False),
    "t5": Case(lambda: C.T5Config(d_model=32, d_kv=12, d_ff=40, num_layers=1, num_decoder_layers=2, num_heads=4,
                                  vocab_size=V, decoder_start_token_id=0),
               _t5_attns, _t5_mlps, "t5", rotary=False, forward_kwargs=_seq2seq),
    "flan-t5": Case(lambda: C.T5Config(d_model=32, d_kv=8, d_ff=40, num_layers=1, num_decoder_layers=1,
                                       num_heads=4, vocab_size=V, feed_forward_proj="gated-gelu",
                                       decoder_start_token_id=0),
                    _t5_attns, _t5_mlps, "t5", rotary=False, forward_kwargs=_seq2seq),
    "bart": Case(lambda: C.BartConfig(d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4,
                                      decoder_attention_heads=2, encoder_ffn_dim=40, decoder_ffn_dim=24, **SMALL),
                 _bart_attns, _bart_mlps, "bart", rotary=False, forward_kwargs=_seq2seq),
    "deberta-v2": Case(lambda: C.DebertaV2Config(hidden_size=32, intermediate_size=40, num_hidden_layers=1,
                                                 num_attention_heads=4, relative_attention=True,
                                                 pos_att_type=["p2c", "c2p"], **SMALL),
                       lambda m: [Attn(i, "self", l.attention.self, l.attention.self.query_proj,
                                       l.attention.self.key_proj, l.attention.output.dense, _deberta_split)
                                  for i, l in enumerate(m.encoder.layer)],
                       lambda m: [(i, None, lambda x, l=l: l.output.dense(l.intermediate(x)))
                                  for i, l in enumerate(m.encoder.layer)],
                       "deberta_v2", rotary=False, interface=False),
    "albert": Case(lambda: C.AlbertConfig(hidden_size=32, intermediate_size=40, num_hidden_layers=3,
                                          num_attention_heads=4, embedding_size=16, **SMALL),
                   _albert_attns, _albert_mlps, "albert", rotary=False),
    "modernbert": Case(lambda: C.ModernBertConfig(hidden_size=32, intermediate_size=40, num_hidden_layers=1,
                                                  num_attention_heads=4, pad_token_id=0, bos_token_id=1,
                                                  eos_token_id=2, cls_token_id=1, sep_token_id=2, **SMALL),
                       lambda m: [Attn(i, "self", l.attn, l.attn.Wqkv, l.attn.Wqkv, l.attn.Wo)
                                  for i, l in enumerate(m.layers)],
                       _llama_mlps, "modernbert"),
}
#: case name → certbound architecture name (when they differ)
ARCH_OF = {"falcon-gqa": "falcon", "falcon-mha": "falcon", "flan-t5": "t5"}


def _randomize(model, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _, p in model.named_parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype) * 0.3)


def _zero_biases(model) -> None:
    with torch.no_grad():
        for n, p in model.named_parameters():
            if n.endswith(".bias") or n.endswith("_bias") and p.dim() == 1:
                p.zero_()


def _pi_norm(x, shape, weight=None, bias=None, eps=1e-5):
    y = x * (x.shape[-1] ** 0.5) / x.norm(dim=-1, keepdim=True).clamp_min(1e-30)
    if weight is not None:
        y = y * weight
    return y + bias if bias is not None else y


def _identity_rotary(*args, **kwargs):
    # llama-style (q, k, cos, sin) -> (q, k); GPT-J style (tensor, sin, cos) -> tensor
    if len(args) >= 4 or "k" in kwargs:
        return args[0], args[1]
    return args[0]


class _Inputs:
    """Forward hooks recording (input, output) of the projection modules."""

    def __init__(self, modules):
        self.last: dict[int, tuple[Any, Any]] = {}
        self.handles = [m.register_forward_hook(self._hook) for m in {id(m): m for m in modules}.values()]

    def _hook(self, mod, args, out):
        self.last[id(mod)] = (args[0].detach().clone(), out.detach().clone() if torch.is_tensor(out) else None)

    def close(self):
        for h in self.handles:
            h.remove()


def _run(model, case: Case, attns: list[Attn], ids, *, plain: bool) -> list[dict[str, Any]]:
    """One forward pass; per attention call: X_q, X_k, heads (q, k, v), probabilities, scaling."""
    mod = importlib.import_module(f"transformers.models.{case.modeling}.modeling_{case.modeling}")
    patches = contextlib.ExitStack()
    if plain and case.rotary and hasattr(mod, "apply_rotary_pos_emb"):
        patches.enter_context(mock.patch.object(mod, "apply_rotary_pos_emb", _identity_rotary))
    if plain and case.qk_norm:
        for a in attns:
            patches.enter_context(mock.patch.object(a.module, "q_norm", torch.nn.Identity()))
            patches.enter_context(mock.patch.object(a.module, "k_norm", torch.nn.Identity()))
    watch = [m for a in attns for m in (a.q_in, a.k_in)]
    if not case.interface and case.modeling == "deberta_v2":
        watch += [a.module.value_proj for a in attns]
    hooks = _Inputs(watch)
    by_module: dict[int, list[Attn]] = {}
    for a in attns:
        by_module.setdefault(id(a.module), []).append(a)
    uses: dict[int, int] = {}
    records = []
    _CAPTURED.clear()
    orig_forwards = {}

    def wrap(a_list):
        m = a_list[0].module
        f = m.forward

        def forward(*args, **kwargs):
            out = f(*args, **kwargs)
            k = uses.get(id(m), 0)
            uses[id(m)] = k + 1
            a = a_list[k % len(a_list)]
            xq = hooks.last[id(a.q_in)][0]
            xk = hooks.last[id(a.k_in)][0]
            if case.interface:
                rec = _CAPTURED.pop()
                assert rec["module"] is m
                records.append(dict(attn=a, xq=xq, xk=xk, q=rec["query"], k=rec["key"], v=rec["value"],
                                    probs=rec["probs"], scaling=rec["scaling"], logits=rec["logits"]))
            else:
                if case.modeling == "deberta_v2":
                    outs = (hooks.last[id(a.q_in)][1], hooks.last[id(a.k_in)][1],
                            hooks.last[id(m.value_proj)][1])
                    q, k_, v = a.split(m, outs, xq)
                else:
                    q, k_, v = a.split(m, hooks.last[id(a.q_in)][1], xq)
                g = torch.Generator().manual_seed(7)
                p = torch.rand(q.shape[0], q.shape[1], q.shape[2], k_.shape[2], generator=g, dtype=q.dtype)
                records.append(dict(attn=a, xq=xq, xk=xk, q=q, k=k_, v=v, probs=p / p.sum(-1, keepdim=True),
                                    scaling=None, logits=None))
            return out

        orig_forwards[id(m)] = (m, f)
        return forward

    for a_list in by_module.values():
        patches.enter_context(mock.patch.object(a_list[0].module, "forward", wrap(a_list)))
    # LayerNorm → the uncentred normalisation Π x = √N·x/‖x‖ (the theory's own): the token rows then span
    # the whole space (a centred LayerNorm keeps them in 1^⊥), so the checks below pin every matrix down.
    patches.enter_context(mock.patch.object(torch.nn.functional, "layer_norm", _pi_norm))
    try:
        with patches, torch.no_grad():
            model(**case.forward_kwargs(ids))
    finally:
        hooks.close()
    return records


def write_tiny_checkpoint(name: str, directory, **save_kwargs):
    """Build case ``name`` with seeded random weights and ``save_pretrained`` it; returns (model, config)."""
    case = CASES[name]
    torch.manual_seed(0)
    cfg = case.config()
    kw = {"experts_implementation": "eager"} if name == "mixtral" else {}
    model = transformers.AutoModel.from_config(
        cfg, attn_implementation="certbound_capture" if case.interface else "eager", **kw)
    model.eval()
    _randomize(model, seed=sorted(CASES).index(name))
    model.save_pretrained(directory, **save_kwargs)
    return model, cfg


@pytest.fixture(scope="module", params=sorted(CASES))
def built(request, tmp_path_factory):
    name = request.param
    case = CASES[name]
    d = tmp_path_factory.mktemp(name)
    model, cfg = write_tiny_checkpoint(name, d)  # float32 safetensors, nonzero biases
    model.to(torch.float64)
    _zero_biases(model)
    attns = case.attns(model)
    g = torch.Generator().manual_seed(1)
    ids = (3 + torch.randperm(V - 3, generator=g)[: B * T]).reshape(B, T)  # distinct tokens: full-rank rows
    plain = _run(model, case, attns, ids, plain=True)
    rotated = _run(model, case, attns, ids, plain=False) if case.rotary and case.interface else None
    ck, layout = open_checkpoint(d)
    scaled = layout.attention_logit_scale
    mats = {(m.layer, m.head, m.type, m.expert): m for m in theory_matrices(ck, layout=layout, scale_logits=scaled)}
    unscaled = {(m.layer, m.head, m.type): m for m in theory_matrices(
        ck, layout=layout, types=[t for t in layout.matrix_types if t.startswith(("QK", "VO"))])}
    yield dict(name=name, case=case, model=model, dir=d, ck=ck, layout=layout, mats=mats, unscaled=unscaled,
               plain=plain, rotated=rotated, cfg=cfg)
    ck.close()


def _np(t) -> np.ndarray:
    return t.detach().cpu().numpy()


def _close(got: np.ndarray, want: np.ndarray, what: str, rtol: float = RTOL) -> None:
    err = np.max(np.abs(got - want))
    scale = max(np.max(np.abs(want)), 1e-300)
    assert err <= rtol * scale, f"{what}: max error {err:.3g} vs scale {scale:.3g}"


def _types(rec) -> tuple[str, str]:
    return ("QK", "VO") if rec["attn"].kind == "self" else ("QK_cross", "VO_cross")


def test_loads_without_mapping(built):
    lay, cfg = built["layout"], built["cfg"]
    assert lay.architecture == ARCH_OF.get(built["name"], built["name"])
    assert lay.hidden_size == getattr(cfg, "hidden_size", getattr(cfg, "d_model", None))
    # every theory matrix of every layer (and expert) is there
    n_attn = len({(r["attn"].layer, r["attn"].kind) for r in built["plain"]})
    heads = sum(lay.stack_of(a.layer)[0].num_heads for a in {(r["attn"].layer, r["attn"].kind): r["attn"]
                                                             for r in built["plain"]}.values())
    got = [k for k in built["mats"] if k[2] in ("QK", "QK_cross")]
    assert len(got) == heads and n_attn >= lay.num_layers
    mlps = built["case"].mlps(built["model"])
    ffn_types = [t for t in lay.matrix_types if t.startswith("M")]
    assert {(k[0], k[3]) for k in built["mats"] if k[2] in ffn_types} == {(i, e) for i, e, _ in mlps}


def test_attention_logits_per_head(built):
    lay, mats = built["layout"], built["mats"]
    for rec in built["plain"]:
        a = rec["attn"]
        qk_t, _ = _types(rec)
        q, k = _np(rec["q"]), _np(rec["k"])
        H, Hkv = q.shape[1], k.shape[1]
        xq, xk = _np(rec["xq"]), _np(rec["xk"])
        for h in range(H):
            m = mats[(a.layer, h, qk_t, None)]
            if Hkv < H:  # certbound's pairing = the module's repeat_kv pairing (Falcon broadcasts itself)
                assert m.kv_head == h * Hkv // H
            A, Bf = m.factors
            got = (xq @ A) @ (xk @ Bf).transpose(0, 2, 1) / np.sqrt(m.logit_scale_d)
            if rec["logits"] is not None:
                want = _np(rec["logits"])[:, h]  # (q·kᵀ)·scaling exactly as the module scales
                if not lay.attention_logit_scale:
                    assert rec["scaling"] == 1.0
            else:  # module's own head split, its scale checked against certbound's below
                want = q[:, h] @ k[:, h * Hkv // H].transpose(0, 2, 1)
                u = built["unscaled"][(a.layer, h, qk_t)]
                got = (xq @ u.factors[0]) @ (xk @ u.factors[1]).transpose(0, 2, 1)
            _close(got, want, f"layer {a.layer} {a.kind} head {h} logits")


def test_logit_scale_matches_the_module(built):
    lay = built["layout"]
    for rec in built["plain"]:
        if rec["scaling"] is None:
            continue
        d = lay.logit_scale_d(rec["attn"].layer)
        if built["name"] == "opt":  # OPTAttention multiplies q by self.scaling and passes scaling=1.0
            assert rec["scaling"] == 1.0
            rec = dict(rec, scaling=rec["attn"].module.scaling)
        if d is None:
            assert rec["scaling"] == 1.0
        else:
            assert abs(rec["scaling"] - d ** -0.5) <= 1e-15 * d ** -0.5, (rec["scaling"], d)


def test_rotary_logits_agree_on_the_diagonal(built):
    if built["rotated"] is None:
        pytest.skip("no rotary embedding in the attention interface")
    if built["case"].qk_norm:
        pytest.skip("per-head q/k RMSNorm: the logits are not a bilinear form of x (README, proofs §3)")
    mats = built["mats"]
    for rec in built["rotated"]:
        a = rec["attn"]
        xq, xk = _np(rec["xq"]), _np(rec["xk"])
        for h in range(rec["q"].shape[1]):
            m = mats[(a.layer, h, "QK", None)]
            A, Bf = m.factors
            got = np.einsum("bti,bti->bt", xq @ A, xk @ Bf) / np.sqrt(m.logit_scale_d)
            want = np.einsum("btt->bt", _np(rec["logits"])[:, h])
            # transformers computes the cos/sin tables in float32: the rotated q, k carry ~1e-7 errors
            _close(got, want, f"layer {a.layer} head {h} diagonal logits with rotary", rtol=ROTARY_RTOL)


def test_per_head_outputs(built):
    mats = built["mats"]
    for rec in built["plain"]:
        a = rec["attn"]
        _, vo_t = _types(rec)
        p, v = rec["probs"], rec["v"]
        H, Hkv, dh = p.shape[1], v.shape[1], v.shape[-1]
        xk = _np(rec["xk"])
        for h in range(H):
            head = torch.matmul(p[:, h], v[:, h * Hkv // H])  # (B, T, d_h), the module's own value split
            z = torch.zeros(head.shape[0], head.shape[1], H * dh, dtype=head.dtype)
            z[..., h * dh:(h + 1) * dh] = head  # transformers concatenates heads in order
            with torch.no_grad():
                want = _np(a.o(z))
            A, Bf = mats[(a.layer, h, vo_t, None)].factors
            got = _np(p[:, h]) @ ((xk @ A) @ Bf.T)
            _close(got, want, f"layer {a.layer} {a.kind} head {h} output")


def _act(name: str):
    if name == "bloom_gelu":
        from transformers.models.bloom.modeling_bloom import BloomGelu

        return BloomGelu()
    return ACT2FN[name]


def test_mlp_outputs(built):
    lay, mats = built["layout"], built["mats"]
    act = _act(lay.activation)
    g = torch.Generator().manual_seed(3)
    for layer, expert, f in built["case"].mlps(built["model"]):
        x = torch.randn(B, 6, lay.hidden_size, generator=g, dtype=torch.float64)
        with torch.no_grad():
            want = _np(f(x))
        X = _np(x)
        if lay.stack_of(layer)[0].ffn_kind == "gated":
            G, U, D = (mats[(layer, None, t, expert)].dense for t in ("M_gate", "M_up", "M_down"))
            hidden = _np(act(torch.from_numpy(X @ G))) * (X @ U)
            got = hidden @ D
        else:
            Mi, Mo = mats[(layer, None, "M_in", None)].dense, mats[(layer, None, "M_out", None)].dense
            got = _np(act(torch.from_numpy(X @ Mi))) @ Mo
        _close(got, want, f"layer {layer} expert {expert} MLP output")


def test_certified_sigma_match_a_reference_from_the_module(built):
    """σ of one QK and one VO head against references recovered from the module alone.

    The module's per-head query/key projections P, K (pre-rotary) are recovered by
    least squares from its captured inputs and head tensors, q_h = X_q P, k_g = X_k K;
    VO's reference from the module's output projection applied to head h's block of
    the value tensor (P = I): o(pad(v_g)) = X_k VO_h. Certified σ (upper ends) must
    agree with the reference σ to 1e-9 relative (the least-squares reference's error).
    """
    from certbound.ball import float_upper
    from certbound.enclose import enclose_singular_values_of_product

    rec = built["plain"][-1]  # the deepest block: its inputs have full column rank (ALBERT's first do not)
    a = rec["attn"]
    qk_t, vo_t = _types(rec)
    xq = _np(rec["xq"]).reshape(-1, rec["xq"].shape[-1])
    xk = _np(rec["xk"]).reshape(-1, rec["xk"].shape[-1])
    assert np.linalg.matrix_rank(xq) == xq.shape[1] and np.linalg.matrix_rank(xk) == xk.shape[1]
    q, k, v = _np(rec["q"]), _np(rec["k"]), rec["v"]
    H, Hkv, dh = q.shape[1], k.shape[1], q.shape[-1]
    h = H - 1
    g = h * Hkv // H
    P = np.linalg.lstsq(xq, q[:, h].reshape(-1, dh), rcond=None)[0]
    K = np.linalg.lstsq(xk, k[:, g].reshape(-1, dh), rcond=None)[0]
    if built["name"] == "opt":
        P = P / (built["layout"].head_dim ** -0.5)  # OPT multiplies q by the scale inside q_proj
    z = torch.zeros(v.shape[0], v.shape[2], H * dh, dtype=v.dtype)
    z[..., h * dh:(h + 1) * dh] = v[:, g]
    with torch.no_grad():
        vo_out = _np(a.o(z)).reshape(-1, built["layout"].hidden_size)
    VO = np.linalg.lstsq(xk, vo_out, rcond=None)[0]
    for t, ref_m in ((qk_t, P @ K.T), (vo_t, VO)):
        m = built["unscaled"][(a.layer, h, t)]
        enc = enclose_singular_values_of_product(*m.factors, mode="fast")
        assert enc.certified
        up = np.array([float_upper(s) for s in enc.sigma])
        ref = np.linalg.svd(ref_m, compute_uv=False)[: len(up)]
        np.testing.assert_allclose(up, ref, rtol=1e-9, atol=1e-9 * ref[0], err_msg=f"{t} head {h}")
