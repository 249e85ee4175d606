"""Bench: certified whole-model spectra against the fastest *uncertified* float pipeline.

Usage::

    python bench/bench_model.py all-MiniLM-L6-v2 [--repeat 3] [--spectrum-modes fast,tight,gram,auto]
    python bench/bench_model.py gpt2-small-shape --repeat 2

``MODEL`` is a packaged checkpoint name, a model directory, or
``gpt2-small-shape``: a GPT-2-small-shaped checkpoint (12 layers, width 768,
12 heads of 64, d_ff 3072) with random weights, written into a temporary
directory by ``transformers`` (``save_pretrained``) when it is installed, else
directly as safetensors with GPT-2's tensor names.

Every pipeline gets the same theory matrices (loaded once, outside the timed
region, in memory; per-head QK/VO as the d_h-wide factors A, B with W = A Bᵀ, C-ordered;
dense matrices in the layout ``certbound spectrum`` gets them from the loader, e.g.
Fortran-ordered for BERT, whose stored FFN tensors are the transposes):

(a) ``float-gram`` — the fastest uncertified pipeline we could write with
    numpy: dense matrices by the eigenvalues of the Gram matrix of the
    shorter side (``W @ W.T`` or ``W.T @ W``, one BLAS SYRK; values-only
    ``numpy.linalg.eigvalsh``, LAPACK ``syevd`` jobz='N'; σᵢ = √max(λᵢ, 0));
    per-head products through Cholesky factors of the d_h × d_h factor Grams
    (all heads of a (layer, type) stacked: ``AᵀA = L_A L_Aᵀ``, ``BᵀB = L_B
    L_Bᵀ``, then the batched values-only SVD of ``L_Aᵀ L_B``, whose singular
    values are those of A Bᵀ; a group whose Cholesky fails takes (a′)'s
    QR route). Its σᵢ carry absolute errors ≈ u·σ₁ (relative ≈ u·(σ₁/σᵢ)²):
    as accurate as (a′) where σᵢ ≥ 1e-2·σ₁, not for tiny σᵢ.
(a′) ``float-svd`` — the same with singular value decompositions (the
    accurate float pipeline; last session's (a)): all heads of a (layer,
    type) stacked, R-factors of the stacked thin QRs of A and B
    (``numpy.linalg.qr(mode="r")``, batched LAPACK ``geqrf``), then the
    batched values-only SVD of R_A R_Bᵀ (d_h × d_h); dense matrices by the
    values-only SVD (``numpy.linalg.svd(W, compute_uv=False)``, LAPACK
    ``gesdd`` with jobz='N').
(b) ``float-formed`` — the authors' pipeline: form every per-head product
    A Bᵀ (N × N) and take its values-only SVD; dense matrices as in (a′).
(c) ``certbound-<mode>`` — what ``certbound spectrum`` computes for each
    matrix without ``--json`` (all σᵢ certified as Arb balls, σ₁, ‖·‖_F,
    ‖·‖_*, ‖·‖_{2,1}, S_p at p = 0.5, 1, 2, rank bounds, in the JSON form),
    by one ``certify_theory_matrices`` call on all matrices of a part, so
    the heads go to the kernel in batches of one layer (QK and VO together),
    as in ``certbound spectrum``, whose tasks (``_streaming.plan_tasks``) hold
    one layer's QK and VO heads each (since session 7; before, one type). The line after the table also
    splits (c)'s own CPU time into the kernel's enclosure generator and the rest.
(c′) ``certbound-<mode> sigma-only`` — the kernel enclosures alone (what
    ``certify_theory_matrices`` gets from ``enclose_theory_matrices``: the
    same batches, the same threads), no records; (c) − (c′) is the cost of the
    records (‖·‖_{2,1}, the spectral sums, the JSON forms).

Each pipeline is timed on the dense matrices and then on the per-head
products (two timed calls per repeat; every pipeline treats the two kinds
independently, in the same batches as in one call), and the whole-model
figure is their sum: the table gives the dense/heads split of the CPU time.

The float pipelines (a), (a′), (b) run with one BLAS thread (their fastest setting
on a shared machine; the limit is set inside the timed region, ≈ 0.3 ms); certbound runs
in the environment as found and chooses its own threads (``certbound._blas``: one
thread below ``PARALLEL_MIN_WORK``, which every MiniLM and GPT-2-small matrix is, so the
comparison is one thread against one thread unless a larger model is given). CPU time
is process time, so it counts every BLAS thread's work (spinning included). Repeats are interleaved (a, a′, b,
c-modes, a, …); the medians of wall and CPU (process) time are printed
with their ratios to (a) and to (a′). Peak RSS per pipeline
is measured in a fresh child process running that pipeline once, with the peak
reset to the current RSS after the matrices are loaded (Linux
``/proc/self/clear_refs``, read back as ``VmHWM``: ``ru_maxrss`` would include
the peak of this bench process, which starts the child; elsewhere the loader's
peak is shown as such), so it is the pipeline's own high-water mark on top of
the loaded matrices (``--no-rss`` skips it). The BLAS environment is left as found (the judged setting is the
default environment); ``--threads N`` limits BLAS to N threads for the whole
run, for comparison. The median relative width of the certified σᵢ ≥
1e-2·σ₁ is printed per mode (``--records-split`` adds, per mode and part, one
more certbound run split into the kernel's generator, the dense matrices' ‖·‖_{2,1},
the spectral sums, the JSON forms and the rest), and for each float pipeline the largest
distance of its σᵢ ≥ 1e-2·σ₁ from the certified (auto) enclosures, relative
to σᵢ (its error there, up to the enclosure width).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from typing import Any, Callable

import numpy as np

from _bench_options import DeprecatedAlias  # bench/ is sys.path[0] when the script runs

_PS = ["0.5", "1", "2"]


# --------------------------------------------------------------------------- checkpoints


def write_gpt2_small_shape(directory: str, seed: int = 0) -> str:
    """A GPT-2-small-shaped checkpoint with random weights in ``directory``."""
    try:
        import torch
        from transformers import GPT2Config, GPT2Model

        torch.manual_seed(seed)
        cfg = GPT2Config(n_layer=12, n_embd=768, n_head=12, n_inner=3072, n_positions=1024, vocab_size=512)
        GPT2Model(cfg).save_pretrained(directory, safe_serialization=True)
        return directory
    except ImportError:
        pass
    from safetensors.numpy import save_file

    rng = np.random.default_rng(seed)
    n, ff, L = 768, 3072, 12
    w: dict[str, np.ndarray] = {}
    for i in range(L):
        for name, shape in (("attn.c_attn", (n, 3 * n)), ("attn.c_proj", (n, n)),
                            ("mlp.c_fc", (n, ff)), ("mlp.c_proj", (ff, n))):
            w[f"h.{i}.{name}.weight"] = (0.02 * rng.standard_normal(shape)).astype(np.float32)
    save_file(w, os.path.join(directory, "model.safetensors"))
    cfg = {"model_type": "gpt2", "n_layer": L, "n_embd": n, "n_head": 12, "n_inner": ff, "n_positions": 1024,
           "architectures": ["GPT2Model"]}
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(cfg, f)
    return directory


def resolve_model(model: str, tmp: str) -> str:
    if model == "gpt2-small-shape":
        return write_gpt2_small_shape(tmp)
    if os.path.exists(model):
        return model
    from certbound.checkpoints import find_packaged_checkpoint

    return str(find_packaged_checkpoint(model))


def load_matrices(path: str) -> tuple[list[Any], Any]:
    from certbound.checkpoints import open_checkpoint, theory_matrices

    ck, layout = open_checkpoint(path)
    try:
        ms = list(theory_matrices(ck, layout=layout))
    finally:
        ck.close()
    # Materialise the factors (strided views into memory-mapped tensors) once,
    # so no pipeline pays for the loader. Dense matrices keep the layout the loader
    # gives ``certbound spectrum`` (a BERT FFN matrix is Fortran-ordered: the transpose
    # of the stored tensor; GPT-2's Conv1D weights are C-ordered): the pipelines'
    # costs can depend on it (certbound's ‖·‖_{2,1} reads W's columns).
    import dataclasses

    out = []
    for m in ms:
        if m.factors is not None:
            m = dataclasses.replace(m, factors=tuple(np.ascontiguousarray(f, dtype=np.float64) for f in m.factors))
        else:
            d = np.array(m.dense, dtype=np.float64, order="K")  # a copy in memory, in the loader's layout
            m = dataclasses.replace(m, dense=d if d.flags.c_contiguous or d.flags.f_contiguous
                                    else np.ascontiguousarray(d))
        out.append(m)
    return out, layout


# --------------------------------------------------------------------------- pipelines


def _head_groups(ms: list[Any]) -> dict[tuple[int, str], list[int]]:
    groups: dict[tuple[int, str], list[int]] = {}
    for i, m in enumerate(ms):
        if m.factors is not None:
            groups.setdefault((m.layer, m.type), []).append(i)
    return groups


def _heads_qr(ms: list[Any], g: list[int]) -> np.ndarray:
    A = np.stack([ms[i].factors[0] for i in g])
    B = np.stack([ms[i].factors[1] for i in g])
    RA = np.linalg.qr(A, mode="r")
    RB = np.linalg.qr(B, mode="r")
    return np.linalg.svd(RA @ RB.transpose(0, 2, 1), compute_uv=False)


def float_svd(ms: list[Any]) -> list[np.ndarray]:
    """(a′): stacked thin QRs of the factors + batched small values-only SVDs; dense gesdd values only."""
    out: list[Any] = [None] * len(ms)
    for i, m in enumerate(ms):
        if m.factors is None:
            out[i] = np.linalg.svd(m.dense, compute_uv=False)
    for g in _head_groups(ms).values():
        for i, s in zip(g, _heads_qr(ms, g)):
            out[i] = s
    return out


def _gram_values(W: np.ndarray) -> np.ndarray:
    G = W @ W.T if W.shape[0] <= W.shape[1] else W.T @ W  # numpy calls SYRK for X @ X.T
    return np.sqrt(np.maximum(np.linalg.eigvalsh(G)[::-1], 0.0))


def float_gram(ms: list[Any]) -> list[np.ndarray]:
    """(a): values-only eigenvalues of the shorter-side Gram matrix; heads through Cholesky factors of AᵀA, BᵀB."""
    out: list[Any] = [None] * len(ms)
    for i, m in enumerate(ms):
        if m.factors is None:
            out[i] = _gram_values(m.dense)
    for g in _head_groups(ms).values():
        A = np.stack([ms[i].factors[0] for i in g])
        B = np.stack([ms[i].factors[1] for i in g])
        try:
            LA = np.linalg.cholesky(A.transpose(0, 2, 1) @ A)
            LB = np.linalg.cholesky(B.transpose(0, 2, 1) @ B)
        except np.linalg.LinAlgError:  # a rank-deficient factor: the QR route
            s = _heads_qr(ms, g)
        else:
            s = np.linalg.svd(LA.transpose(0, 2, 1) @ LB, compute_uv=False)
        for i, si in zip(g, s):
            out[i] = si
    return out


def float_formed(ms: list[Any]) -> list[np.ndarray]:
    """(b): form every per-head product, values-only SVD of everything."""
    return [np.linalg.svd(m.factors[0] @ m.factors[1].T if m.factors is not None else m.dense, compute_uv=False)
            for m in ms]


#: CPU seconds that each (c) call spent inside the kernel's enclosure generator (appended per call).
KERNEL_CPU: list[float] = []


def certbound_pipeline(mode: str) -> Callable[[list[Any]], list[dict[str, Any]]]:
    """(c): the records of ``certbound spectrum`` (no --json) for every matrix, heads batched per layer.

    Each call also appends to :data:`KERNEL_CPU` the CPU time spent inside
    ``enclose_theory_matrices`` (the kernel's enclosures, and the heads'
    ‖·‖_{2,1} computed with them), so that the rest of the same call, the records and
    the pipeline around them, is measured in the same run.
    """

    def run(ms: list[Any]) -> list[dict[str, Any]]:
        from certbound.pipeline import _spectrum

        inner = _spectrum.enclose_theory_matrices
        spent = [0.0]

        def timed(*args: Any, **kwargs: Any) -> Any:
            it = inner(*args, **kwargs)
            while True:
                c = time.process_time()
                try:
                    item = next(it)
                except StopIteration:
                    spent[0] += time.process_time() - c
                    return
                spent[0] += time.process_time() - c
                yield item

        _spectrum.enclose_theory_matrices = timed
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return _spectrum.certify_theory_matrices(ms, mode, _PS, include_sigma=False)
        finally:
            _spectrum.enclose_theory_matrices = inner
            KERNEL_CPU.append(spent[0])

    return run


#: The names in certbound.pipeline._spectrum that :func:`records_split` times, by the component they belong to.
_SPLIT_COMPONENTS = {"norm_21": "dense norm_21", "norms_and_schatten_intervals": "spectral sums",
                     "norms_and_schatten_intervals_of_many": "spectral sums", "ball_to_json": "JSON forms",
                     "float_interval_to_json": "JSON forms"}


def records_split(ms: list[Any], mode: str) -> dict[str, float]:
    """CPU seconds of one (c) call on ``ms`` by component: the kernel's generator, and outside it ‖·‖_{2,1} of
    the dense matrices, the spectral sums, the JSON forms and the rest (records' dicts, batching, the pipeline).

    A diagnostic run after the timed repeats (``--records-split``): the functions of
    ``certbound.pipeline._spectrum`` that make the records are wrapped with timers for the call (two clock
    reads per call, ≈ 1 µs, counted in "rest"); the sum of the components is the call's CPU time.
    """
    from certbound.pipeline import _spectrum

    spent: dict[str, float] = {"kernel": 0.0, **{c: 0.0 for c in _SPLIT_COMPONENTS.values()}}
    saved = {name: getattr(_spectrum, name) for name in _SPLIT_COMPONENTS}

    def wrap(name: str) -> Callable[..., Any]:
        f, comp = saved[name], _SPLIT_COMPONENTS[name]

        def timed(*args: Any, **kwargs: Any) -> Any:
            c = time.process_time()
            try:
                return f(*args, **kwargs)
            finally:
                spent[comp] += time.process_time() - c

        return timed

    for name in saved:
        setattr(_spectrum, name, wrap(name))
    run = certbound_pipeline(mode)
    KERNEL_CPU.clear()
    c = time.process_time()
    try:
        run(ms)
    finally:
        for name, f in saved.items():
            setattr(_spectrum, name, f)
    total = time.process_time() - c
    spent["kernel"] = KERNEL_CPU[-1]
    spent["rest"] = total - sum(spent.values())
    return spent


def certbound_sigma_only(mode: str) -> Callable[[list[Any]], list[Any]]:
    """(c′): the kernel enclosures of every matrix as ``certify_theory_matrices`` makes them, no records."""

    def run(ms: list[Any]) -> list[Any]:
        from certbound._blas import single_threaded
        from certbound.pipeline._spectrum import enclose_theory_matrices

        with warnings.catch_warnings(), single_threaded():
            warnings.simplefilter("ignore")
            return [enc for _, enc, _, _ in enclose_theory_matrices(ms, mode)]

    return run


def single_blas_thread(f: Callable[[list[Any]], Any]) -> Callable[[list[Any]], Any]:
    """Run a float pipeline with one BLAS thread: its fastest setting on a shared machine (measured)."""

    def run(ms: list[Any]) -> Any:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(1, user_api="blas"):
            return f(ms)

    return run


def enclosures(ms: list[Any], mode: str) -> list[Any]:
    """Kernel enclosures of every matrix (for widths; not timed)."""
    from certbound.enclose import enclose_singular_values, enclose_singular_values_of_product

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [enclose_singular_values_of_product(*m.factors, mode=mode) if m.factors is not None
                else enclose_singular_values(m.dense, mode=mode) for m in ms]


def max_relative_error(values: list[np.ndarray], encs: list[Any], cutoff: float = 1e-2) -> float:
    """Largest distance of float σᵢ ≥ cutoff·σ₁ from their certified enclosures, relative to σᵢ."""
    worst = 0.0
    for s, e in zip(values, encs):
        lo, hi = np.asarray(e.lower), np.asarray(e.upper)
        k = min(len(s), len(hi))
        if not k or hi[0] == 0:
            continue
        s = np.asarray(s)[:k]
        lo, hi = lo[:k], hi[:k]
        keep = lo >= cutoff * hi[0]
        d = np.maximum(np.maximum(lo - s, s - hi), 0.0)[keep] / lo[keep]
        if d.size:
            worst = max(worst, float(d.max()))
    return worst


def median_relative_width(encs: list[Any], cutoff: float = 1e-2) -> tuple[float, float]:
    """(median over all σᵢ ≥ cutoff·σ₁ of all matrices, same for the dense matrices only)."""
    allw, dense = [], []
    for e in encs:
        lo, hi = np.asarray(e.lower), np.asarray(e.upper)
        if not len(hi) or hi[0] == 0:
            continue
        keep = lo >= cutoff * hi[0]
        w = (hi[keep] - lo[keep]) / ((hi[keep] + lo[keep]) / 2)
        allw.append(w)
        if e.mode != "product":
            dense.append(w)
    med = lambda xs: float(np.median(np.concatenate(xs))) if xs else float("nan")  # noqa: E731
    return med(allw), med(dense)


# --------------------------------------------------------------------------- driver


def _pipelines(modes: list[str]) -> dict[str, Callable[[list[Any]], Any]]:
    p: dict[str, Callable[[list[Any]], Any]] = {"float-gram": single_blas_thread(float_gram),
                                                "float-svd": single_blas_thread(float_svd),
                                                "float-formed": single_blas_thread(float_formed)}
    for md in modes:
        p[f"certbound-{md}"] = certbound_pipeline(md)
        p[f"certbound-{md} sigma-only"] = certbound_sigma_only(md)
    return p


def _reset_peak_rss() -> bool:
    """Set the process's peak RSS to its current RSS (Linux: ``/proc/self/clear_refs`` 5); False if not possible.

    Freed heap memory is first returned to the system (glibc ``malloc_trim``), so that a pipeline's
    allocations show as growth rather than reuse of the loader's freed pages.
    """
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _child(path: str, name: str, modes: list[str]) -> None:
    import gc

    ms, _ = load_matrices(path)
    gc.collect()
    # Without a reset the peak would be the loader's (its temporaries are freed before any pipeline runs).
    reset = _reset_peak_rss()
    base = _peak_rss_kib()
    _pipelines(modes)[name](ms)
    peak = _peak_rss_kib()
    print(json.dumps({"peak_rss_mib": peak / 1024, "after_load_mib": base / 1024, "reset": reset}))


def _peak_rss_kib() -> float:
    """This process's peak RSS in KiB: Linux ``VmHWM`` (its own memory, reset by :func:`_reset_peak_rss`), else
    ``ru_maxrss`` (which on Linux also counts the peak of the process that started this one, before its exec)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return float(line.split()[1])
    except OSError:
        pass
    return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def _blas_description() -> str:
    try:
        from threadpoolctl import threadpool_info

        libs = [f"{i['internal_api']} {i['num_threads']} threads" for i in threadpool_info()
                if i.get("user_api") == "blas"]
    except ImportError:
        libs = ["threadpoolctl not installed"]
    env = {k: os.environ[k] for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
           if k in os.environ}
    return f"BLAS: {', '.join(libs) or 'unknown'}; thread variables: {env or 'none set'}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", help="packaged checkpoint name, model directory, or gpt2-small-shape")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--spectrum-modes", default="fast,tight,gram,auto",
                    help="certbound's certificate modes timed (comma-separated; default fast,tight,gram,auto)")
    ap.add_argument("--modes", dest="spectrum_modes", action=DeprecatedAlias, new="--spectrum-modes",
                    help=argparse.SUPPRESS)  # the old spelling, as the CLI's --mode
    ap.add_argument("--threads", type=int, help="limit BLAS to this many threads for the whole run")
    ap.add_argument("--no-rss", action="store_true", help="skip the per-pipeline peak-RSS child processes")
    ap.add_argument("--records-split", action="store_true",
                    help="after the timed repeats, split one certbound run per part and mode into kernel, dense "
                         "norm_21, spectral sums, JSON forms and the rest (timers on the record functions)")
    ap.add_argument("--_child", help=argparse.SUPPRESS)
    ap.add_argument("--_path", help=argparse.SUPPRESS)
    args = ap.parse_args()
    from certbound.enclose import MODES

    modes = [m for m in args.spectrum_modes.split(",") if m]
    skipped = [m for m in modes if m not in MODES]
    modes = [m for m in modes if m in MODES]
    if args._child:
        _child(args._path, args._child, modes)
        return 0
    limiter: Any = None
    if args.threads:
        from threadpoolctl import threadpool_limits

        limiter = threadpool_limits(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        try:
            path = resolve_model(args.model, tmp)
        except LookupError as exc:
            print(f"skipped: {exc}")
            return 0
        ms, layout = load_matrices(path)
        print(f"model {args.model}: {layout.num_layers} layers, N={layout.hidden_size}, {layout.num_heads} heads "
              f"of {layout.head_dim}, d_ff={layout.intermediate_size}; {len(ms)} matrices "
              f"({sum(m.factors is not None for m in ms)} per-head products)")
        print(f"{_blas_description()}; cores {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}")
        if skipped:
            print(f"modes not in this certbound: {', '.join(skipped)}")
        pipes = _pipelines(modes)
        for f in pipes.values():  # warm-up (imports, first LAPACK calls), not timed
            f(ms[:2] + [m for m in ms if m.factors is None][:1])
        parts = {"dense": [m for m in ms if m.factors is None], "heads": [m for m in ms if m.factors is not None]}
        # wall[name][part], cpu[name][part]: one value per repeat; the whole model is the sum of the parts.
        wall: dict[str, dict[str, list[float]]] = {k: {q: [] for q in parts} for k in pipes}
        cpu: dict[str, dict[str, list[float]]] = {k: {q: [] for q in parts} for k in pipes}
        outside: dict[str, dict[str, list[float]]] = {k: {q: [] for q in parts} for k in pipes}  # (c): not kernel
        for _ in range(args.repeat):
            for name, f in pipes.items():
                for part, sub in parts.items():
                    KERNEL_CPU.clear()
                    c, t = time.process_time(), time.perf_counter()
                    f(sub)
                    wall[name][part].append(time.perf_counter() - t)
                    cpu[name][part].append(time.process_time() - c)
                    if KERNEL_CPU:
                        outside[name][part].append(cpu[name][part][-1] - KERNEL_CPU[-1])
        splits: dict[str, dict[str, dict[str, float]]] = {}
        if args.records_split:
            for md in modes:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    splits[md] = {part: records_split(sub, md) for part, sub in parts.items()}
        rss: dict[str, str] = {}
        if not args.no_rss:
            for name in pipes:
                r = subprocess.run([sys.executable, __file__, args.model, "--spectrum-modes", ",".join(modes), "--_child",
                                    name, "--_path", path], capture_output=True, text=True, env=os.environ)
                try:
                    d = json.loads(r.stdout.strip().splitlines()[-1])
                    rss[name] = (f"{d['peak_rss_mib']:.0f} (after load {d['after_load_mib']:.0f})" if d["reset"]
                                 else f"{d['peak_rss_mib']:.0f} (load's peak)")
                except (IndexError, ValueError, KeyError):
                    rss[name] = "n/a"
        encs = {md: enclosures(ms, md) for md in modes}
        if "auto" not in encs:
            encs["auto"] = enclosures(ms, "auto")
        widths = {md: median_relative_width(encs[md]) for md in modes}
        errors = {name: max_relative_error(f(ms), encs["auto"]) for name, f in pipes.items()
                  if name.startswith("float-")}
    if limiter is not None:
        limiter.restore_original_limits()
    def med(d: dict[str, dict[str, list[float]]], name: str, part: str | None = None) -> float:
        if part is not None:
            return statistics.median(d[name][part])
        return statistics.median([sum(v) for v in zip(*d[name].values())])  # per-repeat whole-model sums

    base_w, base_c = med(wall, "float-gram"), med(cpu, "float-gram")
    svd_c = med(cpu, "float-svd")
    print(f"\n{args.repeat} interleaved repeats; medians. Ratios are to float-gram (a), the fastest float "
          "pipeline, and to float-svd (a', CPU). dense/heads: the CPU split.")
    a_svd = "CPU/a'"
    print(f"{'pipeline':<27} {'wall s':>8} {'CPU s':>8} {'wall/a':>7} {'CPU/a':>7} {a_svd:>7} {'dense':>7} {'heads':>7} "
          f"{'med rel width':>14} {'(dense)':>9} {'float err':>10} {'peak RSS MiB':>24}")
    for name in pipes:
        w, c = med(wall, name), med(cpu, name)
        md = name.removeprefix("certbound-")
        wd = f"{widths[md][0]:14.2e} {widths[md][1]:9.2e}" if md in widths else f"{'-':>14} {'-':>9}"
        er = f"{errors[name]:10.1e}" if name in errors else f"{'-':>10}"
        print(f"{name:<27} {w:8.3f} {c:8.3f} {w / base_w:7.2f} {c / base_c:7.2f} {c / svd_c:7.2f} "
              f"{med(cpu, name, 'dense'):7.3f} {med(cpu, name, 'heads'):7.3f} {wd} {er} {rss.get(name, '-'):>24}")
    for md in modes:
        full, sig = f"certbound-{md}", f"certbound-{md} sigma-only"
        split = " ".join(f"{part} {med(cpu, full, part) - med(cpu, sig, part):.3f}" for part in parts)
        print(f"records of certbound-{md} (full - sigma-only, CPU s): {med(cpu, full) - med(cpu, sig):.3f} ({split})")
        if all(outside[full].values()):
            split = " ".join(f"{part} {med(outside, full, part):.3f}" for part in parts)
            print(f"  the same runs, CPU outside the kernel's enclosure generator (records and pipeline; the heads' "
                  f"norm_21 counts as kernel): {med(outside, full):.3f} ({split})")
    for md, by_part in splits.items():
        print(f"split of one certbound-{md} run (--records-split; CPU ms):")
        for part, sp in by_part.items():
            print(f"  {part:<6} " + ", ".join(f"{k} {1e3 * v:.1f}" for k, v in sp.items()))
    print("(width: median of (upper - lower)/mid over certified sigma_i >= 1e-2 sigma_1, all matrices / dense only;"
          "\n float err: max distance of a float pipeline's sigma_i >= 1e-2 sigma_1 from the certified auto enclosure,"
          " relative to sigma_i)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
