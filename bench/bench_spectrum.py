"""Bench: certified whole-model spectra of all-MiniLM-L6-v2 vs the uncertified reference.

Reference pipeline (what the paper's code does): form every per-head product
QK = W_Q^h W_K^hᵀ and VO = W_V^h W_O^h in float64 and take its float64
singular values (LAPACK, values only); same for M_in and M_out.
Certified pipeline: ``certify_theory_matrix`` on every matrix (product path for
the heads, never formed; all σᵢ certified as Arb balls; σ₁, ‖·‖_F, ‖·‖_*,
‖·‖_{2,1}, S_p and rank bounds in the JSON form; the per-σᵢ decimal strings of
``--json`` are left out, as ``certbound spectrum`` does without ``--json``).
Both read the checkpoint through the same loader. Times are wall-clock from
one run in one process; the printed ratio is certified / reference (goal ≤ 0.5).

Memory: tracemalloc peak (numpy allocations are traced) for each pipeline,
compared with the largest single matrix (M_in: 384 × 1536 float64 = 4.7 MB),
and the process's peak RSS (includes the interpreter, numpy, flint, and the
memory-mapped file pages touched).

Run:  OPENBLAS_NUM_THREADS=1 python bench/bench_spectrum.py [--layers 0,1] [--spectrum-mode fast]
(single-threaded BLAS makes the comparison stable on a loaded machine; the
ratio is printed either way).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
import tracemalloc

import numpy as np

from _bench_options import add_spectrum_mode_option


def _matrices(path, layers):
    from certbound.checkpoints import open_checkpoint, theory_matrices

    ck, layout = open_checkpoint(path)
    try:
        yield from theory_matrices(ck, layout=layout, layers=layers)
    finally:
        ck.close()


def reference(path, layers) -> tuple[float, float, dict]:
    c0 = time.process_time()
    t0 = time.perf_counter()
    s1 = {}
    by_kind = {"product": 0.0, "dense": 0.0}
    for m in _matrices(path, layers):
        c = time.process_time()
        w = m.to_dense()  # forms the per-head product in float64
        s = np.linalg.svd(w, compute_uv=False)
        by_kind["product" if m.factors is not None else "dense"] += time.process_time() - c
        s1[(m.layer, m.head, m.type)] = float(s[0])
    s1["_by_kind"] = by_kind
    return time.perf_counter() - t0, time.process_time() - c0, s1


def certified(path, layers, mode) -> tuple[float, float, list]:
    """(wall time, CPU time, records) of ``certify_theory_matrix`` on every matrix."""
    from certbound.pipeline import certify_theory_matrix

    c0 = time.process_time()
    t0 = time.perf_counter()
    recs = [certify_theory_matrix(m, mode, ["0.5", "1", "2"], include_sigma=False) for m in _matrices(path, layers)]
    return time.perf_counter() - t0, time.process_time() - c0, recs


#: The kernel's public entry points the pipeline calls, by kind of matrix.
KERNEL_ENTRY_POINTS = {
    "dense": ("certbound.enclose.enclose_singular_values",),
    "product": ("certbound.enclose.enclose_singular_values_of_product",
                "certbound.enclose.enclose_singular_values_of_products",
                "certbound.enclose.product.enclose_singular_values_and_norms_21_of_products"),
}


def kernel_shares(path, layers, mode) -> dict[str, float]:
    """Fraction of the certified run's CPU time spent inside the kernel's public entry points, by kind.

    From a separate, untimed run under :mod:`cProfile` (CPU timer): the cumulative time of each
    entry point of :data:`KERNEL_ENTRY_POINTS` over the profiled total. The profiler slows Python
    code more than LAPACK, so the shares are approximate; they are applied to the unprofiled time.
    """
    import cProfile
    import importlib
    import inspect
    import pstats

    prof = cProfile.Profile(time.process_time)
    c0 = time.process_time()
    prof.runcall(certified, path, layers, mode)
    total = time.process_time() - c0
    stats = pstats.Stats(prof).stats

    def keys(names):
        # unwrapped: a decorator's wrapper shares one code object among the functions it wraps
        codes = [inspect.unwrap(getattr(importlib.import_module(n.rsplit(".", 1)[0]), n.rsplit(".", 1)[1])).__code__
                 for n in names]
        return {(c.co_filename, c.co_firstlineno, c.co_name) for c in codes}

    by_kind = {kind: keys(names) for kind, names in KERNEL_ENTRY_POINTS.items()}
    entry = set().union(*by_kind.values())
    # Outermost calls only: an entry point called by another (of_product -> of_products) is not counted twice.
    return {kind: sum(ct for k in ks if k in stats for caller, (_, _, _, ct) in stats[k][4].items()
                      if caller not in entry) / total for kind, ks in by_kind.items()}


def traced_peak(fn) -> int:
    """Peak traced allocation (bytes) while running fn (tracemalloc sees numpy's buffers)."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", help="comma-separated layers (default: all)")
    # The CLI's option (hidden deprecated alias --mode); this bench keeps its own default, fast.
    add_spectrum_mode_option(ap, deprecated_alias="--mode", default="fast")
    ap.add_argument("--model", default="all-MiniLM-L6-v2")
    args = ap.parse_args()
    from certbound.checkpoints import find_packaged_checkpoint, open_checkpoint

    try:
        path = find_packaged_checkpoint(args.model)
    except LookupError as exc:
        print(f"skipped: {exc}")
        return 0
    layers = [int(x) for x in args.layers.split(",")] if args.layers else None
    ck, layout = open_checkpoint(path)
    ck.close()
    largest = max(layout.hidden_size * layout.intermediate_size, layout.hidden_size ** 2) * 8
    print(f"model {args.model}: {layout.num_layers} layers, N={layout.hidden_size}, "
          f"{layout.num_heads} heads of {layout.head_dim}, d_ff={layout.intermediate_size}")
    print(f"BLAS threads env: OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}, "
          f"load average {os.getloadavg()[0]:.2f}")

    # Warm-up (imports, first LAPACK calls) outside the timed runs.
    first = next(iter(_matrices(path, [0])))
    from certbound.pipeline import certify_theory_matrix
    certify_theory_matrix(first, args.spectrum_mode, ["1"])
    np.linalg.svd(first.to_dense(), compute_uv=False)

    t_ref, c_ref, s1 = reference(path, layers)
    t_cert, c_cert, recs = certified(path, layers, args.spectrum_mode)
    shares = kernel_shares(path, layers, args.spectrum_mode)
    # Memory: separate traced runs (tracing slows Python code, so never timed).
    one = [0] if layers is None else layers[:1]
    peak_load = traced_peak(lambda: [None for _ in _matrices(path, one)])
    peak_ref = traced_peak(lambda: reference(path, one))
    peak_cert = traced_peak(lambda: certified(path, one, args.spectrum_mode))

    # Consistency: every certified σ₁ interval contains the float64 reference σ₁
    # up to the reference's own rounding error (relative 1e-12 slack).
    bad = 0
    for r in recs:
        ref = s1[(r["layer"], r["head"], r["type"])]
        lo, hi = float(r["spectral_norm"]["lower"]), float(r["spectral_norm"]["upper"])
        if not (lo * (1 - 1e-12) <= ref <= hi * (1 + 1e-12)):
            bad += 1
    heads_ok = all(r["rank"]["upper"] <= layout.head_dim for r in recs if r["type"] in ("QK", "VO"))
    n = len(recs)
    print(f"matrices: {n} ({sum(r['type'] in ('QK', 'VO') for r in recs)} per-head products, "
          f"{sum(r['type'] in ('M_in', 'M_out') for r in recs)} FFN)")
    rk = s1.pop("_by_kind")
    print(f"reference (formed, float64 svdvals): {t_ref:8.3f} s wall, {c_ref:8.3f} s CPU "
          f"[{rk['product']:.3f} s per-head products, {rk['dense']:.3f} s FFN]")
    kp, kd = shares["product"] * c_cert, shares["dense"] * c_cert
    print(f"certified (mode={args.spectrum_mode}):          {t_cert:8.3f} s wall, {c_cert:8.3f} s CPU   "
          f"[{sum(r['certified'] for r in recs)}/{n} certified]")
    print(f"  CPU inside the kernel (shares from a cProfile run): {kp:.3f} s per-head products, "
          f"{kd:.3f} s dense FFN; {c_cert - kp - kd:.3f} s loading + norms (incl. norm_21) + JSON form")
    print(f"ratio certified / reference: wall {t_cert / t_ref:.3f}, CPU {c_cert / c_ref:.3f}   (goal <= 0.5)")
    print("(CPU-time ratios are the stable ones on a shared machine; with multi-threaded BLAS they add up threads)")
    print(f"sigma1 consistent with float64 SVD: {n - bad}/{n}; per-head rank <= {layout.head_dim}: {heads_ok}")
    print(f"peak traced memory over one layer: loading only {peak_load / 2**20:.1f} MiB, reference "
          f"{peak_ref / 2**20:.1f} MiB, certified {peak_cert / 2**20:.1f} MiB; largest single matrix "
          f"{largest / 2**20:.1f} MiB -> certified peak = {peak_cert / largest:.1f} x, loading = "
          f"{peak_load / largest:.1f} x the largest matrix")
    print(f"process peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    return 0 if bad == 0 and heads_ok else 1


if __name__ == "__main__":
    sys.exit(main())
