"""The model class of the theory: architecture, constants, matrix order.

A :class:`TransformerSpec` describes a Π-normalised Transformer of spec §1
(``proofs/theory-lipschitz.md`` §1): variant P (``ffn_kind="single"``: one
feed-forward matrix ``M``, φ before it) or variant B (``ffn_kind="two"``:
``M_in``, φ, ``M_out``), optionally with the Π-form residual, plus the
constants that enter only deterministic inequalities (softmax constant
``c_sm``, activation constants ``L_φ, φ₀, φ₁``).

:meth:`TransformerSpec.slots` enumerates the matrices in **data-flow order**
(spec §1.4): for each layer ``QK, VO`` of head 0, ``QK, VO`` of head 1, …,
then ``M`` (P) or ``M_in, M_out`` (B). Layers and heads are 0-based. The
learned readout, if any, is handled separately (it is always last).

Examples
--------
>>> spec = TransformerSpec(n_layers=2, n_heads=1, d_model=4, seq_len=3, ffn_kind="single",
...                        activation="relu")
>>> [(s.layer, s.head, s.type) for s in spec.slots()]
[(0, 0, 'QK'), (0, 0, 'VO'), (0, None, 'M'), (1, 0, 'QK'), (1, 0, 'VO'), (1, None, 'M')]
>>> float(gelu_lipschitz().mid())  # doctest: +ELLIPSIS
1.128904...
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from flint import arb

from certbound.ball import DEFAULT_PREC, working_precision
from certbound.bounds._arbutil import Number, as_arb, prec

__all__ = [
    "FFN_SINGLE",
    "FFN_TWO",
    "MATRIX_TYPES",
    "TransformerSpec",
    "MatrixSlot",
    "gelu_lipschitz",
    "activation_constants",
]

FFN_SINGLE = "single"  # variant P (paper)
FFN_TWO = "two"  # variant B (BERT-like)

#: Matrix types per variant, in the within-layer data-flow order.
MATRIX_TYPES = {FFN_SINGLE: ("QK", "VO", "M"), FFN_TWO: ("QK", "VO", "M_in", "M_out")}


def gelu_lipschitz() -> arb:
    """Ball containing ``sup|ψ'|`` for the exact (erf) GELU ``ψ(x) = xΦ(x)``.

    ``ψ'(x) = Φ(x) + xφ(x)``, ``ψ''(x) = φ(x)(2 − x²)``, so the maximum of ψ' is
    at ``x = √2``: ``Φ(√2) + √2 φ(√2) = (1 + erf 1)/2 + e^{-1}/√π`` (and
    ``inf ψ' = −0.1289… > −max``), spec §1.1 (A3) / E8,
    ``proofs/theory-lipschitz.md`` §1.1 (Lemma 1.1). Evaluated in Arb; the upper endpoint
    is a proven upper bound on the Lipschitz constant.

    >>> g = gelu_lipschitz()
    >>> bool(g < 1.13) and bool(g > 1.1289)
    True
    """
    with working_precision(DEFAULT_PREC):
        one = arb(1)
        return (one + one.erf()) / 2 + (-one).exp() / arb.pi().sqrt()


def activation_constants(name: str) -> tuple[arb, arb, arb]:
    """``(L_φ, φ₀, φ₁)`` of a named activation (spec §1.1 (A3)).

    ``gelu`` (exact erf GELU): ``(1.12890…, 0, 1)`` since ``|xΦ(x)| ≤ |x|``;
    ``relu`` and ``identity``: ``(1, 0, 1)``; the tanh-approximated GELU
    (``gelu_tanh``, HF ``gelu_new``/``gelu_pytorch_tanh``/``gelu_fast``):
    ``(1.128994, 0, 1)`` — a *different*, larger constant than the exact GELU's
    (proofs/theory-lipschitz.md §1.1, Lemma 1.1b).

    >>> [float(v.mid()) for v in activation_constants("relu")]
    [1.0, 0.0, 1.0]
    """
    key = name.lower()
    if key in ("gelu", "gelu_erf", "gelu_exact"):
        return gelu_lipschitz(), arb(0), arb(1)
    if key in ("relu", "identity", "linear"):
        return arb(1), arb(0), arb(1)
    if key in ("gelu_tanh", "gelu_new", "gelu_pytorch_tanh", "gelu_fast"):
        # tanh-approximated GELU: sup|ψ'| < 1.128994, certified by Arb bisection on [-6, 6] plus
        # analytic tails (proofs/theory-lipschitz.md §1.1, Lemma 1.1b); |x·(1+tanh(·))/2| ≤ |x|.
        return arb("1.128994"), arb(0), arb(1)
    raise ValueError(
        f"unknown activation {name!r}: known are 'gelu' (exact erf GELU), 'gelu_tanh' (tanh approximation), "
        "'relu', 'identity'; for any other activation pass act_lip, act_norm_at_zero and act_growth explicitly"
    )


@dataclass(frozen=True)
class MatrixSlot:
    """One matrix of the network in data-flow order (spec §1.4).

    ``index`` is its position ``j`` (0-based), ``head`` is ``None`` for the
    feed-forward matrices, ``rank_arch`` the architectural rank bound ``r̄_j``
    (``d_head`` for the per-head products, else ``min(n_in, n_out)``).
    """

    index: int
    layer: int
    head: Optional[int]
    type: str
    n_in: int
    n_out: int
    rank_arch: int

    @property
    def key(self) -> tuple[int, Optional[int], str]:
        """``(layer, head, type)``, the key used for spectra and constraints."""
        return (self.layer, self.head, self.type)


@dataclass(frozen=True)
class TransformerSpec:
    """A Π-normalised Transformer of the theory's model class (spec §1).

    Parameters
    ----------
    n_layers, n_heads, d_model, seq_len : int
        ``L``, ``H``, ``N``, ``T``.
    ffn_kind : {"single", "two"}
        Variant P (one feed-forward matrix ``M``) or variant B (``M_in``, ``M_out``).
    d_ff : int, optional
        Feed-forward width (variant B; default ``4·d_model``).
    d_head : int, optional
        Architectural rank of each ``QK``/``VO`` product (the head dimension
        ``d_h``); default ``d_model`` (no structural rank constraint).
        It must hold for the weights by construction (per-head products of
        ``d_h``-dimensional projections).
    residual : bool
        The Π-form residual of spec §1.3 (an extension, not in the paper).
    softmax_lip : number
        ``c_sm ≥ 1``, the softmax ``ℓ∞→ℓ1`` constant: 1 is proved (F2), 2
        reproduces the paper's formulas.
    activation : str
        Name giving default ``(L_φ, φ₀, φ₁)`` (see :func:`activation_constants`).
    act_lip, act_norm_at_zero, act_growth : number, optional
        Override ``L_φ, φ₀, φ₁`` (any valid values; spec §11 (g)).
    readout_learned : bool
        Learned readout (covered like an ``N×1`` matrix) or fixed (not covered).
    qk_rank, vo_rank : int, optional
        Per-type architectural rank bounds overriding ``d_head`` (e.g. spec
        §7.3 has ``r̄ = 2`` for ``QK`` and ``r̄ = 4`` for ``VO``).

    All constants may be chosen after seeing the weights (they enter only
    deterministic inequalities, spec §11 (g)); the architecture, ``d_head``
    and the loss constants must be fixed a priori.
    """

    n_layers: int
    n_heads: int
    d_model: int
    seq_len: int
    ffn_kind: str = FFN_TWO
    d_ff: Optional[int] = None
    d_head: Optional[int] = None
    residual: bool = False
    softmax_lip: Number = 1
    activation: str = "gelu"
    act_lip: Optional[Number] = None
    act_norm_at_zero: Optional[Number] = None
    act_growth: Optional[Number] = None
    readout_learned: bool = True
    qk_rank: Optional[int] = None
    vo_rank: Optional[int] = None
    _consts: tuple = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("n_layers", "n_heads", "d_model", "seq_len"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"TransformerSpec.{name} must be a positive integer, got {v!r}")
        if self.ffn_kind not in MATRIX_TYPES:
            raise ValueError(f"ffn_kind must be 'single' (variant P) or 'two' (variant B), got {self.ffn_kind!r}")
        if self.d_ff is not None and (not isinstance(self.d_ff, int) or self.d_ff < 1):
            raise ValueError(f"d_ff must be a positive integer, got {self.d_ff!r}")
        for nm in ("d_head", "qk_rank", "vo_rank"):
            v = getattr(self, nm)
            if v is not None and not (isinstance(v, int) and 1 <= v <= self.d_model):
                raise ValueError(f"{nm} must be an integer in [1, d_model], got {v!r}")
        with prec():
            if None in (self.act_lip, self.act_norm_at_zero, self.act_growth):
                lip, zero, growth = activation_constants(self.activation)
            else:  # all three given: the name is only a label
                lip = zero = growth = arb(0)
            if self.act_lip is not None:
                lip = as_arb(self.act_lip)
            if self.act_norm_at_zero is not None:
                zero = as_arb(self.act_norm_at_zero)
            if self.act_growth is not None:
                growth = as_arb(self.act_growth)
            csm = as_arb(self.softmax_lip)
        if not bool(csm >= 1):
            # F2: the best constant is 1, so any valid c_sm is ≥ 1.
            raise ValueError(f"softmax_lip must be ≥ 1 (1 is proved, spec F2), got {self.softmax_lip!r}")
        for nm, v in (("act_lip", lip), ("act_norm_at_zero", zero), ("act_growth", growth)):
            if not bool(v >= 0):
                raise ValueError(f"{nm} must be ≥ 0, got {v}")
        object.__setattr__(self, "_consts", (lip, zero, growth, csm))

    # -- constants as balls ------------------------------------------------------
    @property
    def c_sm(self) -> arb:
        """Softmax constant ``c_sm`` as a ball."""
        return self._consts[3]

    @property
    def L_phi(self) -> arb:
        """Activation Lipschitz constant ``L_φ`` as a ball."""
        return self._consts[0]

    @property
    def phi0(self) -> arb:
        """``φ₀`` with ``‖φ(z)‖ ≤ φ₀ + φ₁‖z‖``."""
        return self._consts[1]

    @property
    def phi1(self) -> arb:
        """``φ₁`` with ``‖φ(z)‖ ≤ φ₀ + φ₁‖z‖``."""
        return self._consts[2]

    # -- architecture ------------------------------------------------------------
    @property
    def variant(self) -> str:
        """``"P"`` or ``"B"``."""
        return "P" if self.ffn_kind == FFN_SINGLE else "B"

    @property
    def ffn_width(self) -> int:
        """``d_ff`` (variant B), default ``4·d_model``."""
        return self.d_ff if self.d_ff is not None else 4 * self.d_model

    @property
    def head_rank(self) -> int:
        """Architectural rank bound ``r̄`` of ``QK``/``VO``."""
        return self.d_head if self.d_head is not None else self.d_model

    @property
    def matrix_types(self) -> tuple[str, ...]:
        """The matrix types of one layer, in data-flow order."""
        return MATRIX_TYPES[self.ffn_kind]

    def n_matrices(self) -> int:
        """``J``: all matrices incl. the readout if learned (spec §1.4)."""
        n_ff = 1 if self.ffn_kind == FFN_SINGLE else 2
        return self.n_layers * (2 * self.n_heads + n_ff) + (1 if self.readout_learned else 0)

    def slots(self) -> list[MatrixSlot]:
        """Non-readout matrices in data-flow order (spec §1.4)."""
        N, dff, rh = self.d_model, self.ffn_width, self.head_rank
        rq = self.qk_rank if self.qk_rank is not None else rh
        rv = self.vo_rank if self.vo_rank is not None else rh
        out: list[MatrixSlot] = []
        for layer in range(self.n_layers):
            for h in range(self.n_heads):
                out.append(MatrixSlot(len(out), layer, h, "QK", N, N, rq))
                out.append(MatrixSlot(len(out), layer, h, "VO", N, N, rv))
            if self.ffn_kind == FFN_SINGLE:
                out.append(MatrixSlot(len(out), layer, None, "M", N, N, N))
            else:
                r = min(N, dff)
                out.append(MatrixSlot(len(out), layer, None, "M_in", N, dff, r))
                out.append(MatrixSlot(len(out), layer, None, "M_out", dff, N, r))
        return out

    def assumptions(self) -> dict:
        """What the certified number is about, as a JSON-ready dict."""
        from certbound.ball import decimal_upper

        return {
            "model_class": (
                "Pi-normalised Transformer of proofs/theory-lipschitz.md §1 "
                f"(variant {self.variant}: "
                + ("Block(X)=Pi(phi(Y) M)" if self.ffn_kind == FFN_SINGLE else "Block(X)=Pi(phi(Y M_in) M_out)")
                + (", Pi-form residual" if self.residual else ", no residual")
                + "; Y=Pi(sum_h SM(X A_h X^T) X V_h); readout <w, X^(L)_1>)"
            ),
            "n_layers": self.n_layers,
            "n_heads": self.n_heads,
            "d_model": self.d_model,
            "d_ff": self.ffn_width if self.ffn_kind == FFN_TWO else None,
            "rank_bound_QK": self.qk_rank if self.qk_rank is not None else self.head_rank,
            "rank_bound_VO": self.vo_rank if self.vo_rank is not None else self.head_rank,
            "seq_len": self.seq_len,
            "residual": self.residual,
            "softmax_lip_upper": decimal_upper(self.c_sm, 17),
            "activation": self.activation,
            "act_lip_upper": decimal_upper(self.L_phi, 17),
            "act_norm_at_zero_upper": decimal_upper(self.phi0, 17),
            "act_growth_upper": decimal_upper(self.phi1, 17),
            "readout_learned": self.readout_learned,
            "inputs": "every token row in the closed unit ball (A1)",
        }
