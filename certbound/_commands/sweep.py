"""``certbound sweep MODEL… --out DIR``: the paper's Section-6 scaling experiment.

Runs the certified proxies over several checkpoints (``trained``), their
prefix-depth sub-models (``prefix``) and, as a control, the 6×4 grid of
BERT-Miniature shapes with untrained random weights (``random-init``), then
writes scaling tables (JSON, CSV, LaTeX), the figures (PDF + PNG) and a
``captions.md`` saying what was run, plus an automatic check of the paper's
qualitative claims on these data.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import sys
import tempfile
import time
from typing import Any, Sequence

from certbound._commands._options import MODEL_HELP, add_spectrum_mode_option, make_output_directory
from certbound._commands.proxies import summary_latex
from certbound.ball import ball_to_json, decimal_lower, decimal_upper, float_upper
from certbound.bounds.proxies import VARIANTS, paper_proxies
from certbound.pipeline import MINIATURE_L, MINIATURE_N, resolve_model, run_sweep
from certbound.report import figures as F
from certbound.report.latex import latex_fragment
from certbound.report.table import format_table
from certbound.report.writers import csv_text, json_text, write_all

NAME = "sweep"
HELP = "proxies over several checkpoints + random-init Miniature grid: scaling tables and the paper's figures"

__all__ = ["NAME", "HELP", "add_arguments", "run", "run_sweep", "claims_check", "MINIATURE_L", "MINIATURE_N"]

def _int_list(text: str) -> list[int]:
    try:
        out = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not out or any(v < 1 for v in out):
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``certbound sweep``'s arguments to its parser.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser (made by :func:`certbound.cli.build_parser`).
    """
    parser.add_argument("models", nargs="*", metavar="MODEL", help="trained models, each as for `spectrum`: " + MODEL_HELP)
    parser.add_argument("--out", required=True, metavar="DIR", help="output directory, created if missing (its parent must exist)")
    parser.add_argument("--no-random-grid", action="store_true", help="skip the untrained random-init control")
    parser.add_argument("--grid-L", type=_int_list, default=list(MINIATURE_L), metavar="L,L,...",
                        help="depths of the control grid (default " + ",".join(map(str, MINIATURE_L)) + ")")
    parser.add_argument("--grid-N", type=_int_list, default=list(MINIATURE_N), metavar="N,N,...",
                        help="widths of the control grid (default " + ",".join(map(str, MINIATURE_N)) + ")")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random-init control (default 0)")
    parser.add_argument("--no-prefix", action="store_true", help="skip prefix-depth curves of the trained models")
    add_spectrum_mode_option(parser, deprecated_alias="--mode")
    parser.add_argument("--digits", type=int, default=4,
                        help="significant digits in the LaTeX/printed tables (default 4)")
    parser.add_argument("--no-figures", action="store_true", help="tables only (no matplotlib needed)")
    parser.add_argument("--plot-variant", choices=VARIANTS, default="paper",
                        help="variant shown in figures (default paper)")


def _run_entry(run: Any) -> dict[str, Any]:
    return {
        "name": run.name,
        "kind": run.kind,
        "note": run.note,
        "L": run.num_layers,
        "N": run.width,
        "heads": next(iter(run.results.values())).num_heads,
        "variants": {
            v: {
                "B_ours": ball_to_json(r.B_ours),
                "B_edelman": ball_to_json(r.B_edelman),
                "m": r.m,
                "p_star_counts": r.p_star_counts(),
                "alpha": [ball_to_json(lp.alpha) for lp in r.layers],
            }
            for v, r in run.results.items()
        },
    }


def _growth(runs: Sequence[Any], proxy: str, variant: str, key: str, kind: str) -> list[tuple[str, float, float]]:
    """(series, growth factor from the smallest to the largest key) per series."""
    groups: dict[str, list[Any]] = {}
    for r in runs:
        if r.kind != kind:
            continue
        series = (f"L={r.num_layers}" if key == "N" else (r.note if kind == "prefix" else f"N={r.width}"))
        groups.setdefault(series, []).append(r)
    out = []
    def order(item: tuple[str, list[Any]]) -> tuple[int, str]:
        head = item[0].split("=")[-1]
        return (int(head), item[0]) if head.isdigit() else (10**9, item[0])

    for series, members in sorted(groups.items(), key=order):
        xs = {(m.width if key == "N" else m.num_layers): m for m in members}
        if len(xs) < 2:
            continue
        lo, hi = xs[min(xs)], xs[max(xs)]
        out.append((series, float_upper(getattr(hi.results[variant], proxy)) /
                    float_upper(getattr(lo.results[variant], proxy)), max(xs) / min(xs)))
    return out


def claims_check(runs: Sequence[Any], variant: str = "paper") -> list[str]:
    """Plain statements on whether the paper's qualitative claims hold on these data.

    Growth factors are ratios of certified upper ends (floats, for reading);
    the claims are the paper's: B_ours grows more slowly than B_Edelman in L
    and in N, sub-linearly in N, and p* = 0 for most matrices.

    Parameters
    ----------
    runs : sequence of ModelRun
        The sweep's runs (:func:`certbound.pipeline.run_sweep`).
    variant : str
        The proxy variant compared (``"paper"`` or ``"corrected"``).

    Returns
    -------
    list of str
        One statement per claim, each saying "holds" or "FAILS".

    Examples
    --------
    >>> from certbound.pipeline import run_sweep
    >>> runs = run_sweep([], grid_L=(1, 2), grid_N=(8, 16))  # the random-init control only
    >>> lines = claims_check(runs)
    >>> all(("holds" in line) != ("FAILS" in line) for line in lines if not line.startswith("note"))
    True
    >>> r = {x.name: x for x in runs}  # growth in L at N = 8, from the runs' certified upper ends
    >>> g_ours = r["random L=2 N=8"].upper("B_ours") / r["random L=1 N=8"].upper("B_ours")
    >>> g_edelman = r["random L=2 N=8"].upper("B_edelman") / r["random L=1 N=8"].upper("B_edelman")
    >>> first = lines[0]
    >>> first.startswith("[random-init] growth in L (N=8)"), f"B_ours x{g_ours:.3g}" in first
    (True, True)
    >>> first.endswith("holds") == (g_ours < g_edelman)
    True
    """
    lines = []
    for key, kinds in (("L", ("random-init", "prefix")), ("N", ("random-init",))):
        for kind in kinds:
            go = dict((s, g) for s, g, _ in _growth(runs, "B_ours", variant, key, kind))
            ge = dict((s, g) for s, g, _ in _growth(runs, "B_edelman", variant, key, kind))
            for s in go:
                verdict = "holds" if go[s] < ge[s] else "FAILS"
                lines.append(f"[{kind}] growth in {key} ({s}): B_ours x{go[s]:.3g} vs B_Edelman x{ge[s]:.3g} "
                             f"-> slower growth of B_ours {verdict}")
    # "B_ours grows sub-linearly with N": effective exponent of the growth over the N range.
    for s_, g, ratio in _growth(runs, "B_ours", variant, "N", "random-init"):
        e = math.log(g) / math.log(ratio)
        lines.append(f"[random-init] B_ours ~ N^{e:.2f} over the N range ({s_}) -> 'sub-linear growth in N' "
                     f"{'holds' if e < 1 else 'FAILS'}")
    total = sum(len(r.results[variant].matrices) for r in runs if r.kind != "prefix")
    for kind in ("trained", "random-init"):
        t = sum(len(r.results[variant].matrices) for r in runs if r.kind == kind)
        z = sum(r.results[variant].p_star_counts().get("0", 0) for r in runs if r.kind == kind)
        if t:
            lines.append(f"[{kind}] p* = 0 for {z} of {t} matrices ({100 * z / t:.1f}%) -> "
                         f"'p* = 0 for most matrices' {'holds' if 2 * z > t else 'FAILS'}")
    if total:
        lines.append("note: at p* = 0 a contribution is sqrt(rank * N) - it depends on the weights only through "
                     "the certified rank, so B_ours is then an architecture count (rank, N, L), not a "
                     "weight-dependent quantity.")
    return lines


def run(args: argparse.Namespace) -> int:
    """Run ``certbound sweep`` on parsed arguments.

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
    if not args.models and args.no_random_grid:
        raise ValueError("nothing to run: give MODEL paths/names or drop --no-random-grid")
    if not args.no_figures:
        F.import_pyplot()  # fail early (before the long run) if matplotlib is missing
    for spec in args.models:
        resolve_model(spec)  # a typo in the last model fails now, not after the others are certified
    created = not os.path.exists(args.out)
    make_output_directory(args.out)
    try:
        return _run(args)
    except BaseException:
        if created and not os.listdir(args.out):
            os.rmdir(args.out)  # a failed run leaves no empty directory it made
        raise


def _run(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    print("certifying:", file=sys.stderr, flush=True)
    runs = run_sweep(args.models, random_grid=not args.no_random_grid, grid_L=args.grid_L, grid_N=args.grid_N,
                     seed=args.seed, prefix=not args.no_prefix, spectrum_mode=args.spectrum_mode, log=sys.stderr,
                     progress=True)
    seconds = time.perf_counter() - t0
    # What was run, for captions: the command and its settings (the wall time goes to stdout and JSON only).
    grid = "" if args.no_random_grid else (f" + random-init grid L in {{{', '.join(map(str, args.grid_L))}}}, "
                                           f"N in {{{', '.join(map(str, args.grid_N))}}}, seed {args.seed}")
    what = f"Run: certbound sweep {' '.join(args.models)}{grid}; certificate mode {args.spectrum_mode}."

    rows, csv_rows, tex_entries = [], [], []
    for r in runs:
        for v, res in r.results.items():
            counts = res.p_star_counts()
            rows.append([r.name, r.kind, res.num_layers, res.width, res.num_heads, v,
                         decimal_upper(res.B_ours, args.digits), decimal_upper(res.B_edelman, args.digits),
                         f"{counts.get('0', 0)}/{len(res.matrices)}"])
            csv_rows.append([r.name, r.kind, r.note, res.num_layers, res.width, res.num_heads, v, res.m,
                             decimal_lower(res.B_ours, 17), decimal_upper(res.B_ours, 17),
                             decimal_lower(res.B_edelman, 17), decimal_upper(res.B_edelman, 17),
                             counts.get("0", 0), len(res.matrices)])
            tex_entries.append((r.name, r.kind, res))
    claims = claims_check(runs, args.plot_variant)

    figures: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    # The figures are drawn into a hidden staging directory inside --out and moved into place only after the
    # tables are written: a run that fails while drawing leaves the previous figures and tables together.
    stage = tempfile.mkdtemp(prefix=".sweep-figures.", dir=args.out)
    try:
        if not args.no_figures:
            trained = [r for r in runs if r.kind == "trained"]
            made = {
                "proxies_vs_N": (F.plot_proxies_vs_width(runs, stage, variant=args.plot_variant, what_was_run=what),
                                 "no model family has two widths at one depth (add the random-init grid)"),
                "proxies_vs_L": (F.plot_proxies_vs_depth(runs, stage, variant=args.plot_variant, what_was_run=what),
                                 "no model family has two depths at one width"),
                "norms_vs_N": (F.plot_norms_vs_width(runs, stage, what_was_run=what), "no per-matrix quantities"),
            }
            focus = max(trained, key=lambda r: (r.num_layers * r.width)) if trained else max(
                (r for r in runs if r.kind == "random-init"), key=lambda r: (r.width, r.num_layers))
            made["singular_values"] = (F.plot_singular_value_decay(focus, stage, layers=(0, 1), what_was_run=what),
                                       "no singular values")
            if focus.kind != "trained":  # the c(p) figure shows every grid point exactly
                focus = F.ModelRun(focus.name, focus.kind, {args.plot_variant: paper_proxies(
                    focus.quantities, args.plot_variant)}, focus.quantities, note=focus.note)
            made["contribution_curves"] = (F.plot_contribution_curves(focus, stage, variant=args.plot_variant,
                                                                      what_was_run=what), "")
            for key, (fig, why) in made.items():
                if fig is None:
                    skipped[key] = why
                else:
                    figures[key] = fig

        header = ["model", "kind", "note", "L", "N", "heads", "variant", "m", "B_ours_lower", "B_ours_upper",
                  "B_edelman_lower", "B_edelman_upper", "p_star_zero", "matrices"]
        doc = {
            "what_was_run": what,
            "note": ("Certified enclosures of the reference paper's Section-6 proxies (not generalization bounds). "
                     "Trained checkpoints come from different training recipes; prefix runs are layers 0..k-1 of one "
                     "trained model; random-init runs are untrained controls."),
            "claims": claims,
            "models": [_run_entry(r) for r in runs],
            "figures": {k: {"pdf": os.path.basename(v["pdf"]), "png": os.path.basename(v["png"]),
                            "caption": v["caption"]} for k, v in figures.items()},
            "figures_skipped": skipped,
            "seconds": seconds,
        }
        tex = latex_fragment(summary_latex(tex_entries, digits=args.digits, caption="Certified proxies: sweep",
                                           label="tab:sweep"), "certbound sweep")
        captions = "# Figures\n\n" + "".join(f"## {k}\n\n{v['caption']}\n\n" for k, v in figures.items())
        captions += "# Claims check\n\n" + "".join(f"- {c}\n" for c in claims)
        write_all([(os.path.join(args.out, "sweep.json"), json_text(doc)),
                   (os.path.join(args.out, "sweep.csv"), csv_text(csv_rows, header)),
                   (os.path.join(args.out, "sweep.tex"), tex),
                   (os.path.join(args.out, "captions.md"), captions)])
        for fig in figures.values():
            for ext in ("pdf", "png"):
                final = os.path.join(args.out, os.path.basename(fig[ext]))
                os.replace(fig[ext], final)  # same directory tree: a rename
                fig[ext] = final

        print(format_table(rows, ["model", "kind", "L", "N", "H", "variant", "B_ours <=", "B_Edelman <=", "p*=0"]))
        print()
        print("Paper's qualitative claims on these data:")
        for c in claims:
            print("  " + c)
        print()
        print(f"{what} {seconds:.0f} s.")
        for key, why in skipped.items():
            print(f"figure {key} not drawn: {why}")
        print(f"wrote {args.out}/sweep.json, sweep.csv, sweep.tex, captions.md"
              + ("" if args.no_figures or not figures else f" and {len(figures)} figures (PDF + PNG)"))
        return 0
    finally:
        shutil.rmtree(stage, ignore_errors=True)
