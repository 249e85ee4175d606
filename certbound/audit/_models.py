"""Models named by claims: opened once, matrices and enclosures cached per model.

A :class:`ModelHandle` wraps one checkpoint path. It opens the checkpoint
lazily through :mod:`certbound.checkpoints` (so a claims file that only
checks scalar formulas never touches a model), hands out the theory's
matrices by ``(layer, head, type)`` or raw 2-D tensors by name, and caches
certified enclosures per ``(matrix, mode)`` so that a file with many claims
about one model certifies each matrix once per certificate mode.
"""

from __future__ import annotations

import difflib
import os
from typing import Any

import numpy as np
from flint import arb

from certbound.checkpoints import (
    CROSS_TYPES,
    GATED_TYPES,
    MATRIX_TYPES,
    RAW_TYPES,
    load_checkpoint,
    open_checkpoint,
    theory_matrices,
)
from certbound.enclose import enclose_singular_values, enclose_singular_values_of_product

__all__ = ["ModelHandle", "MatrixKey", "STORAGE_UNIT_ROUNDOFF"]

#: Unit roundoff of the storage formats (round to nearest): a stored weight is
#: the trained real value rounded with relative error at most this.
STORAGE_UNIT_ROUNDOFF = {"F64": 2.0**-53, "F32": 2.0**-24, "F16": 2.0**-11, "BF16": 2.0**-8}
_DTYPE_NAMES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16"}

#: (layer, head, type, scale_logits) or ("tensor", name)
MatrixKey = tuple


class ModelHandle:
    """One checkpoint, opened on first use.

    Parameters
    ----------
    path : str
        A checkpoint file or directory (anything
        :func:`certbound.checkpoints.open_checkpoint` accepts).
    label : str
        How reports name the model (the alias in the claims file, or the path).
    mapping : str, optional
        A name-mapping file for architectures not recognised from config.json.
    """

    def __init__(self, path: str, label: str | None = None, mapping: str | None = None):
        self.path = os.fspath(path)
        self.label = label or self.path
        self.mapping = mapping
        self._ck: Any = None
        self._layout: Any = None
        self._matrices: dict[tuple, Any] = {}
        self._enclosures: dict[tuple, Any] = {}
        self._derived: dict[tuple, Any] = {}
        self.dtypes: set[str] = set()

    # ------------------------------------------------------------- opening
    def open(self) -> None:
        """Open the checkpoint and resolve its layout (raises OSError/ValueError with the path)."""
        if self._ck is not None:
            return
        if not os.path.exists(self.path):
            raise FileNotFoundError(f"model {self.label!r}: no such file or directory: {self.path}")

        try:
            self._ck, self._layout = open_checkpoint(self.path, mapping=self.mapping)
        except ValueError as exc:
            # Files without a recognised architecture still allow tensor="..." claims.
            self._ck, self._layout = load_checkpoint(self.path), None
            self._layout_error = str(exc)

    def close(self) -> None:
        if self._ck is not None:
            self._ck.close()
        self._ck = None
        self._matrices.clear()

    @property
    def layout(self) -> Any:
        self.open()
        if self._layout is None:
            raise ValueError(f"model {self.label!r}: {self._layout_error}")
        return self._layout

    @property
    def num_layers(self) -> int:
        return int(self.layout.num_layers)

    @property
    def num_heads(self) -> int:
        return int(self.layout.num_heads)

    def dimension(self, name: str) -> int:
        """A size from the resolved layout: ``hidden_size``, ``head_dim``, ``intermediate_size``."""
        return int(getattr(self.layout, name))

    # ------------------------------------------------------------ matrices
    def matrix(self, layer: int, head: int | None, mtype: str, scale_logits: bool = False,
               expert: int | None = None) -> Any:
        """The :class:`certbound.checkpoints.TheoryMatrix` with this address.

        ``expert`` addresses one expert's gated FFN matrix (mixtures of experts).
        Raises ``ValueError`` naming what exists when the address is wrong.
        """
        # + certbound-pi's variant-P FFN matrix "M" and learned "readout" (N x 1; layer = last layer),
        # gated FFNs and cross-attention; the loader raises a clear error when the model lacks the type
        known = MATRIX_TYPES + RAW_TYPES + ("M", "readout") + GATED_TYPES + CROSS_TYPES
        if mtype not in known:
            raise ValueError(f"unknown matrix type {mtype!r}; known: {', '.join(known)}")
        lay = self.layout
        if not 0 <= layer < lay.num_layers:
            raise ValueError(f"model {self.label!r}: layer {layer} out of range (layers 0..{lay.num_layers - 1})")
        stack = lay.stack_of(layer)[0] if hasattr(lay, "stack_of") else None
        n_heads = stack.num_heads if stack is not None else lay.num_heads
        per_head = mtype in ("QK", "VO") + CROSS_TYPES
        if per_head and head is None:
            raise ValueError(f"{mtype} is per head: give head=0..{n_heads - 1}")
        if per_head and not 0 <= head < n_heads:
            raise ValueError(f"model {self.label!r}: head {head} out of range (heads 0..{n_heads - 1})")
        if not per_head and head is not None:
            raise ValueError(f"{mtype} is a per-layer matrix: drop head={head}")
        n_experts = getattr(stack, "num_experts", 0) if mtype in GATED_TYPES else 0
        if n_experts and expert is None:
            raise ValueError(f"model {self.label!r}: layer {layer} has {n_experts} experts: give expert=0..{n_experts - 1}")
        if expert is not None and not 0 <= expert < n_experts:
            raise ValueError(f"model {self.label!r}: expert {expert} out of range" + (
                f" (experts 0..{n_experts - 1})" if n_experts else f" ({mtype} of layer {layer} has no experts)"))
        key = (layer, head, mtype, bool(scale_logits), expert)
        if key not in self._matrices:
            for m in theory_matrices(self._ck, layout=lay, types=(mtype,), layers=[layer],
                                     scale_logits=bool(scale_logits)):
                self._matrices[(m.layer, m.head, m.type, bool(scale_logits), getattr(m, "expert", None))] = m
                for s in m.sources:
                    self.dtypes.add(self._ck.dtype(s))
        return self._matrices[key]

    def tensor(self, name: str) -> np.ndarray:
        """A stored 2-D tensor by name, exactly as float64 (stored orientation)."""
        self.open()
        key = ("tensor", name)
        if key not in self._matrices:
            if name not in self._ck:
                close = difflib.get_close_matches(name, self._ck.names(), n=3)
                hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
                raise ValueError(f"model {self.label!r}: no tensor {name!r}{hint}")
            a = self._ck.get(name)
            if a.ndim != 2:
                raise ValueError(f"model {self.label!r}: tensor {name!r} has shape {list(a.shape)}, not a matrix")
            self.dtypes.add(self._ck.dtype(name))
            self._matrices[key] = a
        return self._matrices[key]

    def enclosure(self, key: MatrixKey, mode: str) -> Any:
        """Certified singular values of the matrix ``key`` (cached per mode)."""
        ck = (key, mode)
        if ck not in self._enclosures:
            if key[0] == "tensor":
                enc = enclose_singular_values(self.tensor(key[1]), mode=mode)
            else:
                m = self.matrix(*key)
                if m.factors is not None:
                    enc = enclose_singular_values_of_product(m.factors[0], m.factors[1], mode=mode)
                else:
                    enc = enclose_singular_values(m.dense, mode=mode)
            self._enclosures[ck] = enc
        return self._enclosures[ck]

    def scale(self, key: MatrixKey) -> Any:
        """The pending exact scale (a ball) of the matrix; 1 for raw tensors."""
        return arb(1) if key[0] == "tensor" else self.matrix(*key).scale()

    def cached(self, key: tuple, compute: Any) -> Any:
        """Memoise a derived per-model quantity (e.g. the proxies for one variant and mode)."""
        if key not in self._derived:
            self._derived[key] = compute()
        return self._derived[key]

    # ------------------------------------------------------------ precision
    def storage_note(self) -> str | None:
        """A sentence on the storage precision of the tensors used so far, or ``None`` for float64."""
        coarse = sorted((d for d in self.dtypes if d != "F64"), key=lambda d: STORAGE_UNIT_ROUNDOFF.get(d, 1.0))
        if not coarse:
            return None
        worst = coarse[-1]
        u = STORAGE_UNIT_ROUNDOFF.get(worst)
        return (f"the input data carry only {_DTYPE_NAMES.get(worst, worst)} precision"
                + (f" (relative rounding up to {u:.1e} per weight)" if u else ""))

    def storage_unit_roundoff(self) -> float:
        """The largest unit roundoff among the tensors used so far (2^-53 for float64)."""
        return max((STORAGE_UNIT_ROUNDOFF.get(d, 1.0) for d in self.dtypes), default=2.0**-53)
