"""``certbound proxies MODEL``: the reference paper's Section-6 proxies, certified.

Prints B_ours and B_Edelman (paper and corrected variants), the chosen
Schatten index p* per matrix, α per layer, and how much the variants differ.
Every printed number is an outward-rounded bound from an Arb ball.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any, Sequence

from certbound.ball import decimal_lower, decimal_upper
from certbound.bounds.proxies import (
    VARIANTS,
    ProxyResult,
    variant_ratios,
)
from certbound._commands._options import (
    MAPPING_HELP,
    MODEL_HELP,
    STDOUT,
    add_spectrum_mode_option,
    parse_layers,
    write_outputs,
)
from certbound.pipeline import ProxiesReport, open_model
from certbound.report.latex import Raw, latex_escape, latex_fragment, latex_table, latex_upper
from certbound.report.table import format_table
from certbound.report.writers import csv_text, json_text

NAME = "proxies"
HELP = "certified B_ours / B_Edelman proxies of the reference paper's Section 6 (paper and corrected variants)"

__all__ = [
    "NAME",
    "HELP",
    "add_arguments",
    "run",
    "summary_rows",
    "SUMMARY_HEADER",
    "summary_latex",
    "matrices_csv_rows",
    "MATRICES_CSV_HEADER",
    "proxies_json",
]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``certbound proxies``'s arguments to its parser.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser (made by :func:`certbound.cli.build_parser`).
    """
    parser.add_argument("model", help=MODEL_HELP)
    parser.add_argument(
        "--variant",
        choices=(*VARIANTS, "both"),
        default="both",
        help="paper: the authors' formulas (L_phi = 1.13, absent from gamma); corrected: "
        "L_phi (exact GELU constant) also in gamma; both (default): print both and their ratio",
    )
    add_spectrum_mode_option(parser, deprecated_alias="--mode")
    parser.add_argument("--layers", default=None, metavar="L,L,...",
                        help="only these layers, 0-based as everywhere; the proxies need a prefix 0..K-1 "
                             "(e.g. 0-2: a depth-3 sub-model, labelled as such)")
    parser.add_argument("--mapping", default=None, metavar="FILE", help=MAPPING_HELP)
    parser.add_argument("--json", dest="json_path", default=None, metavar="FILE", help="write the JSON report ('-' for stdout)")
    parser.add_argument("--csv", dest="csv_path", default=None, metavar="FILE", help="write per-matrix CSV ('-' for stdout)")
    parser.add_argument("--latex", dest="latex_path", default=None, metavar="FILE",
                        help="write a booktabs LaTeX summary table ('-' for stdout)")
    parser.add_argument("--digits", type=int, default=6,
                        help="significant digits of the printed and LaTeX numbers (upper bounds rounded up; default 6)")
    parser.add_argument("--no-grid", action="store_true", help="omit the per-p contribution balls from the JSON")
    parser.add_argument("--per-matrix", action="store_true", help="print every matrix, not only the summary")


SUMMARY_HEADER = ["model", "kind", "L", "N", "H", "variant", "B_ours (upper)", "B_Edelman (upper)",
                  "p*=0", "matrices"]


def summary_rows(name: str, kind: str, results: Sequence[ProxyResult], digits: int = 6) -> list[list[Any]]:
    """Plain-text rows (upper bounds rounded up) for :data:`SUMMARY_HEADER`.

    Parameters
    ----------
    name : str
        The model's name.
    kind : str
        ``"trained"`` or the prefix description.
    results : sequence of ProxyResult
        One result per variant.
    digits : int
        Significant digits.

    Returns
    -------
    list of list
        One row per result.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from certbound.ball import upper_fraction
    >>> from certbound.bounds.proxies import paper_proxies, random_init_quantities
    >>> res = paper_proxies(random_init_quantities(1, 8, num_heads=2, d_ff=16))  # 1 layer, 2 heads
    >>> row = summary_rows("init", "random-init", [res], digits=3)[0]
    >>> row[:6], row[-1]
    (['init', 'random-init', 1, 8, 2, 'paper'], 6)
    >>> Fraction(row[6]) >= upper_fraction(res.B_ours)  # the upper end, rounded up
    True
    """
    rows = []
    for r in results:
        counts = r.p_star_counts()
        rows.append([name, kind, r.num_layers, r.width, r.num_heads, r.variant,
                     decimal_upper(r.B_ours, digits), decimal_upper(r.B_edelman, digits),
                     counts.get("0", 0), len(r.matrices)])
    return rows


def summary_latex(entries: Sequence[tuple[str, str, ProxyResult]], digits: int = 4, caption: str | None = None,
                  label: str | None = None) -> str:
    """Booktabs table: one row per (model, kind, result); bounds rounded up.

    Parameters
    ----------
    entries : sequence of (str, str, ProxyResult)
        ``(model name, kind, result)`` per row.
    digits : int
        Significant digits.
    caption, label : str, optional
        The table's caption and LaTeX label.

    Returns
    -------
    str
        The LaTeX table.

    Examples
    --------
    >>> from certbound.bounds.proxies import paper_proxies, random_init_quantities
    >>> res = paper_proxies(random_init_quantities(1, 8, num_heads=2, d_ff=16))  # 1 layer, 2 heads
    >>> tex = summary_latex([("init", "random-init", res)], caption="Proxies", label="tab:p")
    >>> print(tex.splitlines()[0])
    \\begin{table}[htbp]
    >>> "\\\\label{tab:p}" in tex, "random-init" in tex
    (True, True)
    """
    rows = []
    for name, kind, r in entries:
        rows.append([Raw(latex_escape(name)), Raw(latex_escape(kind)), r.num_layers, r.width, r.num_heads,
                     Raw(latex_escape(r.variant)), latex_upper(r.B_ours, digits), latex_upper(r.B_edelman, digits),
                     r.p_star_counts().get("0", 0), len(r.matrices)])
    header = ["model", "kind", Raw("$L$"), Raw("$N$"), Raw("$H$"), "variant", Raw("$B_{\\mathrm{ours}}\\le$"),
              Raw("$B_{\\mathrm{Edelman}}\\le$"), Raw("$p^\\star=0$"), "matrices"]
    notes = (f"Certified upper bounds, rounded up to {digits} significant digits, of the proxies of the "
             "reference paper's Section~6 (not generalization bounds). paper: $L_\\varphi=1.13$ in "
             "$\\alpha$ only; corrected: exact GELU constant $1.12890\\ldots$ also in $\\gamma$.")
    return latex_table(rows, header, caption=caption, label=label, notes=notes)


MATRICES_CSV_HEADER = ["model", "variant", "layer", "head", "type", "rows", "cols", "p_star", "p_star_index",
                       "contribution_lower", "contribution_upper", "spectral_lower", "spectral_upper",
                       "norm21_lower", "norm21_upper", "K_lower", "K_upper"]


def matrices_csv_rows(name: str, r: ProxyResult, digits: int = 17) -> list[list[Any]]:
    """Per-matrix CSV rows (lower ends rounded down, upper ends up).

    Parameters
    ----------
    name : str
        The model's name.
    r : ProxyResult
        One variant's result.
    digits : int
        Significant digits.

    Returns
    -------
    list of list
        One row per matrix.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from certbound.bounds.proxies import paper_proxies, random_init_quantities
    >>> res = paper_proxies(random_init_quantities(1, 8, num_heads=2, d_ff=16))  # 1 layer, 2 heads
    >>> rows = matrices_csv_rows("init", res)
    >>> sorted(r[4] for r in rows), {r[2] for r in rows}
    (['M_in', 'M_out', 'QK', 'QK', 'VO', 'VO'], {0})
    >>> all(Fraction(r[i]) <= Fraction(r[i + 1]) for r in rows for i in (9, 11, 13, 15))  # lower <= upper
    True
    """
    rows = []
    for m in r.matrices:
        rows.append([name, r.variant, m.layer, m.head, m.type, m.shape[0], m.shape[1], str(m.p_star),
                     m.p_star_index,
                     decimal_lower(m.contribution, digits), decimal_upper(m.contribution, digits),
                     decimal_lower(m.spectral, digits), decimal_upper(m.spectral, digits),
                     decimal_lower(m.norm_21, digits), decimal_upper(m.norm_21, digits),
                     decimal_lower(m.K, digits), decimal_upper(m.K, digits)])
    return rows


def proxies_json(info: dict[str, Any], results: Sequence[ProxyResult], *, full_grid: bool = True,
                 digits: int = 17) -> dict[str, Any]:
    """The JSON report: the issue's form for one variant; both variants plus ratios otherwise.

    Parameters
    ----------
    info : dict
        The model's description (architecture, sizes, layers used).
    results : sequence of ProxyResult
        One result per variant.
    full_grid : bool
        Include each matrix's c(p) at every grid point (``"c"``).
    digits : int
        Significant digits of the decimal ends.

    Returns
    -------
    dict
        The ``certbound proxies --json`` document.

    Examples
    --------
    >>> from certbound.bounds.proxies import paper_proxies, random_init_quantities
    >>> res = paper_proxies(random_init_quantities(1, 8, num_heads=2, d_ff=16))  # 1 layer, 2 heads
    >>> doc = proxies_json({"architecture": "bert"}, [res], full_grid=False)
    >>> doc["variant"], doc["model"], len(doc["matrices"])
    ('paper', {'architecture': 'bert'}, 6)
    """
    return ProxiesReport(info, {r.variant: r for r in results}).to_json(full_grid=full_grid, digits=digits)


def _print_report(name: str, info: dict[str, Any], results: Sequence[ProxyResult], digits: int,
                  per_matrix: bool, seconds: float) -> None:
    kind = "trained" if info.get("used_layers") == info.get("num_layers") else (
        f"prefix: layers 0..{info.get('used_layers') - 1} of {info.get('num_layers')}, 0-based")
    print(f"model: {name} ({info.get('architecture')}, L={info.get('used_layers')}, N={info.get('hidden_size')}, "
          f"heads={info.get('num_heads')}, d_ff={info.get('intermediate_size')}) [{kind}]")
    print(f"grid P_m: m = {results[0].m} ({2 * results[0].m + 1} points); certified in {seconds:.1f} s")
    print()
    rows = [[r.variant, decimal_lower(r.B_ours, digits), decimal_upper(r.B_ours, digits),
             decimal_lower(r.B_edelman, digits), decimal_upper(r.B_edelman, digits),
             ", ".join(f"{k}:{v}" for k, v in r.p_star_counts().items())] for r in results]
    print(format_table(rows, ["variant", "B_ours >=", "B_ours <=", "B_Edelman >=", "B_Edelman <=", "p* counts"]))
    print()
    r0 = results[0]
    rows = [[lp.layer, decimal_upper(lp.alpha, digits), decimal_upper(lp.lipschitz, digits),
             decimal_upper(lp.xi, digits)] for lp in r0.layers]
    print(f"per layer ({r0.variant} variant; upper bounds):")
    print(format_table(rows, ["layer", "alpha", "layer Lipschitz", "xi (Edelman)"]))
    if len(results) == 2:
        by = {r.variant: r for r in results}
        ratios = variant_ratios(by["corrected"], by["paper"])
        print()
        print("corrected / paper (certified ratio intervals):")
        for k, v in ratios.items():
            print(f"  {k}: [{decimal_lower(v, digits)}, {decimal_upper(v, digits)}]")
        print("  (the corrected variant puts L_phi = 1.12890... into gamma, as a derivation does; at p* = 0 a "
              "contribution is sqrt(rank * N) and does not depend on gamma)")
    if per_matrix:
        for r in results:
            print()
            print(f"per matrix ({r.variant}):")
            rows = [[m.layer, m.head, m.type, str(m.p_star), decimal_upper(m.contribution, digits),
                     decimal_upper(m.spectral, digits), decimal_upper(m.norm_21, digits)] for m in r.matrices]
            print(format_table(rows, ["layer", "head", "type", "p*", "min_p c(p) <=", "C2 <=", "||.||_21 <="]))
    print()
    print("Proxies of leading factors (not generalization bounds); biases, LayerNorm, embeddings and the "
          "1/sqrt(d_h) logit scale are ignored as in the authors' code.")


def run(args: argparse.Namespace) -> int:
    """Run ``certbound proxies`` on parsed arguments.

    Parameters
    ----------
    args : argparse.Namespace
        The arguments :func:`add_arguments` defines.

    Returns
    -------
    int
        The exit status: 0 on success.

    Raises
    ------
    ValueError, OSError
        For bad options or files; :func:`certbound.cli.main` prints them as
        ``certbound: error: …`` (exit status 2).
    """
    if args.digits < 1:
        raise ValueError("--digits must be >= 1")
    t0 = time.perf_counter()
    # The prefix rule (0..K-1) and its message are the library's (`layers`, spelled --layers by the CLI).
    report = open_model(args.model, mapping=args.mapping).proxies(args.variant, spectrum_mode=args.spectrum_mode,
                                                                  layers=parse_layers(args.layers), progress=True)
    info, results = report.info, list(report.results.values())
    seconds = time.perf_counter() - t0
    name = os.path.basename(os.path.normpath(os.fspath(args.model)))
    # Produce every output text before touching any file, then write all or none.
    outputs: list[tuple[str, str]] = []
    if args.json_path:
        outputs.append((args.json_path, json_text(report.to_json(full_grid=not args.no_grid))))
    if args.csv_path:
        rows = [row for r in results for row in matrices_csv_rows(name, r)]
        outputs.append((args.csv_path, csv_text(rows, MATRICES_CSV_HEADER)))
    if args.latex_path:
        kind = "trained" if info["used_layers"] == info["num_layers"] else f"prefix 0..{info['used_layers'] - 1}"
        table = summary_latex([(name, kind, r) for r in results], digits=args.digits,
                              caption=f"Certified proxies of {latex_escape(name)}", label="tab:proxies")
        outputs.append((args.latex_path, latex_fragment(table, "certbound proxies")))
    if not any(p == STDOUT for p, _ in outputs):
        _print_report(name, info, results, args.digits, args.per_matrix, seconds)
    write_outputs(outputs)  # all files or none; '-': stdout
    return 0

