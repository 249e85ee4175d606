"""Which blocks of a layout the Π-surrogate theorems cover (``certbound bound``'s admission check).

The theorems (``proofs/theory-lipschitz.md`` §1, ``proofs/theory-theorems.md``)
are about a stack of blocks, each multi-head self-attention with per-head
matrices QK_h, VO_h of rank ≤ d_h followed by a two-matrix feed-forward
φ(Y M_in) M_out (variant B) or one matrix M (variant P). What that admits of
the architectures certbound reads (``proofs/architectures.md`` §4):

covered
    grouped-/multi-query attention (a point of the multi-head class whose
    heads happen to share key/value factors), an explicit head width d_h ≠ N/H,
    shared layers (ALBERT: every layer carries the same matrices), any
    per-layer logit scale 1/√d; position encodings (rotary, ALiBi, relative
    biases, DeBERTa's c2p/p2c terms) are dropped by the surrogate like
    embeddings and biases, and parallel attention/MLP blocks become sequential
    — the bound is for the surrogate, never the original network;
not covered
    gated feed-forwards (SwiGLU/GeGLU: φ(x M_gate) ⊙ (x M_up) M_down is not
    Lipschitz with a constant of the form the theorems use), mixtures of
    experts (a routed FFN), cross-attention (a second input sequence).

``certbound spectrum``, ``proxies`` (where the proxies are defined) and
``audit`` work for every layout; only ``bound`` needs full coverage.

>>> from certbound.checkpoints import ModelLayout
>>> lay = ModelLayout("x", "linear", "", 2, 8, 2, 4, 16, {"W_Q": "", "W_K": "", "W_V": "", "W_O": "",
...                   "M_gate": "", "M_up": "", "M_down": ""}, ffn_kind="gated")
>>> theory_coverage(lay).uncovered[0]
'layers 0-1: gated feed-forward (M_gate, M_up, M_down: phi(x M_gate) * (x M_up) M_down)'
"""

from __future__ import annotations

from dataclasses import dataclass

from ._architectures import ModelLayout

__all__ = ["TheoryCoverage", "theory_coverage", "require_theory_coverage"]


@dataclass(frozen=True)
class TheoryCoverage:
    """Blocks of a layout outside the theorems' model class, and what the surrogate drops.

    ``uncovered`` names each block the theorems do not cover (empty: ``bound``
    applies); ``surrogate_notes`` say what of the original architecture the
    Π-surrogate leaves out (the layout's notes).
    """

    uncovered: tuple[str, ...]
    surrogate_notes: tuple[str, ...]

    @property
    def covered(self) -> bool:
        return not self.uncovered


def _span(first: int, n: int, stack: str) -> str:
    where = f"{stack} " if stack else ""
    return f"{where}layer {first}" if n == 1 else f"{where}layers {first}-{first + n - 1}"


def theory_coverage(layout: ModelLayout) -> TheoryCoverage:
    """The blocks of ``layout`` that the Π-surrogate theorems do not cover (module docstring).

    Parameters
    ----------
    layout : ModelLayout
        The resolved layout.

    Returns
    -------
    TheoryCoverage
        The uncovered blocks (empty: the theorems apply) and the surrogate's notes.
    """
    out: list[str] = []
    for s in layout.stacks:
        span = _span(s.first_layer, s.num_layers, s.name)
        if s.cross_attention:
            out.append(f"{span}: cross-attention (QK_cross, VO_cross: keys and values from the encoder output)")
        if s.num_experts:
            out.append(f"{span}: mixture of {s.num_experts} experts (a routed gated feed-forward per expert)")
        elif s.ffn_kind == "gated":
            out.append(f"{span}: gated feed-forward (M_gate, M_up, M_down: phi(x M_gate) * (x M_up) M_down)")
    return TheoryCoverage(tuple(out), tuple(layout.notes))


def require_theory_coverage(layout: ModelLayout, where: str) -> TheoryCoverage:
    """:func:`theory_coverage`, raising ``ValueError`` naming every uncovered block.

    Parameters
    ----------
    layout : ModelLayout
        The resolved layout.
    where : str
        The model's name in the message.

    Returns
    -------
    TheoryCoverage
        The coverage (``covered`` is True).

    Raises
    ------
    ValueError
        If some block is outside the theorems' model class (gated FFN, experts, cross-attention).

    Examples
    --------
    >>> from certbound.checkpoints import ModelLayout
    >>> lay = ModelLayout("bert", "linear", "", 1, 8, 2, 4, 16, {})
    >>> require_theory_coverage(lay, "m").covered
    True
    """
    cov = theory_coverage(layout)
    if not cov.covered:
        raise ValueError(
            f"{where}: `certbound bound` does not cover this {layout.architecture} model: the Pi-surrogate "
            "theorems have no result for " + "; ".join(cov.uncovered)
            + ". `certbound spectrum`, `certbound audit` (and `certbound proxies` where defined) still work "
            "(proofs/architectures.md §4).")
    return cov
