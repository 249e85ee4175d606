"""Network factors α, γ, ρ, K of spec §1.6 in Arb (``proofs/theory-lipschitz.md`` §1.6).

All functions take the **constraint values** ``c(·)`` (spectral radii of the
configuration κ; in the post hoc theorem the *grid* values, never raw norms)
as a mapping ``(layer, head, type) → ball``. Every returned quantity is a
product/sum of nonnegative balls, hence nondecreasing in every constraint and
constant, and its upper endpoint is a valid value of the factor of Lemma 1.6.

Examples
--------
The worked example of spec §7.3 (variant P, ReLU, ``c_sm = 1``):

>>> from certbound.bounds._spec import TransformerSpec
>>> spec = TransformerSpec(2, 1, 4, 3, ffn_kind="single", activation="relu")
>>> c = {(0, 0, "QK"): 0.5, (0, 0, "VO"): 1, (0, None, "M"): 1.2,
...      (1, 0, "QK"): 0.4, (1, 0, "VO"): 0.8, (1, None, "M"): 1}
>>> [round(float(a.mid()), 10) for a in alpha(spec, c)]
[1.44, 1.0]
>>> round(float(gamma(spec, c, spec.slots()[0]).mid()), 10)
1.2
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

from flint import arb

from certbound.bounds._arbutil import prec, Number, as_arb
from certbound.bounds._spec import FFN_SINGLE, MatrixSlot, TransformerSpec

__all__ = [
    "ConstraintValues",
    "attention_factor",
    "ffn_factor",
    "layer_lip",
    "alpha",
    "gamma",
    "input_radius",
    "scale",
    "paper_alpha",
]

ConstraintValues = Mapping[tuple, Number]


def _c(c: ConstraintValues, layer: int, head: Optional[int], typ: str) -> arb:
    key = (layer, head, typ)
    if key not in c:
        raise ValueError(f"missing spectral constraint for matrix (layer={layer}, head={head}, type={typ!r})")
    v = as_arb(c[key])
    if not bool(v >= 0):
        raise ValueError(f"spectral constraint for {key} must be ≥ 0, got {v}")
    return v


def attention_factor(spec: TransformerSpec, c: ConstraintValues, layer: int) -> arb:
    """``a_l = Σ_h c(V_{l,h})(1 + 2 c_sm c(A_{l,h}))``: Lipschitz constant of ``Att_l`` (F4).

    ``proofs/theory-lipschitz.md`` §F4 (input perturbation of attention).
    """
    with prec():
        total = arb(0)
        for h in range(spec.n_heads):
            total += _c(c, layer, h, "VO") * (1 + 2 * spec.c_sm * _c(c, layer, h, "QK"))
        return total


def ffn_factor(spec: TransformerSpec, c: ConstraintValues, layer: int) -> arb:
    """``F_l``: ``L_φ c(M_l)`` (P) or ``L_φ c(M_in) c(M_out)`` (B) (F3, ``proofs/theory-lipschitz.md`` §1.6)."""
    with prec():
        if spec.ffn_kind == FFN_SINGLE:
            return spec.L_phi * _c(c, layer, None, "M")
        return spec.L_phi * _c(c, layer, None, "M_in") * _c(c, layer, None, "M_out")


def layer_lip(spec: TransformerSpec, c: ConstraintValues, layer: int) -> arb:
    """``Lip_l``: ``a_l F_l`` (no residual) or ``(1 + a_l)(1 + F_l)`` (residual).

    Lipschitz constant of block ``l`` in ``‖·‖_{2→∞}`` on unit-row inputs
    (F1, F3, F4; ``proofs/theory-lipschitz.md`` §1.6).
    """
    with prec():
        a, f = attention_factor(spec, c, layer), ffn_factor(spec, c, layer)
        return (1 + a) * (1 + f) if spec.residual else a * f


def alpha(spec: TransformerSpec, c: ConstraintValues) -> list[arb]:
    """``[α^(0), …, α^(L−1)]`` with ``α^(l) = Π_{k>l} Lip_k`` (0-based layers; ``α^(L−1) = 1``).

    Propagation factor of Lemma 1.6 (``proofs/theory-lipschitz.md`` §1.6):
    a change of the output of layer ``l`` is amplified at most by ``α^(l)``
    before the readout.
    """
    with prec():
        out = [arb(1)] * spec.n_layers
        acc = arb(1)
        for layer in range(spec.n_layers - 1, -1, -1):
            out[layer] = acc
            acc = acc * layer_lip(spec, c, layer)
        return out


def gamma(spec: TransformerSpec, c: ConstraintValues, slot: MatrixSlot) -> arb:
    """Within-layer factor ``γ_j`` of spec §1.6 (table), Lemma 1.6.

    ``QK``: ``c_sm c(V) G_l``; ``VO``: ``G_l``; ``M`` (P) and ``M_out`` (B): 1;
    ``M_in`` (B): ``L_φ c(M_out)``; with ``G_l = F_l`` (no residual) or
    ``1 + F_l`` (residual). ``proofs/theory-lipschitz.md`` §1.6, Lemma 1.6.
    """
    with prec():
        layer = slot.layer
        if slot.type in ("QK", "VO"):
            f = ffn_factor(spec, c, layer)
            g = 1 + f if spec.residual else f
            if slot.type == "VO":
                return g
            return spec.c_sm * _c(c, layer, slot.head, "VO") * g
        if slot.type in ("M", "M_out"):
            return arb(1)
        if slot.type == "M_in":
            return spec.L_phi * _c(c, layer, None, "M_out")
        raise ValueError(f"unknown matrix type {slot.type!r}")


def input_radius(spec: TransformerSpec, c: ConstraintValues, slot: MatrixSlot, eps_in: Number = 0) -> arb:
    """Input radius ``ρ_j`` (bound on the row norms fed to matrix ``j``), spec §1.6 / §11 erratum 2.

    1 for ``QK``, ``VO``, ``M_in`` (rows are inputs or outputs of Π); ``φ₀ + φ₁``
    for ``M`` (P); ``φ₀ + φ₁(c(M_in) + ε_in)`` for ``M_out`` (B), where ``ε_in``
    is the accuracy at which ``M_in`` is covered *at the same node* (the
    pruning argument of Lemma B). ``proofs/theory-network.md`` §B (input
    radii), ``proofs/theory-lipschitz.md`` §1.6.
    """
    with prec():
        if slot.type in ("QK", "VO", "M_in"):
            return arb(1)
        if slot.type == "M":
            return spec.phi0 + spec.phi1
        if slot.type == "M_out":
            e = as_arb(eps_in)
            if not bool(e >= 0):
                raise ValueError("eps_in must be ≥ 0")
            return spec.phi0 + spec.phi1 * (_c(c, slot.layer, None, "M_in") + e)
        raise ValueError(f"unknown matrix type {slot.type!r}")


def scale(
    spec: TransformerSpec,
    c: ConstraintValues,
    slot: MatrixSlot,
    readout_norm: Number,
    *,
    alphas: Optional[Sequence[arb]] = None,
    eps_in: Number = 0,
    with_radius: bool = True,
) -> arb:
    """``K_j = C_w α^(l) γ_j ρ_j`` (or ``K'_j = C_w α^(l) γ_j`` with ``with_radius=False``).

    Scale of matrix ``j`` in Lemma B / Corollary B1: a ``d_U``-error ``ε`` of
    matrix ``j`` (measured on its own inputs of norm ≤ ρ_j) moves the network
    output by at most ``K'_j ε`` (Lemma 1.6). ``proofs/theory-lipschitz.md`` §1.6,
    ``proofs/theory-network.md`` §B1.
    """
    with prec():
        al = alphas if alphas is not None else alpha(spec, c)
        k = as_arb(readout_norm) * al[slot.layer] * gamma(spec, c, slot)
        if with_radius:
            k = k * input_radius(spec, c, slot, eps_in)
        return k


def paper_alpha(spec: TransformerSpec, c: ConstraintValues) -> list[arb]:
    """The paper's α formula (paper-known.md §2): ``L_φ^{L−l} Π_{k>l} c(M_k) c(V_k)(1 + 4 c(A_k))``.

    Only defined for variant P, one head, no residual. Spec §9 item 12: with
    ``c_sm = 2`` it equals :func:`alpha` exactly. For comparison only.
    """
    if spec.ffn_kind != FFN_SINGLE or spec.n_heads != 1 or spec.residual:
        raise ValueError("the paper's α is stated for variant P, H = 1, no residual")
    with prec():
        out = []
        for layer in range(spec.n_layers):
            prod = arb(1)
            for k in range(layer + 1, spec.n_layers):
                prod *= spec.L_phi * _c(c, k, None, "M") * _c(c, k, 0, "VO") * (1 + 4 * _c(c, k, 0, "QK"))
            out.append(prod)
        return out
