"""Architecture adapters: which stored tensors are the theory's W_Q, W_K, W_V, W_O and FFN matrices.

Each supported architecture is an :class:`ArchitectureSpec`: tensor-name
templates per *stack* (one stack for encoders and decoders; ``encoder`` and
``decoder`` for T5/BART), the storage layout, the ``config.json`` keys holding
the sizes, and an optional ``configure`` hook for what a config switches
(Falcon's multi-query flags, T5's gated FFN, GPT-2's logit scaling, ...).
A hand-written *mapping file* (JSON, :data:`MAPPING_HELP`) covers anything
else; see :func:`load_mapping`.

Storage layouts (what one stored tensor means, in the row-vector convention
x ↦ xW of ``proofs/``):

``linear``
    ``torch.nn.Linear.weight``, stored (out, in); the row-vector matrix is
    its transpose.
``conv1d``
    GPT-2's ``Conv1D.weight``, stored (in, out); it *is* the row-vector
    matrix.
``row-vector``
    Stored (in, out) as well (certbound-pi checkpoints); read like ``conv1d``.

Roles (template keys; ``{layer}`` is the layer index within its stack,
``{expert}`` an expert index, ``{group}`` a shared layer group):

* attention: ``W_Q`` (N × H·d_h), ``W_K``, ``W_V`` (N × H_kv·d_h),
  ``W_O`` (H·d_h × N), or ``W_QKV`` fused (N × (H + 2·H_kv)·d_h, see
  :data:`QKV_LAYOUTS`); cross-attention of a decoder stack: ``X_Q``, ``X_K``,
  ``X_V``, ``X_O`` (same shapes; keys and values read the encoder output);
* feed-forward: ``M_in`` (N × d_ff), ``M_out`` (d_ff × N); or gated
  (SwiGLU/GeGLU, φ(x M_gate) ⊙ (x M_up) M_down): ``M_gate``, ``M_up``
  (N × d_ff), ``M_down`` (d_ff × N), or ``M_gate_up`` fused (N × 2·d_ff, the
  activated half first, as Phi-3 and ModernBERT ``chunk(2)`` it); with
  experts (Mixtral) the gated roles carry ``{expert}``.

Fused Q/K/V layouts (:data:`QKV_LAYOUTS`, row-vector columns, r = H/H_kv):

``contiguous``
    ``[Q (H·d_h) | K (H_kv·d_h) | V (H_kv·d_h)]`` — GPT-2, Phi-3, ModernBERT,
    Falcon with ``multi_query`` (H_kv = 1).
``per_head_interleaved``
    For each key/value head g in order: the r query heads g·r … g·r+r−1, then
    k_g, then v_g, each d_h wide — with H_kv = H simply ``[q₀ k₀ v₀ | q₁ k₁ v₁ |
    …]``: GPT-NeoX/Pythia (``view(…, H, 3·d_h)``), BLOOM (``view(…, H, 3,
    d_h)``), Falcon (``new_decoder_architecture``: ``view(…, H_kv, r + 2, d_h)``;
    neither flag: ``view(…, H, 3, d_h)``).

A fused tensor without a declared layout is refused: reading one as the other
silently certifies wrong heads.

Only the attention and FFN weight matrices are used: biases (including
Qwen2's q/k/v biases), LayerNorm/RMSNorm parameters (including Qwen3/Gemma3's
per-head q/k norms), embeddings, position encodings (rotary, ALiBi, T5's
relative bias, DeBERTa's relative embeddings), MoE routers, poolers and heads
are ignored, as in the reference paper's proxies; what that means per
architecture is ``proofs/architectures.md``.

certbound's own theory-faithful model (``model_type`` ``certbound-pi``) is
resolved separately (:mod:`certbound.checkpoints._pi`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Callable

from certbound._errors import OptionError

from ._pi import PI_ARCHITECTURE_HELP, is_pi_config, pi_config_facts, pi_templates
from ._sources import Checkpoint, read_config

__all__ = ["ArchitectureSpec", "StackSpec", "Stack", "ModelLayout", "ARCHITECTURES", "QKV_LAYOUTS",
           "supported_architectures", "resolve_layout", "load_mapping", "MAPPING_HELP", "MAPPING_EXAMPLE",
           "expected_stored_shape"]

_ATTN_ROLES = ("W_Q", "W_K", "W_V", "W_O", "W_QKV")
_CROSS_ROLES = ("X_Q", "X_K", "X_V", "X_O")
_FFN_ROLES = ("M_in", "M_out", "M_gate", "M_up", "M_down", "M_gate_up")
_ROLES = _ATTN_ROLES + _CROSS_ROLES + _FFN_ROLES

#: Fused Q/K/V column layouts a spec or mapping may declare (module docstring).
QKV_LAYOUTS = ("contiguous", "per_head_interleaved")


@dataclass(frozen=True)
class StackSpec:
    """Tensor names and config keys of one stack (the encoder, the decoder, or the only one).

    ``templates`` maps roles to name templates; ``*_keys`` are tried in order
    (the first present wins).
    """

    name: str
    templates: dict[str, str]
    layers_keys: tuple[str, ...] = ("num_hidden_layers",)
    heads_keys: tuple[str, ...] = ("num_attention_heads",)
    kv_heads_keys: tuple[str, ...] = ("num_key_value_heads",)
    head_dim_keys: tuple[str, ...] = ("head_dim",)
    d_ff_keys: tuple[str, ...] = ("intermediate_size",)
    experts_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class ArchitectureSpec:
    """Tensor names and config keys of one architecture family.

    ``configure(config, where)`` (optional) returns overrides decided by
    config flags: any of ``templates`` (per stack name), ``num_kv_heads``,
    ``qkv_layout``, ``logit_scale`` (``"sqrt_head_dim"``, ``"none"``, an int d
    meaning 1/√d, or ``"sqrt_head_dim_times_layer_squared"``), ``activation``,
    ``notes``, ``shared_groups``.
    """

    name: str
    model_types: tuple[str, ...]
    layout: str  # "linear" or "conv1d"
    templates: dict[str, str] = field(default_factory=dict)  # single-stack models
    num_layers_keys: tuple[str, ...] = ("num_hidden_layers",)
    hidden_keys: tuple[str, ...] = ("hidden_size",)
    heads_keys: tuple[str, ...] = ("num_attention_heads",)
    kv_heads_keys: tuple[str, ...] = ("num_key_value_heads",)
    head_dim_keys: tuple[str, ...] = ("head_dim",)
    d_ff_keys: tuple[str, ...] = ("intermediate_size",)
    experts_keys: tuple[str, ...] = ()
    activation_keys: tuple[str, ...] = ("hidden_act", "activation_function")
    positions_keys: tuple[str, ...] = ("max_position_embeddings",)
    class_names: tuple[str, ...] = ()  # config "architectures" entries, e.g. "BertModel"
    prefix: str | None = None  # None: detect
    qkv_layout: str | None = None  # required when a template has W_QKV
    stacks: tuple[StackSpec, ...] = ()  # encoder-decoder models; else one stack from the fields above
    alternatives: tuple[dict[str, str], ...] = ()  # other name sets of a single-stack model (tried in order)
    configure: Callable[[dict[str, Any], str], dict[str, Any]] | None = field(default=None, repr=False)
    notes: tuple[str, ...] = ()

    def stack_specs(self) -> tuple[StackSpec, ...]:
        """The architecture's stacks (one unnamed stack unless it declares several, e.g. encoder-decoder).

        Returns
        -------
        tuple of StackSpec
            ``stacks``, or one :class:`StackSpec` built from the single-stack fields.
        """
        if self.stacks:
            return self.stacks
        return (StackSpec("", self.templates, self.num_layers_keys, self.heads_keys, self.kv_heads_keys,
                          self.head_dim_keys, self.d_ff_keys, self.experts_keys),)


def _attn(q: str, k: str, v: str, o: str) -> dict[str, str]:
    return {"W_Q": q, "W_K": k, "W_V": v, "W_O": o}


def _cross(q: str, k: str, v: str, o: str) -> dict[str, str]:
    return {"X_Q": q, "X_K": k, "X_V": v, "X_O": o}


_BERT_LIKE = {
    "W_Q": "encoder.layer.{layer}.attention.self.query.weight",
    "W_K": "encoder.layer.{layer}.attention.self.key.weight",
    "W_V": "encoder.layer.{layer}.attention.self.value.weight",
    "W_O": "encoder.layer.{layer}.attention.output.dense.weight",
    "M_in": "encoder.layer.{layer}.intermediate.dense.weight",
    "M_out": "encoder.layer.{layer}.output.dense.weight",
}

_LLAMA_LIKE = {
    **_attn(*(f"layers.{{layer}}.self_attn.{p}_proj.weight" for p in "qkvo")),
    "M_gate": "layers.{layer}.mlp.gate_proj.weight",
    "M_up": "layers.{layer}.mlp.up_proj.weight",
    "M_down": "layers.{layer}.mlp.down_proj.weight",
}

_ROTARY = "rotary position embedding: QK is the bilinear form of the projections before the rotation"
_QK_NORM = "per-head RMSNorm of q and k: QK is the bilinear form of the projections before the norm"


def _configure_gpt2(config: dict[str, Any], where: str) -> dict[str, Any]:
    # GPT2Attention: logits / sqrt(d_h) if scale_attn_weights, and / (layer + 1) if
    # scale_attn_by_inverse_layer_idx (both in modeling_gpt2).
    if config.get("scale_attn_weights", True) is False:
        if config.get("scale_attn_by_inverse_layer_idx", False):
            return {"logit_scale": "layer_squared"}
        return {"logit_scale": "none"}
    if config.get("scale_attn_by_inverse_layer_idx", False):
        return {"logit_scale": "sqrt_head_dim_times_layer_squared"}
    return {}


def _configure_gemma2(config: dict[str, Any], where: str) -> dict[str, Any]:
    # Gemma 2/3: scaling = query_pre_attn_scalar ** -0.5 (not head_dim).
    s = config.get("query_pre_attn_scalar")
    out: dict[str, Any] = {"notes": (_ROTARY,) + ((_QK_NORM,) if "gemma3" in str(config.get("model_type")) else ())}
    if s is not None:
        if isinstance(s, float) and s.is_integer():
            s = int(s)
        out["logit_scale"] = s if isinstance(s, int) and not isinstance(s, bool) and s > 0 else "unsupported"
    if config.get("attn_logit_softcapping"):
        out["notes"] = out["notes"] + ("attention logits soft-capped (c·tanh(z/c)) after QK",)
    return out


def _configure_falcon(config: dict[str, Any], where: str) -> dict[str, Any]:
    # FalconAttention._split_heads: three cases, decided by two flags.
    H = config.get("num_attention_heads")
    notes = ("ALiBi position bias added to the logits",) if config.get("alibi") else (_ROTARY,)
    if config.get("new_decoder_architecture"):
        return {"num_kv_heads": config.get("num_kv_heads", H), "qkv_layout": "per_head_interleaved", "notes": notes}
    if config.get("multi_query", True):
        return {"num_kv_heads": 1, "qkv_layout": "contiguous", "notes": notes}
    return {"num_kv_heads": H, "qkv_layout": "per_head_interleaved", "notes": notes}


def _configure_t5(config: dict[str, Any], where: str) -> dict[str, Any]:
    proj = str(config.get("feed_forward_proj", "relu"))
    gated = proj.startswith("gated-")
    act = config.get("dense_act_fn") or proj.split("-")[-1]
    if proj == "gated-gelu":
        act = "gelu_new"  # T5Config maps gated-gelu to gelu_new
    out: dict[str, Any] = {"logit_scale": "none", "activation": act,
                           "notes": ("T5 relative position bias added to the logits",)}
    if gated:
        t = {}
        for st, ff in (("encoder", "1"), ("decoder", "2")):
            base = f"{st}.block.{{layer}}.layer.{ff}.DenseReluDense."
            t[st] = {"M_gate": base + "wi_0.weight", "M_up": base + "wi_1.weight", "M_down": base + "wo.weight"}
        out["ffn_templates"] = t
    return out


def _configure_deberta(config: dict[str, Any], where: str) -> dict[str, Any]:
    # DebertaV2SelfAttention: logits / sqrt(d_h * scale_factor), scale_factor = 1 + #{c2p, p2c} used.
    pos = config.get("pos_att_type") or []
    if isinstance(pos, str):
        pos = [p.strip() for p in pos.lower().split("|")]
    # (the module counts pos_att_type whether or not relative_attention is on)
    k = 1 + sum(p in pos for p in ("c2p", "p2c"))
    notes = ("content-to-content part only: QK is the c2c term query_proj·key_proj; the disentangled "
             "c2p/p2c position terms are not certified",)
    return {"logit_scale": ("sqrt_head_dim_times", k), "notes": notes}


def _configure_albert(config: dict[str, Any], where: str) -> dict[str, Any]:
    groups = config.get("num_hidden_groups", 1)
    if config.get("inner_group_num", 1) != 1:
        raise ValueError(f"{where}: ALBERT with inner_group_num={config.get('inner_group_num')} (several layers "
                         "per shared group) is not supported; give a mapping file")
    return {"shared_groups": groups}


def _configure_mixtral(config: dict[str, Any], where: str) -> dict[str, Any]:
    return {"notes": (_ROTARY, "mixture of experts: every expert's gated FFN is certified; the router is ignored")}


def _notes(*n: str) -> Callable[[dict[str, Any], str], dict[str, Any]]:
    return lambda config, where: {"notes": n}


_LLAMA_KEYS: dict[str, Any] = dict(activation_keys=("hidden_act", "hidden_activation"))

#: Built-in architectures, by name.
ARCHITECTURES: dict[str, ArchitectureSpec] = {
    s.name: s
    for s in [
        ArchitectureSpec("bert", ("bert",), "linear", _BERT_LIKE, class_names=("Bert",)),
        ArchitectureSpec("roberta", ("roberta", "xlm-roberta", "camembert"), "linear", _BERT_LIKE,
                         class_names=("Roberta", "XLMRoberta", "Camembert")),
        ArchitectureSpec("electra", ("electra",), "linear", _BERT_LIKE, class_names=("Electra",)),
        ArchitectureSpec(
            "distilbert", ("distilbert",), "linear",
            {
                "W_Q": "transformer.layer.{layer}.attention.q_lin.weight",
                "W_K": "transformer.layer.{layer}.attention.k_lin.weight",
                "W_V": "transformer.layer.{layer}.attention.v_lin.weight",
                "W_O": "transformer.layer.{layer}.attention.out_lin.weight",
                "M_in": "transformer.layer.{layer}.ffn.lin1.weight",
                "M_out": "transformer.layer.{layer}.ffn.lin2.weight",
            },
            num_layers_keys=("n_layers",), hidden_keys=("dim",), heads_keys=("n_heads",),
            d_ff_keys=("hidden_dim",), activation_keys=("activation",), class_names=("DistilBert",),
        ),
        ArchitectureSpec(
            "mpnet", ("mpnet",), "linear",
            {
                "W_Q": "encoder.layer.{layer}.attention.attn.q.weight",
                "W_K": "encoder.layer.{layer}.attention.attn.k.weight",
                "W_V": "encoder.layer.{layer}.attention.attn.v.weight",
                "W_O": "encoder.layer.{layer}.attention.attn.o.weight",
                "M_in": "encoder.layer.{layer}.intermediate.dense.weight",
                "M_out": "encoder.layer.{layer}.output.dense.weight",
            },
            class_names=("MPNet",),
        ),
        ArchitectureSpec(
            "gpt2", ("gpt2",), "conv1d",
            {
                "W_QKV": "h.{layer}.attn.c_attn.weight",
                "W_O": "h.{layer}.attn.c_proj.weight",
                "M_in": "h.{layer}.mlp.c_fc.weight",
                "M_out": "h.{layer}.mlp.c_proj.weight",
            },
            num_layers_keys=("n_layer",), hidden_keys=("n_embd",), heads_keys=("n_head",),
            d_ff_keys=("n_inner",), positions_keys=("n_positions", "n_ctx"), class_names=("GPT2",),
            qkv_layout="contiguous", configure=_configure_gpt2,
        ),
        ArchitectureSpec(
            "vit", ("vit",), "linear",
            {
                "W_Q": "encoder.layer.{layer}.attention.attention.query.weight",
                "W_K": "encoder.layer.{layer}.attention.attention.key.weight",
                "W_V": "encoder.layer.{layer}.attention.attention.value.weight",
                "W_O": "encoder.layer.{layer}.attention.output.dense.weight",
                "M_in": "encoder.layer.{layer}.intermediate.dense.weight",
                "M_out": "encoder.layer.{layer}.output.dense.weight",
            },
            class_names=("ViT",),
            # transformers 5 state-dict names (save_pretrained converts back to the ones above)
            alternatives=({**_attn(*(f"layers.{{layer}}.attention.{p}_proj.weight" for p in "qkvo")),
                           "M_in": "layers.{layer}.mlp.fc1.weight", "M_out": "layers.{layer}.mlp.fc2.weight"},),
        ),
        # ---- decoder LLMs with gated MLPs (rotary positions)
        ArchitectureSpec("llama", ("llama",), "linear", _LLAMA_LIKE, class_names=("Llama",),
                         configure=_notes(_ROTARY), **_LLAMA_KEYS),
        ArchitectureSpec("mistral", ("mistral",), "linear", _LLAMA_LIKE, class_names=("Mistral",),
                         configure=_notes(_ROTARY), **_LLAMA_KEYS),
        ArchitectureSpec("qwen2", ("qwen2",), "linear", _LLAMA_LIKE, class_names=("Qwen2",),
                         configure=_notes(_ROTARY, "q/k/v biases ignored"), **_LLAMA_KEYS),
        ArchitectureSpec("qwen3", ("qwen3",), "linear", _LLAMA_LIKE, class_names=("Qwen3",),
                         configure=_notes(_ROTARY, _QK_NORM), **_LLAMA_KEYS),
        ArchitectureSpec("gemma", ("gemma",), "linear", _LLAMA_LIKE, class_names=("Gemma",),
                         configure=_notes(_ROTARY), **_LLAMA_KEYS),
        ArchitectureSpec("gemma2", ("gemma2",), "linear", _LLAMA_LIKE, class_names=("Gemma2",),
                         configure=_configure_gemma2, **_LLAMA_KEYS),
        ArchitectureSpec("gemma3", ("gemma3_text",), "linear", _LLAMA_LIKE, class_names=("Gemma3",),
                         configure=_configure_gemma2, **_LLAMA_KEYS),
        ArchitectureSpec(
            "mixtral", ("mixtral",), "linear",
            {**_attn(*(f"layers.{{layer}}.self_attn.{p}_proj.weight" for p in "qkvo")),
             "M_gate": "layers.{layer}.block_sparse_moe.experts.{expert}.w1.weight",
             "M_up": "layers.{layer}.block_sparse_moe.experts.{expert}.w3.weight",
             "M_down": "layers.{layer}.block_sparse_moe.experts.{expert}.w2.weight"},
            experts_keys=("num_local_experts",), class_names=("Mixtral",), configure=_configure_mixtral,
            # transformers 5 module names (a torch.save of its state_dict): all experts stacked in one
            # tensor, gate rows first (`chunk(2)`); `name[{expert}]` reads expert e's slice
            alternatives=({**_attn(*(f"layers.{{layer}}.self_attn.{p}_proj.weight" for p in "qkvo")),
                           "M_gate_up": "layers.{layer}.mlp.experts.gate_up_proj[{expert}]",
                           "M_down": "layers.{layer}.mlp.experts.down_proj[{expert}]"},),
            **_LLAMA_KEYS,
        ),
        ArchitectureSpec(
            "phi", ("phi",), "linear",
            {**_attn(*(f"layers.{{layer}}.self_attn.{p}.weight" for p in ("q_proj", "k_proj", "v_proj", "dense"))),
             "M_in": "layers.{layer}.mlp.fc1.weight", "M_out": "layers.{layer}.mlp.fc2.weight"},
            class_names=("Phi",), configure=_notes(_ROTARY + " (partial: the first rotary dimensions of each head)"),
        ),
        ArchitectureSpec(
            "phi3", ("phi3",), "linear",
            {"W_QKV": "layers.{layer}.self_attn.qkv_proj.weight", "W_O": "layers.{layer}.self_attn.o_proj.weight",
             "M_gate_up": "layers.{layer}.mlp.gate_up_proj.weight", "M_down": "layers.{layer}.mlp.down_proj.weight"},
            class_names=("Phi3",), qkv_layout="contiguous", configure=_notes(_ROTARY),
        ),
        ArchitectureSpec(
            "gpt_neox", ("gpt_neox",), "linear",
            {"W_QKV": "layers.{layer}.attention.query_key_value.weight",
             "W_O": "layers.{layer}.attention.dense.weight",
             "M_in": "layers.{layer}.mlp.dense_h_to_4h.weight", "M_out": "layers.{layer}.mlp.dense_4h_to_h.weight"},
            class_names=("GPTNeoX",), qkv_layout="per_head_interleaved",
            configure=_notes(_ROTARY + " (partial: rotary_pct of each head)"),
        ),
        ArchitectureSpec(
            "bloom", ("bloom",), "linear",
            {"W_QKV": "h.{layer}.self_attention.query_key_value.weight",
             "W_O": "h.{layer}.self_attention.dense.weight",
             "M_in": "h.{layer}.mlp.dense_h_to_4h.weight", "M_out": "h.{layer}.mlp.dense_4h_to_h.weight"},
            num_layers_keys=("n_layer", "num_hidden_layers"), heads_keys=("n_head", "num_attention_heads"),
            d_ff_keys=(), class_names=("Bloom",), qkv_layout="per_head_interleaved",
            activation_keys=(), configure=lambda c, w: {"activation": "bloom_gelu",
                                                        "notes": ("ALiBi position bias added to the logits",)},
        ),
        ArchitectureSpec(
            "falcon", ("falcon", "RefinedWeb", "RefinedWebModel"), "linear",
            {"W_QKV": "h.{layer}.self_attention.query_key_value.weight",
             "W_O": "h.{layer}.self_attention.dense.weight",
             "M_in": "h.{layer}.mlp.dense_h_to_4h.weight", "M_out": "h.{layer}.mlp.dense_4h_to_h.weight"},
            kv_heads_keys=(), d_ff_keys=("ffn_hidden_size",), activation_keys=("activation",),
            class_names=("Falcon",), configure=_configure_falcon,
        ),
        ArchitectureSpec(
            "opt", ("opt",), "linear",
            {**_attn(*(f"decoder.layers.{{layer}}.self_attn.{p}.weight"
                       for p in ("q_proj", "k_proj", "v_proj", "out_proj"))),
             "M_in": "decoder.layers.{layer}.fc1.weight", "M_out": "decoder.layers.{layer}.fc2.weight"},
            d_ff_keys=("ffn_dim",), class_names=("OPT",),
        ),
        ArchitectureSpec(
            "gptj", ("gptj",), "linear",
            {**_attn(*(f"h.{{layer}}.attn.{p}.weight" for p in ("q_proj", "k_proj", "v_proj", "out_proj"))),
             "M_in": "h.{layer}.mlp.fc_in.weight", "M_out": "h.{layer}.mlp.fc_out.weight"},
            num_layers_keys=("n_layer",), hidden_keys=("n_embd",), heads_keys=("n_head",), d_ff_keys=("n_inner",),
            positions_keys=("n_positions",), class_names=("GPTJ",),
            configure=_notes(_ROTARY + " (partial: rotary_dim of each head)"),
        ),
        # ---- encoder-decoder
        ArchitectureSpec(
            "t5", ("t5", "mt5", "umt5"), "linear", hidden_keys=("d_model",), activation_keys=(),
            positions_keys=(), class_names=("T5", "MT5", "UMT5"), configure=_configure_t5,
            stacks=(
                StackSpec("encoder", {
                    **_attn(*(f"encoder.block.{{layer}}.layer.0.SelfAttention.{p}.weight" for p in "qkvo")),
                    "M_in": "encoder.block.{layer}.layer.1.DenseReluDense.wi.weight",
                    "M_out": "encoder.block.{layer}.layer.1.DenseReluDense.wo.weight"},
                    layers_keys=("num_layers",), heads_keys=("num_heads",), kv_heads_keys=(),
                    head_dim_keys=("d_kv",), d_ff_keys=("d_ff",)),
                StackSpec("decoder", {
                    **_attn(*(f"decoder.block.{{layer}}.layer.0.SelfAttention.{p}.weight" for p in "qkvo")),
                    **_cross(*(f"decoder.block.{{layer}}.layer.1.EncDecAttention.{p}.weight" for p in "qkvo")),
                    "M_in": "decoder.block.{layer}.layer.2.DenseReluDense.wi.weight",
                    "M_out": "decoder.block.{layer}.layer.2.DenseReluDense.wo.weight"},
                    layers_keys=("num_decoder_layers", "num_layers"), heads_keys=("num_heads",), kv_heads_keys=(),
                    head_dim_keys=("d_kv",), d_ff_keys=("d_ff",)),
            ),
        ),
        ArchitectureSpec(
            "bart", ("bart", "mbart"), "linear", hidden_keys=("d_model",), class_names=("BART", "Bart", "MBart"),
            stacks=(
                StackSpec("encoder", {
                    **_attn(*(f"encoder.layers.{{layer}}.self_attn.{p}.weight"
                              for p in ("q_proj", "k_proj", "v_proj", "out_proj"))),
                    "M_in": "encoder.layers.{layer}.fc1.weight", "M_out": "encoder.layers.{layer}.fc2.weight"},
                    layers_keys=("encoder_layers",), heads_keys=("encoder_attention_heads",), kv_heads_keys=(),
                    head_dim_keys=(), d_ff_keys=("encoder_ffn_dim",)),
                StackSpec("decoder", {
                    **_attn(*(f"decoder.layers.{{layer}}.self_attn.{p}.weight"
                              for p in ("q_proj", "k_proj", "v_proj", "out_proj"))),
                    **_cross(*(f"decoder.layers.{{layer}}.encoder_attn.{p}.weight"
                               for p in ("q_proj", "k_proj", "v_proj", "out_proj"))),
                    "M_in": "decoder.layers.{layer}.fc1.weight", "M_out": "decoder.layers.{layer}.fc2.weight"},
                    layers_keys=("decoder_layers",), heads_keys=("decoder_attention_heads",), kv_heads_keys=(),
                    head_dim_keys=(), d_ff_keys=("decoder_ffn_dim",)),
            ),
        ),
        # ---- encoders
        ArchitectureSpec(
            "deberta-v2", ("deberta-v2",), "linear",
            {**_attn("encoder.layer.{layer}.attention.self.query_proj.weight",
                     "encoder.layer.{layer}.attention.self.key_proj.weight",
                     "encoder.layer.{layer}.attention.self.value_proj.weight",
                     "encoder.layer.{layer}.attention.output.dense.weight"),
             "M_in": "encoder.layer.{layer}.intermediate.dense.weight",
             "M_out": "encoder.layer.{layer}.output.dense.weight"},
            kv_heads_keys=(), head_dim_keys=(), class_names=("DebertaV2",), configure=_configure_deberta,
        ),
        ArchitectureSpec(
            "albert", ("albert",), "linear",
            {**_attn(*(f"encoder.albert_layer_groups.{{group}}.albert_layers.0.attention.{p}.weight"
                       for p in ("query", "key", "value", "dense"))),
             "M_in": "encoder.albert_layer_groups.{group}.albert_layers.0.ffn.weight",
             "M_out": "encoder.albert_layer_groups.{group}.albert_layers.0.ffn_output.weight"},
            kv_heads_keys=(), head_dim_keys=(), class_names=("Albert",), configure=_configure_albert,
        ),
        ArchitectureSpec(
            "modernbert", ("modernbert",), "linear",
            {"W_QKV": "layers.{layer}.attn.Wqkv.weight", "W_O": "layers.{layer}.attn.Wo.weight",
             "M_gate_up": "layers.{layer}.mlp.Wi.weight", "M_down": "layers.{layer}.mlp.Wo.weight"},
            kv_heads_keys=(), head_dim_keys=(), activation_keys=("hidden_activation",), class_names=("ModernBert",),
            qkv_layout="contiguous", configure=_notes(_ROTARY, "local (sliding-window) attention on some layers"),
        ),
    ]
}

#: The JSON example of :data:`MAPPING_HELP` (valid JSON; the tests parse it).
MAPPING_EXAMPLE = """\
{"layout": "linear",
 "num_layers": 6, "hidden_size": 384, "num_heads": 12, "num_key_value_heads": 4, "head_dim": 32,
 "intermediate_size": 1536,
 "tensors": {"W_Q": "blocks.{layer}.attn.q.weight", "W_K": "blocks.{layer}.attn.k.weight",
             "W_V": "blocks.{layer}.attn.v.weight", "W_O": "blocks.{layer}.attn.o.weight",
             "M_gate": "blocks.{layer}.mlp.gate.weight", "M_up": "blocks.{layer}.mlp.up.weight",
             "M_down": "blocks.{layer}.mlp.down.weight"}}"""

MAPPING_HELP = f"""\
A mapping file is a JSON object, e.g.
  {{"architecture": "bert", "prefix": "model.encoder_backbone."}}
to reuse a built-in layout under another prefix, or a full description such as
{MAPPING_EXAMPLE}
Keys: "layout" is "linear" (stored out x in) or "conv1d" (stored in x out); sizes missing from the
mapping are read from config.json; "num_key_value_heads" (default num_heads; query head h uses key/value
head floor(h * num_key_value_heads / num_heads)) and "head_dim" (default hidden_size / num_heads) are optional.
Tensor roles: W_Q, W_K, W_V, W_O; or "W_QKV" for one fused projection, which then needs
"qkv_layout": "contiguous" ([Q | K | V]) or "per_head_interleaved" (per key/value head: its query heads,
then k, then v; GPT-NeoX, BLOOM, Falcon) -- never guessed; feed-forward M_in, M_out, or gated
M_gate (the activated branch), M_up, M_down, or "M_gate_up" fused (activated half first).
Every template contains {{layer}}, unless "shared_layers": true (every layer uses the same tensors, as ALBERT).
Pass it with --mapping FILE."""


def supported_architectures() -> list[str]:
    """Names of the built-in architectures (and the config ``model_type`` values they accept).

    Returns
    -------
    list of str
        One ``"name (model_type, ...)"`` entry per built-in architecture.
    """
    return [f"{s.name} (model_type: {', '.join(s.model_types)})" for s in ARCHITECTURES.values()] + [
        PI_ARCHITECTURE_HELP]


@dataclass(frozen=True)
class Stack:
    """The resolved sizes and tensor names of one stack of a :class:`ModelLayout`.

    Layers ``first_layer … first_layer + num_layers − 1`` of the layout (global
    indices, encoder before decoder) are this stack's layers 0 … num_layers − 1.
    ``shared_groups`` > 0: the stack stores only that many layers (ALBERT),
    layer i using group ⌊i·shared_groups/num_layers⌋.
    """

    name: str
    first_layer: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    templates: dict[str, str] = field(repr=False)
    num_experts: int = 0
    shared_groups: int = 0

    @property
    def cross_attention(self) -> bool:
        return "X_Q" in self.templates

    @property
    def ffn_kind(self) -> str:
        t = self.templates
        if "M" in t:
            return "single"
        return "gated" if ("M_down" in t) else "two"

    def group_of(self, local_layer: int) -> int:
        """Stored layer group used by a layer (ALBERT; = the layer itself when nothing is shared).

        Parameters
        ----------
        local_layer : int
            The layer's index within this stack.

        Returns
        -------
        int
            The stored group's index.
        """
        if not self.shared_groups:
            return local_layer
        return int(local_layer / (self.num_layers / self.shared_groups))


@dataclass(frozen=True)
class ModelLayout:
    """Everything needed to extract the theory's matrices from one checkpoint.

    The scalar size fields describe the first stack (the only one except for
    encoder-decoder models; :attr:`stacks` has each). ``ffn_kind`` is
    ``"two"`` (M_in, M_out), ``"gated"`` (M_gate, M_up, M_down) or
    ``"single"`` (certbound-pi variant P: one N × N matrix ``M``);
    ``attention_logit_scale`` says whether logits are divided by √d with
    ``d = logit_scale_d(layer)`` (d_h for most architectures; see
    :meth:`logit_scale_d`); ``theory_config`` holds the a-priori constants of a
    model that *is* the theorems' model class (certbound-pi, else ``None``).
    ``activation`` and ``max_positions`` are the config's (``None`` when not
    stated); ``notes`` say what of the architecture the theory matrices leave
    out (rotary, ALiBi, q/k norms, ...).
    """

    architecture: str
    layout: str
    prefix: str
    num_layers: int
    hidden_size: int
    num_heads: int
    head_dim: int
    intermediate_size: int
    templates: dict[str, str] = field(repr=False)
    ffn_kind: str = "two"
    attention_logit_scale: bool = True
    theory_config: dict[str, Any] | None = field(default=None, repr=False)
    num_kv_heads: int | None = None
    qkv_layout: str | None = None
    stacks: tuple[Stack, ...] = field(default=(), repr=False)
    logit_scale: Any = "sqrt_head_dim"
    activation: str | None = None
    max_positions: int | None = None
    num_experts: int = 0
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.num_kv_heads is None:
            object.__setattr__(self, "num_kv_heads", self.num_heads)
        if not self.stacks:
            object.__setattr__(self, "stacks", (Stack("", 0, self.num_layers, self.num_heads, self.num_heads
                                                      if self.num_kv_heads is None else self.num_kv_heads,
                                                      self.head_dim, self.intermediate_size, self.templates,
                                                      self.num_experts),))

    def stack_of(self, layer: int) -> tuple[Stack, int]:
        """The stack holding a (global) layer and the layer's index within it.

        Parameters
        ----------
        layer : int
            0-based global layer.

        Returns
        -------
        tuple of (Stack, int)
            The stack and the layer's index in it.

        Raises
        ------
        ValueError
            For a layer out of range.
        """
        for s in self.stacks:
            if s.first_layer <= layer < s.first_layer + s.num_layers:
                return s, layer - s.first_layer
        raise ValueError(f"layer {layer} out of range (model has {self.num_layers} layers)")

    def tensor_name(self, role: str, layer: int, expert: int | None = None) -> str:
        """Full stored name of a role's tensor in a (global) layer (and expert).

        Parameters
        ----------
        role : str
            A tensor role (``"W_Q"``, ``"M_in"``, ...).
        layer : int
            0-based global layer.
        expert : int, optional
            The expert (mixtures of experts).

        Returns
        -------
        str
            The tensor's name in the checkpoint (prefix included).
        """
        s, i = self.stack_of(layer)
        return self.prefix + s.templates[role].format(layer=i, group=s.group_of(i),
                                                      expert=0 if expert is None else expert)

    def shared_source_layer(self, layer: int) -> int | None:
        """First layer using the same stored tensors as ``layer`` if that is an earlier one (ALBERT), else None.

        Parameters
        ----------
        layer : int
            0-based global layer.

        Returns
        -------
        int or None
            The earlier layer whose certificate this one shares, or ``None``.
        """
        s, i = self.stack_of(layer)
        if not s.shared_groups:
            return None
        g = s.group_of(i)
        first = next(j for j in range(s.num_layers) if s.group_of(j) == g)
        return s.first_layer + first if first < i else None

    def kv_head_of(self, head: int, layer: int = 0) -> int:
        """The key/value head query head ``head`` attends with: ⌊head·H_kv/H⌋ (GQA/MQA; = head without).

        ``transformers``' ``repeat_kv`` order (``proofs/architectures.md`` §1).

        Parameters
        ----------
        head : int
            The query head.
        layer : int
            0-based global layer (stacks may differ).

        Returns
        -------
        int
            The key/value head.
        """
        s, _ = self.stack_of(layer)
        return head * s.num_kv_heads // s.num_heads

    def logit_scale_d(self, layer: int) -> int | None:
        """d with the attention logits of ``layer`` being (x Q)(x K)ᵀ/√d; None if not an integer (or no scale).

        Per architecture in ``proofs/architectures.md`` §3 (GPT-2's inverse layer index, Gemma's
        ``query_pre_attn_scalar``, DeBERTa-v2's factor, T5: none).

        Parameters
        ----------
        layer : int
            0-based global layer.

        Returns
        -------
        int or None
            d, or ``None``.
        """
        s, i = self.stack_of(layer)
        ls = self.logit_scale
        if not self.attention_logit_scale or ls == "none":
            return None
        if ls == "sqrt_head_dim":
            return s.head_dim
        if ls == "sqrt_head_dim_times_layer_squared":
            return s.head_dim * (i + 1) ** 2
        if ls == "layer_squared":
            return (i + 1) ** 2
        if isinstance(ls, tuple) and ls[0] == "sqrt_head_dim_times":
            return s.head_dim * int(ls[1])
        if isinstance(ls, int) and not isinstance(ls, bool):
            return ls
        return None

    @property
    def fused_qkv(self) -> bool:
        return "W_QKV" in self.templates

    @property
    def matrix_types(self) -> tuple[str, ...]:
        """The theory matrix types of the layout, in output order within a layer."""
        out = ["QK", "VO"]
        if any(s.cross_attention for s in self.stacks):
            out += ["QK_cross", "VO_cross"]
        kinds = {s.ffn_kind for s in self.stacks}
        if "single" in kinds:
            out.append("M")
        if "two" in kinds:
            out += ["M_in", "M_out"]
        if "gated" in kinds:
            out += ["M_gate", "M_up", "M_down"]
        return tuple(out)

    @property
    def has_readout(self) -> bool:
        """True if the checkpoint stores a learned readout vector (type ``readout``)."""
        return "readout" in self.templates

    def summary(self) -> dict[str, Any]:
        """JSON-friendly description (the ``config`` block of reports).

        Returns
        -------
        dict
            Architecture, sizes, storage layout and tensor prefix, plus the facts that differ from the
            defaults (key/value heads, fused QKV, gated FFN, experts, stacks, logit scale, notes).
        """
        out: dict[str, Any] = {
            "architecture": self.architecture,
            "num_layers": self.num_layers,
            "hidden_size": self.hidden_size,
            "num_heads": self.num_heads,
            "head_dim": self.head_dim,
            "intermediate_size": self.intermediate_size,
            "layout": self.layout,
            "tensor_prefix": self.prefix,
        }
        if self.num_kv_heads != self.num_heads:
            out["num_key_value_heads"] = self.num_kv_heads
        if self.qkv_layout is not None:
            out["qkv_layout"] = self.qkv_layout
        if self.ffn_kind == "gated":
            out["ffn_kind"] = "gated"
        if self.num_experts:
            out["num_experts"] = self.num_experts
        if len(self.stacks) > 1 or self.stacks[0].shared_groups:
            out["stacks"] = [{"name": s.name, "first_layer": s.first_layer, "num_layers": s.num_layers,
                              "num_heads": s.num_heads, "num_key_value_heads": s.num_kv_heads,
                              "head_dim": s.head_dim, "intermediate_size": s.intermediate_size,
                              "cross_attention": s.cross_attention, "ffn_kind": s.ffn_kind,
                              "shared_groups": s.shared_groups} for s in self.stacks]
        if self.attention_logit_scale and self.logit_scale != "sqrt_head_dim":
            out["logit_scale"] = str(self.logit_scale)
        if self.notes:
            out["notes"] = list(self.notes)
        if self.theory_config is not None:
            out |= {
                "ffn_kind": self.ffn_kind,
                "attention_logit_scale": self.attention_logit_scale,
                "theory_config": {k: str(v) if isinstance(v, Fraction) else v
                                  for k, v in self.theory_config.items()},
            }
        elif not self.attention_logit_scale:
            out["attention_logit_scale"] = False
        return out


def load_mapping(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check a mapping file (see :data:`MAPPING_HELP`).

    Parameters
    ----------
    path : str or path
        A JSON mapping file.

    Returns
    -------
    dict
        The checked mapping (:func:`check_mapping`), ``_path`` set to ``path``.

    Raises
    ------
    ValueError
        For invalid JSON or a mapping that :func:`check_mapping` refuses, naming the file.
    """
    path = os.fspath(path)
    return check_mapping(read_config(path), path)


def check_mapping(m: dict[str, Any], where: str = "mapping") -> dict[str, Any]:
    """Check a mapping dict (see :data:`MAPPING_HELP`); returns a copy with ``_path`` set.

    Parameters
    ----------
    m : dict
        The mapping (a built-in architecture under a prefix, or a full tensor-name description).
    where : str
        Its name in error messages (the file).

    Returns
    -------
    dict
        A checked copy, ``_path`` set to ``where``.

    Examples
    --------
    >>> check_mapping({"tensors": {"W_QKV": "h.{layer}.qkv", "W_O": "h.{layer}.o", "M_in": "h.{layer}.a",
    ...                            "M_out": "h.{layer}.b"}})
    Traceback (most recent call last):
    ValueError: mapping: the fused tensor W_QKV needs "qkv_layout": "contiguous" or "per_head_interleaved" ...
    """
    m = dict(m)
    allowed = {"architecture", "prefix", "layout", "tensors", "num_layers", "hidden_size", "num_heads",
               "intermediate_size", "name", "num_key_value_heads", "head_dim", "qkv_layout", "shared_layers",
               "_path"}
    extra = set(m) - allowed
    if extra:
        raise ValueError(f"{where}: unknown mapping key(s) {sorted(extra)}; allowed: {sorted(allowed - {'_path'})}")
    if "architecture" in m and m["architecture"] not in ARCHITECTURES:
        raise ValueError(f"{where}: unknown architecture {m['architecture']!r}; built-in: {', '.join(ARCHITECTURES)}")
    if "layout" in m and m["layout"] not in ("linear", "conv1d"):
        raise ValueError(f"{where}: layout must be 'linear' or 'conv1d', not {m['layout']!r}")
    if "qkv_layout" in m and m["qkv_layout"] not in QKV_LAYOUTS:
        raise ValueError(f"{where}: qkv_layout must be one of {list(QKV_LAYOUTS)}, not {m['qkv_layout']!r}")
    if "shared_layers" in m and not isinstance(m["shared_layers"], bool):
        raise ValueError(f"{where}: shared_layers must be true or false")
    t = m.get("tensors")
    if t is not None:
        shared = m.get("shared_layers", False)
        if not isinstance(t, dict) or not all(isinstance(v, str) and (shared or "{layer}" in v) for v in t.values()):
            raise ValueError(f"{where}: 'tensors' must map roles to name templates containing {{layer}} "
                             "(or set \"shared_layers\": true)")
        bad = (set(t) - set(_ROLES)) | (set(t) & set(_CROSS_ROLES))
        if bad:
            raise ValueError(f"{where}: unknown tensor role(s) {sorted(bad)}; roles: "
                             f"{', '.join(r for r in _ROLES if r not in _CROSS_ROLES)}")
        if "W_QKV" in t and "qkv_layout" not in m:
            raise ValueError(f"{where}: the fused tensor W_QKV needs \"qkv_layout\": \"contiguous\" or "
                             "\"per_head_interleaved\" (per key/value head: its query heads, then k, then v, as "
                             "GPT-NeoX/BLOOM/Falcon store it); certbound never guesses a fused layout")
        if "W_QKV" in t and set(t) & {"W_Q", "W_K", "W_V"}:
            raise ValueError(f"{where}: give either W_QKV or W_Q, W_K, W_V, not both")
        attn_ok = {"W_O"} <= set(t) and ({"W_Q", "W_K", "W_V"} <= set(t) or "W_QKV" in t)
        ffn_ok = ({"M_in", "M_out"} <= set(t) or {"M_gate", "M_up", "M_down"} <= set(t)
                  or {"M_gate_up", "M_down"} <= set(t))
        if not (attn_ok and ffn_ok):
            raise ValueError(f"{where}: mapping 'tensors' must give W_Q, W_K, W_V (or W_QKV), W_O and "
                             "M_in, M_out (or M_gate, M_up, M_down, or M_gate_up, M_down)")
    elif "qkv_layout" in m:
        raise ValueError(f"{where}: qkv_layout is only used with 'tensors' (the built-in architectures declare theirs)")
    m["_path"] = where
    return m


def _spec_for_config(config: dict[str, Any] | None, where: str) -> ArchitectureSpec:
    def unsupported(what: str) -> str:
        return (f"{where}: unsupported or unknown architecture {what}. Supported: "
                + "; ".join(supported_architectures())
                + ".\nFor another model, map tensor names by hand with a `mapping` file.\n" + MAPPING_HELP)

    if config is None:
        raise OptionError(unsupported("(no config.json found; give one as the `config` file)"))
    mt = config.get("model_type")
    for s in ARCHITECTURES.values():
        if mt in s.model_types:
            return s
    for arch in config.get("architectures") or []:
        for s in sorted(ARCHITECTURES.values(), key=lambda s: -max((len(c) for c in s.class_names), default=0)):
            if any(str(arch).startswith(c) for c in s.class_names):
                return s
    raise OptionError(unsupported(f"model_type={mt!r}, architectures={config.get('architectures')!r}"))


def _config_int(config: dict[str, Any], keys: tuple[str, ...], what: str, where: str) -> int | None:
    for k in keys:
        v = config.get(k)
        if v is not None:
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise ValueError(f"{where}: config {k}={v!r} is not a positive integer ({what})")
            return v
    return None


def _prefix_candidates(ck: Checkpoint, spec_name: str, templates: dict[str, str]) -> list[str]:
    """Every tensor-name prefix under which the layer-0 query tensor exists (at least one, else an error)."""
    first_role = "W_QKV" if "W_QKV" in templates else "W_Q"
    suffix = templates[first_role].format(layer=0, group=0, expert=0)
    prefixes = sorted({n[: -len(suffix)] for n in ck.names()
                       if n.endswith(suffix) and (len(n) == len(suffix) or n[-len(suffix) - 1] == ".")})
    if prefixes:
        return prefixes
    if not prefixes:
        tail = suffix.rsplit(".", 2)[-2]
        near = [n for n in ck.names() if tail in n][:5]
        raise OptionError(f"{ck.path}: tensor '*{suffix}' ({spec_name} layer 0 {first_role}) is missing"
                          + (f"; similar names: {near}" if near else "")
                          + ". If the names differ, give a `mapping` file.\n" + MAPPING_HELP)
    return prefixes


def _choose_prefix(ck: Checkpoint, layout: "ModelLayout", candidates: list[str]) -> "ModelLayout":
    """The layout under the one candidate prefix whose tensors all have the config's shapes.

    Several prefixes can hold a layer-0 query tensor (a multimodal checkpoint's
    language model and vision tower); only one may be consistent with the
    config's sizes and names — otherwise the choice is the user's.
    """
    if len(candidates) == 1:
        return replace(layout, prefix=candidates[0])
    fits = []
    for c in candidates:
        try:
            _check_shapes(ck, replace(layout, prefix=c))
            fits.append(c)
        except ValueError:
            pass
    if len(fits) == 1:
        return replace(layout, prefix=fits[0])
    raise ValueError(f"{ck.path}: several tensor-name prefixes match {layout.architecture} ({candidates})"
                     + (f", and {fits} all fit the config" if fits else ", and none fits the config's sizes")
                     + f"; choose one with a mapping file {{\"architecture\": \"{layout.architecture}\", "
                     "\"prefix\": \"...\"}")


#: Generic config keys tried after an architecture's own (mapping files name sizes in many dialects).
_GENERIC = {
    "num_layers": ("num_hidden_layers", "n_layer", "n_layers", "num_layers", "encoder_layers"),
    "hidden_size": ("hidden_size", "n_embd", "dim", "d_model"),
    "num_heads": ("num_attention_heads", "n_head", "n_heads", "num_heads", "encoder_attention_heads"),
    "intermediate_size": ("intermediate_size", "n_inner", "hidden_dim", "d_ff", "ffn_dim", "encoder_ffn_dim",
                          "ffn_hidden_size"),
    "num_key_value_heads": ("num_key_value_heads", "num_kv_heads", "n_head_kv"),
    "head_dim": ("head_dim", "d_kv", "head_size"),
}


def resolve_layout(ck: Checkpoint, mapping: dict[str, Any] | None = None) -> ModelLayout:
    """Decide architecture, sizes and tensor names, and check every tensor's shape.

    Only metadata is read (names, shapes, dtypes), so a bad checkpoint fails
    here, before any numerical work. Errors name the file and the tensor.

    Parameters
    ----------
    ck : Checkpoint
        The opened checkpoint (its config and tensor metadata).
    mapping : dict, optional
        A checked mapping (:func:`load_mapping`) for an unsupported architecture.

    Returns
    -------
    ModelLayout
        Architecture, sizes, storage layout and tensor-name templates.

    Raises
    ------
    ValueError
        For an unknown architecture, a missing or mis-shaped tensor, or a config that
        disagrees with the weights (naming the file and the tensor).
    """
    where = ck.config_path or ck.path
    config = ck.config or {}
    if mapping is None and is_pi_config(config):
        return _resolve_pi_layout(ck, config, where)
    config, wrapped = _language_model_config(config)
    if mapping is not None and "_path" not in mapping:
        mapping = check_mapping(mapping)
    if mapping is not None and "tensors" in mapping:
        # a hand-mapped model: its config may name activation and context length in any dialect
        base = ArchitectureSpec(mapping.get("name", "custom"), (), mapping.get("layout", "linear"),
                                dict(mapping["tensors"]), qkv_layout=mapping.get("qkv_layout"),
                                activation_keys=("hidden_act", "activation_function", "hidden_activation",
                                                 "activation", "dense_act_fn"),
                                positions_keys=("max_position_embeddings", "n_positions", "n_ctx"))
        where = mapping.get("_path", where)
    elif mapping is not None and "architecture" in mapping:
        base = ARCHITECTURES[mapping["architecture"]]
    else:
        base = _spec_for_config(config if ck.config is not None else None, where)
    if mapping is not None and "layout" in mapping:
        base = replace(base, layout=mapping["layout"])
    over = base.configure(config, where) if base.configure is not None else {}
    stack_specs = list(base.stack_specs())
    if over.get("ffn_templates"):
        stack_specs = [replace(s, templates={k: v for k, v in s.templates.items() if k not in ("M_in", "M_out")}
                               | over["ffn_templates"][s.name]) for s in stack_specs]
    if len(stack_specs) > 1 and any(str(a).endswith("EncoderModel") for a in config.get("architectures") or []):
        # T5EncoderModel & co.: the checkpoint holds the encoder stack only (the config still sizes a decoder)
        stack_specs = [s for s in stack_specs if s.name == "encoder"]
        over = dict(over, notes=tuple(over.get("notes", ())) + ("encoder only (the config's architectures "
                                                                 "name an EncoderModel)",))
    if len(stack_specs) == 1 and base.alternatives and not (mapping and "prefix" in mapping):
        stack_specs = [replace(stack_specs[0], templates=_choose_alternative(ck, base, stack_specs[0].templates))]
    if mapping is not None and "prefix" in mapping:
        prefixes = [str(mapping["prefix"])]
    else:
        prefixes = _prefix_candidates(ck, base.name, stack_specs[0].templates)
    prefix = prefixes[0]

    def size(mkey: str, keys: tuple[str, ...], what: str, generic: bool = True) -> int | None:
        if mapping is not None and mapping.get(mkey) is not None:
            v = mapping[mkey]
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise ValueError(f"{mapping.get('_path')}: {mkey}={v!r} is not a positive integer")
            return v
        return _config_int(config, keys + (_GENERIC.get(mkey, ()) if generic else ()), what, where)

    def need(v: int | None, what: str, keys: tuple[str, ...]) -> int:
        if v is None:
            looked = ", ".join(dict.fromkeys(keys + _GENERIC.get(what, ())))
            raise ValueError(f"{where}: the config does not give {what} (looked for {looked}); give it in the "
                             "config or a mapping file")
        return v

    N = need(size("hidden_size", base.hidden_keys, "hidden width"), "hidden_size", base.hidden_keys)
    builtin = mapping is None or "tensors" not in mapping
    stacks: list[Stack] = []
    first = 0
    for ss in stack_specs:
        L = need(size("num_layers", ss.layers_keys, "layer count"), "num_layers", ss.layers_keys)
        H = need(size("num_heads", ss.heads_keys, "head count"), "num_heads", ss.heads_keys)
        Hkv = over.get("num_kv_heads") or size("num_key_value_heads", ss.kv_heads_keys, "key/value head count",
                                               generic=not builtin) or H
        dh = size("head_dim", ss.head_dim_keys, "head width", generic=not builtin)
        if dh is None:
            if N % H:
                raise ValueError(f"{where}: hidden size {N} is not divisible by the head count {H} "
                                 "(give head_dim)")
            dh = N // H
        if H % Hkv:
            raise ValueError(f"{where}: the head count {H} is not a multiple of the key/value head count {Hkv}")
        F = size("intermediate_size", ss.d_ff_keys, "FFN width")
        if F is None:
            F = 4 * N  # GPT-2's n_inner = null, BLOOM, Falcon without ffn_hidden_size: 4 * hidden
        E = size("num_experts", ss.experts_keys, "expert count", generic=False) if ss.experts_keys else 0
        templates = dict(ss.templates)
        groups = 0
        if over.get("shared_groups"):
            groups = int(over["shared_groups"])
        elif mapping is not None and mapping.get("shared_layers"):
            groups = 1
        if groups and not 1 <= groups <= L:
            raise ValueError(f"{where}: {groups} shared layer groups for {L} layers")
        stacks.append(Stack(ss.name, first, L, H, Hkv, dh, F, templates, E or 0, groups))
        first += L
    s0 = stacks[0]
    qkv_layout = over.get("qkv_layout", base.qkv_layout)
    if "W_QKV" in s0.templates and qkv_layout not in QKV_LAYOUTS:
        raise ValueError(f"{where}: the fused tensor W_QKV of {base.name} has no declared layout "
                         f"(qkv_layout {qkv_layout!r}); certbound never guesses one")
    logit_scale = over.get("logit_scale", "sqrt_head_dim")
    act = over.get("activation")
    if act is None:
        for k in base.activation_keys:
            if config.get(k) is not None:
                act = str(config[k])
                break
    positions = _config_int(config, base.positions_keys, "positions", where) if base.positions_keys else None
    layout = ModelLayout(
        base.name, base.layout, prefix, first, N, s0.num_heads, s0.head_dim, s0.intermediate_size, s0.templates,
        ffn_kind=s0.ffn_kind, attention_logit_scale=logit_scale != "none", num_kv_heads=s0.num_kv_heads,
        qkv_layout=qkv_layout if "W_QKV" in s0.templates else None, stacks=tuple(stacks), logit_scale=logit_scale,
        activation=act, max_positions=positions, num_experts=s0.num_experts,
        notes=tuple(base.notes) + tuple(over.get("notes", ())) + wrapped)
    layout = _choose_prefix(ck, layout, prefixes)
    _check_shapes(ck, layout)
    _check_layer_count(ck, layout)
    return layout


def _language_model_config(config: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The ``text_config`` of a multimodal config whose own model_type is not built in (e.g. Gemma 3 4B+).

    Returns (config to read, notes): the language model is what is certified;
    the vision tower and projector are not.
    """
    mt = config.get("model_type")
    text = config.get("text_config")
    if (isinstance(text, dict) and not any(mt in s.model_types for s in ARCHITECTURES.values())
            and any(text.get("model_type") in s.model_types for s in ARCHITECTURES.values())):
        return dict(text), (f"the language model ({text.get('model_type')}) of a multimodal {mt} checkpoint; "
                            "its vision tower and projector are not certified",)
    return config, ()


def _choose_alternative(ck: Checkpoint, spec: ArchitectureSpec, templates: dict[str, str]) -> dict[str, str]:
    """The first of a spec's name sets whose every layer-0 tensor is in the checkpoint (by name suffix)."""
    names = ck.names()
    for t in (templates, *spec.alternatives):
        suffixes = [v.format(layer=0, group=0, expert=0).split("[")[0] for v in t.values()]
        if all(any(n.endswith(x) for n in names) for x in suffixes):
            return dict(t)
    return dict(templates)


def _resolve_pi_layout(ck: Checkpoint, config: dict[str, Any], where: str) -> ModelLayout:
    """The layout of a certbound-pi checkpoint (:mod:`certbound.checkpoints._pi`), shapes checked."""
    f = pi_config_facts(config, where)
    layout = ModelLayout("certbound-pi", "row-vector", "", f["num_layers"], f["hidden_size"], f["num_heads"],
                         f["head_dim"], f["intermediate_size"], pi_templates(f["ffn_kind"]),
                         ffn_kind=f["ffn_kind"], attention_logit_scale=False, theory_config=f["theory_config"],
                         logit_scale="none", activation=f["theory_config"]["activation"])
    _check_shapes(ck, layout)
    _check_layer_count(ck, layout)
    return layout


def expected_stored_shape(layout: ModelLayout, role: str, layer: int = 0) -> tuple[int, ...]:
    """Shape a role's tensor must have in the file (layout-dependent).

    Row-vector shapes: W_Q N × H·d_h, W_K and W_V N × H_kv·d_h, W_O H·d_h × N,
    W_QKV N × (H + 2·H_kv)·d_h (cross-attention X_* alike), M_in/M_gate/M_up
    N × d_ff, M_out/M_down d_ff × N, M_gate_up N × 2·d_ff, M (variant P) N × N;
    the readout is a vector (N,). ``linear`` storage is the transpose.

    Parameters
    ----------
    layout : ModelLayout
        The resolved layout.
    role : str
        A tensor role (``"W_Q"``, ``"M_in"``, ``"readout"``, ...).
    layer : int
        The layer (stacks may differ in size).

    Returns
    -------
    tuple of int
        The shape as stored.
    """
    s, _ = layout.stack_of(layer)
    N, F = layout.hidden_size, s.intermediate_size
    HD, KD = s.num_heads * s.head_dim, s.num_kv_heads * s.head_dim
    if role == "readout":
        return (N,)
    r = role.replace("X_", "W_")
    rowvec = {"W_Q": (N, HD), "W_K": (N, KD), "W_V": (N, KD), "W_O": (HD, N), "W_QKV": (N, HD + 2 * KD),
              "M_in": (N, F), "M_out": (F, N), "M_gate": (N, F), "M_up": (N, F), "M_down": (F, N),
              "M_gate_up": (N, 2 * F), "M": (N, N)}[r]
    return rowvec if layout.layout in ("conv1d", "row-vector") else (rowvec[1], rowvec[0])


def _experts_of(layout: ModelLayout, role: str, layer: int) -> list[int | None]:
    s, _ = layout.stack_of(layer)
    return list(range(s.num_experts)) if s.num_experts and "{expert}" in s.templates[role] else [None]


def _check_shapes(ck: Checkpoint, layout: ModelLayout) -> None:
    for layer in range(layout.num_layers):
        s, i = layout.stack_of(layer)
        if layout.shared_source_layer(layer) is not None:
            continue  # the same tensors as an earlier layer (checked there)
        for role in s.templates:
            if role == "readout" and layer > 0:
                continue  # one readout per model (its name has no {layer})
            for e in _experts_of(layout, role, layer):
                name = layout.tensor_name(role, layer, e)
                where = f"{s.name} " if s.name else ""
                if name not in ck:
                    what = ("the readout" if role == "readout" else
                            f"{role} of {where}layer {i}" + (f" expert {e}" if e is not None else ""))
                    raise ValueError(f"{ck.path}: tensor {name!r} ({what}) is missing "
                                     f"(config says {s.num_layers} {where}layers"
                                     + (f", {s.num_experts} experts" if e is not None else "") + ")")
                got = ck.shape(name)
                want = expected_stored_shape(layout, role, layer)
                if tuple(got) != want:
                    kv = f" ({s.num_kv_heads} key/value heads)" if s.num_kv_heads != s.num_heads else ""
                    raise ValueError(
                        f"{ck.file_of(name)}: tensor {name!r} has shape {list(got)}, but the config "
                        f"(hidden {layout.hidden_size}, {s.num_heads} heads of {s.head_dim}{kv}, FFN "
                        f"{s.intermediate_size}, layout {layout.layout}) implies {list(want)}")


def _check_layer_count(ck: Checkpoint, layout: ModelLayout) -> None:
    """Refuse a config that declares fewer layers than the weights hold (the one place for this check).

    A bound computed from the first L of L' > L stored layers would be a bound
    for another network: if the first role's tensor of the layer after the
    last declared one exists (in any stack), the config and weights disagree.
    """
    for s in layout.stacks:
        if s.shared_groups:
            continue  # shared layers: the stored group count is not the layer count
        role = next(r for r in s.templates if r != "readout")
        if "{layer}" not in s.templates[role]:
            continue
        name = layout.prefix + s.templates[role].format(layer=s.num_layers, group=s.num_layers, expert=0)
        if name in ck:
            where = f"{s.name} " if s.name else ""
            raise OptionError(f"{ck.file_of(name)}: the weights hold tensor {name!r} of {where}layer "
                              f"{s.num_layers}, but the config declares {s.num_layers} {where}layers; certifying "
                              "only those would bound another network (fix the config, or give a `config` file)")
