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
import json
import math
import os
import sys
import time
from fractions import Fraction
from types import SimpleNamespace
from typing import Any

__all__ = ["NAME", "HELP", "add_arguments", "run", "model_spectra", "spec_from_layout", "format_result",
           "result_latex", "parse_count", "cli_namespace", "certified_bound"]

NAME = "bound"
HELP = "certified generalization-gap bound (Theorem 2 post hoc, or Theorem 1) for a checkpoint's Pi-surrogate network"


def parse_count(text: str, what: str = "--n") -> int:
    """A positive integer from ``"1000000"``, ``"1e6"`` or ``"10**6"`` (exactly)."""
    t = str(text).strip().replace("_", "")
    try:
        if "**" in t:
            b, e = t.split("**")
            q = Fraction(int(b)) ** int(e)
        else:
            q = Fraction(t)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{what}: {text!r} is not a number") from None
    if q.denominator != 1 or q < 1:
        raise ValueError(f"{what}: {text!r} is not a positive integer")
    return int(q)


def _parse_number(text: str, what: str) -> Fraction | float:
    try:
        q = Fraction(str(text).strip())
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{what}: {text!r} is not a number") from None
    # dyadic values stay exact floats; others stay exact Fractions (turned into balls)
    return float(q) if Fraction(float(q)) == q else q


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", help="model directory / weights file / packaged checkpoint name (as for `spectrum`)")
    parser.add_argument("--n", required=True, metavar="N", help="sample size n (e.g. 1e9)")
    parser.add_argument("--delta", required=True, metavar="D", help="confidence parameter δ in (0, 1)")
    parser.add_argument("--seq-len", type=int, metavar="T",
                        help="tokens per input T (default: max_position_embeddings of the config, else 512)")
    parser.add_argument("--loss-bound", metavar="B", help="loss range B_L (default: the certbound-pi config's, else 1)")
    parser.add_argument("--loss-lipschitz", metavar="L",
                        help="loss Lipschitz constant L_L (default: the certbound-pi config's, else 1)")
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
    parser.add_argument("--constraints", metavar="FILE", help="JSON configuration for --mode fixed")
    parser.add_argument("--spectra", metavar="FILE",
                        help="reuse a `certbound spectrum --json` report instead of certifying again")
    parser.add_argument("--spectrum-mode", choices=("fast", "tight", "arb"), default="fast",
                        help="certificate mode of the singular-value kernel (default fast)")
    parser.add_argument("--partition-ratio", type=float, default=1.25, metavar="R",
                        help="ratio of the geometric Riemann partition (default 1.25)")
    parser.add_argument("--p-grid-m", type=int, metavar="M", help="index grid resolution m (default ceil(L + ln N))")
    parser.add_argument("--json", metavar="FILE", help="write the certified result as JSON")
    parser.add_argument("--latex", metavar="FILE", help="write a LaTeX table of the result")
    parser.add_argument("--config", metavar="FILE", help="config.json to use instead of the one next to the weights")
    parser.add_argument("--mapping", metavar="FILE", help="JSON tensor-name mapping for an unsupported architecture")
    parser.add_argument("--top", type=int, default=8, metavar="K", help="matrices listed in the summary (default 8)")
    parser.add_argument("--all-matrices", action="store_true", help="list every matrix (p, radii, contribution)")
    parser.add_argument("--quiet", action="store_true", help="print only the bound")


# ---------------------------------------------------------------------------
# model → spectra


def _resolve_model_path(model: str) -> str:
    from certbound.checkpoints import PACKAGED_CHECKPOINTS

    if not os.path.exists(model) and model.split("/")[-1] in PACKAGED_CHECKPOINTS:
        from certbound.checkpoints import find_packaged_checkpoint

        try:
            return str(find_packaged_checkpoint(model))
        except LookupError as exc:
            raise FileNotFoundError(str(exc)) from None
    return model


def model_spectra(model: str, *, scale_logits: bool = True, mode: str = "fast", config: str | None = None,
                  mapping: str | None = None, progress: bool = False) -> tuple[dict, Any, dict]:
    """Certified enclosures of every theory matrix of a checkpoint, keyed ``(layer, head, type)``.

    Per-head ``QK``/``VO`` through the product path (never formed, rank ≤ d_h
    certified); the logit scale ``1/√d_h`` applied as an Arb factor when it
    was not folded exactly. Returns ``(spectra, layout, config dict)``.
    """
    import warnings

    from certbound._commands.spectrum import scaled_enclosure
    from certbound.ball import DEFAULT_PREC, working_precision
    from certbound.checkpoints import open_model, theory_matrices
    from certbound.enclose import enclose_singular_values, enclose_singular_values_of_product

    path = _resolve_model_path(model)
    ck, layout = open_model(path, config=config, mapping=mapping)
    spectra: dict = {}
    try:
        types = tuple(getattr(layout, "matrix_types", ("QK", "VO", "M_in", "M_out")))
        if getattr(layout, "has_readout", False):
            types = types + ("readout",)
        scale_logits = scale_logits and getattr(layout, "attention_logit_scale", True)
        total = layout.num_layers * (2 * layout.num_heads + len(types) - 2)
        for i, m in enumerate(theory_matrices(ck, layout=layout, types=types, scale_logits=scale_logits)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if m.factors is not None:
                    enc = enclose_singular_values_of_product(*m.factors, mode=mode)
                else:
                    enc = enclose_singular_values(m.dense, mode=mode)
            if m.logit_scale_d != 1:
                with working_precision(DEFAULT_PREC):
                    enc = scaled_enclosure(enc, m.scale())
            if not enc.certified:
                raise ValueError(f"{path}: {m.label}: the singular-value certificate failed; no bound can be given")
            if m.type == "readout":
                spectra["readout"] = enc
                continue
            head = m.head if m.type in ("QK", "VO") else None
            spectra[(m.layer, head, m.type)] = enc
            if progress and sys.stderr.isatty():
                print(f"\rcertifying spectra {i + 1}/{total}", end="", file=sys.stderr)
        if progress and sys.stderr.isatty():
            print(file=sys.stderr)
        cfg = dict(ck.config or {})
    finally:
        ck.close()
    return spectra, layout, cfg


def spectra_from_report(path: str, *, scale_logits: bool) -> tuple[dict, dict]:
    """Spectra from a ``certbound spectrum --json`` report (σ upper ends exact from the ``exact`` fields)."""
    import numpy as np

    from certbound.ball import ball_from_json, float_upper

    try:
        with open(path, encoding="utf-8") as fh:
            rep = json.load(fh)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not a JSON spectrum report ({exc})") from None
    try:
        scaled = bool(rep["options"]["scale_logits"])
        recs = rep["matrices"]
        cfg = rep.get("config", {})
    except (KeyError, TypeError):
        raise ValueError(f"{path}: not a `certbound spectrum --json` report (no options/matrices)") from None
    if scaled and not scale_logits:
        raise ValueError(f"{path}: spectra were computed with --scale-logits but --no-logit-scale was requested")
    extra = None
    # certbound-pi reports: the architecture has no 1/sqrt(d_h), so there is nothing to apply
    if scale_logits and not scaled and cfg.get("attention_logit_scale", True):
        from flint import arb

        from certbound.ball import DEFAULT_PREC, working_precision

        dh = int(cfg.get("head_dim", 0))
        if dh < 1:
            raise ValueError(f"{path}: cannot apply the logit scale: head_dim missing from the report's config")
        with working_precision(DEFAULT_PREC):
            extra = 1 / arb(dh).sqrt()
    spectra = {}
    for r in recs:
        if r.get("type") not in ("QK", "VO", "M", "M_in", "M_out", "readout"):
            continue
        if not r.get("certified", False):
            raise ValueError(f"{path}: layer {r.get('layer')} {r.get('type')}: certificate failed in the report")
        sig = [ball_from_json(q) for q in r["sigma"]]
        if extra is not None and r["type"] == "QK":
            sig = [s * extra for s in sig]
        up = np.array([float_upper(s) for s in sig], dtype=np.float64)
        head = r["head"] if r["type"] in ("QK", "VO") else None
        key = "readout" if r["type"] == "readout" else (int(r["layer"]), head, r["type"])
        spectra[key] = SimpleNamespace(
            sigma=tuple(sig), upper=up, certified=True,
            rank=SimpleNamespace(lower=int(r["rank"]["lower"]), upper=int(r["rank"]["upper"])))
    return spectra, cfg


def _check_report_matches(rep_cfg: Any, layout: Any, report_path: str, model_path: str) -> None:
    """Refuse a spectrum report whose recorded architecture differs from the model's.

    The bound is printed for ``model_path``; spectra of another architecture (e.g. a
    deeper model, whose first layers would silently be used) would make it a bound
    for other weights. Same-shape checkpoints cannot be told apart here (the report
    stores no weight digest): reusing a report is the user's assertion that it is of
    this model.
    """
    if not isinstance(rep_cfg, dict):
        raise ValueError(f"{report_path}: the report has no config block to check against {model_path}")
    mine = layout.summary()
    for key in ("architecture", "num_layers", "hidden_size", "num_heads", "head_dim", "intermediate_size",
                "ffn_kind"):
        if key in rep_cfg and key in mine and rep_cfg[key] != mine[key]:
            raise ValueError(f"{report_path}: the spectrum report is of another model ({key} = {rep_cfg[key]!r}, "
                             f"but {model_path} has {mine[key]!r})")


def _check_report_digest(report_path: str, ck: Any, layout: Any, model_path: str) -> None:
    """Refuse a spectrum report that was not computed from this model's exact weights.

    The report stores a sha256 of every certified matrix (identity and exact
    float64 values, ``spectrum.weights_digest``); it is recomputed here from the
    model with the report's own options, so a report of another checkpoint —
    even one of the same shape — cannot be reused.
    """
    from certbound._commands.spectrum import weights_digest

    with open(report_path, encoding="utf-8") as fh:
        rep = json.load(fh)
    stored = rep.get("weights_sha256")
    if not stored:
        raise ValueError(f"{report_path}: the spectrum report has no weights digest (made by an older certbound?); "
                         f"re-run `certbound spectrum {model_path} --json FILE`")
    opts = rep.get("options", {})
    mine = weights_digest(ck, layout, raw=bool(opts.get("raw", False)),
                          scale_logits=bool(opts.get("scale_logits", False)), layers=opts.get("layers"))
    if mine != stored:
        raise ValueError(f"{report_path}: the spectrum report was computed from other weights than {model_path} "
                         "(weights digest differs)")


def _activation(cfg: dict, act_lip: str | None) -> tuple[str, Any]:
    stated = cfg.get("hidden_act", cfg.get("activation_function"))
    if act_lip is not None:
        return str(stated if stated is not None else "unstated").lower(), _parse_number(act_lip, "--act-lip")
    if stated is None:
        # (A3) needs the constants of the activation the weights are used with; an unstated one
        # (e.g. a config inferred from an ONNX graph) must not silently become the exact GELU.
        raise ValueError(
            "the model's config states no activation (hidden_act / activation_function), so no certified "
            "Lipschitz constant can be chosen: pass --act-lip with a proven upper bound (φ(0) = 0 and "
            "‖φ(z)‖ ≤ ‖z‖ are assumed; exact GELU: 1.1289042, tanh GELU: 1.128994, ReLU: 1) or --config FILE"
        )
    act = str(stated).lower()
    if act in ("gelu", "relu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast"):
        return act, None
    raise ValueError(
        f"activation {act!r} of the config has no built-in certified Lipschitz constant (exact 'gelu' and 'relu' "
        "do); pass --act-lip with a proven upper bound (φ(0) = 0 and ‖φ(z)‖ ≤ ‖z‖ are assumed)"
    )


def spec_from_layout(layout: Any, cfg: dict, args: argparse.Namespace) -> Any:
    """The :class:`~certbound.bounds.TransformerSpec` (variant B) of a checkpoint layout and the CLI options."""
    from certbound.bounds import TransformerSpec

    tc = getattr(layout, "theory_config", None)
    if tc:  # a certbound-pi model: the a-priori constants come from its config
        _check_pi_overrides(tc, args)
        ffn = str(tc.get("ffn_kind", "two"))
        lip = _parse_number(args.act_lip, "--act-lip") if args.act_lip else tc.get("act_lip")
        return TransformerSpec(
            n_layers=int(layout.num_layers), n_heads=int(layout.num_heads), d_model=int(layout.hidden_size),
            seq_len=int(args.seq_len or tc["seq_len"]), ffn_kind=ffn,
            d_ff=int(tc["d_ff"]) if ffn == "two" and tc.get("d_ff") else None, d_head=int(layout.head_dim),
            residual=bool(args.residual or tc.get("residual", False)),
            softmax_lip=_parse_number(args.softmax_lip, "--softmax-lip") if args.softmax_lip
            else tc.get("softmax_lip", 1),
            activation=str(tc.get("activation", "relu")), act_lip=lip,
            act_norm_at_zero=tc.get("act_norm_at_zero"), act_growth=tc.get("act_growth"),
            readout_learned=not args.fixed_readout,
        )
    act, lip = _activation(cfg, getattr(args, "act_lip", None))
    seq = args.seq_len if args.seq_len else int(cfg.get("max_position_embeddings", 512) or 512)
    if seq < 1:
        raise ValueError("--seq-len must be ≥ 1")
    return TransformerSpec(
        n_layers=int(layout.num_layers), n_heads=int(layout.num_heads), d_model=int(layout.hidden_size),
        seq_len=int(seq), ffn_kind=str(getattr(layout, "ffn_kind", "two")), d_ff=int(layout.intermediate_size),
        d_head=int(layout.head_dim), residual=bool(args.residual),
        softmax_lip=_parse_number(args.softmax_lip, "--softmax-lip") if args.softmax_lip else 1,
        activation=act, act_lip=lip,
        act_norm_at_zero=0 if lip is not None else None, act_growth=1 if lip is not None else None,
        readout_learned=not args.fixed_readout,
    )


def _check_pi_overrides(tc: dict, args: argparse.Namespace) -> None:
    """Refuse options that would make a certbound-pi bound claim more than its config guarantees.

    The config states facts about the trained model (its loss range and
    Lipschitz constant, activation, residual flag, learned readout); a
    *larger* B_ℒ, L_ℒ, L_φ or c_sm keeps the bound valid, a smaller one or a
    different architecture does not.
    """
    if args.residual and not tc.get("residual", False):
        raise ValueError("--residual: this certbound-pi model has no residual connections (config residual=false)")
    if args.fixed_readout:
        raise ValueError("--fixed-readout: a certbound-pi model's readout (readout.w) is learned and must be covered")
    for opt, key in (("loss_bound", "loss_bound"), ("loss_lipschitz", "loss_lip"), ("act_lip", "act_lip"),
                     ("softmax_lip", "softmax_lip")):
        given = getattr(args, opt, None)
        if given is not None and tc.get(key) is not None:
            flag = "--" + opt.replace("_", "-")
            if Fraction(_parse_number(given, flag)) < Fraction(tc[key]):
                raise ValueError(f"{flag} {given} is below the certbound-pi config's {key} = {tc[key]}: "
                                 "the bound would not hold for this model")


def _constant(arg: str | None, tc: dict | None, key: str, what: str) -> Any:
    """CLI value if given, else the certbound-pi config's a-priori value, else 1."""
    if arg is not None:
        return _parse_number(arg, what)
    if tc and tc.get(key) is not None:
        v = tc[key]
        # A float in the config is the exact binary64 number the model uses (e.g. the loss clip):
        # keep it. str() would give the shortest decimal, which may lie *below* it (0.1 → 1/10).
        if isinstance(v, float) and not isinstance(v, bool):
            if not math.isfinite(v):
                raise ValueError(f"{what}: the certbound-pi config's {key} = {v!r} is not finite")
            return v
        return v if isinstance(v, (int, Fraction)) else _parse_number(str(v), what)
    return 1


def _load_constraints(path: str) -> dict:
    from certbound.bounds import MatrixConstraint

    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: invalid JSON ({exc})") from None
    if isinstance(data, dict):
        data = data.get("matrices", data.get("constraints"))
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of {{layer, head, type, p, schatten_radius, spectral_radius}}")
    out = {}
    for i, r in enumerate(data):
        try:
            head = r.get("head") if r["type"] in ("QK", "VO") else None
            out[(int(r["layer"]), head, r["type"])] = MatrixConstraint(
                Fraction(str(r["p"])), _parse_number(str(r["schatten_radius"]), f"{path}[{i}]"),
                _parse_number(str(r["spectral_radius"]), f"{path}[{i}]"))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path}: entry {i}: {exc}") from None
    return out


# ---------------------------------------------------------------------------
# output


def _q(x: Any, digits: int = 6) -> str:
    from certbound.ball import decimal_upper

    return decimal_upper(x, digits)


def format_result(res: Any, *, model: str, top: int = 8, all_matrices: bool = False) -> str:
    """Readable text: the certified number, what it certifies, the terms, the dominating matrices."""
    from certbound.ball import decimal_upper

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
    lines.append(f"  2 x Dudley term             : {decimal_upper(2 * res.dudley, 6)}")
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
    lines.append(("all matrices" if all_matrices else f"top {len(mats)} matrices by contribution") + ":")
    lines.append(f"  {'layer':>5} {'head':>4} {'type':<7} {'p':>6} {'S_p radius':>12} {'spectral':>10} {'contribution':>12}")
    for m in mats:
        lines.append(f"  {str(m.layer):>5} {str(m.head if m.head is not None else '-'):>4} {m.type:<7} {str(m.p):>6} "
                     f"{_q(m.schatten_radius):>12} {_q(m.spectral_radius):>10} {_q(m.contribution):>12}")
    lines.append("assumptions:")
    for k, v in res.assumptions.items():
        lines.append(f"  {k}: {v}")
    return "\n".join(lines)


def result_latex(res: Any, *, model: str, digits: int = 5) -> str:
    """A booktabs LaTeX table of the result (upper bounds rounded up)."""
    from certbound.ball import decimal_upper

    def tex(s: str) -> str:
        return s.replace("_", r"\_").replace("%", r"\%").replace("&", r"\&").replace("#", r"\#")

    rows = [
        (r"bound", decimal_upper(res.bound, digits)),
        (r"$2\,\mathfrak D_n$", decimal_upper(2 * res.dudley, digits)),
        (r"confidence term", decimal_upper(res.confidence_term, digits)),
        (r"$\ln(1/\pi)$", decimal_upper(res.log_inv_prior, digits)),
    ]
    out = [
        "% certbound bound: certified upper bounds, rounded up",
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{Certified generalization-gap bound ({tex(res.theorem)}) for the $\Pi$-surrogate network of "
        rf"\texttt{{{tex(os.path.basename(model.rstrip('/')))}}}, $n={res.n_samples}$, $\delta={res.delta}$.}}",
        r"\begin{tabular}{lr}",
        r"\toprule",
        r"quantity & upper bound \\",
        r"\midrule",
    ]
    out += [f"{a} & {b} \\\\" for a, b in rows]
    out += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(out)


def cli_namespace(model: str, n: Any, delta: Any, **options: Any) -> argparse.Namespace:
    """The ``argparse.Namespace`` that ``certbound bound MODEL --n N --delta D [options]`` would produce.

    Defaults come from :func:`add_arguments` itself, so callers other than the
    CLI (``certbound audit``'s ``bound(...)`` quantity) get exactly the CLI's
    defaults. ``options`` use the attribute names of the flags (``seq_len``,
    ``loss_bound``, ``residual``, ...); values are what the flag would receive
    (strings for numbers, so that they are parsed exactly as on the command line).

    >>> a = cli_namespace("m", "1e6", "1/100", residual=True)
    >>> (a.n, a.delta, a.residual, a.mode, a.spectrum_mode, a.partition_ratio)
    ('1e6', '1/100', True, 'posthoc', 'fast', 1.25)
    """
    parser = argparse.ArgumentParser(prog="certbound bound", add_help=False)
    add_arguments(parser)
    args = parser.parse_args([str(model), "--n", str(n), "--delta", str(delta)])
    for name, value in options.items():
        if not hasattr(args, name) or name in ("model", "n", "delta"):
            raise ValueError(f"certbound bound has no option {name!r}")
        setattr(args, name, value)
    return args


def certified_bound(args: argparse.Namespace, *, progress: bool = False) -> tuple[Any, str, Any, float]:
    """The certified bound that ``certbound bound`` prints for these (CLI) arguments.

    Public so that other commands reuse the exact CLI computation (spectra via
    :func:`model_spectra` or ``--spectra``, :func:`spec_from_layout`, the
    a-priori constants, Theorem 2 or Theorem 1) instead of re-assembling it;
    ``certbound audit``'s ``bound(...)`` quantities call it through
    :func:`cli_namespace`. Output options (``--json``, ``--latex``, ...) are
    ignored here. Soundness: ``proofs/theory-theorems.md`` §T1/§T2.

    Returns
    -------
    (BoundResult, resolved model path, layout, seconds spent certifying spectra)
    """
    from certbound.bounds import BoundOptions, theorem1_fixed_bound, theorem2_posthoc_bound

    n = parse_count(args.n)
    delta = _parse_number(args.delta, "--delta")
    if not 0 < delta < 1:
        raise ValueError(f"--delta must lie in (0, 1), got {args.delta}")
    if args.mode == "fixed" and not args.constraints:
        raise ValueError("--mode fixed needs --constraints FILE (the a-priori configuration)")
    if args.partition_ratio <= 1:
        raise ValueError("--partition-ratio must be > 1")
    t0 = time.perf_counter()
    scale_logits = not args.no_logit_scale
    path = _resolve_model_path(args.model)
    if args.spectra:
        from certbound.checkpoints import open_model, theory_matrices
        from certbound.enclose import enclose_singular_values

        ck, layout = open_model(path, config=args.config, mapping=args.mapping)
        try:
            scale_logits = scale_logits and getattr(layout, "attention_logit_scale", True)
            spectra, rep_cfg = spectra_from_report(args.spectra, scale_logits=scale_logits)
            _check_report_matches(rep_cfg, layout, args.spectra, path)
            _check_report_digest(args.spectra, ck, layout, path)
            if getattr(layout, "has_readout", False) and "readout" not in spectra:
                # spectrum reports omit the readout: certify ‖w‖₂ from the checkpoint (one vector)
                for m in theory_matrices(ck, layout=layout, types=("readout",)):
                    spectra["readout"] = enclose_singular_values(m.dense, mode=args.spectrum_mode)
            cfg = dict(ck.config or {})
        finally:
            ck.close()
    else:
        spectra, layout, cfg = model_spectra(path, scale_logits=scale_logits, mode=args.spectrum_mode,
                                             config=args.config, mapping=args.mapping, progress=progress)
    t_spec = time.perf_counter() - t0
    spec = spec_from_layout(layout, cfg, args)
    tc = getattr(layout, "theory_config", None)
    readout_enc = spectra.pop("readout", None)
    opts = BoundOptions(partition_ratio=args.partition_ratio, p_grid_m=args.p_grid_m)
    common = dict(readout_norm=_constant(args.readout_norm, tc, "readout_norm", "--readout-norm"),
                  loss_bound=_constant(args.loss_bound, tc, "loss_bound", "--loss-bound"),
                  loss_lip=_constant(args.loss_lipschitz, tc, "loss_lip", "--loss-lipschitz"), options=opts)
    if args.mode == "fixed":
        if readout_enc is not None and spec.readout_learned:
            from flint import arb

            from certbound.ball import DEFAULT_PREC, working_precision

            cw = Fraction(common["readout_norm"])
            with working_precision(DEFAULT_PREC):
                # ‖w‖₂ ≤ C_w  ⇔  ‖w‖₂ · den ≤ num (exact integers, no rounding of C_w)
                if not bool(readout_enc.sigma[0] * cw.denominator <= arb(cw.numerator)):
                    raise ValueError(f"{path}: the certified readout norm ||w||_2 is not <= the a-priori "
                                     f"C_w = {common['readout_norm']} (--readout-norm)")
        res = theorem1_fixed_bound(spec, _load_constraints(args.constraints), n, delta, spectra=spectra, **common)
    else:
        if readout_enc is not None and spec.readout_learned:
            common["readout_spectrum"] = readout_enc  # certified ‖w‖₂, peeled on the readout grid
        res = theorem2_posthoc_bound(spec, spectra, n, delta, **common)
    name = os.path.basename(path.rstrip("/"))
    if tc:
        network = (f"{name} is a certbound-pi model: it IS the theorems' model class (variant {spec.variant}); "
                   "the a-priori constants come from its config.json")
    else:
        network = (f"Pi-surrogate of {name} ({layout.architecture}): "
                   "LayerNorm replaced by the row projection Pi; biases, embeddings, pooler/classifier dropped; "
                   + ("Pi-form residuals" if args.residual else "residual connections dropped")
                   + "; NOT a bound for the original network")
    res.assumptions.update({
        "network": network,
        "logit_scale_1_over_sqrt_d_head": scale_logits and getattr(layout, "attention_logit_scale", True),
        "seq_len_source": "--seq-len" if args.seq_len else ("certbound-pi config" if tc else
                                                           "config max_position_embeddings (default 512)"),
    })
    return res, path, layout, t_spec


def run(args: argparse.Namespace) -> int:
    from certbound.report.writers import atomic_write_text, json_text

    for opt in ("json", "latex"):
        p = getattr(args, opt)
        if p:
            d = os.path.dirname(os.path.abspath(p))
            if not os.path.isdir(d):
                raise OSError(f"--{opt}: directory {d} does not exist")
    res, path, layout, t_spec = certified_bound(args, progress=True)
    doc = res.to_json()
    doc["model"] = path
    doc["config"] = layout.summary()
    doc["timing_seconds"] = {"spectra": t_spec, "bound": res.elapsed_seconds}
    outputs = []
    if args.json:
        outputs.append((args.json, json_text(doc)))
    if args.latex:
        outputs.append((args.latex, result_latex(res, model=path)))
    for p, text in outputs:
        atomic_write_text(p, text)
    if args.quiet:
        print(_q(res.bound))
    else:
        print(format_result(res, model=path, top=args.top, all_matrices=args.all_matrices))
    return 0
