"""Certified spectra of every theory matrix of a model: the records of ``certbound spectrum``.

For each layer ℓ and head h (see :mod:`certbound.checkpoints` for which
matrices and how they are sliced) :func:`certify_theory_matrix` certifies all
singular values (per-head QK/VO through the product path, never formed) and
derives σ₁, ‖·‖_F, ‖·‖_*, ‖·‖_{2,1}, S_p at a few p and certified rank
bounds; :func:`spectrum_report` assembles the JSON report of a whole model
(optionally over ``jobs`` worker processes). Soundness:
``proofs/enclosure.md`` (Theorem R, Lemma P).
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import dataclasses
import hashlib
import multiprocessing
import os
import warnings
from typing import Any, Iterable, Iterator

import numpy as np
from flint import arb

from certbound._version import __version__
from certbound.ball import DEFAULT_PREC, ball_to_json, float_lower, float_upper, working_precision
from certbound.checkpoints import MATRIX_TYPES, open_model, theory_matrices
from certbound.enclose import (
    enclose_singular_values,
    enclose_singular_values_of_product,
    norm_21,
    norm_21_of_product,
    spectral_norm,
)
from certbound.enclose._input import as_exact_float64_matrix
from certbound.enclose.quantities import norms_and_schatten
from certbound.pipeline._progress import ProgressSpec, progress_reporter
from certbound.pipeline._resolve import resolve_packaged_name

__all__ = ["certify_theory_matrix", "scaled_enclosure", "spectrum_report", "spectrum_report_of",
           "weights_digest"]


def scaled_enclosure(enc: Any, scale: Any) -> Any:
    """The enclosure of c·W from that of W, for a ball c > 0 (σᵢ(cW) = c σᵢ(W)).

    Every σ ball is multiplied by the ball ``scale`` (rigorous Arb product), the
    float bounds are re-derived with outward rounding, the rank is unchanged.
    """
    if not scale > 0:
        raise ValueError("scaled_enclosure: the scale must be a positive ball")
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
                 include_sigma: bool = True, progress: ProgressSpec = None) -> list[dict[str, Any]]:
    """Certify every matrix (in order), in this process or in ``jobs`` spawned workers."""
    prog = progress_reporter(progress, total)
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
    h = hashlib.sha256()
    for m in theory_matrices(ck, layout=layout, types=_report_types(layout), raw=raw, scale_logits=scale_logits,
                             layers=layers):
        _digest_update(h, m)
    return h.hexdigest()


def spectrum_report(model: str, *, mode: str = "fast", raw: bool = False, scale_logits: bool = False,
                    ps: Iterable[str] = ("0.5", "1", "2"), layers: list[int] | None = None, jobs: int = 1,
                    config: str | None = None, mapping: str | None = None,
                    include_sigma: bool = True, progress: ProgressSpec = None) -> dict[str, Any]:
    """The whole JSON report of ``certbound spectrum`` as a dict (see the README).

    ``model`` is a checkpoint path or a packaged checkpoint name.
    ``include_sigma=False`` omits every record's ``"sigma"`` list (used when no
    JSON file is requested). ``progress``: see :mod:`certbound.pipeline._progress`.
    """
    path = resolve_packaged_name(model)
    ck, layout = open_model(path, config=config, mapping=mapping)
    try:
        return spectrum_report_of(ck, layout, path, mode=mode, raw=raw, scale_logits=scale_logits, ps=ps,
                                  layers=layers, jobs=jobs, include_sigma=include_sigma, progress=progress)
    finally:
        ck.close()


def spectrum_report_of(ck: Any, layout: Any, path: str, *, mode: str = "fast", raw: bool = False,
                       scale_logits: bool = False, ps: Iterable[str] = ("0.5", "1", "2"),
                       layers: list[int] | None = None, jobs: int = 1, include_sigma: bool = True,
                       progress: ProgressSpec = None) -> dict[str, Any]:
    """:func:`spectrum_report` of an opened checkpoint ``ck`` with its resolved ``layout`` (not closed here).

    ``path`` is what the report's ``"model"`` field names.
    """
    ps = list(ps)
    nl = layout.num_layers if layers is None else len(layers)
    # the layout's own types (certbound-pi: M for variant P, and its learned readout)
    types = _report_types(layout)
    total = nl * (2 * layout.num_heads + len(types) - 2 + (4 if raw else 0))
    digest = hashlib.sha256()
    gen = _digesting(theory_matrices(ck, layout=layout, types=types, raw=raw, scale_logits=scale_logits,
                                     layers=layers), digest)
    records = _certify_all(gen, total, mode, ps, jobs, include_sigma, progress)
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
