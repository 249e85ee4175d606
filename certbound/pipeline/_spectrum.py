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

import contextlib
import dataclasses
import gc
import hashlib
import json
import os
import uuid
import warnings
from typing import Any, Iterable, Iterator

import numpy as np
from flint import arb

from certbound._blas import single_threaded
from certbound._version import __version__
from certbound.ball import (
    DEFAULT_PREC,
    ball_to_json,
    float_interval_to_json,
    float_lower,
    float_model_scope,
    float_upper,
    working_precision,
)
from certbound.checkpoints import MATRIX_TYPES, open_checkpoint
from certbound.enclose import (
    enclose_singular_values,
    enclose_singular_values_of_product,
    norm_21,
    norm_21_of_product,
    spectral_norm,
)
from certbound.enclose._input import as_exact_float64_matrix
from certbound.enclose.product import (
    enclose_singular_values_and_norms_21_of_products,
    enclose_singular_values_of_products,
)
from certbound.enclose.quantities import (
    norm_21_of_products,
    norms_and_schatten_intervals,
    norms_and_schatten_intervals_of_many,
)
from certbound.pipeline._modes import DEFAULT_SPECTRUM_MODE, spectrum_mode_keyword
from certbound.pipeline._progress import ProgressSpec, progress_reporter
from certbound.pipeline._resolve import resolve_model_name
from certbound.pipeline._streaming import (
    HEAD_BATCH_BYTES,
    MatrixOutcome,
    MemoryRecordStore,
    ModelSource,
    combined_sha256,
    factor_bytes,
    iter_plan,
    matrix_sha256,
    plan_tasks,
    run_processes,
    run_serial,
    write_report_json,
)

__all__ = ["certify_theory_matrix", "certify_theory_matrices", "enclose_theory_matrices", "MatrixCertifier", "scaled_enclosure", "spectrum_report", "spectrum_report_of",
           "spectrum_run", "spectrum_run_of", "SpectrumRun", "spectrum_store_settings", "weights_digest", "records_digest"]


def scaled_enclosure(enc: Any, scale: Any) -> Any:
    """The enclosure of c·W from that of W, for a ball c > 0 (σᵢ(cW) = c σᵢ(W)).

    Every σ ball is multiplied by the ball ``scale`` (rigorous Arb product), the
    float bounds are re-derived with outward rounding, the rank is unchanged.

    Parameters
    ----------
    enc : SingularValueEnclosure
        Certified singular values of W.
    scale : arb
        A ball whose points are all > 0 (e.g. the logit scale 1/√d_h).

    Returns
    -------
    SingularValueEnclosure
        The enclosure of c·W for every c in ``scale``.

    Raises
    ------
    ValueError
        If ``scale`` is not positive.

    Examples
    --------
    >>> from flint import arb
    >>> from certbound.enclose import enclose_singular_values
    >>> enc = scaled_enclosure(enclose_singular_values(np.diag([4.0, 1.0])), arb(1) / 2)
    >>> enc.sigma[0].contains(2), float(enc.lower[1]) <= 0.5 <= float(enc.upper[1])
    (True, True)
    """
    if not scale > 0:
        raise ValueError("scaled_enclosure: the scale must be a positive ball")
    with working_precision(DEFAULT_PREC):
        # An exact-zero σ (a head's zero tail: up to 352 of 384) scales to the exact 0, whose float ends are 0:
        # one shared ball and no arithmetic (the same values as the product; ball_to_json prints them alike).
        zero = arb(0)
        sig = tuple(zero if _is_exact_zero(s) else s * scale if s.is_finite() else arb(0).union(arb.pos_inf())
                    for s in enc.sigma)
        return dataclasses.replace(
            enc, sigma=sig,
            lower=np.array([0.0 if s is zero else max(float_lower(s), 0.0) for s in sig], dtype=np.float64),
            upper=np.array([0.0 if s is zero else float_upper(s) for s in sig], dtype=np.float64),
            residual=enc.residual * scale,
        )


def certify_theory_matrix(m: Any, mode: str = "auto", ps: Iterable[Any] = (0.5, 1, 2), *,
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

    Parameters
    ----------
    m : TheoryMatrix
        The matrix (dense, or a per-head product as its exact factors).
    mode : {"fast", "tight", "arb", "gram", "auto"}
        Certificate mode of the kernel (the record's ``"mode"`` says which
        certificate was used).
    ps : iterable
        Schatten indices for ``"schatten"`` (0 or in (0, 2]; exact strings or numbers).
    include_sigma : bool
        Add the ``"sigma"`` list.

    Returns
    -------
    dict
        The record.

    Examples
    --------
    >>> import numpy as np
    >>> from certbound.checkpoints import TheoryMatrix
    >>> m = TheoryMatrix(0, None, "M_in", (2, 3), dense=np.array([[3.0, 0, 0], [0, 4.0, 0]]))
    >>> r = certify_theory_matrix(m, ps=[1])
    >>> r["rank"], float(r["spectral_norm"]["lower"]) <= 4 <= float(r["spectral_norm"]["upper"])
    ({'lower': 2, 'upper': 2}, True)
    """
    return certify_theory_matrices([m], mode, ps, include_sigma=include_sigma)[0]


def certify_theory_matrices(ms: Iterable[Any], mode: str = "auto", ps: Iterable[Any] = (0.5, 1, 2), *,
                            include_sigma: bool = True) -> list[dict[str, Any]]:
    """:func:`certify_theory_matrix` of each matrix, in order; the heads of a layer certified as one batch.

    Consecutive per-head products of the same layer (QK and VO together) go through
    :func:`certbound.enclose.product.enclose_singular_values_of_products`
    (stacked QRs, batched core SVDs, stacked bounds: proofs/enclosure.md
    §10); each record is the one :func:`certify_theory_matrix` gives.

    Parameters
    ----------
    ms : iterable of TheoryMatrix
        The matrices (dense, or per-head products as exact factors).
    mode : str
        Certificate mode of the kernel (default ``"auto"``).
    ps : iterable
        Schatten indices for ``"schatten"`` (0 or in (0, 2]; exact strings or numbers).
    include_sigma : bool
        Keep each record's ``"sigma"`` list.

    Returns
    -------
    list of dict
        One record per matrix, in input order.

    Examples
    --------
    >>> import numpy as np
    >>> from certbound.checkpoints import TheoryMatrix
    >>> rng = np.random.default_rng(0)
    >>> ms = [TheoryMatrix(0, h, "QK", (6, 6), factors=(rng.standard_normal((6, 2)), rng.standard_normal((6, 2))))
    ...       for h in range(3)]
    >>> [r["rank"]["upper"] for r in certify_theory_matrices(ms, ps=[1])]
    [2, 2, 2]
    """
    ps = list(ps)
    out: list[dict[str, Any]] = []
    heads: list[tuple[Any, Any, Any, list[str]]] = []
    norms_21_by_id: dict[int, Any] = {}  # ‖·‖_{2,1} of heads, by id of the matrix, from enclose_theory_matrices
    held = [0]  # factor bytes in `heads` (a running sum: no pass over the batch per head)

    def flush() -> None:
        # ‖·‖_{2,1} of a batch of heads at once (norm_21_of_products; batches as
        # in enclose_theory_matrices, so memory stays at one batch of factors);
        # a batch that warns is redone per head in _record, so each warning
        # stays with its matrix.
        if not heads:
            return
        # computed with the enclosures (Lemma P-G's Gram matrices)
        if all(id(m) in norms_21_by_id for m, _, _, _ in heads):
            n21s: list[Any] = [norms_21_by_id.pop(id(m)) for m, _, _, _ in heads]
        else:
            for m, _, _, _ in heads:
                norms_21_by_id.pop(id(m), None)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                n21s = norm_21_of_products([f[0] for _, _, f, _ in heads], [f[1] for _, _, f, _ in heads])
            if caught:
                n21s = [None] * len(heads)
        # ‖·‖_F, ‖·‖_*, S_p of the batch's unscaled heads in one stacked pass (the same values as per head)
        unscaled = [i for i, h in enumerate(heads) if h[0].logit_scale_d == 1]
        sums: list[Any] = [None] * len(heads)
        for i, v in zip(unscaled, norms_and_schatten_intervals_of_many([heads[i][1] for i in unscaled], ps)):
            sums[i] = v
        out.extend(_record(m, enc, facs, msgs, ps, include_sigma, n21, sums=v)
                   for (m, enc, facs, msgs), n21, v in zip(heads, n21s, sums))
        heads.clear()
        held[0] = 0

    # One BLAS thread for the small products and norms (the kernel raises it for big SVDs); the float
    # environment checked once for every record's float evaluations (Lemmas 8.2, 8.3), not once per record.
    with single_threaded(), float_model_scope():
        for m, enc, facs, msgs in enclose_theory_matrices(ms, mode, norms_21=norms_21_by_id):
            size = factor_bytes(m) if facs is not None else 0
            if heads and (facs is None or heads[0][0].layer != m.layer or held[0] + size > HEAD_BATCH_BYTES):
                flush()
            if facs is None:
                out.append(_record(m, enc, facs, msgs, ps, include_sigma))
            else:
                heads.append((m, enc, facs, msgs))
                held[0] += size
        flush()
    return out


def enclose_theory_matrices(ms: Iterable[Any], mode: str = "auto", *, skip_shared: bool = False,
                            norms_21: dict[int, Any] | None = None) -> Iterator[tuple[Any, Any, Any, list[str]]]:
    """``(matrix, enclosure, exact factors or None, warning messages)`` for each matrix, in input order.

    ``skip_shared``: a matrix with ``same_as_layer`` set (a shared layer, the
    same stored data as an earlier one) is passed through with enclosure
    ``None`` instead of being certified again.

    Consecutive per-head products of one layer (its QK and VO heads together) are certified as one
    batch of at most :data:`~certbound.pipeline._streaming.HEAD_BATCH_BYTES`
    of factors (only they are buffered: dense matrices are certified as they
    come, so memory stays at one batch of head factors). If a batch raises a
    warning, its heads are redone one by one so that each warning stays with
    its matrix.

    ``norms_21``: a dict that receives, keyed by ``id(matrix)``, the
    ‖·‖_{2,1} ball of each head of a batch that raised no warning, computed
    with its enclosure (:func:`~certbound.enclose.product.enclose_singular_values_and_norms_21_of_products`:
    Lemma P-G's Gram matrices serve both).

    Parameters
    ----------
    ms : iterable of TheoryMatrix
        The matrices, in order (dense ones and per-head products).
    mode : {"fast", "tight", "arb", "gram", "auto"}
        Certificate mode of the kernel (as :func:`certbound.enclose.enclose_singular_values`).
    skip_shared : bool
        Pass a matrix with ``same_as_layer`` set through uncertified (enclosure ``None``).
    norms_21 : dict, optional
        Receives ``id(matrix) → ‖·‖_{2,1}`` ball for the heads of each batch that raised no warning.

    Yields
    ------
    (TheoryMatrix, SingularValueEnclosure or None, tuple or None, list of str)
        The matrix, its enclosure, its exact float64 factors ``(A, B)`` (per-head
        products) or None, and the messages of the warnings raised for it.
    """
    pending: list[Any] = []
    held = [0]  # factor bytes in `pending` (a running sum)

    def flush() -> Iterator[tuple[Any, Any, Any, list[str]]]:
        batch = list(pending)
        pending.clear()
        held[0] = 0
        if not batch:
            return
        facs = [(_kernel_factor(m.factors[0], "A"), _kernel_factor(m.factors[1], "B")) for m in batch]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if norms_21 is None:
                encs = enclose_singular_values_of_products([f[0] for f in facs], [f[1] for f in facs], mode=mode)
            else:
                encs, n21s = enclose_singular_values_and_norms_21_of_products([f[0] for f in facs],
                                                                             [f[1] for f in facs], mode=mode)
        if norms_21 is not None and not caught:
            norms_21.update((id(m), x) for m, x in zip(batch, n21s))
        if caught and len(batch) > 1:
            for m, f in zip(batch, facs):
                with warnings.catch_warnings(record=True) as one:
                    warnings.simplefilter("always")
                    enc = enclose_singular_values_of_product(*f, mode=mode)
                yield m, enc, f, [str(w.message) for w in one]
            return
        for m, f, enc in zip(batch, facs, encs):
            yield m, enc, f, [str(w.message) for w in caught]

    for m in ms:
        if skip_shared and getattr(m, "same_as_layer", None) is not None:
            yield from flush()
            yield m, None, None, []
            continue
        if m.factors is not None:
            size = factor_bytes(m)
            if pending and (pending[0].layer != m.layer or held[0] + size > HEAD_BATCH_BYTES):
                yield from flush()
            pending.append(m)
            held[0] += size
            continue
        yield from flush()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            enc = enclose_singular_values(m.dense, mode=mode)
        yield m, enc, None, [str(w.message) for w in caught]
    yield from flush()


def _kernel_factor(F: Any, name: str) -> Any:
    """A factor as the kernel takes it: a C-contiguous 2-D float64 ndarray as it is, anything else converted once.

    The product kernel takes such an array unconverted and rejects NaN/Inf
    entries itself before it returns (its Gram diagonals or
    :func:`~certbound.enclose._input.as_exact_float64_matrix`'s check), so
    checking it here too would be a second pass over every factor; any other
    factor (a strided float32 view of a stored tensor, say) is converted here
    once, with all the checks, rather than in each consumer.

    Parameters
    ----------
    F : array_like
        A factor of a per-head product.
    name : str
        ``"A"`` or ``"B"``, for error messages.

    Returns
    -------
    numpy.ndarray
        C-contiguous float64, equal to F entry by entry.
    """
    if type(F) is np.ndarray and F.dtype == np.float64 and F.ndim == 2 and F.flags.c_contiguous:
        return F
    return as_exact_float64_matrix(F, name)


def _record(m: Any, enc: Any, facs: Any, msgs: list[str], ps: list[Any], include_sigma: bool,
            n21: Any = None, *, sums: Any = None) -> dict[str, Any]:
    """The JSON-ready record of one certified matrix (see :func:`certify_theory_matrix`).

    Runs inside :func:`certbound.ball.float_model_scope` (its caller's): the
    spectral sums are float evaluations (Lemmas 8.2, 8.3).

    Parameters
    ----------
    m : TheoryMatrix
        The matrix (identity, shape, sources, logit scale).
    enc : SingularValueEnclosure
        Its certified singular values (unscaled).
    facs : tuple of two arrays or None
        The exact factors of a per-head product, None for a dense matrix.
    msgs : list of str
        Warnings raised while certifying it.
    ps : list
        Schatten indices.
    include_sigma : bool
        Add the ``"sigma"`` list.
    n21 : arb, optional
        ‖·‖_{2,1} of the stored matrix if already computed, else computed here.
    sums : tuple, optional
        ``norms_and_schatten_intervals(enc, ps)`` if already computed (unscaled
        ``enc`` only: :func:`~certbound.enclose.quantities.norms_and_schatten_intervals_of_many`).

    Returns
    -------
    dict
        The record.
    """
    # The cyclic collector is paused (if on) while the record is built. A record is acyclic (dicts, lists, str,
    # numbers), so no uncollected cycles arise, but its σ list is up to thousands of fresh dicts, and with a
    # model's earlier records alive the collections those allocations trigger walk all of them (measured: about
    # half the time of all-MiniLM-L6-v2's σ lists in `spectrum --json`). Reference counting is unaffected.
    was_on = gc.isenabled()
    if was_on:
        gc.disable()
    try:
        return _record_of(m, enc, facs, msgs, ps, include_sigma, n21, sums)
    finally:
        if was_on:
            gc.enable()


def _record_of(m: Any, enc: Any, facs: Any, msgs: list[str], ps: list[Any], include_sigma: bool, n21: Any,
               sums: Any) -> dict[str, Any]:
    """:func:`_record`'s body (with the collector paused)."""
    if n21 is None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            n21 = norm_21_of_product(*facs) if facs is not None else norm_21(m.dense)
        msgs = msgs + [str(w.message) for w in caught]
    with working_precision(DEFAULT_PREC):
        if m.logit_scale_d != 1:
            scale = m.scale()
            enc = scaled_enclosure(enc, scale)
            n21 = n21 * scale
            sums = None  # they were of the unscaled enclosure
        # ‖·‖_F, ‖·‖_* and S_p from the σᵢ's float ends (Lemmas 8.2, 8.3, proofs/enclosure.md §8; σᵢ proved 0 are
        # skipped), printed straight from those ends; a ball where neither lemma applies (other p).
        fro, nuclear, s_ps = sums if sums is not None else norms_and_schatten_intervals(enc, ps)
        # ‖·‖_* is S₁ and σ₁ is the σ list's first entry: the same values, so their JSON is formed once and copied
        # (each field keeps its own dict; the decimal strings are most of a record's cost).
        nuclear_json = _quantity_json(nuclear)
        schatten = {str(p): _json_copy(nuclear_json) if _same_interval(v, nuclear) else _quantity_json(v)
                    for p, v in zip(ps, s_ps)}
        sigma = _sigma_json(enc) if include_sigma else None
        sigma1 = spectral_norm(enc)
        first = sigma is not None and len(enc.sigma) > 0 and sigma1 is enc.sigma[0] and enc.upper[0] > 0
        rec: dict[str, Any] = {
            "layer": m.layer,
            "head": m.head,
            "type": m.type,
            **({"stack": m.stack} if getattr(m, "stack", "") else {}),
            **({"expert": m.expert} if getattr(m, "expert", None) is not None else {}),
            **({"kv_head": m.kv_head} if getattr(m, "kv_head", None) not in (None, m.head) else {}),
            "shape": [int(m.shape[0]), int(m.shape[1])],
            "spectral_norm": _json_copy(sigma[0]) if first else ball_to_json(sigma1),  # type: ignore[index]
            "frobenius_norm": _quantity_json(fro),
            "nuclear_norm": nuclear_json,
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
        if sigma is not None:
            rec["sigma"] = sigma
    if msgs:
        rec["warnings"] = msgs
    return rec


@dataclasses.dataclass(frozen=True)
class MatrixCertifier:
    """``certify(m)`` for the task runners (picklable); ``.many(ms)`` certifies a layer's heads as one batch."""

    mode: str
    ps: tuple[Any, ...]
    include_sigma: bool

    def __call__(self, m: Any) -> dict[str, Any]:
        return certify_theory_matrix(m, self.mode, self.ps, include_sigma=self.include_sigma)

    def many(self, ms: list[Any]) -> list[dict[str, Any]]:
        """The records of ``ms``, the heads of a layer certified as one batch.

        Parameters
        ----------
        ms : list of TheoryMatrix
            A task's matrices, in order.

        Returns
        -------
        list of dict
            Their records (:func:`certify_theory_matrices`).
        """
        return certify_theory_matrices(ms, self.mode, self.ps, include_sigma=self.include_sigma)


def _quantity_json(v: Any) -> dict[str, Any]:
    """JSON form of a quantity from :func:`~certbound.enclose.quantities.norms_and_schatten_intervals`.

    Parameters
    ----------
    v : tuple of two floats or arb
        Float ends ``(lo, hi)`` (printed exactly as the interval they bound) or a ball.

    Returns
    -------
    dict
        :func:`certbound.ball.float_interval_to_json` of the ends, else :func:`certbound.ball.ball_to_json`.
    """
    return float_interval_to_json(*v) if isinstance(v, tuple) else ball_to_json(v)


def _same_interval(v: Any, w: Any) -> bool:
    """Whether two values of :func:`~certbound.enclose.quantities.norms_and_schatten_intervals` have one JSON form.

    The same object, or two float-end pairs with equal ends (:func:`certbound.ball.float_interval_to_json`
    depends only on the two floats); balls only when identical.
    """
    return v is w or (type(v) is tuple and type(w) is tuple and v == w)


def _json_copy(q: dict[str, Any]) -> dict[str, Any]:
    """A fresh copy of a quantity's JSON form (its ``exact`` dict copied too), keys in the same order."""
    return {**q, "exact": dict(q["exact"])}


def _sigma_json(enc: Any) -> list[dict[str, Any]]:
    """The ``"sigma"`` list of a record: :func:`certbound.ball.ball_to_json` of every σ ball.

    The σᵢ proved to be 0 (float upper end 0) are a suffix (the upper ends are
    non-increasing); those whose ball is the exact 0 get :func:`_zero_json` (the
    same dict), written without a per-σ test when the suffix is one exact-zero
    ball object repeated (as the stacked builder makes it: up to 352 of a
    384×32 head's 384 values). Each entry is a fresh dict.

    Parameters
    ----------
    enc : SingularValueEnclosure
        The (possibly scaled) enclosure of the record.

    Returns
    -------
    list of dict
        One JSON form per σᵢ, in order.
    """
    k = int(np.count_nonzero(enc.upper > 0))
    out = [ball_to_json(s) for s in enc.sigma[:k]]
    tail = enc.sigma[k:]
    if tail and _is_exact_zero(tail[0]) and tail.count(tail[0]) == len(tail):
        # tuple.count tests identity, then == (exact equality of Arb balls): all of the tail is the exact 0.
        # The literal is _zero_json()'s (inline: this runs ~50 000 times for MiniLM's heads).
        out += [{"lower": "0", "upper": "0", "mid": 0.0, "exact": {"lower": "0", "upper": "0"}} for _ in tail]
    else:
        out += [_zero_json() if _is_exact_zero(s) else ball_to_json(s) for s in tail]
    return out


def _is_exact_zero(x: Any) -> bool:
    return bool(x.is_exact() and x.is_zero())


def _zero_json() -> dict[str, Any]:
    """JSON form of the exact ball 0 (a fresh dict each time: callers may mutate)."""
    return {"lower": "0", "upper": "0", "mid": 0.0, "exact": {"lower": "0", "upper": "0"}}


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


def _report_types(layout: Any) -> tuple[str, ...]:
    """The matrix types a spectrum report holds for this layout."""
    types = tuple(getattr(layout, "matrix_types", MATRIX_TYPES))
    if getattr(layout, "has_readout", False):
        types += ("readout",)
    return types


def weights_digest(ck: Any, layout: Any, *, raw: bool, scale_logits: bool, layers: list[int] | None) -> str:
    """sha256 of the exact matrices a ``certbound spectrum`` report with these options certifies.

    The sha256 of the per-matrix digests (:func:`~certbound.pipeline._streaming.matrix_sha256`:
    identity and exact float64 values) in report order, so that workers that
    each read their own matrices can compute it. ``certbound bound --spectra``
    recomputes it from the model and refuses a report whose digest differs: a
    report is only reused for the weights it certified.

    Parameters
    ----------
    ck : Checkpoint
        The open checkpoint.
    layout : ModelLayout
        Its layout.
    raw : bool
        The report includes the raw projections.
    scale_logits : bool
        QK has the logit scale folded in.
    layers : list of int or None
        The layers reported (None: all).

    Returns
    -------
    str
        The hex sha256.
    """
    tasks = plan_tasks(layout, _report_types(layout), raw=raw, layers=layers)
    return combined_sha256(matrix_sha256(m) for m in iter_plan(ck, layout, tasks, scale_logits=scale_logits))


#: The record fields a bound reads from a report (``certbound bound --spectra``): bound by :func:`records_digest`.
_BOUND_FIELDS = ("layer", "head", "type", "shape", "rank", "certified")


def records_digest(weights_sha256: str, records: Iterable[dict[str, Any]]) -> str:
    """sha256 binding a report's σ and rank records to its weights digest.

    Covers, for every record in order, the fields ``certbound bound --spectra``
    uses (identity, shape, certified rank bounds, the certificate flag and
    the *exact* endpoints of every σᵢ), together with the weights digest: a
    report whose records were edited after ``certbound spectrum`` wrote them
    no longer matches. (A digest detects edits; it is not a signature —
    whoever recomputes it vouches for the records.)

    Parameters
    ----------
    weights_sha256 : str
        The report's :func:`weights_digest`.
    records : iterable of dict
        The records, in report order.

    Returns
    -------
    str
        The hex sha256.

    Examples
    --------
    >>> r = [{"layer": 0, "head": None, "type": "M", "shape": [1, 1], "rank": {"lower": 1, "upper": 1},
    ...       "certified": True, "sigma": [{"exact": {"lower": "1", "upper": "1"}}]}]
    >>> records_digest("ab", r) == records_digest("ab", [dict(r[0], rank={"lower": 0, "upper": 1})])
    False
    """
    h = hashlib.sha256(weights_sha256.encode())
    for r in records:
        h.update(_record_core_text(r).encode())
    return h.hexdigest()


def _record_core_text(r: dict[str, Any]) -> str:
    """What :func:`records_digest` hashes of one record: its bound fields and σ exact ends, as canonical JSON."""
    core = {k: r.get(k) for k in _BOUND_FIELDS}
    core["sigma"] = [q.get("exact") for q in r["sigma"]] if "sigma" in r else None
    return json.dumps(core, sort_keys=True, separators=(",", ":"))


#: At most this many characters of :func:`_record_core_text` are kept by a :class:`_RecordTap` (then none).
_TAP_CHARACTERS = 32 << 20


class _RecordTap:
    """Each new record's digest text and σ-less copy, taken as the runners hand it on (no store read).

    :func:`spectrum_run_of` finishes a run with :func:`records_digest` over all its records in report order and
    with their σ-less copies (:attr:`SpectrumRun.light`). For the records certified in this run both are taken
    here, from the record itself, when the runner reports it (``on_matrix``: after it is in the store), so a
    records file is not parsed back for them; a record reused from the store (``--resume``) is read back as
    before. The texts are those :func:`records_digest` would form from the stored record (JSON keeps the record's
    strings, ints, bools and lists as they are). Past :data:`_TAP_CHARACTERS` (a very large model) the tap
    keeps nothing and the run reads every record back.
    """

    def __init__(self, limit: int | None = None) -> None:
        self.limit = _TAP_CHARACTERS if limit is None else limit
        self.size = 0
        self.full = False
        self.kept: dict[Any, tuple[str, str, dict[str, Any]]] = {}  # key → (sha256, core text, σ-less record)

    def __call__(self, out: MatrixOutcome) -> None:
        if self.full or out.record is None:
            return
        text = _record_core_text(out.record)
        self.size += len(text)
        if self.size > self.limit:
            self.full = True
            self.kept.clear()
            return
        self.kept[out.key] = (out.sha256, text, {k: v for k, v in out.record.items() if k != "sigma"})

    def digest_and_light(self, run: "SpectrumRun") -> tuple[str, list[dict[str, Any]]]:
        """:func:`records_digest` of ``run``'s records and their σ-less copies, in report order."""
        h = hashlib.sha256(run.head["weights_sha256"].encode())
        light: list[dict[str, Any]] = []
        for o in run.outcomes:
            got = None if self.full else self.kept.get(o.key)
            if got is not None and got[0] == o.sha256:
                text, lt = got[1], got[2]
            else:
                rec = run.store.get(o.key, o.sha256)
                text, lt = _record_core_text(rec), {k: v for k, v in rec.items() if k != "sigma"}
            h.update(text.encode())
            light.append(lt)
        return h.hexdigest(), light


class SharedLayerCertifier:
    """Certify a shared layer's matrices (ALBERT) once per process and report them for each use.

    A matrix with ``same_as_layer`` set is the very same stored data as that
    earlier layer's (:meth:`~certbound.checkpoints.ModelLayout.shared_source_layer`):
    its record is a copy of that layer's record with its own ``layer`` and
    ``"same_as_layer"``. Picklable (workers get their own, empty, cache).
    """

    def __init__(self, certify: Any):
        self.certify = certify
        self.done: dict[tuple[Any, ...], dict[str, Any]] = {}

    def __call__(self, m: Any) -> dict[str, Any]:
        return self.many([m])[0]

    def many(self, ms: list[Any]) -> list[dict[str, Any]]:
        """Records of ``ms`` in order; the uncached ones certified together (``certify.many`` if it has one).

        Parameters
        ----------
        ms : list of TheoryMatrix
            A task's matrices, in order.

        Returns
        -------
        list of dict
            Their records (copies, with their own ``layer``, for the uses of a shared layer).
        """
        out: list[dict[str, Any] | None] = [None] * len(ms)
        todo = []
        for i, m in enumerate(ms):
            src = getattr(m, "same_as_layer", None)
            key = (m.head, m.type, getattr(m, "expert", None))
            if src is not None and (src, *key) in self.done:
                out[i] = dict(self.done[(src, *key)], layer=m.layer, same_as_layer=src)
            else:
                todo.append(i)
        many = getattr(self.certify, "many", None)
        recs = many([ms[i] for i in todo]) if many is not None else [self.certify(ms[i]) for i in todo]
        for i, rec in zip(todo, recs):
            m = ms[i]
            if getattr(m, "same_as_layer", None) is None:
                self.done[(m.layer, m.head, m.type, getattr(m, "expert", None))] = rec
            out[i] = rec
        return out  # type: ignore[return-value]


def spectrum_store_settings(mode: str, ps: Iterable[str], include_sigma: bool) -> dict[str, Any]:
    """What a stored record depends on besides its matrix (a resumed records file must match).

    Parameters
    ----------
    mode : str
        Certificate mode.
    ps : iterable
        Schatten indices of the records.
    include_sigma : bool
        Whether the records hold their ``"sigma"`` lists.

    Returns
    -------
    dict
        The settings a :class:`~certbound.pipeline._streaming.RecordStore` compares on resume
        (with the certbound version).

    Examples
    --------
    >>> s = spectrum_store_settings("auto", [0.5, "1"], False)
    >>> s["mode"], s["p"], s["sigma"]
    ('auto', ['0.5', '1'], False)
    """
    return {"certbound_version": __version__, "mode": mode, "p": [str(p) for p in ps], "sigma": bool(include_sigma)}


@dataclasses.dataclass
class SpectrumRun:
    """A finished ``certbound spectrum`` run whose records live in a store (on disk for big models).

    ``head`` is the report without ``"matrices"``; :meth:`records` reads the
    records back in report order, one at a time, each checked against the
    digest of the matrix this run read. The records without their σ lists
    (small: norms, S_p, rank) are kept from the pass that computed the
    records digest (:class:`_RecordTap`), so ``records(include_sigma=False)``
    (the table, the CSV) does not read a records file again.
    """

    head: dict[str, Any]
    outcomes: list[MatrixOutcome]
    store: MemoryRecordStore
    #: The σ-less records in report order, filled by the digest pass of :func:`spectrum_run_of` (else None).
    light: list[dict[str, Any]] | None = dataclasses.field(default=None, repr=False, compare=False)

    def records(self, *, include_sigma: bool = True) -> Iterator[dict[str, Any]]:
        """The records in report order (``include_sigma=False`` drops the σ lists).

        Parameters
        ----------
        include_sigma : bool
            Keep each record's ``"sigma"`` list.

        Yields
        ------
        dict
            One record at a time, checked against its matrix digest (a fresh top-level dict each time
            without σ lists).
        """
        if not include_sigma and self.light is not None and len(self.light) == len(self.outcomes):
            for rec in self.light:
                yield dict(rec)
            return
        for o in self.outcomes:
            rec = self.store.get(o.key, o.sha256)
            if not include_sigma:
                rec = {k: v for k, v in rec.items() if k != "sigma"}
            yield rec

    def report(self, *, include_sigma: bool = True) -> dict[str, Any]:
        """The whole report as one dict (in memory).

        Parameters
        ----------
        include_sigma : bool
            Keep each record's ``"sigma"`` list.

        Returns
        -------
        dict
            The report head with ``"matrices"``.
        """
        return {**self.head, "matrices": list(self.records(include_sigma=include_sigma))}

    def write_json(self, path: str | os.PathLike[str]) -> None:
        """Write the report atomically, streaming the records (the text of ``json_text(self.report())``).

        Parameters
        ----------
        path : str or path-like
            The output file (replaced only when the whole report is written).
        """
        write_report_json(path, self.head, self.records())


def spectrum_run(model: str, *, spectrum_mode: str = DEFAULT_SPECTRUM_MODE, raw: bool = False,
                 scale_logits: bool = False, ps: Iterable[str] = ("0.5", "1", "2"), layers: list[int] | None = None, jobs: int = 1,
                 config: str | None = None, mapping: str | None = None, include_sigma: bool = True,
                 progress: ProgressSpec = None, store: MemoryRecordStore | None = None,
                 dask: str | None = None, mode: str | None = None) -> SpectrumRun:
    """Certify a model's matrices into ``store``: the report head and the per-matrix digests.

    ``model`` is a checkpoint path or a packaged checkpoint name. The work is
    split into tasks (:func:`~certbound.pipeline._streaming.plan_tasks`: the
    matrices of one layer read from the same tensors) run in this process, in
    ``jobs`` spawned processes, or on the Dask scheduler ``dask`` (``"local"``:
    a LocalCluster of ``jobs`` processes); each task reads its own tensors
    from the model's path, so no arrays are sent anywhere. Records are put in
    ``store`` as they are certified; records already in ``store`` (a resumed
    :class:`~certbound.pipeline._streaming.RecordStore`) whose matrix digest is
    unchanged are reused, not recomputed.

    Parameters
    ----------
    model : str
        A checkpoint path or a packaged checkpoint name.
    spectrum_mode : {"fast", "tight", "arb", "gram", "auto"}
        Certificate mode of the singular-value kernel (:data:`certbound.pipeline.SPECTRUM_MODES`;
        default ``"auto"``); each record's ``mode`` is the certificate that succeeded, and the
        report's ``options["mode"]`` (the stored format's key) this choice.
    raw : bool
        Also certify the raw per-layer W_Q, W_K, W_V, W_O.
    scale_logits : bool
        Fold the attention logit scale 1/√d_h into QK.
    ps : iterable of str
        Schatten indices in (0, 2] to report S_p for (exact decimals or ratios).
    layers : list of int, optional
        Only these layers (0-based).
    jobs : int
        Worker processes (or Dask workers with ``dask="local"``).
    config, mapping : str, optional
        ``--config`` / ``--mapping`` files.
    include_sigma : bool
        Keep every record's σ list (``False``: norms, S_p and rank only).
    progress : None, bool, "auto" or callable, optional
        See :mod:`certbound.pipeline._progress`.
    store : MemoryRecordStore, optional
        Where records go (default: a new in-memory store).
    dask : str, optional
        A Dask scheduler address or ``"local"`` (the ``dask`` extra).
    mode : str, optional
        Deprecated name of ``spectrum_mode`` (warns).

    Returns
    -------
    SpectrumRun
        The report head and the store; :meth:`SpectrumRun.report` assembles the dict,
        :meth:`SpectrumRun.write_json` streams it to a file.
    """
    spectrum_mode = spectrum_mode_keyword(spectrum_mode, mode)  # before the model is opened
    path = resolve_model_name(model)
    ck, layout = open_checkpoint(path, config=config, mapping=mapping)
    try:
        return spectrum_run_of(ck, layout, path, spectrum_mode=spectrum_mode, raw=raw, scale_logits=scale_logits,
                               ps=ps, layers=layers, jobs=jobs, include_sigma=include_sigma, progress=progress,
                               store=store, dask=dask)
    finally:
        ck.close()


def spectrum_run_of(ck: Any, layout: Any, path: str, *, spectrum_mode: str = DEFAULT_SPECTRUM_MODE,
                    raw: bool = False, scale_logits: bool = False, ps: Iterable[str] = ("0.5", "1", "2"),
                    layers: list[int] | None = None, jobs: int = 1, include_sigma: bool = True,
                    progress: ProgressSpec = None, store: MemoryRecordStore | None = None,
                    dask: str | None = None, mode: str | None = None) -> SpectrumRun:
    """:func:`spectrum_run` of an opened checkpoint ``ck`` with its resolved ``layout`` (not closed here).

    ``path`` is what the report's ``"model"`` field names. Serial runs use
    ``ck`` itself; workers (``jobs > 1``, ``dask``) reopen ``ck.path`` with
    ``layout``, so those need a checkpoint on disk.

    Parameters
    ----------
    ck, layout, path
        The opened checkpoint, its layout, and the name the report gives it.
    spectrum_mode : {"fast", "tight", "arb", "gram", "auto"}
        Certificate mode (default ``"auto"``), as for :func:`spectrum_run`.
    raw, scale_logits, ps, layers, jobs, include_sigma, progress, store, dask
        As for :func:`spectrum_run`.
    mode : str, optional
        Deprecated name of ``spectrum_mode`` (warns).

    Returns
    -------
    SpectrumRun
        As :func:`spectrum_run`.
    """
    spectrum_mode = spectrum_mode_keyword(spectrum_mode, mode)
    ps = list(ps)
    store = MemoryRecordStore() if store is None else store
    types = _report_types(layout)
    tasks = plan_tasks(layout, types, raw=raw, layers=layers)
    nl = layout.num_layers if layers is None else len(layers)
    total = nl * (2 * layout.num_heads + len(types) - 2 + (4 if raw else 0))
    source = ModelSource(os.path.abspath(ck.path), layout, scale_logits=scale_logits, run=uuid.uuid4().hex)
    certify: Any = MatrixCertifier(spectrum_mode, tuple(ps), include_sigma)
    if any(getattr(s, "shared_groups", 0) for s in getattr(layout, "stacks", ())):
        certify = SharedLayerCertifier(certify)
    if (dask is not None or jobs > 1) and not os.path.exists(ck.path):
        raise ValueError(f"{ck.path}: parallel workers reopen the model from its path, and there is no such "
                         f"file (run with one job)")
    prog = progress_reporter(progress, total)

    tap = _RecordTap()

    def step(out: MatrixOutcome) -> None:
        tap(out)
        layer, head, typ = out.key[:3]  # (+ stack, expert for some architectures)
        prog.step(f"layer {layer}" + ("" if head is None else f" head {head}") + f" {typ}")

    try:
        if dask is not None:
            from certbound.pipeline._distributed import run_dask

            outcomes = run_dask(dask, source, tasks, certify, store, n_workers=jobs, on_matrix=step)
        elif jobs > 1:
            with _single_threaded_blas_env():
                outcomes = run_processes(source, tasks, certify, store, jobs, on_matrix=step)
        else:
            outcomes = run_serial(source, tasks, certify, store, on_matrix=step, opened=(ck, layout))
    finally:
        prog.close()
    cfg = layout.summary()
    cfg.update({"format": ck.format, "config_file": ck.config_path,
                "model_type": (ck.config or {}).get("model_type")})
    if ck.config and "_inferred" in ck.config:
        cfg["config_inferred"] = ck.config["_inferred"]
    head = {
        "model": path,
        "config": cfg,
        "options": {"mode": spectrum_mode, "raw": raw, "scale_logits": scale_logits, "p": ps, "layers": layers,
                    "ignored": ("none (certbound-pi: the model has no biases, LayerNorm or embeddings)"
                                if layout.theory_config is not None else
                                "biases, LayerNorm, embeddings, pooler/heads, position biases")},
        "certbound_version": __version__,
        # sha256 of every certified matrix's digest (identity and exact float64
        # values; `certbound bound --spectra` checks it against the model it bounds)
        "weights_sha256": combined_sha256(o.sha256 for o in outcomes),
    }
    run = SpectrumRun(head, outcomes, store)
    # sha256 over the σ/rank records and the weights digest (`bound --spectra` refuses edited records);
    # one streaming pass over the stored records, in report order.
    # The same pass keeps the σ-less records (run.light): the table and CSV need no second read of the store. The
    # records certified in this run come from the tap (no parse of a records file), reused ones from the store.
    head["records_sha256"], run.light = tap.digest_and_light(run)
    return run


def spectrum_report(model: str, *, spectrum_mode: str = DEFAULT_SPECTRUM_MODE, raw: bool = False,
                    scale_logits: bool = False, ps: Iterable[str] = ("0.5", "1", "2"), layers: list[int] | None = None, jobs: int = 1,
                    config: str | None = None, mapping: str | None = None,
                    include_sigma: bool = True, progress: ProgressSpec = None,
                    dask: str | None = None, mode: str | None = None) -> dict[str, Any]:
    """The whole JSON report of ``certbound spectrum`` as a dict (see the README).

    ``model`` is a checkpoint path or a packaged checkpoint name.
    ``include_sigma=False`` omits every record's ``"sigma"`` list (used when no
    JSON file is requested). ``progress``: see :mod:`certbound.pipeline._progress`.
    For a model too big to hold its report in memory, use :func:`spectrum_run`
    with a :class:`~certbound.pipeline._streaming.RecordStore` and
    :meth:`SpectrumRun.write_json`.

    Parameters
    ----------
    spectrum_mode : {"fast", "tight", "arb", "gram", "auto"}
        Certificate mode (default ``"auto"``), as for :func:`spectrum_run`.
    model, raw, scale_logits, ps, layers, jobs, config, mapping, include_sigma, progress, dask
        As for :func:`spectrum_run`.
    mode : str, optional
        Deprecated name of ``spectrum_mode`` (warns).

    Returns
    -------
    dict
        ``model``, ``config``, ``options``, ``certbound_version``, ``weights_sha256``,
        ``records_sha256`` and ``matrices``: one record per theory matrix (:func:`certify_theory_matrix`).

    Examples
    --------
    >>> from certbound.models import demo_checkpoint_path
    >>> rep = spectrum_report(str(demo_checkpoint_path()), include_sigma=False)
    >>> rep["options"]["mode"], [r["type"] for r in rep["matrices"]]
    ('auto', ['QK', 'VO', 'M_in', 'M_out', 'readout'])
    """
    spectrum_mode = spectrum_mode_keyword(spectrum_mode, mode)
    return spectrum_run(model, spectrum_mode=spectrum_mode, raw=raw, scale_logits=scale_logits, ps=ps, layers=layers,
                        jobs=jobs, config=config, mapping=mapping, include_sigma=include_sigma, progress=progress,
                        dask=dask).report()


def spectrum_report_of(ck: Any, layout: Any, path: str, *, spectrum_mode: str = DEFAULT_SPECTRUM_MODE,
                       raw: bool = False, scale_logits: bool = False, ps: Iterable[str] = ("0.5", "1", "2"),
                       layers: list[int] | None = None, jobs: int = 1, include_sigma: bool = True,
                       progress: ProgressSpec = None, mode: str | None = None) -> dict[str, Any]:
    """:func:`spectrum_report` of an opened checkpoint ``ck`` with its resolved ``layout`` (not closed here).

    ``path`` is what the report's ``"model"`` field names.

    Parameters
    ----------
    ck, layout, path
        The opened checkpoint, its layout, and the name the report gives it.
    spectrum_mode : {"fast", "tight", "arb", "gram", "auto"}
        Certificate mode (default ``"auto"``), as for :func:`spectrum_run`.
    raw, scale_logits, ps, layers, jobs, include_sigma, progress
        As for :func:`spectrum_run`.
    mode : str, optional
        Deprecated name of ``spectrum_mode`` (warns).

    Returns
    -------
    dict
        As :func:`spectrum_report`.
    """
    spectrum_mode = spectrum_mode_keyword(spectrum_mode, mode)
    return spectrum_run_of(ck, layout, path, spectrum_mode=spectrum_mode, raw=raw, scale_logits=scale_logits, ps=ps,
                           layers=layers, jobs=jobs, include_sigma=include_sigma, progress=progress).report()
