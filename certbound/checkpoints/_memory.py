"""Tensors already in memory (a torch ``state_dict``, numpy arrays) as a :class:`Checkpoint`.

Nothing is written to disk: each tensor is converted to float64 when the
pipeline asks for it, exactly as for files — float16, bfloat16 and float32
widen to float64 without rounding (every such number is a float64 number), so
what is certified is the matrix held in memory. torch tensors are detached
and copied to the CPU first; numpy arrays are copied, so later in-place
training steps do not change a matrix halfway through a certificate.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ._sources import _TORCH_DTYPES, Checkpoint, _Entry

__all__ = ["checkpoint_from_tensors"]

_NUMPY_DTYPES = {"float64": "F64", "float32": "F32", "float16": "F16", "int64": "I64", "int32": "I32",
                 "int16": "I16", "int8": "I8", "uint8": "U8", "bool": "BOOL"}


def _torch_entry(where: str, t: Any) -> _Entry:
    dt = _TORCH_DTYPES.get(str(t.dtype).replace("torch.", ""), str(t.dtype))
    if getattr(t, "is_meta", False):
        raise ValueError(f"{where}: tensor is on the 'meta' device (no values); materialise the model first")

    def load(t: Any = t) -> np.ndarray:
        import torch

        # bf16/f16/f32 → f64 is exact; .cpu() copies device tensors, .numpy().copy() detaches the buffer
        return t.detach().to(device="cpu", dtype=torch.float64).contiguous().numpy().copy()

    return _Entry(where, tuple(int(s) for s in t.shape), dt, load)


def _numpy_entry(where: str, a: np.ndarray) -> _Entry:
    dt = _NUMPY_DTYPES.get(a.dtype.name, a.dtype.name.upper())
    if a.dtype.name == "bfloat16":  # ml_dtypes' numpy bfloat16
        dt = "BF16"

    def load(a: np.ndarray = a) -> np.ndarray:
        return np.array(a, dtype=np.float64, copy=True)  # exact widening of f16/bf16/f32

    return _Entry(where, tuple(int(s) for s in a.shape), dt, load)


def checkpoint_from_tensors(tensors: Mapping[str, Any], config: Mapping[str, Any] | None, *,
                            name: str = "<in-memory model>") -> Checkpoint:
    """A :class:`Checkpoint` over named in-memory tensors (torch tensors or numpy arrays).

    Parameters
    ----------
    tensors : mapping of str to tensor
        E.g. ``model.state_dict()``; entries that are not tensors are ignored.
    config : mapping or None
        The model's config as a dict (e.g. ``model.config.to_dict()``).
    name : str
        How error messages and reports name the model.

    Returns
    -------
    Checkpoint
        Format ``"memory"``; tensors widen to float64 exactly when read.

    Examples
    --------
    >>> import numpy as np
    >>> ck = checkpoint_from_tensors({"w": np.eye(2, dtype=np.float16)}, {"model_type": "bert"})
    >>> ck.dtype("w"), ck.get("w").dtype.name, ck.format
    ('F16', 'float64', 'memory')
    """
    if not isinstance(tensors, Mapping):
        raise TypeError(f"{name}: expected a mapping of tensor names to tensors, got {type(tensors).__name__}")
    entries: dict[str, _Entry] = {}
    for key, t in tensors.items():
        if isinstance(t, np.ndarray):
            entries[str(key)] = _numpy_entry(name, t)
        elif type(t).__module__.startswith("torch") and hasattr(t, "detach") and hasattr(t, "dtype"):
            entries[str(key)] = _torch_entry(name, t)
        elif hasattr(t, "__array__") and hasattr(t, "dtype") and hasattr(t, "shape"):
            entries[str(key)] = _numpy_entry(name, np.asarray(t))
        else:
            continue  # e.g. buffers stored as Python numbers: not weight matrices
    if not entries:
        raise ValueError(f"{name}: no tensors (expected a state dict of torch tensors or numpy arrays)")
    cfg = dict(config) if config is not None else None
    return Checkpoint(name, "memory", entries, cfg, None)
