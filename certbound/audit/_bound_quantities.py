"""The certified generalization bounds as audit quantities: ``bound``, ``rademacher``, ``dudley``, ``confidence_term``, ``log_inv_prior``.

``bound(n=1e6, delta=0.01)`` is the Theorem 2 (post hoc) bound of the
claim's model exactly as ``certbound bound MODEL --n 1e6 --delta 0.01``
computes it (``proofs/theory-theorems.md`` §T2): both call
:func:`certbound.pipeline.certified_bound` with a
:class:`~certbound.pipeline.BoundSettings`, so defaults and option checks
(e.g. refusing a ``loss_bound`` below a certbound-pi config's) are the CLI's. Keyword options mirror the CLI flags;
numbers may be written as numbers (``n=1e6``) or strings (``n="1e6"``,
``delta="0.01"``) and are read exactly, never through a binary float.

The returned balls are the :class:`~certbound.bounds.BoundResult` fields:
they contain the exact value of the certified expression at the
configuration (Schatten indices, grid radii, cut-off) certbound selects, whose
upper end is the printed bound (``proofs/audit.md`` §5). One bound is computed
per ``(model, options)`` and cached on the model handle, always at
``DEFAULT_PREC`` bits and with the certificate mode ``spectrum_mode``
(one of :data:`certbound.pipeline.SPECTRUM_MODES`; default ``"auto"``, as the
CLI), so the quantity does not change when the audit escalates its precision
or its certificate mode.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable

from certbound.audit._errors import DomainError
from certbound.audit._evaluate import EvalContext, Value, register_quantity
from certbound.audit._exact import parse_exact_number
from certbound.ball import DEFAULT_PREC, working_precision
from certbound.pipeline import DEFAULT_SPECTRUM_MODE, SPECTRUM_MODES, BoundSettings, certified_bound

__all__ = ["BOUND_KEYWORDS", "bound_result"]

#: keyword → (BoundSettings field, kind). Kinds: "count" positive integer, "number" exact positive rational,
#: "flag" 0 or 1, "dyadic" exact binary64 number > 1, "mode" certificate mode string.
BOUND_KEYWORDS: dict[str, tuple[str, str]] = {
    "n": ("n", "count"),
    "delta": ("delta", "number"),
    "seq_len": ("seq_len", "count"),
    "loss_bound": ("loss_bound", "number"),
    "loss_lipschitz": ("loss_lipschitz", "number"),
    "readout_norm": ("readout_norm", "number"),
    "softmax_lip": ("softmax_lip", "number"),
    "act_lip": ("act_lip", "number"),
    "residual": ("residual", "flag"),
    "logit_scale": ("logit_scale", "flag"),
    "p_grid_m": ("p_grid_m", "count"),
    "partition_ratio": ("partition_ratio", "dyadic"),
    "spectrum_mode": ("spectrum_mode", "mode"),
}
_DECIMAL_KEYWORDS = {k for k, (_, kind) in BOUND_KEYWORDS.items() if kind != "mode"}


def _exact(v: Value, name: str) -> Fraction:
    """The exact value of a numeric keyword (a Fraction, or a string read exactly)."""
    if isinstance(v, str):
        try:
            return parse_exact_number(v)
        except ValueError as exc:
            raise DomainError(f"bound: {name}: {exc}") from None
    if isinstance(v, Fraction):
        return v
    if isinstance(v, int) and not isinstance(v, bool):
        return Fraction(v)
    # A ball (e.g. delta=1/exp(3)) is not one number: the bound's configuration depends on it.
    raise DomainError(f"bound: {name} must be an exact number (a decimal such as 0.01, or a ratio), got {v}")


def _normalise(kw: dict[str, Value]) -> dict[str, Any]:
    """Checked option values keyed by BOUND_KEYWORDS (exact numbers, ints, bools, strings)."""
    out: dict[str, Any] = {}
    for name, v in kw.items():
        _, kind = BOUND_KEYWORDS[name]
        if kind == "mode":
            if v not in SPECTRUM_MODES:
                raise DomainError(f"bound: spectrum_mode must be one of {', '.join(map(repr, SPECTRUM_MODES))}, "
                                  f"got {v!r}")
            out[name] = v
            continue
        q = _exact(v, name)
        if kind == "count":
            if q.denominator != 1 or q < 1:
                raise DomainError(f"bound: {name} must be a positive integer, got {q}")
            out[name] = int(q)
        elif kind == "flag":
            if q not in (0, 1):
                raise DomainError(f"bound: {name} must be 0 or 1, got {q}")
            out[name] = bool(q)
        elif kind == "dyadic":
            if Fraction(float(q)) != q:
                raise DomainError(f"bound: {name} = {q} must be exactly representable as a binary64 number "
                                  "(e.g. 1.25), as BoundSettings.partition_ratio (a float) is")
            out[name] = q
        else:
            if q <= 0:
                raise DomainError(f"bound: {name} must be positive, got {q}")
            out[name] = q
    if not 0 < out["delta"] < 1:
        raise DomainError(f"bound: delta must lie in (0, 1), got {out['delta']}")
    return out


def bound_result(ctx: EvalContext, model: Any, kw: dict[str, Value]) -> Any:
    """The :class:`~certbound.bounds.BoundResult` of ``certbound bound`` for the model and options (cached).

    Raises ``DomainError`` for bad option values and ``ValueError``/``OSError``
    (the CLI's messages) when the bound cannot be computed.
    """
    opts = _normalise(kw)
    key = ("bound",) + tuple(sorted(opts.items()))

    def compute() -> Any:
        # Fixed precision: the configuration choices (grid radii) are decided at working precision, so
        # the quantity must not depend on the audit's escalation level.
        with working_precision(DEFAULT_PREC):
            try:
                # exact Fractions: the pipeline reads them exactly, as it reads the CLI's decimal strings
                settings = BoundSettings(**{BOUND_KEYWORDS[k][0]: (float(v) if BOUND_KEYWORDS[k][1] == "dyadic"
                                                                   else v)
                                            for k, v in opts.items() if k not in ("n", "delta")})
                res, _, _, _ = certified_bound(model.path, opts["n"], opts["delta"], settings,
                                               mapping=model.mapping)
            except ValueError as exc:  # the CLI's option checks name its flags: say where they come from
                raise ValueError(f"bound(): {exc} (as `certbound bound` would refuse it)") from None
        # Storage formats of the weights, for the audit's "input data carry only float32" notes
        # (all stored tensors: conservative, notes never change a verdict).
        try:
            model.open()
            for name in model._ck.names():
                model.dtypes.add(model._ck.dtype(name))
        except (OSError, ValueError):  # pragma: no cover - the bound above already read the file
            pass
        return res

    return model.cached(key, compute)


def _field(name: str) -> Callable[..., Value]:
    def impl(ctx: EvalContext, model: Any, kw: dict[str, Value]) -> Value:
        return getattr(bound_result(ctx, model, kw), name)

    return impl


_OPTIONS = ("n=, delta= (required; numbers or exact strings such as \"1e6\"); optional seq_len, loss_bound, "
            "loss_lipschitz, readout_norm, softmax_lip, act_lip, residual=0|1, logit_scale=0|1, p_grid_m, "
            "partition_ratio, spectrum_mode=" + "|".join(f'"{m}"' for m in SPECTRUM_MODES)
            + f" (default \"{DEFAULT_SPECTRUM_MODE}\"; the `certbound bound` flags and defaults)")
_SAME = "same arguments as bound()"

for _name, _field_name, _doc in (
    ("bound", "bound", "Theorem 2 (post hoc) certified generalization-gap bound, as `certbound bound MODEL --n N "
                       "--delta D` computes it (its upper end is the printed bound); " + _OPTIONS),
    ("rademacher", "rademacher", "the Rademacher term of that bound (bound = 2 rademacher + confidence_term): the "
                                 "minimum of B_L/2, the one-step bound and the Dudley sum; " + _SAME),
    ("dudley", "dudley", "the Dudley sum D_n of that bound (one of the Rademacher estimates, >= rademacher); " + _SAME),
    ("confidence_term", "confidence_term",
     "B_L sqrt((ln(2/delta) + log_inv_prior) / (2n)) of that bound; " + _SAME),
    ("log_inv_prior", "log_inv_prior", "ln(1/prior) of the post-hoc configuration of that bound; " + _SAME),
):
    register_quantity(_name, _field(_field_name), set(BOUND_KEYWORDS), {"n", "delta"}, _doc,
                      string_keywords={"spectrum_mode"}, decimal_keywords=_DECIMAL_KEYWORDS)
