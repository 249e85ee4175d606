"""Certified verdicts: decide each claim against an Arb enclosure, raising precision until decided.

Decision rules (``proofs/audit.md`` §2), with ``[lo, hi]`` the exact dyadic
end points of the enclosure of the claimed quantity x and ``v`` the claimed
value as an exact rational:

=========  ===========================  ================================
relation   confirmed iff                refuted iff
=========  ===========================  ================================
x ≤ v      hi ≤ v                       lo > v
x < v      hi < v                       lo ≥ v
x ≥ v      lo ≥ v                       hi < v
x > v      lo > v                       hi ≤ v
x = v      a < lo and hi < b            hi < a or lo > b
x ≈ v      a ≤ lo and hi ≤ b            hi < a or lo > b
=========  ===========================  ================================

For "=", ``[a, b]`` is the rounding cell of v (every real rounding to v
at the stated digits; :func:`certbound.audit._exact.rounding_cell`), whose
end points are ties and count as undecidable; for "≈", ``[a, b] =
[v − t, v + t]``. Since x ∈ [lo, hi], "confirmed" and "refuted" are
theorems; everything else is "undecided" with the reason. Comparisons are
exact (Fractions), so no rounding enters the decision; end points of
astronomically large or small balls are first rounded outward to a fine
dyadic grid (:func:`certbound.ball.bounded_endpoints`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from flint import arb

from certbound._errors import OptionError
from certbound.audit._claims import Claim, ClaimsFile
from certbound.audit._errors import DomainError
from certbound.audit._evaluate import EvalContext, evaluate, to_ball, uses_models
from certbound.audit._exact import certain_digits, decimal_string, rounding_cell, rounding_cell_decimals
from certbound.ball import DEFAULT_PREC, bounded_endpoints, working_precision

__all__ = ["CERTAIN_DIGITS_SHOWN", "ESCALATION_MODES", "Verdict", "asserted_interval", "decide", "precision_schedule", "audit_claims", "STATUSES"]

STATUSES = ("confirmed", "refuted", "undecided", "error")
#: The certificate modes the audit escalates through, narrowest last. ``gram``/``auto`` are cheaper than
#: ``fast`` but can be wider (gram's widths grow like (σ₁/σᵢ)², auto stops at a 1e-8 relative target), so
#: they are no rung of this ladder; :data:`certbound.enclose.MODES` has all.
ESCALATION_MODES = ("fast", "tight", "arb")
#: Certain digits are searched up to this many significant digits (reports say "≥ 24" beyond).
CERTAIN_DIGITS_SHOWN = 24


@dataclass
class Verdict:
    """The outcome for one claim.

    ``enclosure`` is the last ball computed for the quantity (``None`` if
    none could be), ``bits``/``mode`` the precision and certificate mode of
    that evaluation, ``certain`` the certain digits ``(n, value)`` (see
    :func:`certbound.audit._exact.certain_digits`), ``notes`` extra remarks
    (storage precision, margins).
    """

    claim: Claim
    status: str
    reason: str
    enclosure: arb | None = None
    bits: int = 0
    mode: str = ""
    certain: tuple[int, Fraction] | None = None
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    exact: Fraction | None = None


def asserted_interval(claim: Claim) -> tuple[Fraction | None, Fraction | None, bool]:
    """The set of values the claim asserts, as ``(a, b, open)``; ``None`` = unbounded.

    ``open`` means the end points themselves are excluded (or, for "=",
    undecidable ties).

    >>> from certbound.audit._claims import parse_claims
    >>> c = parse_claims('[[claim]]\\nquantity = "1"\\nrelation = "<="\\nvalue = "0.37"').claims[0]
    >>> asserted_interval(c)
    (None, Fraction(37, 100), False)
    """
    v = claim.value.value
    r = claim.relation
    if r == "<=":
        return None, v, False
    if r == "<":
        return None, v, True
    if r == ">=":
        return v, None, False
    if r == ">":
        return v, None, True
    if r == "=":
        a, b = (rounding_cell_decimals(v, claim.decimals) if claim.decimals is not None
                else rounding_cell(v, claim.digits))
        return a, b, True
    t = claim.tolerance if claim.tolerance is not None else claim.rel_tolerance * abs(v)
    return v - t, v + t, False


def decide(claim: Claim, enclosure: arb | Fraction) -> tuple[str, str]:
    """``(status, reason)`` of a claim given a ball containing the true quantity (or its exact value).

    >>> from certbound.audit._claims import parse_claims
    >>> c = parse_claims('[[claim]]\\nquantity = "1"\\nrelation = "="\\nvalue = "12.3"').claims[0]
    >>> decide(c, arb("12.31") + arb("+/- 0.01"))[0]
    'confirmed'
    >>> decide(c, arb("12.4") + arb("+/- 0.01"))[0]
    'refuted'
    >>> decide(c, arb("12.35") + arb("+/- 0.01"))[0]
    'undecided'
    """
    if isinstance(enclosure, Fraction):
        lo = hi = enclosure
    else:
        lo, hi = bounded_endpoints(enclosure)
    if lo is None and hi is None:
        return "undecided", f"the quantity could not be enclosed in a finite ball ({enclosure})"
    a, b, open_ends = asserted_interval(claim)

    def le(x: Fraction | None, y: Fraction | None, strict: bool) -> bool:
        """x ≤ y (or <) where None on the left is −∞ and on the right +∞ — conservative."""
        if x is None or y is None:
            return False
        return x < y if strict else x <= y

    # Inside: [lo, hi] ⊂ asserted set.
    inside = (a is None or le(a, lo, open_ends)) and (b is None or le(hi, b, open_ends))
    # Outside: [lo, hi] ∩ closure(asserted set) = ∅ (closed: ties never refute "="),
    # and for strict ≤/≥-type relations the end point itself is outside.
    strict_out = claim.relation in ("<", ">")
    outside = (b is not None and le(b, lo, not strict_out)) or (a is not None and le(hi, a, not strict_out))
    if inside:
        return "confirmed", _why(claim, "confirmed", lo, hi, a, b)
    if outside:
        return "refuted", _why(claim, "refuted", lo, hi, a, b)
    return "undecided", _why(claim, "undecided", lo, hi, a, b)


def _fmt(q: Fraction | None) -> str:
    return "−∞" if q is None else decimal_string(q, 20)


def _why(claim: Claim, status: str, lo: Fraction | None, hi: Fraction | None,
         a: Fraction | None, b: Fraction | None) -> str:
    r = claim.relation
    if status == "confirmed":
        if r in ("<=", "<"):
            return "the whole certified enclosure lies below the claimed value"
        if r in (">=", ">"):
            return "the whole certified enclosure lies above the claimed value"
        if r == "=":
            return "every point of the certified enclosure rounds to the claimed value"
        return "the certified enclosure lies within the claimed tolerance"
    if status == "refuted":
        if r in ("<=", "<"):
            return "the whole certified enclosure lies above the claimed value" + (" or on it" if r == "<" else "")
        if r in (">=", ">"):
            return "the whole certified enclosure lies below the claimed value" + (" or on it" if r == ">" else "")
        if r == "=":
            return f"no point of the certified enclosure rounds to the claimed value (it rounds in [{_fmt(a)}, {_fmt(b)}])"
        return f"the certified enclosure lies outside [{_fmt(a)}, {_fmt(b)}]"
    if lo is None or hi is None:
        return "the certified enclosure is unbounded"
    width = hi - lo
    if r in ("<=", "<", ">=", ">"):
        return (f"the claimed value lies inside the certified enclosure (width {float(width):.2g}); "
                "the claim is decided only if the enclosure shrinks to one side of it")
    boundary = a if (a is not None and lo <= a <= hi) else b
    what = "a rounding boundary (tie)" if r == "=" else "an end of the tolerance interval"
    return (f"the certified enclosure (width {float(width):.2g}) contains {what} of the claim, "
            f"{_fmt(boundary)}")


def precision_schedule(max_prec: int = 1024, max_mode: str = "tight") -> list[tuple[int, str]]:
    """The escalation levels ``(bits, certificate mode)``: precision doubles from 128.

    Mode ``fast`` first, then ``tight``, then ``arb`` from the third level on
    (only as far as ``max_mode`` allows).

    >>> precision_schedule(1024, "arb")
    [(128, 'fast'), (256, 'tight'), (512, 'arb'), (1024, 'arb')]
    """
    modes = ESCALATION_MODES
    if max_mode not in modes:
        raise OptionError(f"`max_mode` must be one of {', '.join(modes)} (the escalation ladder), not {max_mode!r}")
    top = modes.index(max_mode)
    out, bits, level = [], DEFAULT_PREC, 0
    while True:
        out.append((bits, modes[min(level, top)]))
        if bits >= max_prec:
            break
        bits, level = bits * 2, level + 1
    return out


def _ball_of_fraction(q: Fraction) -> arb:
    """A ball containing q, tight enough for display (4096 bits)."""
    with working_precision(4096):
        return to_ball(q)


def _relative_margin(claim: Claim, enclosure: arb) -> float | None:
    """How far (relative to |x|) the claim's nearest decision point is from the enclosure."""
    if isinstance(enclosure, Fraction):
        lo = hi = enclosure
    else:
        lo, hi = bounded_endpoints(enclosure)
    if lo is None or hi is None:
        return None
    mid = (lo + hi) / 2
    if mid == 0:
        return None
    a, b, _ = asserted_interval(claim)
    points = [p for p in (a, b) if p is not None]
    return float(min(abs(p - mid) for p in points) / abs(mid)) if points else None


def _evaluate_claim(claim: Claim, cf: ClaimsFile, bits: int, mode: str, level: int) -> arb | Fraction:
    with working_precision(bits):
        ctx = EvalContext(models=cf.models, default_model=claim.model, mode=mode, level=level)
        for name, _, tree in cf.constants:
            ctx.constants[name] = evaluate(tree, ctx)
        value = evaluate(claim.tree, ctx)
        if isinstance(value, str):
            raise DomainError("the quantity is a string, not a number")
        return value if isinstance(value, Fraction) else to_ball(value)


def audit_claims(cf: ClaimsFile, max_prec: int = 1024, max_mode: str = "tight") -> list[Verdict]:
    """Evaluate and decide every claim, escalating precision/mode for undecided ones.

    A claim stops at the first level that decides it; it also stops when the
    enclosure did not change between two levels with the same certificate
    mode (more bits would not help). Errors in a claim (a model that cannot be
    read, an undefined expression) give status ``"error"`` and do not stop
    the other claims.
    """
    schedule = precision_schedule(max_prec, max_mode)
    verdicts = []
    for claim in cf.claims:
        verdicts.append(_audit_one(claim, cf, schedule))
    return verdicts


def _audit_one(claim: Claim, cf: ClaimsFile, schedule: list[tuple[int, str]]) -> Verdict:
    t0 = time.perf_counter()
    verdict = Verdict(claim, "undecided", "not evaluated")

    uses_model = uses_models(claim.tree)
    previous: tuple[Any, Any, str] | None = None
    for level, (bits, mode) in enumerate(schedule):
        try:
            enc = _evaluate_claim(claim, cf, bits, mode, level)
        except ArithmeticError as exc:  # Indeterminate, or an overflow: retry with more bits
            verdict = Verdict(claim, "undecided", f"cannot evaluate at {bits} bits: {exc}", None, bits, mode)
            continue
        except (DomainError, ValueError, OSError) as exc:
            return Verdict(claim, "error", str(exc), None, bits, mode, seconds=time.perf_counter() - t0)
        status, reason = decide(claim, enc)
        if isinstance(enc, Fraction):  # every step was exact: the verdict is final
            verdict = Verdict(claim, status, reason, _ball_of_fraction(enc), bits, "exact", exact=enc)
            break
        verdict = Verdict(claim, status, reason, enc, bits, mode)
        if status != "undecided":
            break
        ends = (*bounded_endpoints(enc), mode)
        next_mode = schedule[level + 1][1] if level + 1 < len(schedule) else None
        if previous == ends and next_mode == mode:
            break  # more bits did not move the enclosure
        previous = ends
    if verdict.exact is not None:
        verdict.certain = certain_digits(verdict.exact, verdict.exact, CERTAIN_DIGITS_SHOWN)
    elif verdict.enclosure is not None:
        verdict.certain = certain_digits(*bounded_endpoints(verdict.enclosure), CERTAIN_DIGITS_SHOWN)
    _add_notes(verdict, cf, uses_model)
    verdict.seconds = time.perf_counter() - t0
    return verdict


def _add_notes(verdict: Verdict, cf: ClaimsFile, uses_model: bool) -> None:
    claim = verdict.claim
    if not uses_model:
        return
    handles = [claim.model] if claim.model is not None else []
    handles += [m for m in cf.models.values() if m not in handles and m.dtypes]
    coarse = [(m.storage_unit_roundoff(), m) for m in handles if m is not None and m.storage_note()]
    if not coarse or verdict.enclosure is None or verdict.exact is not None:
        return
    u, model = max(coarse, key=lambda t: t[0])
    margin = _relative_margin(claim, verdict.enclosure)
    if margin is not None and margin < 4 * u:
        note = model.storage_note()
        if verdict.status == "undecided":
            verdict.reason += (f"; moreover {note}: the claim's value is within {margin:.1e} (relative) of the "
                               "quantity, below the data's own precision")
        else:
            verdict.notes.append(
                f"{note}; the verdict holds for the stored weights as exact numbers, but its margin "
                f"({margin:.1e} relative) is below that precision")
