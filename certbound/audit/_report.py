"""``certbound.audit(claims)``: audit a claims file from Python, with a typed report.

The same computation as ``certbound audit CLAIMS``: load and check the
claims, decide each with certified enclosures (escalating precision and
certificate mode up to ``max_prec`` / ``max_mode``), and return an
:class:`AuditReport` whose ``to_json()`` / ``to_markdown()`` / ``table()`` are
the CLI's outputs and ``exit_code`` its exit status.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from certbound._errors import OptionError
from certbound._optional import import_optional
from certbound.audit._claims import ClaimsFile, load_claims, parse_claims
from certbound.audit._render import exit_code, report_json, report_markdown, report_table, summary_counts
from certbound.audit._verdict import ESCALATION_MODES, Verdict, audit_claims

__all__ = ["AuditReport", "audit_file"]


@dataclass(frozen=True, eq=False)
class AuditReport:
    """Verdicts on every claim of a claims file.

    Attributes
    ----------
    claims_file : ClaimsFile
        The parsed claims (with their models, closed after the audit).
    verdicts : list of Verdict
        One per claim: ``status`` confirmed / refuted / undecided / error,
        the certified ``enclosure`` and the ``reason``.
    settings : dict
        ``{"max_prec": bits, "max_mode": mode}``.
    """

    claims_file: ClaimsFile
    verdicts: list[Verdict]
    settings: dict[str, Any]

    @property
    def counts(self) -> dict[str, int]:
        """How many claims have each status."""
        return summary_counts(self.verdicts)

    @property
    def exit_code(self) -> int:
        """The CLI's exit status: 2 if a claim could not be evaluated, else 1 if one is refuted, else 0."""
        return exit_code(self.verdicts)

    def to_json(self) -> dict[str, Any]:
        """The ``certbound audit --json`` document."""
        return report_json(self.claims_file, self.verdicts, self.settings)

    def to_markdown(self) -> str:
        """The Markdown referee report of ``certbound audit --markdown``."""
        return report_markdown(self.claims_file, self.verdicts)

    def table(self) -> str:
        """The plain-text table ``certbound audit`` prints."""
        return report_table(self.verdicts)

    def to_frame(self) -> Any:
        """A pandas DataFrame, one row per claim (id, quantity, relation, value, status, reason)."""
        pd = import_optional("pandas", "frame", "DataFrames (to_frame())")
        return pd.DataFrame([{"id": v.claim.id, "quantity": v.claim.quantity, "relation": v.claim.relation,
                              "value": v.claim.value.text, "status": v.status, "reason": v.reason,
                              "precision_bits": v.bits, "certificate_mode": v.mode} for v in self.verdicts])


def audit_file(claims: str | os.PathLike[str] | ClaimsFile, *, max_prec: int = 1024,
               max_mode: str = "tight") -> AuditReport:
    """Audit a claims file (a path, TOML text containing a newline, or a parsed :class:`ClaimsFile`).

    ``certbound.audit(...)`` is this function. Raises ``ClaimsFileError`` for
    a bad claims file and ``ValueError`` for bad settings; claims that cannot
    be evaluated get status ``"error"`` (the report's ``exit_code`` is then 2).

    >>> import certbound
    >>> rep = certbound.audit('[[claim]]\\nid = "e"\\nquantity = "exp(1)"\\nrelation = ">"\\nvalue = "2.718"\\n')
    >>> [v.status for v in rep.verdicts], rep.exit_code
    (['confirmed'], 0)
    """
    if isinstance(max_prec, bool) or not isinstance(max_prec, int) or max_prec < 128:
        raise OptionError(f"`max_prec` must be at least 128, got {max_prec}")
    if max_mode not in ESCALATION_MODES:
        raise OptionError(f"`max_mode` must be one of {', '.join(ESCALATION_MODES)} (the escalation ladder), "
                         f"not {max_mode!r}")
    if isinstance(claims, ClaimsFile):
        cf = claims
    elif isinstance(claims, str) and "\n" in claims:
        cf = parse_claims(claims)
    else:
        cf = load_claims(claims)
    try:
        verdicts = audit_claims(cf, max_prec=max_prec, max_mode=max_mode)
    finally:
        cf.close()
    return AuditReport(cf, verdicts, {"max_prec": max_prec, "max_mode": max_mode})
