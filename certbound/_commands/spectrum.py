"""``certbound spectrum MODEL``: certified spectra of every matrix the theory uses.

For each layer ℓ and head h of a checkpoint (see :mod:`certbound.checkpoints`
for which matrices and how they are sliced) this certifies all singular values
(per-head QK/VO through the product path, never formed) and reports σ₁,
‖·‖_F, ‖·‖_*, ‖·‖_{2,1}, S_p at a few p and certified rank bounds, as a table,
and optionally as JSON (``--json``) and CSV (``--csv``). Output files are
written atomically after everything is computed, so an error leaves none.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import contextlib
import dataclasses
import multiprocessing
import os
import sys
import time
from fractions import Fraction
from typing import Any, Iterable, Iterator

__all__ = ["NAME", "HELP", "add_arguments", "run", "certify_theory_matrix", "scaled_enclosure",
           "spectrum_report"]

NAME = "spectrum"
HELP = "certify the singular values of every QK/VO head and FFN matrix of a checkpoint"

_DEFAULT_P = "0.5,1,2"
_TABLE_DIGITS = 6


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", help="model directory, weights file (.safetensors, .bin, .onnx, *.index.json), "
                                      "or a packaged checkpoint name (all-MiniLM-L6-v2, paraphrase-MiniLM-L3-v2)")
    parser.add_argument("--json", metavar="FILE", help="write the full report (every σᵢ) as JSON")
    parser.add_argument("--csv", metavar="FILE", help="write one row per matrix as CSV")
    parser.add_argument("--jobs", type=int, default=1, metavar="N", help="parallel worker processes (default 1)")
    parser.add_argument("--mode", choices=("fast", "tight", "arb", "gram"), default="fast",
                        help="certificate mode of the singular-value kernel (default fast; gram is ~4x "
                             "cheaper for dense FFN matrices, with wider enclosures of small singular values)")
    parser.add_argument("--raw", action="store_true", help="also certify the raw per-layer W_Q, W_K, W_V, W_O")
    parser.add_argument("--scale-logits", action="store_true",
                        help="fold the attention logit scale 1/sqrt(d_h) into QK")
    parser.add_argument("--p", default=_DEFAULT_P, metavar="P,P,...",
                        help=f"Schatten indices p in (0, 2] to report S_p for (default {_DEFAULT_P}; "
                             "decimals/fractions are taken exactly)")
    parser.add_argument("--layers", metavar="L,L,...", help="only these layers (0-based)")
    parser.add_argument("--config", metavar="FILE", help="config.json to use instead of the one next to the weights")
    parser.add_argument("--mapping", metavar="FILE",
                        help="JSON mapping of tensor names for an unsupported architecture (see docs)")
    parser.add_argument("--quiet", action="store_true", help="do not print the table")


def _parse_ps(text: str) -> list[str]:
    out = []
    for tok in text.split(","):
        tok = tok.strip()
        if not tok:
            continue
        try:
            q = Fraction(tok)
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"--p: {tok!r} is not a number") from None
        if not 0 < q <= 2:
            raise ValueError(f"--p: {tok} is not in (0, 2] (p = 0 is the certified rank, always reported)")
        out.append(tok)
    if not out:
        raise ValueError("--p: give at least one Schatten index")
    return out


def scaled_enclosure(enc: Any, scale: Any) -> Any:
    """The enclosure of c·W from that of W, for a ball c > 0 (σᵢ(cW) = c σᵢ(W)).

    Every σ ball is multiplied by the ball ``scale`` (rigorous Arb product), the
    float bounds are re-derived with outward rounding, the rank is unchanged.
    """
    from flint import arb

    from certbound.ball import DEFAULT_PREC, float_lower, float_upper, working_precision

    if not scale > 0:
        raise ValueError("scaled_enclosure: the scale must be a positive ball")
    import numpy as np

    with working_precision(DEFAULT_PREC):
        sig = tuple(s * scale if s.is_finite() else arb(0).union(arb.pos_inf()) for s in enc.sigma)
        return dataclasses.replace(
            enc, sigma=sig,
            lower=np.array([max(float_lower(s), 0.0) for s in sig], dtype=np.float64),
            upper=np.array([float_upper(s) for s in sig], dtype=np.float64),
            residual=enc.residual * scale,
        )


def certify_theory_matrix(m: Any, mode: str = "fast", ps: Iterable[Any] = (0.5, 1, 2), *,
                          include_sigma: bool = True) -> dict[str, Any]:
    """Certify one :class:`~certbound.checkpoints.TheoryMatrix`; a JSON-ready record.

    Returns the issue's record ``{"layer", "head", "type", "shape",
    "spectral_norm", "frobenius_norm", "nuclear_norm", "norm_21", "rank",
    "sigma"}`` (each Q from :func:`certbound.ball.ball_to_json`) plus
    ``"schatten"`` (S_p per requested p), ``"certified"``, ``"mode"``,
    ``"logit_scale"`` and ``"sources"``. ``include_sigma=False`` leaves out
    the (long) ``"sigma"`` list, whose decimal formatting costs about as much
    as the certificate of a per-head product; the table and CSV do not need it.

    Soundness: σ enclosures from the certified kernel (Theorem R / Lemma P,
    ``proofs/enclosure.md``), the optional logit scale as an Arb factor
    (σᵢ(cW) = c σᵢ(W), ‖cW‖_{2,1} = c‖W‖_{2,1}, S_p(cW) = c^p S_p(W)), all
    derived quantities computed on the balls.

    >>> import numpy as np
    >>> from certbound.checkpoints import TheoryMatrix
    >>> m = TheoryMatrix(0, None, "M_in", (2, 3), dense=np.array([[3.0, 0, 0], [0, 4.0, 0]]))
    >>> r = certify_theory_matrix(m, ps=[1])
    >>> r["rank"], float(r["spectral_norm"]["lower"]) <= 4 <= float(r["spectral_norm"]["upper"])
    ({'lower': 2, 'upper': 2}, True)
    """
    import warnings

    from certbound.ball import DEFAULT_PREC, ball_to_json, working_precision
    import numpy as np

    from certbound.enclose import (
        enclose_singular_values,
        enclose_singular_values_of_product,
        norm_21,
        norm_21_of_product,
        spectral_norm,
    )
    from certbound.enclose._input import as_exact_float64_matrix
    from certbound.enclose.quantities import norms_and_schatten

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if m.factors is not None:
            # Convert (and copy, for strided slices) each factor once, not in every kernel call.
            A, B = (as_exact_float64_matrix(f, n) for f, n in zip(m.factors, "AB"))
            enc = enclose_singular_values_of_product(A, B, mode=mode)
            n21 = norm_21_of_product(A, B)
        else:
            enc = enclose_singular_values(m.dense, mode=mode)
            n21 = norm_21(m.dense)
    with working_precision(DEFAULT_PREC):
        scale = m.scale()
        if m.logit_scale_d != 1:
            enc = scaled_enclosure(enc, scale)
            n21 = n21 * scale
        # σᵢ proved to be 0 (float upper end 0, e.g. beyond the structural
        # rank of a product) contribute exactly 0 to every S_p (p > 0), ‖·‖_F
        # and ‖·‖_*; summing only the others is sound, and much faster. The
        # upper ends are non-increasing, so these σᵢ are a suffix.
        k = int(np.count_nonzero(enc.upper > 0))
        live = dataclasses.replace(enc, sigma=enc.sigma[:k], lower=enc.lower[:k], upper=enc.upper[:k])
        ps = list(ps)
        fro, nuclear, s_ps = norms_and_schatten(live, ps)
        schatten = {str(p): ball_to_json(v) for p, v in zip(ps, s_ps)}
        rec: dict[str, Any] = {
            "layer": m.layer,
            "head": m.head,
            "type": m.type,
            "shape": [int(m.shape[0]), int(m.shape[1])],
            "spectral_norm": ball_to_json(spectral_norm(enc)),
            "frobenius_norm": ball_to_json(fro),
            "nuclear_norm": ball_to_json(nuclear),
            "norm_21": ball_to_json(n21),
            "rank": {"lower": int(enc.rank.lower), "upper": int(enc.rank.upper)},
            "schatten": schatten,
            "certified": bool(enc.certified),
            "mode": enc.mode,
            "logit_scale": (None if m.logit_scale_d == 1 and m.logit_scale_folded == 1 else
                            {"sqrt_denominator": m.logit_scale_d * m.logit_scale_folded,
                             "folded_exactly_into_weights": m.logit_scale_folded != 1}),
            "sources": list(m.sources),
        }
        if include_sigma:
            rec["sigma"] = [ball_to_json(s) for s in enc.sigma[:k]] + [
                _zero_json() if _is_exact_zero(s) else ball_to_json(s) for s in enc.sigma[k:]]
    if caught:
        rec["warnings"] = [str(w.message) for w in caught]
    return rec


def _is_exact_zero(x: Any) -> bool:
    return bool(x.is_exact() and x.is_zero())


def _zero_json() -> dict[str, Any]:
    """JSON form of the exact ball 0 (a fresh dict each time: callers may mutate)."""
    return {"lower": "0", "upper": "0", "mid": 0.0, "exact": {"lower": "0", "upper": "0"}}


def _worker(args: tuple[Any, str, list[str], bool]) -> dict[str, Any]:
    m, mode, ps, include_sigma = args
    return certify_theory_matrix(m, mode, ps, include_sigma=include_sigma)


class _Progress:
    """A one-line progress bar on stderr, only when stderr is a terminal."""

    def __init__(self, total: int, stream: Any = None):
        self.stream = stream or sys.stderr
        self.total = max(total, 1)
        self.done = 0
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.t0 = time.monotonic()

    def step(self, label: str) -> None:
        self.done += 1
        if not self.enabled:
            return
        width = 30
        k = int(width * self.done / self.total)
        el = time.monotonic() - self.t0
        self.stream.write(f"\r[{'#' * k}{'.' * (width - k)}] {self.done}/{self.total} {el:6.1f}s {label[:40]:<40}")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r" + " " * 100 + "\r")
            self.stream.flush()


_BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


@contextlib.contextmanager
def _single_threaded_blas_env() -> Iterator[None]:
    """Workers started inside this block use one BLAS thread each (unless the user set it).

    N workers × a multi-threaded BLAS oversubscribe the cores; on a loaded
    2-core machine we measured LAPACK calls 10-100x slower that way. Spawned
    workers read these variables when they import numpy.
    """
    saved = {k: os.environ.get(k) for k in _BLAS_THREAD_VARS}
    for k in _BLAS_THREAD_VARS:
        os.environ.setdefault(k, "1")
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _certify_all(matrices: Iterator[Any], total: int, mode: str, ps: list[str], jobs: int,
                 include_sigma: bool = True) -> list[dict[str, Any]]:
    prog = _Progress(total)
    results: list[dict[str, Any]] = []
    try:
        if jobs <= 1:
            for m in matrices:
                results.append(certify_theory_matrix(m, mode, ps, include_sigma=include_sigma))
                prog.step(m.label)
            return results
        # Bounded window of in-flight tasks: the generator reads one tensor at a
        # time, and only ~2·jobs matrices are pickled to workers at once.
        window = 2 * jobs
        with _single_threaded_blas_env(), cf.ProcessPoolExecutor(
                max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            pending: list[tuple[Any, cf.Future[dict[str, Any]]]] = []
            try:
                for m in matrices:
                    pending.append((m.label, pool.submit(_worker, (m, mode, ps, include_sigma))))
                    while len(pending) >= window:
                        label, fut = pending.pop(0)
                        results.append(fut.result())
                        prog.step(label)
                for label, fut in pending:
                    results.append(fut.result())
                    prog.step(label)
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)  # do not finish useless work
                raise
        return results
    finally:
        prog.close()


def _digest_update(h: Any, m: Any) -> None:
    """Feed one theory matrix's identity and exact stored values into a hash."""
    import numpy as np

    h.update(f"{m.layer}|{m.head}|{m.type}|{tuple(m.shape)}|{m.logit_scale_d}|{m.logit_scale_folded}|".encode())
    for a in (m.factors if m.factors is not None else (m.dense,)):
        a = np.ascontiguousarray(a, dtype=np.float64)
        h.update(repr(a.shape).encode())
        h.update(a.tobytes())


def _digesting(gen: Iterator[Any], h: Any) -> Iterator[Any]:
    for m in gen:
        _digest_update(h, m)
        yield m


def _report_types(layout: Any) -> tuple[str, ...]:
    """The matrix types a spectrum report holds for this layout."""
    from certbound.checkpoints import MATRIX_TYPES

    types = tuple(getattr(layout, "matrix_types", MATRIX_TYPES))
    if getattr(layout, "has_readout", False):
        types += ("readout",)
    return types


def weights_digest(ck: Any, layout: Any, *, raw: bool, scale_logits: bool, layers: list[int] | None) -> str:
    """sha256 of the exact matrices a ``certbound spectrum`` report with these options certifies.

    ``certbound bound --spectra`` recomputes it from the model and refuses a
    report whose digest differs: a report is only reused for the weights it
    certified.
    """
    import hashlib

    from certbound.checkpoints import theory_matrices

    h = hashlib.sha256()
    for m in theory_matrices(ck, layout=layout, types=_report_types(layout), raw=raw, scale_logits=scale_logits,
                             layers=layers):
        _digest_update(h, m)
    return h.hexdigest()


def spectrum_report(model: str, *, mode: str = "fast", raw: bool = False, scale_logits: bool = False,
                    ps: Iterable[str] = ("0.5", "1", "2"), layers: list[int] | None = None, jobs: int = 1,
                    config: str | None = None, mapping: str | None = None,
                    include_sigma: bool = True) -> dict[str, Any]:
    """The whole JSON report of ``certbound spectrum`` as a dict (see the README).

    ``include_sigma=False`` omits every record's ``"sigma"`` list (used when no
    JSON file is requested).
    """
    import hashlib

    from certbound import __version__
    from certbound.checkpoints import PACKAGED_CHECKPOINTS, open_model, theory_matrices

    ps = list(ps)
    path = model
    if not os.path.exists(model) and model.split("/")[-1] in PACKAGED_CHECKPOINTS:
        from certbound.checkpoints import find_packaged_checkpoint

        try:
            path = str(find_packaged_checkpoint(model))
        except LookupError as exc:
            raise FileNotFoundError(str(exc)) from None
    ck, layout = open_model(path, config=config, mapping=mapping)
    try:
        nl = layout.num_layers if layers is None else len(layers)
        # the layout's own types (certbound-pi: M for variant P, and its learned readout)
        types = _report_types(layout)
        total = nl * (2 * layout.num_heads + len(types) - 2 + (4 if raw else 0))
        digest = hashlib.sha256()
        gen = _digesting(theory_matrices(ck, layout=layout, types=types, raw=raw, scale_logits=scale_logits,
                                         layers=layers), digest)
        records = _certify_all(gen, total, mode, ps, jobs, include_sigma)
    finally:
        ck.close()
    cfg = layout.summary()
    cfg.update({"format": ck.format, "config_file": ck.config_path,
                "model_type": (ck.config or {}).get("model_type")})
    if ck.config and "_inferred" in ck.config:
        cfg["config_inferred"] = ck.config["_inferred"]
    return {
        "model": path,
        "config": cfg,
        "options": {"mode": mode, "raw": raw, "scale_logits": scale_logits, "p": ps, "layers": layers,
                    "ignored": ("none (certbound-pi: the model has no biases, LayerNorm or embeddings)"
                                if layout.theory_config is not None else
                                "biases, LayerNorm, embeddings, pooler/heads, position biases")},
        "certbound_version": __version__,
        # sha256 over every certified matrix's identity and exact float64 values
        # (`certbound bound --spectra` checks it against the model it bounds)
        "weights_sha256": digest.hexdigest(),
        "matrices": records,
    }


_CSV_Q = ("spectral_norm", "frobenius_norm", "nuclear_norm", "norm_21")


def _csv_rows(report: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    ps = report["options"]["p"]
    header = ["layer", "head", "type", "rows", "cols"]
    for q in _CSV_Q:
        header += [f"{q}_lower", f"{q}_upper"]
    for p in ps:
        header += [f"S_{p}_lower", f"S_{p}_upper"]
    header += ["rank_lower", "rank_upper", "certified", "mode"]
    rows = []
    for r in report["matrices"]:
        row: list[Any] = [r["layer"], r["head"], r["type"], r["shape"][0], r["shape"][1]]
        for q in _CSV_Q:
            row += [r[q]["lower"], r[q]["upper"]]
        for p in ps:
            row += [r["schatten"][p]["lower"], r["schatten"][p]["upper"]]
        row += [r["rank"]["lower"], r["rank"]["upper"], r["certified"], r["mode"]]
        rows.append(row)
    return header, rows


def _shorten_upper(q: dict[str, Any]) -> str:
    """An upper bound with fewer digits, rounded up again (never below the certified upper end)."""
    from certbound.ball import ball_from_json, decimal_upper

    return decimal_upper(ball_from_json(q), _TABLE_DIGITS)


def format_report_table(report: dict[str, Any]) -> str:
    """The human-readable table: certified *upper* bounds, rounded up."""
    from certbound.report.table import format_table

    ps = report["options"]["p"]
    header = ["layer", "head", "type", "shape", "sigma1<=", "fro<=", *[f"S_{p}<=" for p in ps], "rank"]
    rows = []
    for r in report["matrices"]:
        rk = r["rank"]
        rank = str(rk["lower"]) if rk["lower"] == rk["upper"] else f"[{rk['lower']}, {rk['upper']}]"
        rows.append([r["layer"], r["head"], r["type"] + ("" if r["certified"] else "*"),
                     f"{r['shape'][0]}x{r['shape'][1]}", _shorten_upper(r["spectral_norm"]),
                     _shorten_upper(r["frobenius_norm"]), *[_shorten_upper(r["schatten"][p]) for p in ps], rank])
    c = report["config"]
    head = (f"{report['model']}\n{c['architecture']}: {c['num_layers']} layers, width {c['hidden_size']}, "
            f"{c['num_heads']} heads of {c['head_dim']}, "
            + ("variant P (one FFN matrix M)" if c.get("ffn_kind") == "single" else f"FFN {c['intermediate_size']}")
            + ("; QK includes the 1/sqrt(d_h) logit scale" if report["options"]["scale_logits"] else "")
            + "\nAll numbers are certified upper bounds (rounded up); rank = certified bounds.")
    foot = "\n* = certificate failed; the trivial enclosure [0, inf] is reported" \
        if any(not r["certified"] for r in report["matrices"]) else ""
    return head + "\n\n" + format_table(rows, header) + foot


def _check_output_dir(path: str | None, opt: str) -> None:
    if path is None:
        return
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise FileNotFoundError(f"{opt} {path}: directory {d} does not exist")
    if os.path.isdir(path):
        raise IsADirectoryError(f"{opt} {path}: is a directory")


def run(args: argparse.Namespace) -> int:
    from certbound.report.writers import csv_text, json_text, atomic_write_text

    if args.jobs < 1:
        raise ValueError(f"--jobs must be at least 1, not {args.jobs}")
    ps = _parse_ps(args.p)
    layers = None
    if args.layers:
        try:
            layers = [int(x) for x in args.layers.split(",") if x.strip()]
        except ValueError:
            raise ValueError(f"--layers: {args.layers!r} is not a comma-separated list of integers") from None
    # Fail before the (long) computation if an output cannot be written.
    _check_output_dir(args.json, "--json")
    _check_output_dir(args.csv, "--csv")
    report = spectrum_report(args.model, mode=args.mode, raw=args.raw, scale_logits=args.scale_logits, ps=ps,
                             layers=layers, jobs=args.jobs, config=args.config, mapping=args.mapping,
                             include_sigma=bool(args.json))
    # Serialise everything first, then write: no partial or half-set of files on error.
    outputs = []
    if args.json:
        outputs.append((args.json, json_text(report)))
    if args.csv:
        header, rows = _csv_rows(report)
        outputs.append((args.csv, csv_text(rows, header)))
    for path, text in outputs:
        atomic_write_text(path, text)
    if not args.quiet:
        print(format_report_table(report))
    failed = [r for r in report["matrices"] if not r["certified"]]
    if failed:
        print(f"certbound spectrum: warning: {len(failed)} certificate(s) failed (trivial enclosures reported)",
              file=sys.stderr)
    return 0
