"""Certify a model's matrices at any size: bounded memory, records on disk, resume.

The unit of work is a :class:`MatrixTask`: the matrices of one type in one
layer (all its QK heads, all its VO heads, one FFN matrix, the readout). A
task is a *recipe* — layer and matrix type — not
arrays: whoever runs it (this process, a process pool, a Dask worker) opens
the checkpoint itself through a picklable :class:`ModelSource`, reads only
that task's tensors (memory-mapped, one tensor group at a time) and certifies them with a
``certify(TheoryMatrix) -> dict`` function. So the memory of a run is bounded
by what one task needs, whatever the model size.

Every matrix is identified by its key ``(layer, head, type)`` and by
:func:`matrix_sha256`, the sha256 of its identity and exact float64 values.
Certified records are appended to a :class:`RecordStore` (JSON Lines, one
line per matrix, flushed at once and fsync'ed at least every second) as they are produced. A resumed run passes the
stored digests to each task: a matrix whose digest equals its record's is not
certified again; one whose digest differs (other weights, same names and
shapes) is certified again and its new record supersedes the old one. A
record is therefore only ever reused for the exact values it certified — the
certificate is a function of those values and of the settings, which the
store's header pins (a store written with other settings is refused).

:func:`write_report_json` assembles the final report from the store in report
order, streaming record by record into an atomically replaced file; the text
is byte-identical to ``json_text(report)`` of the whole report in memory.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import json.encoder
import math
import numbers
import os
import time
from typing import Any, Callable, Iterable, Iterator, Sequence

from certbound._errors import OptionError
from certbound.checkpoints import RAW_TYPES
from certbound.checkpoints._matrices import theory_types_for_layout
from certbound.report.writers import json_text, set_usual_permissions, stage_tempfile

__all__ = [
    "MatrixKey",
    "matrix_key",
    "matrix_sha256",
    "combined_sha256",
    "ModelSource",
    "MatrixTask",
    "MatrixOutcome",
    "plan_tasks",
    "layer_indices",
    "iter_plan",
    "iter_task",
    "run_task",
    "RecordStore",
    "MemoryRecordStore",
    "run_serial",
    "OutcomeCollector",
    "run_processes",
    "with_known",
    "write_report_json",
    "stage_report_json",
    "StagedFile",
    "HEAD_BATCH_BYTES",
    "factor_bytes",
    "release_freed_memory",
]

MatrixKey = tuple[Any, ...]  # (layer, head, type[, stack, expert])

_STORE_FORMAT = "certbound-spectrum-records"

#: matrix_sha256 hashes a matrix in blocks of about this many bytes.
_HASH_BLOCK_BYTES = 1 << 21

#: Per-head products of one layer (QK and VO together: the kernel's small d×d work pays per call) are
#: certified in batches whose
#: factors hold at most about this many bytes (float64): the stacked kernel's
#: workspace is a few times its batch (proofs/enclosure.md §10), so a 7B
#: layer's 32 heads (8 MiB of factors each) go in batches of 8, a GPT-2
#: layer's 12 heads (0.75 MiB each) in one.
HEAD_BATCH_BYTES = 64 << 20
_STORE_VERSION = 1

#: Seconds between fsyncs of a :class:`RecordStore` (every record is flushed to the OS at once).
FSYNC_INTERVAL = 1.0


def matrix_key(m: Any) -> MatrixKey:
    """``(layer, head, type)`` of a :class:`~certbound.checkpoints.TheoryMatrix`, unique within a report.

    Architectures with several stacks (encoder-decoder) or experts append
    ``stack`` and ``expert`` (only when set, so other keys stay 3-tuples).

    Parameters
    ----------
    m : certbound.checkpoints.TheoryMatrix
        The matrix.

    Returns
    -------
    tuple
        ``(layer, head, type)``, with ``stack`` and ``expert`` appended where set.
    """
    key: tuple[Any, ...] = (int(m.layer), None if m.head is None else int(m.head), str(m.type))
    stack, expert = getattr(m, "stack", ""), getattr(m, "expert", None)
    if stack or expert is not None:
        key += (str(stack), None if expert is None else int(expert))
    return key  # type: ignore[return-value]


def matrix_sha256(m: Any) -> str:
    """sha256 (hex) of a theory matrix's identity and exact stored values.

    Fed: ``layer|head|type|shape|logit_scale_d|logit_scale_folded|``, then for
    each factor (or the dense matrix) its shape and its C-ordered float64
    bytes. Two matrices with equal digests are, up to a sha256 collision, the
    same matrix with the same pending scale.

    Parameters
    ----------
    m : certbound.checkpoints.TheoryMatrix
        The matrix (dense or factored).

    Returns
    -------
    str
        64 hexadecimal digits.

    Examples
    --------
    >>> import numpy as np
    >>> from certbound.checkpoints import TheoryMatrix
    >>> a = TheoryMatrix(0, None, "M_in", (2, 2), dense=np.eye(2))
    >>> b = TheoryMatrix(0, None, "M_in", (2, 2), dense=np.array([[1.0, 0], [0, 1 + 2**-52]]))
    >>> matrix_sha256(a) == matrix_sha256(a), matrix_sha256(a) == matrix_sha256(b)
    (True, False)
    """
    import numpy as np

    h = hashlib.sha256()
    h.update(f"{m.layer}|{m.head}|{m.type}|{tuple(m.shape)}|{m.logit_scale_d}|{m.logit_scale_folded}|".encode())
    if len(matrix_key(m)) > 3:  # stack / expert
        h.update(f"{matrix_key(m)[3:]}|".encode())
    for a in (m.factors if m.factors is not None else (m.dense,)):
        a = np.asarray(a)
        h.update(repr(a.shape).encode())
        # The C-ordered float64 bytes, fed in row blocks: the same digest as one
        # update with the whole array, without a C-ordered copy of a transposed view.
        rows = a.reshape(a.shape[0], -1) if a.ndim > 1 else a.reshape(1, -1)
        step = max(1, _HASH_BLOCK_BYTES // max(rows.shape[1] * 8, 1))
        for i in range(0, rows.shape[0], step):
            h.update(memoryview(np.ascontiguousarray(rows[i:i + step], dtype=np.float64)).cast("B"))
    return h.hexdigest()


def combined_sha256(digests: Iterable[str]) -> str:
    """The report's ``weights_sha256``: sha256 of the per-matrix digests in report order.

    Parameters
    ----------
    digests : iterable of str
        The per-matrix digests (:func:`matrix_sha256`), in report order.

    Returns
    -------
    str
        64 hexadecimal digits.

    Examples
    --------
    >>> combined_sha256([]) == hashlib.sha256(b"").hexdigest()
    True
    """
    h = hashlib.sha256()
    for d in digests:
        h.update(d.encode("ascii") + b"\n")
    return h.hexdigest()


@dataclasses.dataclass(frozen=True)
class ModelSource:
    """Everything a process needs to read the model's matrices itself (picklable; no arrays).

    ``path`` is the checkpoint (directory or weights file) and must name the
    same files on every machine that runs tasks (a shared file system for a
    Dask cluster); ``layout`` is the resolved
    :class:`~certbound.checkpoints.ModelLayout` (tensor names, sizes, slicing),
    so workers need neither the config nor a mapping file. ``run`` is a token
    unique to one run: worker processes keep the model open between the tasks
    of a run, never into another run (the files may have been rewritten since).
    """

    path: str
    layout: Any
    scale_logits: bool = False
    run: str = ""

    def open(self) -> tuple[Any, Any]:
        """``(Checkpoint, ModelLayout)`` (metadata only; tensors are read on demand).

        Returns
        -------
        tuple of (Checkpoint, ModelLayout)
            The caller closes the checkpoint.
        """
        from certbound.checkpoints import load_checkpoint

        return load_checkpoint(self.path), self.layout


@dataclasses.dataclass(frozen=True)
class MatrixTask:
    """The matrices of one layer built from the same tensors, in report order.

    Attributes
    ----------
    index : int
        Position of the task in the run (tasks' matrices concatenate to the report).
    layer : int
    types : tuple of str
        Matrix types passed to :func:`~certbound.checkpoints.theory_matrices`.
    known : tuple of (MatrixKey, str)
        Matrices already certified, with the digest their record certified.
    """

    index: int
    layer: int
    types: tuple[str, ...]
    known: tuple[tuple[MatrixKey, str], ...] = ()


@dataclasses.dataclass(frozen=True)
class MatrixOutcome:
    """One matrix of a task: its key, digest, and new record (``None``: the stored one is valid)."""

    key: MatrixKey
    sha256: str
    record: dict[str, Any] | None


def layer_indices(layers: Any, num_layers: int) -> list[int] | None:
    """Check a ``layers`` argument: a sequence of distinct 0-based layer indices of a model with ``num_layers``.

    A string, a single number or a bool is refused rather than iterated (``layers="10"`` would otherwise
    be the layers 1 and 0), and so is a repeated or out-of-range layer.

    Parameters
    ----------
    layers : sequence of int or None
        The argument; None means every layer.
    num_layers : int
        The model's layer count.

    Returns
    -------
    list of int or None
        The indices in the order given, or None.

    Raises
    ------
    certbound.OptionError
        Naming the problem.

    Examples
    --------
    >>> layer_indices([0, 5], 6), layer_indices(None, 6)
    ([0, 5], None)
    >>> layer_indices("10", 12)
    Traceback (most recent call last):
    ...
    certbound.OptionError: `layers` must be a list of 0-based layer indices such as [1, 0], not the string '10'
    """
    if layers is None:
        return None
    if isinstance(layers, (str, bytes)):
        raise OptionError(f"`layers` must be a list of 0-based layer indices such as [1, 0], not the string {layers!r}")
    if isinstance(layers, numbers.Number):
        raise OptionError(f"`layers` must be a list of 0-based layer indices, not the number {layers!r} "
                          f"(layer {layers!r} alone: [{layers!r}])")
    out = []
    for x in layers:
        if isinstance(x, bool) or not isinstance(x, numbers.Integral):
            raise OptionError(f"`layers`: {x!r} is not a layer index (an integer)")
        out.append(int(x))
    bad = [x for x in out if not 0 <= x < num_layers]
    if bad:
        noun = "layer" if num_layers == 1 else "layers"
        raise OptionError(f"`layers`: layer {bad[0]} out of range (model has {num_layers} {noun}, 0-based)")
    if len(set(out)) != len(out):
        raise OptionError(f"`layers` {out} repeats a layer")
    return out


def plan_tasks(layout: Any, types: Sequence[str], *, raw: bool = False,
               layers: Sequence[int] | None = None) -> list[MatrixTask]:
    """Split a report into tasks: per layer one task per matrix type, then the readout (if asked for).

    ``types`` are the layout's concrete types (``layout.matrix_types``, as
    :func:`~certbound.pipeline._spectrum._report_types` gives them); ``raw``
    adds tasks for ``W_Q``, ``W_K`` and for ``W_V``, ``W_O`` after them. So the QK and VO heads of a
    layer are one task (certified as one batch of heads, :func:`_head_types_together`), each FFN matrix
    one more: on ``jobs`` workers a single big layer is certified in parallel. A type that
    cannot be asked for on its own for this layout makes the whole layer one
    task. The report lists the matrices in this plan's order
    (:func:`iter_plan`; ``weights_digest`` follows the same order).

    Parameters
    ----------
    layout : certbound.checkpoints.ModelLayout
        The checkpoint's layout.
    types : sequence of str
        The layout's concrete matrix types to report (``"readout"`` adds the readout task).
    raw : bool
        Also the raw projections W_Q, W_K, W_V, W_O.
    layers : sequence of int, optional
        Only these layers (0-based; default all).

    Returns
    -------
    list of MatrixTask
        The tasks in report order (each with its ``index``).

    Raises
    ------
    certbound.OptionError
        For a bad ``layers`` (:func:`layer_indices`).
    """
    checked = layer_indices(layers, layout.num_layers)
    layer_list = list(range(layout.num_layers)) if checked is None else checked
    theory = tuple(t for t in types if t != "readout")
    # The raw projections in the pairs the loader reads together (W_O alone trips its fused-QKV path).
    raws = [tuple(RAW_TYPES[:2]), tuple(RAW_TYPES[2:])] if raw else []
    try:
        alone = {t: theory_types_for_layout({t}, layout, "", False) for t in theory}
        groups = _head_types_together([(t,) for t in theory]) + raws if all(v == {t} for t, v in alone.items()) \
            else [theory + tuple(RAW_TYPES if raw else ())]
    except ValueError:
        groups = [theory + tuple(RAW_TYPES if raw else ())]
    tasks: list[MatrixTask] = []
    for layer in layer_list:
        for g in groups:
            if g:
                tasks.append(MatrixTask(len(tasks), layer, g))
    if "readout" in types and layout.num_layers - 1 in layer_list:
        tasks.append(MatrixTask(len(tasks), layout.num_layers - 1, ("readout",)))
    return tasks


#: The per-head product types: a layer's are one task, so its QK and VO heads are one kernel batch.
_HEAD_TYPES = ("QK", "VO")


def _head_types_together(groups: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """``groups`` with the single-type groups of :data:`_HEAD_TYPES` merged into one, where the first was.

    The loader yields a layer's matrices type by type (all QK heads, then all VO heads), so the report order
    and :func:`~certbound.pipeline._spectrum.weights_digest` are those of one task per type; the records are
    the same too (a head's enclosure does not depend on its batch). Measured (session 7, one BLAS thread):
    ``spectrum_run`` 1.5 % less CPU on all-MiniLM-L6-v2, 1–6 % on a GPT-2-small shape, the same peak RSS.

    >>> _head_types_together([("QK",), ("VO",), ("M_in",), ("M_out",)])
    [('QK', 'VO'), ('M_in',), ('M_out',)]
    """
    heads = tuple(g[0] for g in groups if g[0] in _HEAD_TYPES)
    if len(heads) < 2:
        return groups
    out: list[tuple[str, ...]] = []
    for g in groups:
        if g[0] not in _HEAD_TYPES:
            out.append(g)
        elif g[0] == heads[0]:
            out.append(heads)
    return out


def iter_plan(ck: Any, layout: Any, tasks: Sequence[MatrixTask], *, scale_logits: bool = False) -> Iterator[Any]:
    """The matrices of ``tasks`` in order, read from an opened checkpoint (what each task reads).

    Parameters
    ----------
    ck : certbound.checkpoints.Checkpoint
        The opened checkpoint.
    layout : certbound.checkpoints.ModelLayout
        Its layout.
    tasks : sequence of MatrixTask
        The plan (:func:`plan_tasks`).
    scale_logits : bool
        Fold the logit scale into QK, as the run does.

    Yields
    ------
    certbound.checkpoints.TheoryMatrix
        Each task's matrices, task by task.
    """
    from certbound.checkpoints import theory_matrices

    for task in tasks:
        yield from theory_matrices(ck, layout=layout, types=task.types, scale_logits=scale_logits,
                                   layers=[task.layer])


# One opened model per worker process and run (Dask and pool workers run many tasks of one model).
_OPENED: dict[tuple[str, str], tuple[Any, Any]] = {}


def _opened(source: ModelSource) -> tuple[Any, Any]:
    key = (source.path, source.run)
    got = _OPENED.get(key)
    if got is None:
        for ck, _ in _OPENED.values():
            ck.close()
        _OPENED.clear()
        got = _OPENED[key] = source.open()
    return got


def factor_bytes(m: Any) -> int:
    """Bytes of a per-head product's two factors as float64 (what a head batch holds).

    Parameters
    ----------
    m : certbound.checkpoints.TheoryMatrix
        A factored (per-head) matrix.

    Returns
    -------
    int
        8 × the number of entries of its factors.
    """
    return sum(int(f.size) * 8 for f in m.factors)


def release_freed_memory() -> None:
    """Return freed heap memory to the OS (glibc ``malloc_trim``; elsewhere nothing).

    Arrays up to glibc's dynamic mmap threshold (≤ 32 MiB) come from the heap,
    and freed heap pages stay in the resident set: without this, the RSS
    after a layer's heads carried their few hundred MiB into the next, much
    bigger, dense matrix.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


_TRIM: list[Any] = []


def _malloc_trim() -> Any:
    if not _TRIM:
        fn = None
        try:
            import ctypes
            import ctypes.util

            name = ctypes.util.find_library("c")
            if name:
                fn = getattr(ctypes.CDLL(name), "malloc_trim", None)
                if fn is not None:
                    fn.argtypes, fn.restype = [ctypes.c_size_t], ctypes.c_int
        except (OSError, AttributeError):  # pragma: no cover - not glibc
            fn = None
        _TRIM.append(fn)
    return _TRIM[0]


def iter_task(source: ModelSource, task: MatrixTask, certify: Callable[[Any], dict[str, Any]],
              opened: tuple[Any, Any] | None = None) -> Iterator[MatrixOutcome]:
    """Read a task's matrices and certify those without a valid record, one at a time.

    ``opened`` is the ``(Checkpoint, ModelLayout)`` of ``source`` if the
    caller holds it open; otherwise this process's copy for the run is used.

    Parameters
    ----------
    source : ModelSource
        How to open the model (path, config, mapping).
    task : MatrixTask
        The task (with the digests of records that may be reused, ``known``).
    certify : callable
        ``certify(theory_matrix) -> record dict`` (picklable for worker processes).
    opened : tuple, optional
        ``(Checkpoint, ModelLayout)`` of ``source``, held open by the caller.

    Yields
    ------
    MatrixOutcome
        Per matrix: its key, digest and new record (``None`` when a stored record is reused).
    """
    ck, layout = opened if opened is not None else _opened(source)
    known = dict(task.known)
    # A certifier with ``.many`` gets consecutive per-head products of one
    # layer as one batch (proofs/enclosure.md §10); only their small
    # factors are buffered, dense matrices are certified as they come.
    many = getattr(certify, "many", None)
    pending: list[tuple[Any, MatrixKey, str]] = []
    held = [0]  # factor bytes in `pending` (a running sum)

    def flush() -> Iterator[MatrixOutcome]:
        batch = list(pending)
        pending.clear()
        held[0] = 0
        keys = [(b[1], b[2]) for b in batch]
        if batch:
            recs = many([b[0] for b in batch])  # type: ignore[misc]
            del batch[:]  # the factors are not needed for yielding
            release_freed_memory()
            for (key, sha), rec in zip(keys, recs):
                yield MatrixOutcome(key, sha, rec)

    matrices = iter_plan(ck, layout, [task], scale_logits=source.scale_logits)
    while True:
        try:
            m = next(matrices)
        except StopIteration:
            break
        except BaseException:
            # Reading the next matrix failed: the buffered heads are still certified and stored first.
            yield from flush()
            raise
        key, sha = matrix_key(m), matrix_sha256(m)
        if known.get(key) == sha:
            yield from flush()
            yield MatrixOutcome(key, sha, None)
        elif many is not None and m.factors is not None:
            size = factor_bytes(m)
            if pending and (pending[0][0].layer != m.layer or held[0] + size > HEAD_BATCH_BYTES):
                yield from flush()
            pending.append((m, key, sha))
            held[0] += size
        else:
            yield from flush()
            rec = certify(m)
            del m  # the matrix is freed before its record is handed on (and the next one is read)
            release_freed_memory()
            yield MatrixOutcome(key, sha, rec)
            continue
        del m
    yield from flush()


def run_task(source: ModelSource, task: MatrixTask,
             certify: Callable[[Any], dict[str, Any]]) -> tuple[int, list[MatrixOutcome]]:
    """:func:`iter_task` as one call (for process pools and Dask): ``(task.index, outcomes)``.

    Parameters
    ----------
    source : ModelSource
        How to open the model.
    task : MatrixTask
        The task.
    certify : callable
        ``certify(theory_matrix) -> record dict`` (picklable for worker processes).

    Returns
    -------
    tuple
        ``(task.index, outcomes)``.
    """
    return task.index, list(iter_task(source, task, certify))


def _key_json(key: MatrixKey) -> list[Any]:
    return list(key)


def _key_from_json(obj: Any) -> MatrixKey:
    layer, head, typ, *extra = obj
    key: tuple[Any, ...] = (int(layer), None if head is None else int(head), str(typ))
    if extra:
        stack, expert = extra
        key += (str(stack), None if expert is None else int(expert))
    return key  # type: ignore[return-value]


class MemoryRecordStore:
    """The :class:`RecordStore` interface without a file (runs that write no JSON)."""

    path: str | None = None

    def __init__(self) -> None:
        self._records: dict[MatrixKey, tuple[str, dict[str, Any]]] = {}
        self.added = 0
        self.reused = 0

    def known(self) -> dict[MatrixKey, str]:
        """Key → digest of every valid record.

        Returns
        -------
        dict
            Matrix key → sha256 of the values its record certified.
        """
        return {k: sha for k, (sha, _) in self._records.items()}

    def add(self, key: MatrixKey, sha256: str, record: dict[str, Any]) -> None:
        """Store a new record (superseding one of the same key).

        Parameters
        ----------
        key : tuple
            The matrix key (:func:`matrix_key`).
        sha256 : str
            The digest of the values the record certified (:func:`matrix_sha256`).
        record : dict
            The record.
        """
        self._records[key] = (sha256, record)
        self.added += 1

    def get(self, key: MatrixKey, sha256: str) -> dict[str, Any]:
        """The record of ``key``, which must have certified the matrix with digest ``sha256``.

        Parameters
        ----------
        key : tuple
            The matrix key.
        sha256 : str
            The digest the record must have certified.

        Returns
        -------
        dict
            The record.

        Raises
        ------
        KeyError
            If there is no record of ``key``.
        ValueError
            If its record certified other values.
        """
        try:
            sha, rec = self._records[key]
        except KeyError:
            raise KeyError(f"no record of matrix {key}") from None
        if sha != sha256:
            raise ValueError(f"the record of matrix {key} certified other values (sha256 {sha} != {sha256})")
        return rec

    def close(self) -> None:
        """Nothing to release."""

    def __enter__(self) -> "MemoryRecordStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class RecordStore(MemoryRecordStore):
    """Append-only JSON Lines file of certified records; a crash loses at most the record being written.

    Line 1 is a header ``{"format", "version", "settings"}``; every further
    line is ``{"key": [layer, head, type], "sha256": …, "record": {…}}``,
    written with one ``write`` and flushed to the operating system before the
    next matrix starts, so a killed process (``kill -9``) loses at most the
    record being written. The file is fsync'ed at most every
    :data:`FSYNC_INTERVAL` seconds and on close: an operating-system crash or
    power loss loses at most that much work (one fsync per record cost ≈ 1 s of
    wall time on MiniLM's 156 records). Only the byte offsets are kept in
    memory; records are read back on demand.

    Parameters
    ----------
    path : str
        The records file.
    settings : dict
        Everything besides the matrix values that a record depends on (mode,
        Schatten indices, whether σ lists are included, version). A resumed
        store must have been written with equal settings.
    resume : bool
        Keep the valid records of an existing file (a partial last line, from
        a crash mid-write, is cut off). Otherwise the file is started afresh.

    Raises
    ------
    ValueError
        Resuming a file that is not a records file, or one written with other
        settings (the message names the differing settings).

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "r.jsonl")
    >>> with RecordStore(p, {"mode": "fast"}, resume=False) as s:
    ...     s.add((0, 1, "QK"), "ab" * 32, {"layer": 0})
    >>> with open(p, "ab") as f:
    ...     _ = f.write(b'{"key": [0, 2, "QK"], "sha')  # killed mid-write
    >>> with RecordStore(p, {"mode": "fast"}, resume=True) as s:
    ...     s.known(), s.get((0, 1, "QK"), "ab" * 32)
    ({(0, 1, 'QK'): 'abababababababababababababababababababababababababababababababab'}, {'layer': 0})
    """

    def __init__(self, path: str | os.PathLike[str], settings: dict[str, Any], *, resume: bool):
        super().__init__()
        self._synced_at = time.monotonic()
        self.path = os.fspath(path)
        self.settings = json.loads(json.dumps(settings))  # normalised as stored (tuples → lists)
        self._index: dict[MatrixKey, tuple[str, int]] = {}
        if resume and os.path.exists(self.path):
            self._f = open(self.path, "r+b")
            self._load()
        else:
            self._f = open(self.path, "w+b")
            self._f.write(self._line({"format": _STORE_FORMAT, "version": _STORE_VERSION,
                                      "settings": self.settings}))
            self._sync()

    @staticmethod
    def _line(obj: Any) -> bytes:
        return (json.dumps(obj, allow_nan=False, ensure_ascii=False) + "\n").encode("utf-8")

    def _sync(self) -> None:
        self._f.flush()
        os.fsync(self._f.fileno())
        self._synced_at = time.monotonic()

    def _load(self) -> None:
        f = self._f
        first = f.readline()
        try:
            head = json.loads(first)
            ok = isinstance(head, dict) and head.get("format") == _STORE_FORMAT and first.endswith(b"\n")
        except (json.JSONDecodeError, UnicodeDecodeError):
            ok = False
        if not ok:
            raise ValueError(f"{self.path}: not a certbound records file (cannot resume from it; "
                             f"delete it or choose another file)")
        if head.get("version") != _STORE_VERSION:
            raise ValueError(f"{self.path}: records format version {head.get('version')}, this certbound "
                             f"writes version {_STORE_VERSION}; delete the file to start afresh")
        if head.get("settings") != self.settings:
            old = head.get("settings") or {}
            diff = sorted(k for k in set(old) | set(self.settings) if old.get(k) != self.settings.get(k))
            raise OptionError(f"{self.path}: records were written with other settings "
                              + ", ".join(f"{k}: {old.get(k)!r} there, {self.settings.get(k)!r} now" for k in diff)
                              + "; they cannot be reused (run without `resume`, or delete the file)")
        good_end = f.tell()
        while True:
            pos = f.tell()
            line = f.readline()
            if not line:
                break
            if not line.endswith(b"\n"):
                break  # partial last line: the process died while writing it
            try:
                obj = json.loads(line)
                key = _key_from_json(obj["key"])
                sha = str(obj["sha256"])
                if not isinstance(obj["record"], dict):
                    raise TypeError
            except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ValueError):
                raise ValueError(f"{self.path}: corrupt record at byte {pos} (not a crash-truncated last "
                                 f"line); delete the file to start afresh") from None
            self._index[key] = (sha, pos)  # a later record of the same key supersedes
            good_end = f.tell()
        f.truncate(good_end)
        f.seek(good_end)
        self._sync()

    def known(self) -> dict[MatrixKey, str]:
        """Key → digest of every valid record (as :meth:`MemoryRecordStore.known`).

        Returns
        -------
        dict
            Matrix key → sha256 of the values its record certified.
        """
        return {k: sha for k, (sha, _) in self._index.items()}

    def add(self, key: MatrixKey, sha256: str, record: dict[str, Any]) -> None:
        """Append a record to the file (flushed at once; superseding one of the same key).

        Parameters
        ----------
        key : tuple
            The matrix key (:func:`matrix_key`).
        sha256 : str
            The digest of the values the record certified (:func:`matrix_sha256`).
        record : dict
            The record.
        """
        self._f.seek(0, io.SEEK_END)
        pos = self._f.tell()
        self._f.write(self._line({"key": _key_json(key), "sha256": sha256, "record": record}))
        self._f.flush()  # in the OS's hands: survives the death of this process
        if time.monotonic() - self._synced_at >= FSYNC_INTERVAL:
            self._sync()
        self._index[key] = (sha256, pos)
        self.added += 1

    def get(self, key: MatrixKey, sha256: str) -> dict[str, Any]:
        """The record of ``key``, read back from the file (as :meth:`MemoryRecordStore.get`).

        Parameters
        ----------
        key : tuple
            The matrix key.
        sha256 : str
            The digest the record must have certified.

        Returns
        -------
        dict
            The record.

        Raises
        ------
        KeyError
            If there is no record of ``key``.
        ValueError
            If its record certified other values.
        """
        try:
            sha, pos = self._index[key]
        except KeyError:
            raise KeyError(f"{self.path}: no record of matrix {key}") from None
        if sha != sha256:
            raise ValueError(f"{self.path}: the record of matrix {key} certified other values "
                             f"(sha256 {sha} != {sha256})")
        self._f.seek(pos)
        rec = json.loads(self._f.readline())["record"]
        self._f.seek(0, io.SEEK_END)
        return rec

    def close(self) -> None:
        if not self._f.closed:
            self._sync()
            self._f.close()


def run_serial(source: ModelSource, tasks: Sequence[MatrixTask], certify: Callable[[Any], dict[str, Any]],
               store: MemoryRecordStore, on_matrix: Callable[[MatrixOutcome], None] | None = None,
               opened: tuple[Any, Any] | None = None) -> list[MatrixOutcome]:
    """Run tasks in this process, storing each record as soon as it is certified.

    ``opened``: the caller's ``(Checkpoint, ModelLayout)`` of ``source`` (left
    open); by default the model is opened for this call and closed after.
    Returns the outcomes in report order (key and digest; ``record`` is left
    ``None`` — records live in the store).

    Parameters
    ----------
    source : ModelSource
        How to open the model.
    tasks : sequence of MatrixTask
        The plan.
    certify : callable
        ``certify(theory_matrix) -> record dict`` (picklable for worker processes).
    store : MemoryRecordStore or RecordStore
        Where records go (and stored ones come from).
    on_matrix : callable, optional
        Called with each outcome as it is certified (progress).
    opened : tuple, optional
        ``(Checkpoint, ModelLayout)`` of ``source``, held open by the caller.

    Returns
    -------
    list of MatrixOutcome
        The outcomes in report order.
    """
    order: list[MatrixOutcome] = []
    own = opened is None
    if opened is None:
        opened = source.open()
    try:
        for task in with_known(tasks, store.known()):
            for out in iter_task(source, task, certify, opened):
                if out.record is not None:
                    store.add(out.key, out.sha256, out.record)
                else:
                    store.reused += 1
                if on_matrix is not None:
                    on_matrix(out)
                order.append(MatrixOutcome(out.key, out.sha256, None))
    finally:
        if own:
            opened[0].close()
    return order


def _check_finite_json(obj: Any) -> None:
    json_text(obj, indent=None)  # raises ValueError naming the place of a NaN/inf


_SIGMA_TOKEN = "\0certbound-sigma-list\0"


def _record_json_text(rec: Any) -> str:
    """``json.dumps(rec, indent=2, allow_nan=False, ensure_ascii=False)`` after :func:`_check_finite_json`.

    The same text (and the same errors), with a record's ``"sigma"`` list of
    ball forms (:func:`certbound.ball.ball_to_json`) written from a template
    instead of by json's pure-Python indenting encoder, which costs about
    30 µs per σ. Any other record, or a σ entry of another form, takes the
    plain path.
    """
    sig = rec.get("sigma") if type(rec) is dict else None
    if type(sig) is list and sig:
        # The σᵢ proved 0 (a head's tail: up to 352 of 384 entries) all have one text, written once.
        k = len(sig)
        while k and _is_zero_form(sig[k - 1]):
            k -= 1
        items = [_ball_form_text(q) for q in sig[:k]] + [_ZERO_FORM_TEXT] * (len(sig) - k)
        if None not in items:
            rest = dict(rec)
            rest["sigma"] = _SIGMA_TOKEN  # same key order
            try:
                _check_finite_json(rest)
            except ValueError:
                pass  # the plain path raises the same error
            else:
                body = json.dumps(rest, indent=2, allow_nan=False, ensure_ascii=False)
                token = json.dumps(_SIGMA_TOKEN, ensure_ascii=False)
                if body.count(token) == 1:
                    # The list at nesting level 2 of json.dumps(rec, indent=2): items indented by 4, "]" by 2.
                    return body.replace(token, "[\n    " + ",\n    ".join(items) + "\n  ]")  # type: ignore[arg-type]
    _check_finite_json(rec)
    return json.dumps(rec, indent=2, allow_nan=False, ensure_ascii=False)


_BALL_KEYS = ["lower", "upper", "mid", "exact"]
_EXACT_KEYS = ["lower", "upper"]


def _ball_form_text(q: Any) -> str | None:
    """json's indent=2 text of a ball form as an item of a list at nesting level 2; None if not of that form."""
    if type(q) is not dict or list(q) != _BALL_KEYS:
        return None
    lo, hi, mid, ex = q["lower"], q["upper"], q["mid"], q["exact"]
    if type(lo) is not str or type(hi) is not str or type(ex) is not dict or list(ex) != _EXACT_KEYS:
        return None
    elo, ehi = ex["lower"], ex["upper"]
    if type(elo) is not str or type(ehi) is not str:
        return None
    if mid is None:
        m = "null"
    elif type(mid) is float and math.isfinite(mid):
        m = float.__repr__(mid)  # what json writes for a finite float
    else:
        return None
    enc = json.encoder.encode_basestring  # json's string encoder for ensure_ascii=False
    return ('{\n      "lower": ' + enc(lo) + ',\n      "upper": ' + enc(hi) + ',\n      "mid": ' + m
            + ',\n      "exact": {\n        "lower": ' + enc(elo) + ',\n        "upper": ' + enc(ehi)
            + "\n      }\n    }")


#: The ball form of the exact 0 (``_spectrum._zero_json``) and its text as :func:`_ball_form_text` writes it.
_ZERO_FORM = {"lower": "0", "upper": "0", "mid": 0.0, "exact": {"lower": "0", "upper": "0"}}
_ZERO_FORM_TEXT = _ball_form_text(_ZERO_FORM)


def _is_zero_form(q: Any) -> bool:
    """Whether ``q`` is :data:`_ZERO_FORM` as json writes it: equal dicts (keys in the same order), ``mid`` +0.0.

    Dict equality ignores key order and has ``-0.0 == 0.0``; json writes neither the same, so both are checked.
    """
    return (type(q) is dict and q == _ZERO_FORM and type(q["mid"]) is float
            and math.copysign(1.0, q["mid"]) > 0 and list(q) == _BALL_KEYS and list(q["exact"]) == _EXACT_KEYS)


class StagedFile:
    """A fully written, fsync'ed temporary file next to its target; :meth:`commit` renames it into place."""

    def __init__(self, tmp: str, path: str):
        self.tmp, self.path = tmp, path

    def commit(self) -> None:
        """Atomically replace the target (``os.replace``)."""
        os.replace(self.tmp, self.path)

    def discard(self) -> None:
        """Remove the temporary file; the target is untouched."""
        with contextlib.suppress(OSError):
            os.unlink(self.tmp)


def stage_report_json(path: str | os.PathLike[str], head: dict[str, Any], records: Iterable[dict[str, Any]],
                      *, list_key: str = "matrices") -> StagedFile:
    """Stream ``{**head, list_key: [records…]}`` as ``json_text`` would into a staged file for ``path``.

    Nothing but the staged temporary file is written; on any error it is
    removed. ``head`` must not contain ``list_key``; the list is written last.

    Parameters
    ----------
    path : str or path
        The final file (the staged file lives next to it).
    head : dict
        The document's keys before the list (JSON-serialisable).
    records : iterable of dict
        The list's entries, consumed once.
    list_key : str
        The key of the list.

    Returns
    -------
    StagedFile
        ``commit()`` renames it onto ``path``, ``discard()`` removes it.
    """
    path = os.fspath(path)
    if list_key in head:
        raise ValueError(f"stage_report_json: head already has {list_key!r}")
    _check_finite_json(head)
    fd, tmp = stage_tempfile(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            # json.dumps(indent=2) of the head with an empty list, then splice the records in.
            text = json.dumps({**head, list_key: []}, indent=2, allow_nan=False, ensure_ascii=False)
            assert text.endswith(f"{json.dumps(list_key)}: []\n}}")
            f.write(text[: -len("[]\n}")])
            first = True
            for rec in records:
                body = _record_json_text(rec)
                # every line indented by 4 (one replace, not a Python pass over the σ lists' lines)
                f.write(("[\n    " if first else ",\n    ") + body.replace("\n", "\n    "))
                first = False
            f.write("[]\n}\n" if first else "\n  ]\n}\n")
            f.flush()
            os.fsync(f.fileno())
        set_usual_permissions(tmp)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return StagedFile(tmp, path)


def write_report_json(path: str | os.PathLike[str], head: dict[str, Any], records: Iterable[dict[str, Any]],
                      *, list_key: str = "matrices") -> None:
    """Write ``{**head, list_key: [records…]}`` as ``json_text`` would, streaming the records.

    The file is replaced atomically (:func:`stage_report_json`, then a
    rename): a failure leaves the previous file, or none.

    Parameters
    ----------
    path : str or path
        The file to write.
    head : dict
        The document's keys before the list.
    records : iterable of dict
        The list's entries, consumed once.
    list_key : str
        The key of the list.

    Examples
    --------
    >>> import os, tempfile
    >>> from certbound.report.writers import json_text
    >>> p = os.path.join(tempfile.mkdtemp(), "r.json")
    >>> recs = [{"a": [1, 2.5], "b": {"c": None}}, {"a": []}]
    >>> write_report_json(p, {"model": "m", "opts": {}}, iter(recs))
    >>> open(p, encoding="utf-8").read() == json_text({"model": "m", "opts": {}, "matrices": recs})
    True
    """
    stage_report_json(path, head, records, list_key=list_key).commit()


class OutcomeCollector:
    """Store outcomes of tasks finishing in any order; hand them back in report order.

    What :func:`run_processes` and :func:`certbound.pipeline._distributed.run_dask`
    do with each finished task: its new records go to the store at once (so an
    interrupted run keeps them), the callback sees each outcome, and
    :meth:`ordered` gives the outcomes (records dropped: they are in the store)
    in plan order.

    Parameters
    ----------
    store : MemoryRecordStore or RecordStore
        Receives each new record.
    on_matrix : callable or None
        Called with each outcome as its task arrives.

    Examples
    --------
    >>> store = MemoryRecordStore()
    >>> c = OutcomeCollector(store, None)
    >>> c.add(1, [MatrixOutcome((0, 1, "QK"), "ab", {"x": 1})])
    >>> c.add(0, [MatrixOutcome((0, 0, "QK"), "cd", None)])
    >>> [o.key for o in c.ordered([MatrixTask(0, 0, ("QK",)), MatrixTask(1, 0, ("QK",))])], store.reused
    ([(0, 0, 'QK'), (0, 1, 'QK')], 1)
    """

    def __init__(self, store: MemoryRecordStore, on_matrix: Callable[[MatrixOutcome], None] | None):
        self.store = store
        self.on_matrix = on_matrix
        self.by_task: dict[int, list[MatrixOutcome]] = {}

    def add(self, index: int, outcomes: list[MatrixOutcome]) -> None:
        """Take the outcomes of the task with plan index ``index``.

        Parameters
        ----------
        index : int
            The task's ``index`` in the plan.
        outcomes : list of MatrixOutcome
            Its matrices' outcomes; a ``record`` of None counts as reused.
        """
        for out in outcomes:
            if out.record is not None:
                self.store.add(out.key, out.sha256, out.record)
            else:
                self.store.reused += 1
            if self.on_matrix is not None:
                self.on_matrix(out)
        self.by_task[index] = [MatrixOutcome(o.key, o.sha256, None) for o in outcomes]

    def ordered(self, tasks: Sequence[MatrixTask]) -> list[MatrixOutcome]:
        """The outcomes of all tasks in plan order, records dropped (they are in the store).

        Parameters
        ----------
        tasks : sequence of MatrixTask
            The plan (every task must have been added).

        Returns
        -------
        list of MatrixOutcome
            Each with ``record=None``.
        """
        return [o for t in tasks for o in self.by_task[t.index]]


def with_known(tasks: Sequence[MatrixTask], known: dict[MatrixKey, str]) -> list[MatrixTask]:
    """The tasks with the digests of their layer's stored records attached (what a worker may skip).

    Parameters
    ----------
    tasks : sequence of MatrixTask
        The plan.
    known : dict
        Matrix key → digest of the record already stored.

    Returns
    -------
    list of MatrixTask
        Copies of the tasks whose ``known`` holds the digests of their own layer.
    """
    by_layer: dict[int, list[tuple[MatrixKey, str]]] = {}
    for k, v in known.items():
        by_layer.setdefault(k[0], []).append((k, v))
    return [dataclasses.replace(t, known=tuple(by_layer.get(t.layer, ()))) for t in tasks]


def run_processes(source: ModelSource, tasks: Sequence[MatrixTask], certify: Callable[[Any], dict[str, Any]],
                  store: MemoryRecordStore, jobs: int,
                  on_matrix: Callable[[MatrixOutcome], None] | None = None) -> list[MatrixOutcome]:
    """Run tasks in ``jobs`` spawned worker processes, each opening the model itself.

    Only task recipes go to the workers (no arrays); each finished task's
    records are stored as it completes. ``certify`` must be picklable (a
    module-level function or a ``functools.partial`` of one).

    Parameters
    ----------
    source : ModelSource
        How each worker opens the model.
    tasks : sequence of MatrixTask
        The plan.
    certify : callable
        ``certify(theory_matrix) -> record dict`` (picklable for worker processes).
    store : MemoryRecordStore or RecordStore
        Where records go.
    jobs : int
        Worker processes (≥ 1).
    on_matrix : callable, optional
        Called with each outcome as its task completes.

    Returns
    -------
    list of MatrixOutcome
        The outcomes in report order.
    """
    import concurrent.futures as cf
    import multiprocessing

    collector = OutcomeCollector(store, on_matrix)
    tasks = with_known(tasks, store.known())
    with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(run_task, source, t, certify) for t in tasks]
        try:
            for fut in cf.as_completed(futures):
                collector.add(*fut.result())
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)  # do not finish useless work
            raise
    return collector.ordered(tasks)
