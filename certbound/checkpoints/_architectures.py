"""Architecture adapters: which stored tensors are the theory's W_Q, W_K, W_V, W_O, M_in, M_out.

Each supported architecture is a :class:`ArchitectureSpec`: tensor-name
templates (with ``{layer}``), the storage layout, and the ``config.json`` keys
holding the layer count, width, head count and FFN width. A hand-written
*mapping file* (JSON, same fields) covers anything else; see
:func:`load_mapping`.

Layouts (what one stored tensor means, in the row-vector convention x ↦ xW
of ``proofs/``):

``linear``
    ``torch.nn.Linear.weight``, stored (out, in); the row-vector matrix is
    its transpose.
``conv1d``
    GPT-2's ``Conv1D.weight``, stored (in, out); it *is* the row-vector
    matrix.
``row-vector``
    Stored (in, out) as well (certbound-pi checkpoints, which are written in
    the theory's row-vector convention); read exactly like ``conv1d``.

GPT-2 fuses Q, K and V in ``attn.c_attn`` (row-vector N × 3N, columns
[Q | K | V], in this order, as ``split(n_embd, dim=2)`` in the HF model).

Only the attention and FFN weight matrices are used: biases, LayerNorm
parameters, embeddings, position biases (MPNet's relative attention bias),
poolers and heads are ignored, as in the paper's proxies
(``/work/shared/theory/paper-known.md`` §6).

certbound's own theory-faithful model (``model_type`` ``certbound-pi``) is
resolved separately (:mod:`certbound.checkpoints._pi`): it has independent
head width d_h, variant P's single FFN matrix ``M``, no logit scale and a
learned readout, recorded in the extra :class:`ModelLayout` fields.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from ._pi import PI_ARCHITECTURE_HELP, is_pi_config, pi_config_facts, pi_templates
from ._sources import Checkpoint, read_config

__all__ = ["ArchitectureSpec", "ModelLayout", "ARCHITECTURES", "supported_architectures", "resolve_layout",
           "load_mapping", "MAPPING_HELP", "expected_stored_shape"]

_ROLES = ("W_Q", "W_K", "W_V", "W_O", "M_in", "M_out")


@dataclass(frozen=True)
class ArchitectureSpec:
    """Tensor names and config keys of one architecture family."""

    name: str
    model_types: tuple[str, ...]
    layout: str  # "linear" or "conv1d"
    templates: dict[str, str]  # role -> name template with {layer}; "W_QKV" for fused Q|K|V
    num_layers_keys: tuple[str, ...] = ("num_hidden_layers",)
    hidden_keys: tuple[str, ...] = ("hidden_size",)
    heads_keys: tuple[str, ...] = ("num_attention_heads",)
    d_ff_keys: tuple[str, ...] = ("intermediate_size",)
    class_names: tuple[str, ...] = ()  # config "architectures" entries, e.g. "BertModel"
    prefix: str | None = None  # None: detect


_BERT_LIKE = {
    "W_Q": "encoder.layer.{layer}.attention.self.query.weight",
    "W_K": "encoder.layer.{layer}.attention.self.key.weight",
    "W_V": "encoder.layer.{layer}.attention.self.value.weight",
    "W_O": "encoder.layer.{layer}.attention.output.dense.weight",
    "M_in": "encoder.layer.{layer}.intermediate.dense.weight",
    "M_out": "encoder.layer.{layer}.output.dense.weight",
}

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
            d_ff_keys=("hidden_dim",), class_names=("DistilBert",),
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
            d_ff_keys=("n_inner",), class_names=("GPT2",),
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
        ),
    ]
}

MAPPING_HELP = """\
A mapping file is a JSON object, e.g.
  {"architecture": "bert", "prefix": "model.encoder_backbone."}
to reuse a built-in layout under another prefix, or a full description:
  {"layout": "linear",                       # "linear" (stored out x in) or "conv1d" (stored in x out)
   "num_layers": 6, "hidden_size": 384, "num_heads": 12, "intermediate_size": 1536,
   "tensors": {"W_Q": "blocks.{layer}.attn.q.weight", "W_K": "...", "W_V": "...",
               "W_O": "...", "M_in": "...", "M_out": "..."}}
("W_QKV" may replace W_Q/W_K/W_V for a fused [Q|K|V] projection; sizes missing from the
mapping are read from config.json). Pass it with --mapping FILE."""


def supported_architectures() -> list[str]:
    """Names of the built-in architectures (and the config ``model_type`` values they accept)."""
    return [f"{s.name} (model_type: {', '.join(s.model_types)})" for s in ARCHITECTURES.values()] + [
        PI_ARCHITECTURE_HELP]


@dataclass(frozen=True)
class ModelLayout:
    """Everything needed to extract the theory's matrices from one checkpoint.

    The last three fields default to the BERT-like case; certbound-pi layouts
    set them: ``ffn_kind`` ``"two"`` (M_in, M_out) or ``"single"`` (variant P:
    one N × N matrix ``M``; ``intermediate_size`` is then N);
    ``attention_logit_scale`` says whether the architecture divides attention
    logits by √d_h (certbound-pi: no); ``theory_config`` holds the a-priori
    constants of a model that *is* the theorems' model class (``None`` for
    architectures whose bound is a Π-surrogate; see :func:`pi_config_facts`).
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

    def tensor_name(self, role: str, layer: int) -> str:
        """Full stored name of a role's tensor in a layer."""
        return self.prefix + self.templates[role].format(layer=layer)

    @property
    def fused_qkv(self) -> bool:
        return "W_QKV" in self.templates

    @property
    def matrix_types(self) -> tuple[str, ...]:
        """The theory matrix types of one layer: QK, VO and ``M`` (variant P) or ``M_in``, ``M_out``."""
        return ("QK", "VO", "M") if self.ffn_kind == "single" else ("QK", "VO", "M_in", "M_out")

    @property
    def has_readout(self) -> bool:
        """True if the checkpoint stores a learned readout vector (type ``readout``)."""
        return "readout" in self.templates

    def summary(self) -> dict[str, Any]:
        """JSON-friendly description (the ``config`` block of reports)."""
        return {
            "architecture": self.architecture,
            "num_layers": self.num_layers,
            "hidden_size": self.hidden_size,
            "num_heads": self.num_heads,
            "head_dim": self.head_dim,
            "intermediate_size": self.intermediate_size,
            "layout": self.layout,
            "tensor_prefix": self.prefix,
        } | ({} if self.theory_config is None else {
            "ffn_kind": self.ffn_kind,
            "attention_logit_scale": self.attention_logit_scale,
            "theory_config": {k: str(v) if isinstance(v, Fraction) else v for k, v in self.theory_config.items()},
        })


def load_mapping(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check a mapping file (see :data:`MAPPING_HELP`)."""
    path = os.fspath(path)
    m = read_config(path)
    allowed = {"architecture", "prefix", "layout", "tensors", "num_layers", "hidden_size", "num_heads",
               "intermediate_size", "name"}
    extra = set(m) - allowed
    if extra:
        raise ValueError(f"{path}: unknown mapping key(s) {sorted(extra)}; allowed: {sorted(allowed)}")
    if "architecture" in m and m["architecture"] not in ARCHITECTURES:
        raise ValueError(f"{path}: unknown architecture {m['architecture']!r}; built-in: {', '.join(ARCHITECTURES)}")
    if "layout" in m and m["layout"] not in ("linear", "conv1d"):
        raise ValueError(f"{path}: layout must be 'linear' or 'conv1d', not {m['layout']!r}")
    t = m.get("tensors")
    if t is not None:
        if not isinstance(t, dict) or not all(isinstance(v, str) and "{layer}" in v for v in t.values()):
            raise ValueError(f"{path}: 'tensors' must map roles to name templates containing {{layer}}")
        bad = set(t) - set(_ROLES) - {"W_QKV"}
        if bad:
            raise ValueError(f"{path}: unknown tensor role(s) {sorted(bad)}; roles: {', '.join(_ROLES)}, W_QKV")
    m["_path"] = path
    return m


def _spec_for_config(config: dict[str, Any] | None, where: str) -> ArchitectureSpec:
    def unsupported(what: str) -> str:
        return (f"{where}: unsupported or unknown architecture {what}. Supported: "
                + "; ".join(supported_architectures())
                + ".\nFor another model, map tensor names by hand with --mapping FILE.\n" + MAPPING_HELP)

    if config is None:
        raise ValueError(unsupported("(no config.json found; give one with --config FILE)"))
    mt = config.get("model_type")
    for s in ARCHITECTURES.values():
        if mt in s.model_types:
            return s
    for arch in config.get("architectures") or []:
        for s in ARCHITECTURES.values():
            if any(str(arch).startswith(c) for c in s.class_names):
                return s
    raise ValueError(unsupported(f"model_type={mt!r}, architectures={config.get('architectures')!r}"))


def _config_int(config: dict[str, Any], keys: tuple[str, ...], what: str, where: str) -> int | None:
    for k in keys:
        v = config.get(k)
        if v is not None:
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise ValueError(f"{where}: config {k}={v!r} is not a positive integer ({what})")
            return v
    return None


def _detect_prefix(ck: Checkpoint, spec: ArchitectureSpec, templates: dict[str, str]) -> str:
    first_role = "W_QKV" if "W_QKV" in templates else "W_Q"
    suffix = templates[first_role].format(layer=0)
    prefixes = sorted({n[: -len(suffix)] for n in ck.names()
                       if n.endswith(suffix) and (len(n) == len(suffix) or n[-len(suffix) - 1] == ".")})
    if len(prefixes) == 1:
        return prefixes[0]
    if not prefixes:
        tail = suffix.rsplit(".", 2)[-2]
        near = [n for n in ck.names() if tail in n][:5]
        raise ValueError(f"{ck.path}: tensor '*{suffix}' ({spec.name} layer 0 {first_role}) is missing"
                         + (f"; similar names: {near}" if near else "")
                         + ". If the names differ, give --mapping FILE.\n" + MAPPING_HELP)
    raise ValueError(f"{ck.path}: several tensor-name prefixes match {spec.name} ({prefixes}); "
                     f"choose one with a mapping file {{\"architecture\": \"{spec.name}\", \"prefix\": \"...\"}}")


def resolve_layout(ck: Checkpoint, mapping: dict[str, Any] | None = None) -> ModelLayout:
    """Decide architecture, sizes and tensor names, and check every tensor's shape.

    Only metadata is read (names, shapes, dtypes), so a bad checkpoint fails
    here, before any numerical work. Errors name the file and the tensor.
    """
    where = ck.config_path or ck.path
    config = ck.config or {}
    if mapping is None and is_pi_config(config):
        return _resolve_pi_layout(ck, config, where)
    if mapping is not None and "tensors" in mapping:
        base = ArchitectureSpec(mapping.get("name", "custom"), (), mapping.get("layout", "linear"),
                                dict(mapping["tensors"]))
        where = mapping.get("_path", where)
        roles = set(base.templates)
        if not ({"W_O", "M_in", "M_out"} <= roles and ({"W_Q", "W_K", "W_V"} <= roles or "W_QKV" in roles)):
            raise ValueError(f"{where}: mapping 'tensors' must give W_Q, W_K, W_V (or W_QKV), W_O, M_in, M_out")
    elif mapping is not None and "architecture" in mapping:
        base = ARCHITECTURES[mapping["architecture"]]
    else:
        base = _spec_for_config(ck.config, where)
    if mapping is not None and "layout" in mapping:
        base = replace(base, layout=mapping["layout"])
    templates = dict(base.templates)
    if mapping is not None and "prefix" in mapping:
        prefix = str(mapping["prefix"])
    else:
        prefix = _detect_prefix(ck, base, templates)

    def size(mkey: str, keys: tuple[str, ...], generic: tuple[str, ...], what: str) -> int | None:
        if mapping is not None and mapping.get(mkey) is not None:
            v = mapping[mkey]
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise ValueError(f"{mapping.get('_path')}: {mkey}={v!r} is not a positive integer")
            return v
        return _config_int(config, keys + generic, what, where)

    L = size("num_layers", base.num_layers_keys, ("num_hidden_layers", "n_layer", "n_layers"), "layer count")
    N = size("hidden_size", base.hidden_keys, ("hidden_size", "n_embd", "dim", "d_model"), "hidden width")
    H = size("num_heads", base.heads_keys, ("num_attention_heads", "n_head", "n_heads"), "head count")
    F = size("intermediate_size", base.d_ff_keys, ("intermediate_size", "n_inner", "hidden_dim", "d_ff"),
             "FFN width")
    for v, what in ((L, "num_layers"), (N, "hidden_size"), (H, "num_heads")):
        if v is None:
            raise ValueError(f"{where}: the config does not give {what} (give it in the config or a mapping file)")
    assert L is not None and N is not None and H is not None
    if F is None:
        F = 4 * N  # GPT-2's n_inner = null means 4 * n_embd
    if N % H:
        raise ValueError(f"{where}: hidden size {N} is not divisible by the head count {H}")
    layout = ModelLayout(base.name, base.layout, prefix, L, N, H, N // H, F, templates)
    _check_shapes(ck, layout)
    return layout


def _resolve_pi_layout(ck: Checkpoint, config: dict[str, Any], where: str) -> ModelLayout:
    """The layout of a certbound-pi checkpoint (:mod:`certbound.checkpoints._pi`), shapes checked."""
    f = pi_config_facts(config, where)
    layout = ModelLayout("certbound-pi", "row-vector", "", f["num_layers"], f["hidden_size"], f["num_heads"],
                         f["head_dim"], f["intermediate_size"], pi_templates(f["ffn_kind"]),
                         ffn_kind=f["ffn_kind"], attention_logit_scale=False, theory_config=f["theory_config"])
    _check_shapes(ck, layout)
    return layout


def expected_stored_shape(layout: ModelLayout, role: str) -> tuple[int, ...]:
    """Shape a role's tensor must have in the file (layout-dependent).

    The attention projections are N × H·d_h (W_O: H·d_h × N); H·d_h = N for
    every built-in architecture, not necessarily for certbound-pi. The readout
    is a vector (N,).
    """
    N, F, HD = layout.hidden_size, layout.intermediate_size, layout.num_heads * layout.head_dim
    if role == "readout":
        return (N,)
    rowvec = {"W_Q": (N, HD), "W_K": (N, HD), "W_V": (N, HD), "W_O": (HD, N), "W_QKV": (N, 3 * HD),
              "M_in": (N, F), "M_out": (F, N), "M": (N, N)}[role]
    return rowvec if layout.layout in ("conv1d", "row-vector") else (rowvec[1], rowvec[0])


def _check_shapes(ck: Checkpoint, layout: ModelLayout) -> None:
    for layer in range(layout.num_layers):
        for role in layout.templates:
            if role == "readout" and layer > 0:
                continue  # one readout per model (its name has no {layer})
            name = layout.tensor_name(role, layer)
            if name not in ck:
                what = "the readout" if role == "readout" else f"{role} of layer {layer}"
                raise ValueError(f"{ck.path}: tensor {name!r} ({what}) is missing "
                                 f"(config says {layout.num_layers} layers)")
            got = ck.shape(name)
            want = expected_stored_shape(layout, role)
            if tuple(got) != want:
                heads = ("" if layout.num_heads * layout.head_dim == layout.hidden_size
                         else f", {layout.num_heads} heads of {layout.head_dim}")
                raise ValueError(f"{ck.file_of(name)}: tensor {name!r} has shape {list(got)}, but the config "
                                 f"(hidden {layout.hidden_size}{heads}, FFN {layout.intermediate_size}, layout "
                                 f"{layout.layout}) implies {list(want)}")
