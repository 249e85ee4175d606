"""Audit reports: plain-text table, JSON (certified-quantity form ``Q``) and Markdown.

Enclosures are printed with outward rounding (lower end rounded down, upper
end rounded up, :func:`certbound.ball.decimal_lower` /
:func:`~certbound.ball.decimal_upper`), so a printed interval always
contains the quantity. Certain digits are printed with exactly the number of
significant digits that are certain.
"""

from __future__ import annotations

import decimal
import textwrap
from fractions import Fraction
from typing import Any

from certbound._version import __version__
from certbound.audit._claims import ClaimsFile
from certbound.audit._exact import decimal_string
from certbound.audit._verdict import CERTAIN_DIGITS_SHOWN, STATUSES, Verdict, asserted_interval
from certbound.ball import ball_to_json, decimal_lower, decimal_upper

__all__ = ["format_significant", "enclosure_text", "verdict_to_json", "report_json", "report_table",
           "report_markdown", "summary_counts", "exit_code"]


def format_significant(q: Fraction, n: int) -> str:
    """``q`` (already a value with ≤ n significant digits) written with exactly n significant digits.

    >>> format_significant(Fraction(123, 10), 4)
    '12.30'
    >>> format_significant(Fraction(10), 3)
    '10.0'
    """
    if q == 0:
        return "0"
    ctx = decimal.Context(prec=max(n, 1) + 40)
    d = ctx.divide(decimal.Decimal(q.numerator), decimal.Decimal(q.denominator))
    exp = d.adjusted() - n + 1
    d = d.quantize(decimal.Decimal(1).scaleb(exp), context=ctx)
    return format(d, "f") if -7 < d.adjusted() < 16 else format(d, "e")


def _digits_for(v: Verdict) -> int:
    n = v.certain[0] if v.certain else 0
    return max(6, min(n + 3, CERTAIN_DIGITS_SHOWN + 3))


def enclosure_text(v: Verdict) -> str:
    """``[lower, upper]`` with outward-rounded decimal ends, the exact value, or ``-``."""
    if v.exact is not None:
        q = v.exact
        d = decimal_string(q, 30)
        return f"{d} (exact)" if not d.startswith("≈") else f"{q.numerator}/{q.denominator} (exact, {d})"
    if v.enclosure is None:
        return "-"
    d = _digits_for(v)
    return f"[{decimal_lower(v.enclosure, d)}, {decimal_upper(v.enclosure, d)}]"


def _certain_text(v: Verdict) -> str:
    if v.exact is not None:
        return "all (exact)"
    if not v.certain:
        return "-"
    n, q = v.certain
    if n == 0:
        return "0 (exact)"
    more = "≥ " if n >= CERTAIN_DIGITS_SHOWN else ""
    return f"{format_significant(q, n)} ({more}{n} digit{'s' if n != 1 else ''})"


def _asserted_json(v: Verdict) -> dict[str, Any]:
    a, b, open_ends = asserted_interval(v.claim)

    def s(q: Fraction | None) -> str | None:
        return None if q is None else f"{q.numerator}/{q.denominator}" if q.denominator != 1 else str(q.numerator)

    return {"lower": s(a), "upper": s(b), "open": open_ends}


def verdict_to_json(v: Verdict) -> dict[str, Any]:
    """One claim's verdict as a JSON-ready dict."""
    c = v.claim
    out: dict[str, Any] = {
        "id": c.id,
        "quantity": c.quantity,
        "model": None if c.model is None else {"label": c.model.label, "path": c.model.path},
        "relation": c.relation,
        "value": c.value.text,
        "value_exact": f"{c.value.value.numerator}/{c.value.value.denominator}",
        "digits": c.digits,
        "decimals": c.decimals,
        "tolerance": None if c.tolerance is None else str(c.tolerance),
        "rel_tolerance": None if c.rel_tolerance is None else str(c.rel_tolerance),
        "asserted_set": _asserted_json(v),
        "status": v.status,
        "reason": v.reason,
        "notes": list(v.notes),
        "enclosure": None if v.enclosure is None else ball_to_json(v.enclosure, _digits_for(v)),
        "exact_value": None if v.exact is None else (
            f"{v.exact.numerator}/{v.exact.denominator}" if v.exact.denominator != 1 else str(v.exact.numerator)),
        "certain_digits": None if not v.certain else {
            "digits": v.certain[0], "value": format_significant(v.certain[1], v.certain[0]) if v.certain[0] else "0"},
        "precision_bits": v.bits,
        "certificate_mode": v.mode,
        "seconds": round(v.seconds, 4),
        "source": c.source,
    }
    return out


def summary_counts(verdicts: list[Verdict]) -> dict[str, int]:
    counts = {s: 0 for s in STATUSES}
    for v in verdicts:
        counts[v.status] += 1
    return counts


def exit_code(verdicts: list[Verdict]) -> int:
    """2 if any claim could not be evaluated (an input error), else 1 if any is refuted, else 0."""
    counts = summary_counts(verdicts)
    return 2 if counts["error"] else 1 if counts["refuted"] else 0


def report_json(cf: ClaimsFile, verdicts: list[Verdict], settings: dict[str, Any]) -> dict[str, Any]:
    """The whole audit as a JSON-ready dict."""
    return {
        "certbound_version": __version__,
        "claims_file": cf.path,
        "settings": settings,
        "summary": summary_counts(verdicts),
        "exit_code": exit_code(verdicts),
        "semantics": ("confirmed/refuted are proven for the exact quantity of the stored weights (enclosure ⊂ "
                      "claimed set / enclosure disjoint from it); '=' means the quantity rounds to the value at "
                      "the stated digits; enclosure ends are rounded outward"),
        "claims": [verdict_to_json(v) for v in verdicts],
    }


def _wrap(text: str, width: int) -> list[str]:
    return textwrap.wrap(text, width) or [""]


def report_table(verdicts: list[Verdict]) -> str:
    """A readable plain-text report: one block per claim plus a summary line."""
    lines = []
    for v in verdicts:
        c = v.claim
        lines.append(f"{v.status.upper():<10} {c.id}: {c.describe()}")
        if c.model is not None:
            lines.append(f"{'':11}model: {c.model.label}")
        lines.append(f"{'':11}certified: {enclosure_text(v)}   certain: {_certain_text(v)}"
                     + (f"   ({v.bits} bits, {v.mode})" if v.bits else ""))
        for part in _wrap(("why: " if v.status != "error" else "error: ") + v.reason, 90):
            lines.append(f"{'':11}{part}")
        for note in v.notes:
            for part in _wrap("note: " + note, 90):
                lines.append(f"{'':11}{part}")
    counts = summary_counts(verdicts)
    lines.append("")
    lines.append(", ".join(f"{n} {s}" for s, n in counts.items()) + f" (of {len(verdicts)} claims)")
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def report_markdown(cf: ClaimsFile, verdicts: list[Verdict]) -> str:
    """A Markdown section for a referee report."""
    counts = summary_counts(verdicts)
    out = [
        "## Audit of numerical claims (certbound)",
        "",
        f"Claims file: `{cf.path}`. " + ", ".join(f"**{n}** {s}" for s, n in counts.items()) + ".",
        "",
        "Every *confirmed* or *refuted* verdict is a proof: the quantity's certified enclosure (interval "
        "arithmetic, ends rounded outward) lies inside, respectively outside, the set of values the claim "
        "asserts. \"=\" means the quantity rounds to the stated value at the stated digits.",
        "",
        "| id | claim | certified enclosure | certain digits | verdict | why |",
        "|---|---|---|---|---|---|",
    ]
    for v in verdicts:
        c = v.claim
        claim_text = f"`{_md(c.describe())}`" + (f" ({_md(c.source)})" if c.source else "")
        why = v.reason + ("" if not v.notes else " — " + " ".join(v.notes))
        out.append(f"| {_md(c.id)} | {claim_text} | {enclosure_text(v)} | {_md(_certain_text(v))} | "
                   f"**{v.status}** | {_md(why)} |")
    return "\n".join(out) + "\n"
