"""The ``certbound-pi`` architecture: certbound's theory-faithful Π-Transformer, read from config.json.

A certbound-pi checkpoint (written by ``certbound train-demo``; format of
``certbound/models/checkpoint.py`` and ``certbound/models/config.py``, format
version 1) is a directory with ``model.safetensors`` (float64) and a
``config.json`` with ``"model_type": "certbound-pi"``. This module knows its
tensor names and config fields directly; it does not import
:mod:`certbound.models` (a higher layer).

How it differs from the BERT-like architectures (``proofs/theory-lipschitz.md``
§1, the model class of the theorems):

* tensors are stored in the **row-vector** convention (token row x ↦ x W), so
  nothing is transposed: ``blocks.{l}.attn.W_Q``, ``W_K``, ``W_V`` are
  N × H·d_h, ``W_O`` is H·d_h × N; head h uses columns ``h·d_h:(h+1)·d_h``
  (rows of ``W_O``);
* the head width ``d_head`` is a config field, independent of N/H (H·d_h ≠ N
  is allowed);
* variant P (``ffn_kind = "single"``) has ONE feed-forward matrix
  ``blocks.{l}.ffn.M`` (N × N, after φ); variant B (``"two"``) has
  ``ffn.M_in`` (N × d_ff) and ``ffn.M_out`` (d_ff × N);
* attention logits carry **no** 1/√d_h: A = W_Q W_Kᵀ exactly;
* a learned readout ``readout.w`` (N,) reads the first token row.

Everything the theorems fix *a priori* (variant, residual flag, T, activation
and its constants, c_sm, C_w, the loss range and Lipschitz constant) is read
here into a JSON-friendly ``theory_config`` dict, so that consumers (e.g.
``certbound bound``) need no model code.

Examples
--------
>>> cfg = {"model_type": "certbound-pi", "d_model": 16, "n_layers": 2, "n_heads": 2, "d_head": 4,
...        "seq_len": 14, "ffn_kind": "single", "loss": {"kind": "clipped-logistic", "clip": 4.0}}
>>> facts = pi_config_facts(cfg, "config.json")
>>> facts["num_layers"], facts["hidden_size"], facts["num_heads"], facts["head_dim"], facts["intermediate_size"]
(2, 16, 2, 4, 16)
>>> sorted(pi_templates("single"))
['M', 'W_K', 'W_O', 'W_Q', 'W_V', 'readout']
>>> t = facts["theory_config"]
>>> t["ffn_kind"], t["residual"], t["seq_len"], t["loss_bound"], t["loss_lip"], t["readout_norm"]
('single', False, 14, 4.0, 1, 4.0)
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

__all__ = ["PI_MODEL_TYPE", "PI_FORMAT_VERSION", "PI_ARCHITECTURE_HELP", "is_pi_config", "pi_config_facts",
           "pi_templates"]

#: ``model_type`` of certbound-pi checkpoints (``certbound.models.config.MODEL_TYPE``).
PI_MODEL_TYPE = "certbound-pi"
#: Tensor-layout version this loader reads (``certbound.models.config.FORMAT_VERSION``).
PI_FORMAT_VERSION = 1

PI_ARCHITECTURE_HELP = (f"certbound-pi (model_type: {PI_MODEL_TYPE}; certbound's theory-faithful model, "
                        "written by `certbound train-demo`)")

_FFN_KINDS = ("single", "two")
#: Activations with known constants (L_φ, φ₀ = ‖φ(0)‖, φ₁ with ‖φ(z)‖ ≤ φ₀ + φ₁‖z‖), exact.
_ACTIVATIONS = {"relu": (1, 0, 1)}
_LOSS_KINDS = ("clipped-logistic", "ramp")


def is_pi_config(config: dict[str, Any] | None) -> bool:
    """True if a config.json dict describes a certbound-pi model.

    Parameters
    ----------
    config : dict or None
        A parsed ``config.json``.

    Returns
    -------
    bool
        Whether ``model_type`` is ``"certbound-pi"``.

    Examples
    --------
    >>> is_pi_config({"model_type": "certbound-pi"}), is_pi_config({"model_type": "bert"}), is_pi_config(None)
    (True, False, False)
    """
    return isinstance(config, dict) and config.get("model_type") == PI_MODEL_TYPE


def pi_templates(ffn_kind: str) -> dict[str, str]:
    """Role → stored tensor name template (``{layer}``) of a certbound-pi checkpoint.

    Roles ``W_Q``, ``W_K``, ``W_V``, ``W_O``; ``M`` (variant P) or ``M_in``,
    ``M_out`` (variant B); ``readout`` (no ``{layer}``: one vector per model).

    Parameters
    ----------
    ffn_kind : {"single", "two"}
        Variant P (one FFN matrix M) or variant B (M_in, M_out).

    Returns
    -------
    dict
        Role → template.
    """
    t = {
        "W_Q": "blocks.{layer}.attn.W_Q",
        "W_K": "blocks.{layer}.attn.W_K",
        "W_V": "blocks.{layer}.attn.W_V",
        "W_O": "blocks.{layer}.attn.W_O",
    }
    if ffn_kind == "single":
        t["M"] = "blocks.{layer}.ffn.M"
    else:
        t["M_in"] = "blocks.{layer}.ffn.M_in"
        t["M_out"] = "blocks.{layer}.ffn.M_out"
    t["readout"] = "readout.w"
    return t


def _positive_int(config: dict[str, Any], key: str, where: str) -> int:
    v = config.get(key)
    if v is None:
        raise ValueError(f"{where}: certbound-pi config lacks the required key {key!r}")
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise ValueError(f"{where}: certbound-pi config {key}={v!r} is not a positive integer")
    return v


def _positive_finite(config: dict[str, Any], key: str, default: float, where: str) -> float:
    v = config.get(key, default)
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not (math.isfinite(v) and v > 0):
        raise ValueError(f"{where}: certbound-pi config {key}={v!r} is not a positive finite number")
    return v


def _loss_constants(loss: Any, where: str) -> tuple[str, Any, Any]:
    """(kind, B_ℒ, L_ℒ) of the config's loss, as exact numbers.

    The constants are *derived* from the loss definition the model uses
    (``certbound/models/config.py::LossSpec``), not trusted from the stored
    ``loss_bound``/``loss_lip`` (those must agree): clipped logistic with clip
    C has values in [0, C] and is 1-Lipschitz; the ramp with margin m has
    values in [0, 1] and Lipschitz constant 1/m, kept as the exact rational
    1/m (the float m is the margin the loss uses; 1/m need not be a float).
    """
    if not isinstance(loss, dict):
        raise ValueError(f"{where}: certbound-pi config 'loss' must be an object, got {loss!r}")
    kind = loss.get("kind", "clipped-logistic")
    if kind not in _LOSS_KINDS:
        raise ValueError(f"{where}: certbound-pi loss kind {kind!r} is not one of {_LOSS_KINDS}")
    if kind == "clipped-logistic":
        bound: Any = _positive_finite(loss, "clip", 4.0, where)
        lip: Any = 1
    else:
        bound = 1
        lip = 1 / Fraction(_positive_finite(loss, "margin", 1.0, where))
        if lip.denominator == 1:
            lip = int(lip)
    for key, derived in (("loss_bound", bound), ("loss_lip", lip)):
        stored = loss.get(key)
        if stored is not None and not (isinstance(stored, (int, float)) and not isinstance(stored, bool)
                                       and math.isfinite(stored) and abs(stored - derived) <= 1e-12 * abs(derived)):
            raise ValueError(f"{where}: certbound-pi loss {key}={stored!r} disagrees with the loss definition "
                             f"({kind}: {key} = {derived})")
    return kind, bound, lip


def pi_config_facts(config: dict[str, Any], where: str) -> dict[str, Any]:
    """Sizes and a-priori theory constants of a certbound-pi config (checked; errors name ``where``).

    Returns a dict with ``num_layers``, ``hidden_size``, ``num_heads``,
    ``head_dim``, ``intermediate_size`` (d_ff for variant B; N for variant P,
    whose one FFN matrix M is N × N), ``ffn_kind`` and ``theory_config``
    (JSON-friendly except that a ramp loss's ``loss_lip`` may be a
    :class:`~fractions.Fraction`): ``ffn_kind``, ``d_ff``, ``d_head``,
    ``residual``, ``seq_len``, ``activation``, ``act_lip``,
    ``act_norm_at_zero``, ``act_growth``, ``softmax_lip``, ``readout_learned``
    (always True), ``readout_norm`` (C_w the training projected onto),
    ``loss_kind``, ``loss_bound``, ``loss_lip``.

    Parameters
    ----------
    config : dict
        A certbound-pi ``config.json``.
    where : str
        Its name in error messages.

    Raises
    ------
    ValueError
        For a missing or invalid field, naming ``where``.

    Returns
    -------
    dict
        The sizes and ``theory_config`` described above.
    """
    if not is_pi_config(config):
        raise ValueError(f"{where}: model_type is {config.get('model_type')!r}, not {PI_MODEL_TYPE!r}")
    version = config.get("format_version", PI_FORMAT_VERSION)
    if version != PI_FORMAT_VERSION:
        raise ValueError(f"{where}: certbound-pi format_version {version!r} is not supported "
                         f"(this certbound reads {PI_FORMAT_VERSION})")
    N = _positive_int(config, "d_model", where)
    L = _positive_int(config, "n_layers", where)
    H = _positive_int(config, "n_heads", where)
    dh = _positive_int(config, "d_head", where)
    T = _positive_int(config, "seq_len", where)
    if dh > N:
        raise ValueError(f"{where}: certbound-pi config d_head={dh} exceeds d_model={N}")
    ffn = config.get("ffn_kind", "single")
    if ffn not in _FFN_KINDS:
        raise ValueError(f"{where}: certbound-pi config ffn_kind={ffn!r} is not one of {_FFN_KINDS}")
    d_ff = _positive_int(config, "d_ff", where) if ffn == "two" else None
    act = config.get("activation", "relu")
    if act not in _ACTIVATIONS:
        raise ValueError(f"{where}: certbound-pi activation {act!r} is not one of {sorted(_ACTIVATIONS)}")
    lip, zero, growth = _ACTIVATIONS[act]
    residual = config.get("residual", False)
    if not isinstance(residual, bool):
        raise ValueError(f"{where}: certbound-pi config residual={residual!r} is not true/false")
    readout_learned = config.get("readout_learned", True)
    if readout_learned is not True:
        raise ValueError(f"{where}: certbound-pi config readout_learned={readout_learned!r}: only a learned "
                         "readout (readout.w) is supported")
    c_sm = _positive_finite(config, "softmax_lip", 1.0, where)
    if c_sm < 1:
        raise ValueError(f"{where}: certbound-pi config softmax_lip={c_sm!r} is < 1 (1 is proved; spec F2)")
    kind, loss_bound, loss_lip = _loss_constants(config.get("loss", {}), where)
    theory = {
        "ffn_kind": ffn, "d_ff": d_ff, "d_head": dh, "residual": residual, "seq_len": T,
        "activation": act, "act_lip": lip, "act_norm_at_zero": zero, "act_growth": growth,
        "softmax_lip": c_sm, "readout_learned": True,
        "readout_norm": _positive_finite(config, "readout_norm", 4.0, where),
        "loss_kind": kind, "loss_bound": loss_bound, "loss_lip": loss_lip,
    }
    return {"num_layers": L, "hidden_size": N, "num_heads": H, "head_dim": dh,
            "intermediate_size": d_ff if d_ff is not None else N, "ffn_kind": ffn, "theory_config": theory}
