"""Adapter: certbound-pi checkpoints → :class:`certbound.checkpoints.TheoryMatrix` records.

A thin wrapper: :mod:`certbound.checkpoints` reads certbound-pi checkpoints
itself (``model_type`` ``certbound-pi``: variant P's single FFN matrix ``M``,
any head width d_h, no 1/√d_h logit scale, the learned readout), so every
command (spectrum, bound, proxies, audit) works on them directly. This module
only keeps the older entry point, yielding the records in the data-flow order
of :meth:`certbound.models.network.PiTransformer.theory_matrices` (per layer:
QK and VO of each head in turn, then the FFN matrices; the readout last).

Types: ``QK``, ``VO`` (factors, W = A Bᵀ, ``logit_scale_d = 1``), ``M``
(variant P) or ``M_in``, ``M_out`` (variant B), and on request ``readout``
(N × 1, the readout vector as a column).

Examples
--------
>>> from certbound.models import demo_checkpoint_path
>>> [(m.layer, m.head, m.type) for m in pi_theory_matrices(demo_checkpoint_path())][:3]
[(0, 0, 'QK'), (0, 0, 'VO'), (0, None, 'M_in')]
"""

from __future__ import annotations

import os
from typing import Iterator, Sequence

__all__ = ["PI_MATRIX_TYPES", "pi_theory_matrices"]

#: Types yielded by default (the readout only on request).
PI_MATRIX_TYPES = ("QK", "VO", "M", "M_in", "M_out")


def pi_theory_matrices(path: str | os.PathLike, *, types: Sequence[str] = PI_MATRIX_TYPES,
                       layers: Sequence[int] | None = None) -> Iterator:
    """Yield ``TheoryMatrix`` records (data-flow order) of a certbound-pi checkpoint."""
    from certbound.checkpoints import open_checkpoint, theory_matrices

    want = set(types)
    unknown = want - set(PI_MATRIX_TYPES) - {"readout"}
    if unknown:
        raise ValueError(f"unknown matrix type(s) {sorted(unknown)} for a certbound-pi model; "
                         f"known: {PI_MATRIX_TYPES + ('readout',)}")
    ck, layout = open_checkpoint(path)
    try:
        if layout.theory_config is None or layout.architecture != "certbound-pi":
            raise ValueError(f"{path}: not a certbound-pi checkpoint (architecture {layout.architecture})")
        if layers is not None and not set(layers) <= set(range(layout.num_layers)):
            raise ValueError(f"layers {sorted(set(layers))} out of range (model has {layout.num_layers} layers)")
        sel = [t for t in layout.matrix_types if t in want]
        if "readout" in want and layers is None:
            sel.append("readout")
        recs = {(m.layer, m.head, m.type): m for m in theory_matrices(ck, layout=layout, types=sel, layers=layers)}
    finally:
        ck.close()
    H = layout.num_heads
    for layer in range(layout.num_layers):
        for key in [(layer, h, t) for h in range(H) for t in ("QK", "VO")] + [
                (layer, None, t) for t in layout.matrix_types[2:]]:
            if key in recs:
                yield recs[key]
    if "readout" in sel:
        yield recs[(layout.num_layers - 1, None, "readout")]
