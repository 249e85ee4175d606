"""Adapter: certbound-pi checkpoints → :class:`certbound.checkpoints.TheoryMatrix` records.

certbound's generic loader (:mod:`certbound.checkpoints`) knows BERT-like
architectures with two FFN matrices and d_h = N/H. A certbound-pi checkpoint
can have variant P (one FFN matrix ``M``), any head width d_h (H·d_h ≠ N is
allowed) and a learned readout, and its logits carry **no** 1/√d_h (A = W_Q W_Kᵀ
exactly). This function yields the same record type as
:func:`certbound.checkpoints.theory_matrices`, so the other commands can use it
for ``model_type == "certbound-pi"`` (see ``/work/coord/readme-demo.md``).

Types: ``QK``, ``VO`` (factors, W = A Bᵀ, ``logit_scale_d = 1``), ``M``
(variant P) or ``M_in``, ``M_out`` (variant B), and on request ``readout``
(N × 1, the readout vector as a column).

Examples
--------
>>> from certbound.models import demo_checkpoint_path
>>> [(m.layer, m.head, m.type) for m in pi_theory_matrices(demo_checkpoint_path())][:3]
[(0, 0, 'QK'), (0, 0, 'VO'), (0, 1, 'QK')]
"""

from __future__ import annotations

import os
from typing import Iterator, Sequence

from certbound.models.checkpoint import load_pi_checkpoint

__all__ = ["PI_MATRIX_TYPES", "pi_theory_matrices"]

#: Types yielded by default (the readout only on request).
PI_MATRIX_TYPES = ("QK", "VO", "M", "M_in", "M_out")


def pi_theory_matrices(path: str | os.PathLike, *, types: Sequence[str] = PI_MATRIX_TYPES,
                       layers: Sequence[int] | None = None) -> Iterator:
    """Yield ``TheoryMatrix`` records (data-flow order) of a certbound-pi checkpoint."""
    from certbound.checkpoints import TheoryMatrix

    net, _ = load_pi_checkpoint(path)
    want = set(types)
    unknown = want - set(PI_MATRIX_TYPES) - {"readout"}
    if unknown:
        raise ValueError(f"unknown matrix type(s) {sorted(unknown)} for a certbound-pi model; "
                         f"known: {PI_MATRIX_TYPES + ('readout',)}")
    keep = None if layers is None else set(layers)
    cfg = net.config
    if keep is not None and not keep <= set(range(cfg.n_layers)):
        raise ValueError(f"layers {sorted(keep)} out of range (model has {cfg.n_layers} layers)")
    for m in net.theory_matrices():
        if m.kind not in want:
            continue
        if m.kind == "readout":
            if keep is None:
                yield TheoryMatrix(cfg.n_layers - 1, None, "readout", m.shape, dense=m.dense, sources=("readout.w",))
            continue
        if keep is not None and m.layer not in keep:
            continue
        p = f"blocks.{m.layer}"
        if m.kind in ("QK", "VO"):
            src = (f"{p}.attn.W_Q", f"{p}.attn.W_K") if m.kind == "QK" else (f"{p}.attn.W_V", f"{p}.attn.W_O")
            yield TheoryMatrix(m.layer, m.head, m.kind, m.shape, factors=(m.left.copy(), m.right.copy()),
                               sources=src)
        else:
            yield TheoryMatrix(m.layer, None, m.kind, m.shape, dense=m.dense, sources=(f"{p}.ffn.{m.kind}",))
