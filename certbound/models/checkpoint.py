"""Reading and writing ``certbound-pi`` checkpoints (safetensors + config.json).

Layout of a checkpoint directory::

    model.safetensors   float64 tensors, names of PiTransformerConfig.tensor_shapes()
    config.json         {"model_type": "certbound-pi", ...architecture..., "task": {...},
                         "training": {...}}

Tensors use the row-vector convention of the theory (a token row x maps to
``x @ W``), so no transposes are needed: for head h of block l (columns
``h*d_h:(h+1)*d_h``) A_{l,h} = W_Q[:, s] W_K[:, s]ᵀ and V_{l,h} = W_V[:, s] W_O[s, :].
Weights are stored in float64, so the certified matrices are exactly the ones
the numpy forward pass evaluates.

Examples
--------
>>> import tempfile
>>> from certbound.models.config import PiTransformerConfig
>>> from certbound.models.network import PiTransformer
>>> cfg = PiTransformerConfig(d_model=4, n_layers=1, n_heads=1, d_head=2, seq_len=3)
>>> net = PiTransformer.random(cfg, seed=0)
>>> with tempfile.TemporaryDirectory() as d:
...     _ = save_pi_checkpoint(net, d)
...     back, meta = load_pi_checkpoint(d)
>>> all(np.array_equal(back.params[k], net.params[k]) for k in net.params)
True
"""

from __future__ import annotations

import json
import os
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from certbound.models.config import MODEL_TYPE, PiTransformerConfig
from certbound.models.network import PiTransformer

__all__ = [
    "WEIGHTS_NAME",
    "CONFIG_NAME",
    "save_pi_checkpoint",
    "load_pi_checkpoint",
    "is_pi_checkpoint",
    "demo_checkpoint_path",
]

WEIGHTS_NAME = "model.safetensors"
CONFIG_NAME = "config.json"


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same directory and os.replace."""
    fd, tmp = tempfile.mkstemp(dir=str(path.parent), prefix=f".{path.name}.", suffix=".tmp")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; give the file ordinary permissions
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def save_pi_checkpoint(net: PiTransformer, directory: str | os.PathLike, extra: dict[str, Any] | None = None) -> Path:
    """Write ``model.safetensors`` and ``config.json`` into ``directory`` (created if needed).

    ``extra`` (e.g. ``{"task": ..., "training": ...}``) is merged into config.json.
    Each file is written atomically. Returns the directory.
    """
    from safetensors.numpy import save

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    tensors = {k: np.ascontiguousarray(v, dtype=np.float64) for k, v in sorted(net.params.items())}
    blob = save(tensors, metadata={"format": "np", "model_type": MODEL_TYPE})
    cfg = net.config.to_json_dict()
    if extra:
        cfg.update(extra)
    _atomic_write_bytes(out / WEIGHTS_NAME, blob)
    _atomic_write_bytes(out / CONFIG_NAME, (json.dumps(cfg, indent=2, sort_keys=False) + "\n").encode())
    return out


def is_pi_checkpoint(path: str | os.PathLike) -> bool:
    """True if ``path`` (a directory or its config.json / model.safetensors) is a certbound-pi checkpoint."""
    p = Path(path)
    d = p.parent if p.is_file() else p
    try:
        with open(d / CONFIG_NAME, encoding="utf-8") as fh:
            return json.load(fh).get("model_type") == MODEL_TYPE
    except (OSError, ValueError):
        return False


def load_pi_checkpoint(path: str | os.PathLike) -> tuple[PiTransformer, dict[str, Any]]:
    """Load a certbound-pi checkpoint; returns (model, the full config.json dict).

    ``path`` may be the directory, its ``config.json`` or its ``model.safetensors``.
    Raises OSError (missing/unreadable file) or ValueError (not certbound-pi,
    bad shapes, NaN/Inf) naming the file and tensor.
    """
    from safetensors import safe_open

    p = Path(path)
    d = p.parent if p.is_file() else p
    cfg_path, w_path = d / CONFIG_NAME, d / WEIGHTS_NAME
    if not cfg_path.is_file():
        raise OSError(f"{cfg_path}: no config.json (a certbound-pi checkpoint is a directory with "
                      f"{CONFIG_NAME} and {WEIGHTS_NAME})")
    if not w_path.is_file():
        raise OSError(f"{w_path}: weights file missing")
    try:
        with open(cfg_path, encoding="utf-8") as fh:
            meta = json.load(fh)
    except ValueError as exc:
        raise ValueError(f"{cfg_path}: not valid JSON ({exc})") from exc
    try:
        config = PiTransformerConfig.from_json_dict(meta)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{cfg_path}: {exc}") from exc
    params: dict[str, np.ndarray] = {}
    try:
        with safe_open(str(w_path), framework="numpy") as fh:
            for name in fh.keys():
                params[name] = fh.get_tensor(name)
    except Exception as exc:  # safetensors raises its own error types for corrupt files
        raise ValueError(f"{w_path}: cannot read safetensors file ({exc})") from exc
    try:
        net = PiTransformer(config, params)
    except ValueError as exc:
        raise ValueError(f"{w_path}: {exc}") from exc
    return net, meta


def demo_checkpoint_path() -> Path:
    """Directory of the checkpoint shipped with certbound (made by ``certbound train-demo``)."""
    return Path(str(resources.files("certbound.models") / "data" / "demo"))
