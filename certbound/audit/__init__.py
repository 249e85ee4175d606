"""Auditing numerical claims: claims files, a safe expression language, certified verdicts.

Typical use (the ``certbound audit CLAIMS`` command does exactly this)::

    import certbound
    report = certbound.audit("claims.toml")      # an AuditReport
    print(report.table()); report.to_json(); report.exit_code

``certbound.audit`` is this package, and calling it is
:func:`audit_file` (the module is callable, so that ``certbound.audit``
stays the package its parts are imported from). Lower-level steps::

    from certbound.audit import load_claims, audit_claims, report_table
    cf = load_claims("claims.toml")
    verdicts = audit_claims(cf)
    print(report_table(verdicts))

A claim is ``quantity relation value``: the quantity an expression over
certified model quantities (``sigma(layer=3, type="M_in", i=1)``, …) and
constants, the value a decimal string read exactly. Each verdict is
*confirmed* or *refuted* only when the certified enclosure proves it;
otherwise *undecided* with the reason. Semantics: ``proofs/audit.md``.
Certified scalar functions used by bound papers (kl-inverse, binomial tail
inversion, …) are in :mod:`certbound.audit.scalars`.
"""

import sys as _sys
import types as _types

from certbound.audit._claims import RELATIONS, Claim, ClaimsFile, ClaimsFileError, load_claims, parse_claims
from certbound.audit._errors import DomainError, Indeterminate
from certbound.audit._evaluate import FUNCTIONS, EvalContext, FunctionSpec, evaluate, register_function, register_quantity
from certbound.audit._exact import ExactDecimal, certain_digits, parse_decimal, rounding_cell, rounding_cell_decimals
from certbound.audit._expr import ExpressionError, parse_expression
from certbound.audit._models import ModelHandle
from certbound.audit._render import exit_code, report_json, report_markdown, report_table, verdict_to_json
from certbound.audit._report import AuditReport, audit_file
from certbound.audit._verdict import Verdict, asserted_interval, audit_claims, decide, precision_schedule

__all__ = [
    "audit_file",
    "AuditReport",
    "load_claims",
    "parse_claims",
    "audit_claims",
    "decide",
    "asserted_interval",
    "precision_schedule",
    "Claim",
    "ClaimsFile",
    "ClaimsFileError",
    "Verdict",
    "RELATIONS",
    "ExpressionError",
    "parse_expression",
    "evaluate",
    "EvalContext",
    "FUNCTIONS",
    "FunctionSpec",
    "register_function",
    "register_quantity",
    "ModelHandle",
    "ExactDecimal",
    "parse_decimal",
    "rounding_cell",
    "rounding_cell_decimals",
    "certain_digits",
    "DomainError",
    "Indeterminate",
    "report_table",
    "report_json",
    "report_markdown",
    "verdict_to_json",
    "exit_code",
]


class _CallableAuditPackage(_types.ModuleType):
    """``certbound.audit(claims, ...)`` is :func:`audit_file`; attribute access is the package's."""

    def __call__(self, claims, *, max_prec: int = 1024, max_mode: str = "tight") -> AuditReport:
        return audit_file(claims, max_prec=max_prec, max_mode=max_mode)


_sys.modules[__name__].__class__ = _CallableAuditPackage
