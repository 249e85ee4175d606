"""Configuration of the theory-faithful Π-Transformer (no torch needed).

A :class:`PiTransformerConfig` fixes everything the theory calls *architecture*
(``proofs/theory-lipschitz.md`` §1):
width N, depth L, heads H, head width d_h, the feed-forward variant
(``"single"`` = variant P: Π(φ(Y) M); ``"two"`` = variant B:
Π(φ(Y M_in) M_out)), the residual flag, the activation (ReLU), the readout
norm bound C_w and the loss. These are the quantities that must be fixed
*before* seeing the data (spec §6.5); they are written to ``config.json``
beside the weights.

Examples
--------
>>> cfg = PiTransformerConfig(d_model=8, n_layers=1, n_heads=2, d_head=2, seq_len=5)
>>> cfg.n_matrices   # J = L(2H + n_ff) + 1 (learned readout)
6
>>> sorted(cfg.tensor_shapes())[:3]
['blocks.0.attn.W_K', 'blocks.0.attn.W_O', 'blocks.0.attn.W_Q']
>>> PiTransformerConfig.from_json_dict(cfg.to_json_dict()) == cfg
True
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MODEL_TYPE", "FORMAT_VERSION", "LossSpec", "PiTransformerConfig"]

#: The ``model_type`` written to ``config.json`` (read by certbound's loader).
MODEL_TYPE = "certbound-pi"
#: Version of the tensor layout described in :mod:`certbound.models.checkpoint`.
FORMAT_VERSION = 1

_FFN_KINDS = ("single", "two")
_ACTIVATIONS = ("relu",)
_LOSS_KINDS = ("clipped-logistic", "ramp")


@dataclass(frozen=True)
class LossSpec:
    """A bounded Lipschitz loss for labels y ∈ {−1, +1} (assumption (A2)).

    ``kind="clipped-logistic"`` (default):
    ℓ(v, y) = ln(1 + e^{−y·clip(v, −C, C)}) − ln(1 + e^{−C}) with C = ``clip``.
    For every real v it lies in [0, C] (the two logistic values at ∓C differ by
    exactly C, since ln(1+e^C) − ln(1+e^{−C}) = C) and is 1-Lipschitz in v
    (|d/du ln(1+e^{−u})| < 1 and clipping is 1-Lipschitz). So B_ℒ = C, L_ℒ = 1.
    Because the bounds hold for *every* v, they hold for every readout grid
    value C_w the post hoc theorem may use (spec §6.2 remark).

    ``kind="ramp"``: ℓ(v, y) = min(1, max(0, 1 − y v / margin)); B_ℒ = 1,
    L_ℒ = 1/margin.

    >>> LossSpec().loss_bound, LossSpec().loss_lip
    (4.0, 1.0)
    >>> LossSpec(kind="ramp", margin=0.5).loss_lip
    2.0
    """

    kind: str = "clipped-logistic"
    clip: float = 4.0
    margin: float = 1.0

    def __post_init__(self) -> None:
        if self.kind not in _LOSS_KINDS:
            raise ValueError(f"loss kind {self.kind!r} is not one of {_LOSS_KINDS}")
        if not (math.isfinite(self.clip) and self.clip > 0):
            raise ValueError(f"loss clip must be a positive finite number, got {self.clip!r}")
        if not (math.isfinite(self.margin) and self.margin > 0):
            raise ValueError(f"loss margin must be a positive finite number, got {self.margin!r}")

    @property
    def loss_bound(self) -> float:
        """B_ℒ: the loss takes values in [0, B_ℒ] (exact; see class docstring)."""
        return float(self.clip) if self.kind == "clipped-logistic" else 1.0

    @property
    def loss_lip(self) -> float:
        """L_ℒ: a Lipschitz constant of v ↦ ℓ(v, y); for the ramp, 1/margin rounded *up*.

        A constant rounded down would not be a Lipschitz constant, so the
        float is the smallest one ≥ the exact 1/margin.
        """
        if self.kind == "clipped-logistic":
            return 1.0
        from fractions import Fraction

        q = 1 / Fraction(self.margin)
        f = float(q)
        return math.nextafter(f, math.inf) if Fraction(f) < q else f

    def to_json_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind, "loss_bound": self.loss_bound, "loss_lip": self.loss_lip}
        if self.kind == "clipped-logistic":
            d["clip"] = self.clip
        else:
            d["margin"] = self.margin
        return d

    @classmethod
    def from_json_dict(cls, d: dict[str, Any]) -> "LossSpec":
        kind = d.get("kind", "clipped-logistic")
        if kind == "clipped-logistic":
            return cls(kind=kind, clip=float(d.get("clip", 4.0)))
        return cls(kind=kind, margin=float(d.get("margin", 1.0)))


@dataclass(frozen=True)
class PiTransformerConfig:
    """Architecture of a Π-normalised Transformer of spec §1.3 (all a-priori choices).

    Parameters
    ----------
    d_model : int
        N, the token width.
    n_layers : int
        L, the number of blocks.
    n_heads : int
        H, heads per block.
    d_head : int
        d_h: A_{l,h} = W_Q^h (W_K^h)ᵀ and V_{l,h} = W_V^h W_O^h have rank ≤ d_h
        (the architectural rank bound r̄ of spec §1.4).
    seq_len : int
        T, tokens per input (row 0 is the [CLS] row read out).
    ffn_kind : {"single", "two"}
        Variant P (one N×N matrix after φ) or variant B (M_in, φ, M_out).
    d_ff : int, optional
        Hidden width of variant B (required there, ignored for P).
    residual : bool
        The optional residual flag of spec §1.3.
    activation : {"relu"}
        φ; ReLU has L_φ = 1, φ₀ = 0, φ₁ = 1 (spec (A3)).
    readout_norm : float
        C_w: training projects the readout w onto ‖w‖₂ ≤ C_w after every step.
    softmax_lip : float
        c_sm used by the bound (1 is proved in spec F2; the model itself does not use it).
    loss : LossSpec
        The bounded Lipschitz loss (B_ℒ, L_ℒ).
    """

    d_model: int
    n_layers: int
    n_heads: int
    d_head: int
    seq_len: int
    ffn_kind: str = "single"
    d_ff: int | None = None
    residual: bool = False
    activation: str = "relu"
    readout_norm: float = 4.0
    softmax_lip: float = 1.0
    loss: LossSpec = field(default_factory=LossSpec)

    def __post_init__(self) -> None:
        for name in ("d_model", "n_layers", "n_heads", "d_head", "seq_len"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"config {name} must be a positive integer, got {v!r}")
        if self.d_head > self.d_model:
            raise ValueError(f"config d_head={self.d_head} exceeds d_model={self.d_model}")
        if self.ffn_kind not in _FFN_KINDS:
            raise ValueError(f"config ffn_kind {self.ffn_kind!r} is not one of {_FFN_KINDS}")
        if self.ffn_kind == "two":
            if not isinstance(self.d_ff, int) or self.d_ff < 1:
                raise ValueError("config ffn_kind='two' (variant B) needs a positive integer d_ff")
        elif self.d_ff is not None:
            object.__setattr__(self, "d_ff", None)
        if self.activation not in _ACTIVATIONS:
            raise ValueError(f"config activation {self.activation!r} is not one of {_ACTIVATIONS}")
        if not (math.isfinite(self.readout_norm) and self.readout_norm > 0):
            raise ValueError(f"config readout_norm must be positive and finite, got {self.readout_norm!r}")
        if not (math.isfinite(self.softmax_lip) and self.softmax_lip >= 1):
            raise ValueError(f"config softmax_lip must be ≥ 1 (spec F2), got {self.softmax_lip!r}")

    # -- derived quantities -------------------------------------------------
    @property
    def n_ff(self) -> int:
        """Feed-forward matrices per block (1 for variant P, 2 for variant B)."""
        return 1 if self.ffn_kind == "single" else 2

    @property
    def n_matrices(self) -> int:
        """J = L(2H + n_ff) + 1: every covered matrix, the learned readout last (spec §1.4)."""
        return self.n_layers * (2 * self.n_heads + self.n_ff) + 1

    @property
    def act_lip(self) -> float:
        """L_φ (ReLU: 1)."""
        return 1.0

    @property
    def act_norm_at_zero(self) -> float:
        """φ₀ = ‖φ(0)‖₂ (ReLU: 0)."""
        return 0.0

    @property
    def act_growth(self) -> float:
        """φ₁ with ‖φ(z)‖ ≤ φ₀ + φ₁‖z‖ (ReLU: 1)."""
        return 1.0

    def tensor_shapes(self) -> dict[str, tuple[int, ...]]:
        """Name → shape of every stored tensor (row-vector convention: x ↦ x @ W).

        Head h of block l uses columns ``h*d_h:(h+1)*d_h`` of ``W_Q``, ``W_K``,
        ``W_V`` and the same rows of ``W_O``.
        """
        n, hd = self.d_model, self.n_heads * self.d_head
        shapes: dict[str, tuple[int, ...]] = {}
        for layer in range(self.n_layers):
            p = f"blocks.{layer}"
            shapes[f"{p}.attn.W_Q"] = (n, hd)
            shapes[f"{p}.attn.W_K"] = (n, hd)
            shapes[f"{p}.attn.W_V"] = (n, hd)
            shapes[f"{p}.attn.W_O"] = (hd, n)
            if self.ffn_kind == "single":
                shapes[f"{p}.ffn.M"] = (n, n)
            else:
                assert self.d_ff is not None
                shapes[f"{p}.ffn.M_in"] = (n, self.d_ff)
                shapes[f"{p}.ffn.M_out"] = (self.d_ff, n)
        shapes["readout.w"] = (n,)
        return shapes

    # -- JSON ---------------------------------------------------------------
    def to_json_dict(self) -> dict[str, Any]:
        """The ``config.json`` content (``model_type`` = ``certbound-pi``)."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "loss"}
        if d["d_ff"] is None:
            d.pop("d_ff")
        d["loss"] = self.loss.to_json_dict()
        d["readout_learned"] = True
        d["act_lip"] = self.act_lip
        d["act_norm_at_zero"] = self.act_norm_at_zero
        d["act_growth"] = self.act_growth
        return {"model_type": MODEL_TYPE, "format_version": FORMAT_VERSION,
                "weight_layout": "row-vector: token row x maps to x @ W", **d}

    @classmethod
    def from_json_dict(cls, d: dict[str, Any]) -> "PiTransformerConfig":
        """Parse a ``config.json`` dict; ValueError naming the problem if it is not ours."""
        if d.get("model_type") != MODEL_TYPE:
            raise ValueError(f"config model_type is {d.get('model_type')!r}, expected {MODEL_TYPE!r}")
        if d.get("format_version", FORMAT_VERSION) != FORMAT_VERSION:
            raise ValueError(f"config format_version {d.get('format_version')!r} is not supported "
                             f"(this certbound reads {FORMAT_VERSION})")
        names = {f.name for f in dataclasses.fields(cls)}
        missing = [k for k in ("d_model", "n_layers", "n_heads", "d_head", "seq_len") if k not in d]
        if missing:
            raise ValueError(f"config lacks required keys {missing}")
        kwargs = {k: v for k, v in d.items() if k in names and k != "loss"}
        kwargs["loss"] = LossSpec.from_json_dict(d.get("loss", {}))
        return cls(**kwargs)
