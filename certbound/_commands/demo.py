"""``certbound demo``: certified loss-gap and 0-1 error bounds of a theory-faithful model next to its measured error.

With no arguments it uses the checkpoint shipped in
``certbound/models/data/demo`` (made by ``certbound train-demo``, trained on
n = 10⁶ samples). It certifies every singular value, evaluates Theorem 2 at
the model's own training n and δ = 0.01 for its loss and for the ramp loss
fixed in its config, recomputes R̂ on the training set (regenerated from the
recorded seed, in chunks), measures the test error on fresh samples, prints
the trivial input-counting bound beside them, and finds the counterfactual n
at which the loss-gap bound would fall below the loss range had these weights
come from n samples. Needs no torch.
"""

from __future__ import annotations

import argparse
import decimal
import math
import os
import sys
from fractions import Fraction
from typing import Any

from flint import arb

from certbound._commands._options import add_spectrum_mode_option, write_outputs
from certbound.ball import ball_to_json, decimal_upper
from certbound.models import is_pi_checkpoint
from certbound.pipeline import DEFAULT_DELTA, parse_count, parse_number, run_demo
from certbound.pipeline._demo import ramp_margin_of
from certbound.report.table import format_table
from certbound.report.writers import json_text

__all__ = ["NAME", "HELP", "add_arguments", "run", "format_report", "result_json"]

NAME = "demo"
HELP = "certified loss-gap and 0-1 error bounds of the shipped theory-faithful Π-Transformer vs its measured test error"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``certbound demo``'s arguments to its parser.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser (made by :func:`certbound.cli.build_parser`).
    """
    parser.add_argument("--model", default=None, metavar="PATH",
                        help="a certbound-pi checkpoint directory (default: the shipped demo model)")
    parser.add_argument("--delta", type=_exact_number, default=None,
                        help="confidence parameter δ, read as an exact decimal (default: 0.01)")
    parser.add_argument("--n", type=_count("--n"), default=None,
                        help="sample size n of the bound (default: the checkpoint's training-set size)")
    parser.add_argument("--n-test", type=_count("--n-test"), default=None,
                        help="fresh test samples for the measured risk (default: from the checkpoint, 20000)")
    add_spectrum_mode_option(parser, deprecated_alias="--mode")
    parser.add_argument("--split-delta", action="store_true",
                        help="evaluate each of the k certified lines at delta/k, so that all of them hold together "
                             "with probability >= 1 - delta (default: each at delta, together >= 1 - k delta)")
    parser.add_argument("--no-search", action="store_true", help="skip the non-vacuity sample-size search")
    parser.add_argument("--json", metavar="FILE", default=None, help="also write the full result as JSON ('-' for stdout, instead of the report)")


def _exact_number(text: str) -> Any:
    """A decimal literal exactly: a float only when it is that binary64 value, else a Fraction.

    ``float("0.01")`` is slightly larger than 1/100; the bound must be evaluated at
    the δ the user wrote, or the printed confidence 1 − δ would be overstated.
    """
    try:
        return parse_number(text, "--delta")
    except ValueError as exc:  # argparse prefixes the option's name itself
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--delta: ")) from None


def _count(what: str) -> Any:
    def parse(text: str) -> int:
        try:
            return parse_count(text, what)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc).removeprefix(f"{what}: ")) from None
    return parse


def _directed_decimal(q: Any, up: bool, digits: int = 6) -> str:
    """The exact rational ``q`` as a decimal of ``digits`` significant digits, rounded up or down."""
    q = Fraction(q)
    ctx = decimal.Context(prec=digits, rounding=decimal.ROUND_CEILING if up else decimal.ROUND_FLOOR)
    d = ctx.divide(decimal.Decimal(q.numerator), decimal.Decimal(q.denominator))
    return f"{d.normalize(ctx):f}" if d != 0 else "0"


def _confidence_text(delta: Any) -> str:
    """``1 − δ`` rounded *down* (a lower bound on the certified probability), from the exact δ."""
    return _directed_decimal(1 - Fraction(delta), up=False)


def _delta_text(delta: Any) -> str:
    """δ rounded *up*, from its exact value."""
    return _directed_decimal(delta, up=True)


def _upper(x: Any, digits: int = 5) -> str:
    return decimal_upper(x, digits)


def _fmt_p(p) -> str:
    p = Fraction(p)
    return str(p.numerator) if p.denominator == 1 else f"{p.numerator}/{p.denominator}"


def _sci(n: int) -> str:
    if n < 10**5:
        return str(n)
    e = len(str(n)) - 1
    return f"{n / 10**e:.2g}e{e}"


def _name(m) -> str:
    if m.type == "readout":
        return "readout w"
    if m.head is None:
        return f"L{m.layer} {m.type}"
    return f"L{m.layer} H{m.head} {m.type}"


def _shares(bound) -> list[str]:
    total = sum(float(m.contribution.mid()) for m in bound.matrices)
    if total <= 0:
        return ["-"] * len(bound.matrices)
    return [f"{100 * float(m.contribution.mid()) / total:.1f}%" for m in bound.matrices]


def _matrix_rows(res) -> tuple[list[list[str]], list[str]]:
    bound = res.bound
    nv = res.nonvacuity
    at_star = nv.result if nv is not None and nv.result is not None and nv.n_certified != res.n else None
    header = ["matrix", "shape", "rank<=", "sigma1<=", "c (grid)", "p", "S_p<=", "s (grid)", "share of D"]
    if at_star is not None:
        header += ["p at n*", "share at n*"]
    shares = _shares(bound)
    shares_star = _shares(at_star) if at_star is not None else None
    rows = []
    for j, m in enumerate(bound.matrices):
        sig = m.spectral_certified
        if m.type == "readout":
            p, scert, srad = "-", "-", "-"
        elif m.p == 0:
            p = "0"
            scert = f"rank {int(float(m.schatten_certified.mid()))}" if m.schatten_certified is not None else "-"
            srad = decimal_upper(m.schatten_radius, 4)
        else:
            p = _fmt_p(m.p)
            scert = decimal_upper(m.schatten_certified, 4) if m.schatten_certified is not None else "-"
            srad = decimal_upper(m.schatten_radius, 4)
        row = [_name(m), f"{m.shape[0]}x{m.shape[1]}", str(m.rank_arch),
               decimal_upper(sig, 4) if sig is not None else "-", decimal_upper(m.spectral_radius, 4),
               p, scert, srad, shares[j]]
        if at_star is not None:
            ms = at_star.matrices[j]
            row += ["-" if ms.type == "readout" else _fmt_p(ms.p), shares_star[j]]
        rows.append(row)
    return rows, header


def format_report(res) -> str:
    """The human-readable demo report (certified numbers rounded up; measured ones marked as estimates).

    Parameters
    ----------
    res : DemoResult
        What :func:`certbound.pipeline.run_demo` returned.

    Returns
    -------
    str
        The report text.
    """
    cfg, meta = res.net.config, res.meta
    lines = []
    lines.append("certbound demo: certified generalization bound of a theory-faithful Π-Transformer")
    variant = "P (φ then M)" if cfg.ffn_kind == "single" else f"B (M_in, φ, M_out; d_ff={cfg.d_ff})"
    lines.append(f"model   {res.model_path}  [{meta.get('model_type')}]")
    lines.append(f"        variant {variant}, L={cfg.n_layers}, H={cfg.n_heads}, d_h={cfg.d_head}, N={cfg.d_model}, "
                 f"T={cfg.seq_len}, ReLU, {'residual' if cfg.residual else 'no residual'}, no bias/LayerNorm, "
                 f"learned readout")
    task = meta.get("task")
    if task:
        lines.append(f"task    sparse majority: label = majority of the symbols at hidden positions "
                     f"{tuple(task['relevant_positions'])} of {task['seq_len'] - 1} binary tokens, "
                     f"label noise {task['label_noise']}")
    loss = cfg.loss
    lines.append(f"loss    {loss.kind}, values in [0, B_L = {loss.loss_bound:g}], L_L = {loss.loss_lip:g};  "
                 f"n = {res.n}, δ = {_delta_text(res.delta)}")
    lines.append("")
    rows, header = _matrix_rows(res)
    lines.append(format_table(rows, header))
    lines.append("(sigma1, S_p: certified upper ends; c, s: a-priori grid values used by the bound; p: Schatten index "
                 "chosen post hoc; share of D: each matrix's share of the entropy term of the reported Rademacher "
                 "estimate, '-' when that estimate is the floor B_L/2, which does not depend on the weights)")
    lines.append("")
    lines.extend(_summary_lines(res))
    return "\n".join(lines)


def _confidence_sentence(res) -> str:
    """What the certified lines' probabilities are, each and together (union bound, proofs/demo-task.md §3)."""
    k = len(res.statements)
    each = res.delta if res.certificate_delta is None else res.certificate_delta
    over = "over the draw of the training set"
    if k == 1:
        return f"δ = {_delta_text(each)}; the certified line holds with probability >= {_confidence_text(each)} {over}"
    if Fraction(each) != Fraction(res.delta):  # --split-delta (δ/k for the k statements planned)
        return (f"δ = {_delta_text(res.delta)} split over the {k} certified lines (each at "
                f"δ/{_fmt_p(Fraction(res.delta) / Fraction(each))} <= "
                f"{_delta_text(each)}); all {k} hold together with probability >= "
                f"{_confidence_text(1 - res.joint_confidence)} {over}")
    return (f"δ = {_delta_text(each)}; each certified line holds with probability >= {_confidence_text(each)} "
            f"{over}, all {k} together (union bound) with probability >= "
            f"{_confidence_text(1 - res.joint_confidence)} (--split-delta: each at δ/{k}, together >= "
            f"{_confidence_text(each)})")


def _why_no_error_bound(res) -> str:
    if ramp_margin_of(res.meta) is None:
        return "config.json fixes no ramp margin (error_bound.loss); retrain with `certbound train-demo --margin`"
    m = res.measured
    if m is None:
        return "no task description, so no training set to measure R_hat_gamma on"
    if res.n != m.n_train:
        return f"R_hat_gamma is known only on the n = {m.n_train} training samples, not at n = {res.n}"
    return "certified outputs (hence R_hat_gamma) are implemented for one-block models only"


def _summary_lines(res) -> list[str]:
    """The side-by-side summary: certified loss gap, certified 0-1 error, measured test error, trivial bound, time."""
    cfg, b = res.net.config, res.bound
    loss = cfg.loss
    rows: list[list[str]] = []
    verdict = (f"non-vacuous: {float(b.bound.upper()) / loss.loss_bound:.3g} x B_L" if not b.vacuous
               else f"vacuous: not below B_L = {loss.loss_bound:g}")
    rows.append(["certified loss-gap bound", f"|R - R_hat| <= {_upper(b.bound)}",
                 f"Theorem 2, {loss.kind} loss in [0, B_L = {loss.loss_bound:g}]; {verdict}"])
    rows.append(["", f"= 2 x {_upper(b.rademacher)} + {_upper(b.confidence_term)}",
                 f"2 x Rademacher ({b.rademacher_method}) + confidence; ln 1/prior = {_upper(b.log_inv_prior)}"])
    e = res.error
    if e is not None:
        # a probability bound is informative only below 1 (as the loss-gap line says "vacuous" at B_L)
        vacuous = "" if bool(e.bound < 1) else "vacuous: not below 1; "
        rows.append(["certified 0-1 error bound", f"P(error) <= {_upper(e.bound)}",
                     f"{vacuous}= R_hat_gamma {_directed_decimal(e.empirical_ramp_upper, up=True, digits=5)} (certified, "
                     f"ramp margin gamma = {_fmt_p(e.margin)}) + ramp-loss gap {_upper(e.ramp_bound.bound)} (Theorem 2, "
                     f"B_L = 1, L_L = 1/gamma; {e.ramp_bound.rademacher_method})"])
    else:
        rows.append(["certified 0-1 error bound", "-", _why_no_error_bound(res)])
    m = res.measured
    if m is not None:
        se = math.sqrt(max(m.test_error * (1 - m.test_error), 0.0) / m.n_test)
        rows.append(["measured test error", f"{m.test_error:.4f}",
                     f"+- {2 * se:.4f} (2 s.e.) on {m.n_test} fresh samples (stream 2); train error "
                     f"{m.train_error:.4f} on the n = {m.n_train} training samples"])
        rows.append(["measured loss gap", f"{m.gap:.4f}",
                     f"|test - train| = |{m.test_loss:.4f} - {m.train_loss:.4f}| (estimate of |R - R_hat|)"])
    else:
        rows.append(["measured test error", "-", "not measured: the checkpoint's config.json has no task"])
    task = res.meta.get("task")
    if res.input_counting is not None and task:
        rows.append(["input-counting bound", f"P(error) <= R_hat_01 + {_upper(res.input_counting)}",
                     f"any classifier of the 2^{task['seq_len'] - 1} possible inputs (proofs/demo-task.md §1); "
                     + ("vacuous" if float(res.input_counting.lower()) >= 1 else "non-vacuous")])
    t = res.timing_seconds
    cpu = f" (CPU {t['cpu_total']:.1f} s)" if "cpu_total" in t else ""
    rows.append(["time", f"{t['total']:.1f} s{cpu}",
                 f"wall clock; spectra {t['spectra']:.2f} s, bounds {t['bound'] + t.get('error_bound', 0.0):.2f} s, "
                 f"R_hat and test error {t['measure']:.2f} s, n* search {t['nonvacuity_search']:.2f} s"])
    lines = [f"At n = {res.n} samples ({'the training set' if m is not None and m.n_train == res.n else 'given'}), "
             + _confidence_sentence(res) + ":", ""]
    lines.append(format_table(rows, ["quantity", "value", "how"]))
    nv = res.nonvacuity
    if nv is not None:
        lines.append("")
        if nv.n_certified is None:
            lines.append(f"counterfactual: if these weights had come from n samples, the certified loss-gap bound "
                         f"would stay above B_L = {nv.loss_bound:g} for every n <= {_sci(nv.n_max)} tried")
        else:
            below = f" (not at n = {nv.n_below})" if nv.n_below is not None else ""
            lines.append(f"counterfactual: if these weights had come from n samples, the certified loss-gap bound "
                         f"would be below B_L = {nv.loss_bound:g} from n ~ {_sci(nv.n_certified)}: "
                         f"{_upper(nv.bound)} at n = {nv.n_certified}{below}; {nv.evaluations} certified evaluations")
    lines.append("")
    lines.append("Certified numbers: interval arithmetic, rounded up, for this network, which belongs to the theory's "
                 "model class; R_hat_gamma from proved enclosures of its outputs on the training set, regenerated "
                 "from the recorded seed. Measured numbers are float estimates.")
    return lines


def _key_label(key: tuple) -> str:
    layer, head, kind = key
    return f"L{layer} {kind}" if head is None else f"L{layer} H{head} {kind}"


def result_json(res) -> dict:
    """JSON form: the Theorem 2 result (issue 4 shape), measurements, non-vacuity, timings.

    Parameters
    ----------
    res : DemoResult
        What :func:`certbound.pipeline.run_demo` returned.

    Returns
    -------
    dict
        The ``certbound demo --json`` document (balls in the project's JSON form).
    """
    m, e = res.measured, res.error
    d: dict[str, Any] = {
        # the headline numbers (certified ones as balls in the project's JSON form; test_error measured)
        "n_train": m.n_train if m is not None else None,
        "loss_bound": ball_to_json(arb(res.net.config.loss.loss_bound)),
        "gap_bound": ball_to_json(res.bound.bound),
        "error_bound": ball_to_json(e.bound) if e is not None else None,
        "test_error": m.test_error if m is not None else None,
        "input_counting_bound": ball_to_json(res.input_counting) if res.input_counting is not None else None,
        "model": str(res.model_path),
        "model_type": res.meta.get("model_type"),
        "config": res.net.config.to_json_dict(),
        "task": res.meta.get("task"),
        "n": res.n,
        "delta": res.bound.delta,  # the δ of each certified statement, rounded up to a float
        "delta_exact": str(res.delta),  # as given (split over the statements with --split-delta)
        "delta_per_statement_exact": str(res.certificate_delta),
        # each statement holds with probability >= 1 - delta_per_statement; all together >= this (union bound)
        "certified_statements": list(res.statements),
        "joint_confidence_lower": str(res.joint_confidence),
        "bound": res.bound.to_json(),
        # the requested certificate mode and, per matrix, the certificate that succeeded
        "spectrum_mode": res.spectrum_mode,
        "spectrum_certificates": {**{_key_label(k): enc.mode for k, enc in res.spectra.items()},
                         "readout": res.readout.mode},
    }
    if e is not None:
        d["error"] = {"margin": str(e.margin), "empirical_ramp_upper": str(e.empirical_ramp_upper),
                      "empirical_ramp_upper_float": float(e.empirical_ramp_upper), "bound": ball_to_json(e.bound),
                      "ramp_bound": e.ramp_bound.to_json()}
    if m is not None:
        d["measured"] = {"train_loss": m.train_loss, "test_loss": m.test_loss,
                         "test_loss_stderr": m.test_loss_stderr, "gap": m.gap, "train_error": m.train_error,
                         "test_error": m.test_error, "n_train": m.n_train, "n_test": m.n_test,
                         "certified": False}
    nv = res.nonvacuity
    if nv is not None:
        d["nonvacuous"] = {"loss_bound": nv.loss_bound, "n": nv.n_certified,
                           "bound": ball_to_json(nv.bound) if nv.bound is not None else None,
                           "n_not_certified_below": nv.n_below, "evaluations": nv.evaluations, "n_max": nv.n_max}
    d["timing_seconds"] = res.timing_seconds  # the key of `certbound bound --json`
    return d


def run(args: argparse.Namespace) -> int:
    """Run ``certbound demo`` on parsed arguments.

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
    if args.model is not None and not os.path.exists(args.model):
        raise FileNotFoundError(f"--model: {args.model!r}: no such file or directory (a certbound-pi checkpoint "
                                "directory, e.g. from `certbound train-demo --out DIR`)")
    if args.model is not None and not is_pi_checkpoint(args.model):
        raise ValueError(f"{args.model}: not a certbound-pi checkpoint (config.json with model_type "
                         "'certbound-pi'); the demo needs a model of the theory's class — for other "
                         "checkpoints use `certbound bound`")
    if args.n is not None and args.n < 1:
        raise ValueError("--n must be a positive integer")
    if args.n_test is not None and args.n_test < 2:
        raise ValueError("--n-test must be at least 2")
    delta = DEFAULT_DELTA if args.delta is None else args.delta
    if not 0 < delta < 1:
        raise ValueError(f"--delta must lie in (0, 1), got {delta}")
    res = run_demo(args.model, delta=delta, n=args.n, n_test=args.n_test, spectrum_mode=args.spectrum_mode,
                   search_nonvacuous=not args.no_search, split_delta=args.split_delta)
    if not write_outputs([(args.json, json_text(result_json(res)))] if args.json else []):  # '-': stdout
        print(format_report(res))
    sys.stdout.flush()
    return 0
