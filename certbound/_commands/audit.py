"""``certbound audit CLAIMS``: certified verdicts on numerical claims.

Exit code 0 if no claim is refuted, 1 if one is, 2 on input errors (a bad
claims file, a missing model, or a claim that cannot be evaluated).
"""

from __future__ import annotations

import argparse
import json
import sys

from certbound.audit import FUNCTIONS, audit_file, load_claims
from certbound.audit._verdict import ESCALATION_MODES
from certbound.report.writers import write_all

__all__ = ["NAME", "HELP", "add_arguments", "run"]

NAME = "audit"
HELP = "check numerical claims (TOML claims file) with certified verdicts: confirmed / refuted / undecided"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``certbound audit``'s arguments to its parser.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser (made by :func:`certbound.cli.build_parser`).
    """
    parser.add_argument("claims", metavar="CLAIMS", nargs="?",
                        help="claims file (TOML; see `certbound audit --functions`)")
    parser.add_argument("--json", metavar="FILE", help="write the full report as JSON ('-' for stdout)")
    parser.add_argument("--markdown", metavar="FILE", help="write a Markdown referee report ('-' for stdout)")
    parser.add_argument("--max-prec", type=int, default=1024, metavar="BITS",
                        help="highest Arb working precision tried for undecided claims (default 1024)")
    parser.add_argument("--max-mode", choices=ESCALATION_MODES, default="tight",
                        help="last certificate mode of the escalation ladder fast -> tight -> arb (more cost for "
                             "narrower balls), tried for undecided claims as the precision doubles (default tight); "
                             "gram and auto are no rung: they buy speed, not width (cheaper than fast, but gram's "
                             "widths grow like (sigma_1/sigma_i)^2 and auto stops at a 1e-8 relative target, so "
                             "both can be wider than fast); a claim's bound(spectrum_mode=...) takes any mode")
    parser.add_argument("--quiet", action="store_true", help="do not print the table")
    parser.add_argument("--functions", action="store_true",
                        help="list the functions and quantities allowed in expressions, then exit")


def _list_functions() -> str:
    lines = ["Operators: + - * / ^ (also − × · ÷ **), parentheses; constants pi, e; names from [constants].",
             "Aggregates: sum/prod/min/max(EXPR for VAR in layers|heads|range(a, b) [for ...]).", ""]
    for kind, title in (("scalar", "Scalar functions"), ("quantity", "Model quantities (keyword arguments)"),
                        ("model", "Model sizes"), ("aggregate", "Aggregates")):
        lines.append(f"{title}:")
        for name, spec in sorted(FUNCTIONS.items()):
            if spec.kind == kind:
                lines.append(f"  {name:<22} {spec.doc}")
        lines.append("")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run ``certbound audit`` on parsed arguments.

    Parameters
    ----------
    args : argparse.Namespace
        The arguments :func:`add_arguments` defines.

    Returns
    -------
    int
        The exit status: 2 if a claim could not be evaluated (status
        ``error``), else 1 if one is refuted, else 0 (undecided claims do
        not fail the run).

    Raises
    ------
    ValueError, OSError
        For bad options or files; :func:`certbound.cli.main` prints them as
        ``certbound: error: …`` (exit status 2).
    """
    if args.functions:
        print(_list_functions())
        return 0
    if args.claims is None:
        raise ValueError("CLAIMS: a claims file is required (or --functions to list what expressions may use)")
    if args.max_prec < 128:
        raise ValueError(f"--max-prec must be at least 128, got {args.max_prec}")
    report = audit_file(load_claims(args.claims), max_prec=args.max_prec, max_mode=args.max_mode)
    texts = []
    if args.json:
        texts.append((args.json, json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n"))
    if args.markdown:
        texts.append((args.markdown, report.to_markdown()))
    write_all([(p, t) for p, t in texts if p != "-"])  # every file or none
    for p, t in texts:
        if p == "-":
            sys.stdout.write(t)
    if not args.quiet and args.json != "-" and args.markdown != "-":
        sys.stdout.write(report.table())
    code = report.exit_code
    if code == 2:
        print("certbound audit: some claims could not be evaluated (status 'error')", file=sys.stderr)
    return code
