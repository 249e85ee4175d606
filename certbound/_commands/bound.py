"""``certbound bound MODEL --n N --delta D``: the certified generalization-gap bound of a checkpoint.

What is certified (``proofs/theory-theorems.md``): with probability ≥ 1 − δ over
an i.i.d. sample of size n, ``|R(f) − R̂_S(f)|`` is at most the printed number
for the **Π-surrogate network** carrying the checkpoint's weights — the model
class of ``proofs/theory-lipschitz.md`` §1 (variant B: multi-head attention,
two-matrix feed-forward with the checkpoint's activation; LayerNorm replaced by
the row projection Π; biases, embeddings, pooler and (unless ``--residual``)
residual connections dropped; inputs with unit-norm token rows; a learned
readout of the first token with ``‖w‖ ≤ --readout-norm``; a loss in
``[0, --loss-bound]`` that is ``--loss-lipschitz``-Lipschitz). It is **not** a
bound for the original BERT-like network.

``--mode posthoc`` (default) is Theorem 2 (Schatten index per matrix chosen
after training on the grid P_m, radii peeled on a-priori grids);
``--mode fixed`` is Theorem 1 with a configuration given a priori in
``--constraints FILE`` (JSON list of ``{"layer", "head", "type", "p",
"schatten_radius", "spectral_radius"}``), checked against the certified
weights.
"""

from __future__ import annotations

import argparse
from fractions import Fraction
from typing import Any

from certbound._commands._options import MAPPING_HELP, MODEL_HELP, add_spectrum_mode_option, write_outputs
from certbound.ball import decimal_upper
from certbound.pipeline import BoundSettings, open_model, parse_count, parse_number
from certbound.pipeline import bound_latex as result_latex
from certbound.report.writers import json_text

__all__ = ["NAME", "HELP", "OPTION_FLAGS", "add_arguments", "run", "format_result", "result_latex",
           "settings_from_args"]

NAME = "bound"
HELP = "certified generalization-gap bound (Theorem 2 post hoc, or Theorem 1) for a checkpoint's Pi-surrogate network"

#: Library parameters (BoundSettings, certified_bound) whose flag is not ``--`` + their dest.
OPTION_FLAGS = {"logit_scale": "--no-logit-scale", "scale_logits": "spectrum --scale-logits"}


#: Said in --help, the README and the output's assumptions (issue 12 item 16).
A_PRIORI_NOTE = (
    "Fixed before seeing the data (a priori): --seq-len, --loss-bound, --loss-lipschitz, --readout-norm, "
    "--p-grid-m, --mode fixed with every value of --constraints, the peeling grids' bases and steps (built in), "
    "--loss and the --margin of a ramp loss, delta, and the network class (--residual, --fixed-readout, "
    "--no-logit-scale). Choosing the best of several runs over any of these invalidates delta (that would "
    "need a union bound over the runs). Free (may depend on the sample and the weights): "
    "--softmax-lip, --act-lip (any valid constant), --partition-ratio, --spectrum-mode."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``certbound bound``'s arguments to its parser.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser (made by :func:`certbound.cli.build_parser`).
    """
    parser.epilog = A_PRIORI_NOTE
    parser.add_argument("model", help=MODEL_HELP)
    parser.add_argument("--n", required=True, metavar="N", help="sample size n (e.g. 1e9)")
    parser.add_argument("--delta", required=True, metavar="D", help="confidence parameter δ in (0, 1)")
    parser.add_argument("--seq-len", type=int, metavar="T",
                        help="tokens per input T, a priori (default: max_position_embeddings of the config, else 512; "
                             "certbound-pi: the config's T, and no smaller value)")
    parser.add_argument("--loss-bound", metavar="B",
                        help="loss range B_L, a priori (default: the certbound-pi config's, else 1)")
    parser.add_argument("--loss-lipschitz", metavar="L",
                        help="loss Lipschitz constant L_L, a priori (default: the certbound-pi config's, else 1)")
    parser.add_argument("--loss", choices=("given", "ramp"), default="given",
                        help="given = a loss in [0, --loss-bound], --loss-lipschitz-Lipschitz (default); ramp = the "
                             "ramp loss with margin --margin (B_L = 1, L_L = 1/margin; it dominates the 0-1 loss, "
                             "so P(error) <= training ramp loss + bound)")
    parser.add_argument("--margin", metavar="G", help="ramp-loss margin γ > 0, fixed a priori (with --loss ramp)")
    parser.add_argument("--readout-norm", metavar="C",
                        help="readout norm bound C_w, a priori (default: the certbound-pi config's, else 1)")
    parser.add_argument("--fixed-readout", action="store_true", help="the readout is fixed (not learned): not covered")
    parser.add_argument("--softmax-lip", metavar="C",
                        help="softmax constant c_sm (1 proved, default; 2 reproduces the paper)")
    parser.add_argument("--act-lip", metavar="L", help="activation Lipschitz constant (default from the config's "
                                                        "hidden_act: exact GELU 1.1289..., ReLU 1)")
    parser.add_argument("--residual", action="store_true", help="Pi-form residual connections (spec §1.3)")
    parser.add_argument("--no-logit-scale", action="store_true",
                        help="drop the 1/sqrt(d_h) logit scale from QK (the authors' proxies do; the model does not)")
    parser.add_argument("--mode", choices=("posthoc", "fixed"), default="posthoc",
                        help="posthoc = Theorem 2 (default), fixed = Theorem 1 with --constraints")
    parser.add_argument("--constraints", metavar="FILE",
                        help="JSON configuration for --mode fixed; every value a priori")
    parser.add_argument("--spectra", metavar="FILE",
                        help="reuse a `certbound spectrum --json` report instead of certifying again")
    add_spectrum_mode_option(parser)  # --mode is the theorem's (posthoc/fixed)
    parser.add_argument("--partition-ratio", type=float, default=1.25, metavar="R",
                        help="ratio of the geometric Riemann partition (default 1.25)")
    parser.add_argument("--p-grid-m", type=int, metavar="M",
                        help="index grid resolution m, a priori (default ceil(L + ln N))")
    parser.add_argument("--json", metavar="FILE", help="write the certified result as JSON ('-' for stdout)")
    parser.add_argument("--latex", metavar="FILE", help="write a LaTeX table of the result ('-' for stdout)")
    parser.add_argument("--config", metavar="FILE", help="config.json to use instead of the one next to the weights")
    parser.add_argument("--mapping", metavar="FILE", help=MAPPING_HELP)
    parser.add_argument("--top", type=int, default=8, metavar="K", help="matrices listed in the summary (default 8)")
    parser.add_argument("--all-matrices", action="store_true", help="list every matrix (p, radii, contribution)")
    parser.add_argument("--quiet", action="store_true", help="print only the bound")


def settings_from_args(args: argparse.Namespace) -> BoundSettings:
    """The :class:`~certbound.pipeline.BoundSettings` of parsed ``certbound bound`` arguments.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed ``certbound bound`` arguments.

    Returns
    -------
    BoundSettings
        The same options as library keywords.

    Examples
    --------
    >>> from certbound.cli import build_parser
    >>> args = build_parser().parse_args(["bound", "MODEL", "--n", "1e6", "--delta", "0.01", "--residual",
    ...                                   "--no-logit-scale", "--spectrum-mode", "fast"])
    >>> s = settings_from_args(args)
    >>> s.residual, s.logit_scale, s.spectrum_mode, s.mode
    (True, False, 'fast', 'posthoc')
    """
    return BoundSettings(
        seq_len=args.seq_len, loss_bound=args.loss_bound, loss_lipschitz=args.loss_lipschitz,
        readout_norm=args.readout_norm, fixed_readout=args.fixed_readout, softmax_lip=args.softmax_lip,
        act_lip=args.act_lip, residual=args.residual, logit_scale=not args.no_logit_scale, mode=args.mode,
        constraints=args.constraints, spectra=args.spectra, spectrum_mode=args.spectrum_mode,
        partition_ratio=args.partition_ratio, p_grid_m=args.p_grid_m, loss=args.loss, margin=args.margin,
    )


# ---------------------------------------------------------------------------
# output


def _q(x: Any, digits: int = 6) -> str:
    return decimal_upper(x, digits)


def format_result(res: Any, *, model: str, top: int = 8, all_matrices: bool = False) -> str:
    """Readable text: the certified number, what it certifies, the terms, the dominating matrices.

    Parameters
    ----------
    res : BoundResult
        What :func:`certbound.pipeline.certified_bound` returned.
    model : str
        The model as the user named it.
    top : int
        How many dominating matrices to list.
    all_matrices : bool
        List every matrix's contribution instead.

    Returns
    -------
    str
        The report (certified numbers rounded up).
    """
    lines = []
    lines.append(f"certbound bound — {res.theorem}")
    lines.append(f"model: {model}")
    lines.append("certified: with probability >= 1 - delta over an i.i.d. sample of size n,")
    net = str(res.assumptions.get("network", ""))
    if "certbound-pi" in net:
        lines.append("  |R(f) - R_hat(f)| <= bound  for this model (it is the theorems' model class)")
    else:
        lines.append("  |R(f) - R_hat(f)| <= bound  for the Pi-surrogate network carrying these weights")
        lines.append("  (NOT the original network: LayerNorm -> Pi, biases/embeddings/pooler dropped; see assumptions)")
    lines.append(f"n = {res.n_samples}, delta = {res.delta}")
    lines.append(f"bound (upper, rounded up)      : {decimal_upper(res.bound, 6)}"
                 + ("   [vacuous: not below the loss range B_L]" if res.vacuous else ""))
    lines.append(f"  2 x Rademacher term         : {decimal_upper(2 * res.rademacher, 6)}  ({res.rademacher_method}; "
                 + ", ".join(f"{k} {decimal_upper(v, 4)}" for k, v in res.rademacher_estimates.items()) + ")")
    lines.append(f"  confidence term (incl. prior): {decimal_upper(res.confidence_term, 6)}")
    lines.append(f"  ln(1/prior)                 : {decimal_upper(res.log_inv_prior, 6)}")
    lines.append(f"  cut-off alpha = {float(res.cutoff):.4g}, partition points = {len(res.partition)}")
    s = res.summary()
    lines.append(f"dominant term: {s['dominant_term']}")
    by = s["dudley_share_by_type"]
    if any(v > 0 for v in by.values()):
        lines.append("Dudley share by matrix type: " + ", ".join(f"{k} {v:.4g}" for k, v in by.items()))
    ps: dict = {}
    for m in res.matrices:
        if m.type != "readout":
            ps.setdefault(str(m.p), 0)
            ps[str(m.p)] += 1
    lines.append("chosen p (count): " + ", ".join(f"{k}: {v}" for k, v in sorted(ps.items(), key=lambda kv: Fraction(kv[0]))))
    mats = res.matrices if all_matrices else res.dominant_matrices(top)
    if mats:  # --top 0: no matrix table
        lines.append(("all matrices" if all_matrices else f"top {len(mats)} matrices by contribution") + ":")
        lines.append(f"  {'layer':>5} {'head':>4} {'type':<7} {'p':>6} {'S_p radius':>12} {'spectral':>10} "
                     f"{'contribution':>12}")
    for m in mats:
        layer, head = ("-" if v is None else str(v) for v in (m.layer, m.head))  # the readout has neither
        lines.append(f"  {layer:>5} {head:>4} {m.type:<7} {str(m.p):>6} "
                     f"{_q(m.schatten_radius):>12} {_q(m.spectral_radius):>10} {_q(m.contribution):>12}")
    lines.append("assumptions:")
    for k, v in res.assumptions.items():
        lines.append(f"  {k}: {v}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run ``certbound bound`` on parsed arguments.

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
    if args.top < 0:
        raise ValueError(f"--top must be >= 0 (matrices listed), not {args.top}")
    n = parse_count(args.n)
    delta = parse_number(args.delta, "--delta")
    if not 0 < delta < 1:
        raise ValueError(f"--delta must lie in (0, 1), got {args.delta}")
    settings = settings_from_args(args)
    model = open_model(args.model, config=args.config, mapping=args.mapping)
    result = model.bound(n, args.delta, settings, progress=True)
    outputs = []
    if args.json:
        outputs.append((args.json, json_text(result.to_json())))
    if args.latex:
        outputs.append((args.latex, result.to_latex()))
    if write_outputs(outputs):  # all files or none; '-': stdout, which then carries nothing else
        return 0
    if args.quiet:
        print(_q(result.bound))
    else:
        print(format_result(result.theorem_result, model=result.model, top=args.top, all_matrices=args.all_matrices))
    return 0
