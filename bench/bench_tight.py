"""Tight mode against numpy's SVD: CPU-time ratios of interleaved runs, and widths.

Issue 13's goal: ``enclose_singular_values(W, mode="tight")`` (SVD included)
≤ 2.5 × ``numpy.linalg.svd(W, full_matrices=False)`` at 768×768 and
768×3072, with a median relative width ≤ 1e-11 for the σᵢ ≥ 1e-2·σ₁
(``bench_enclose.py``'s tight target). For each shape and matrix kind
(Gaussian; ``bench_enclose.trained_like``: decaying spectrum, float32-stored)
the SVD, the whole tight-mode enclosure and its three kernels (α = ‖XᵀX − I‖,
β = ‖YᵀY − I‖, e = ‖W − X S Yᵀ‖) are timed round-robin in one process, in
CPU (process) time; medians over the repeats are printed, with ratios to the
SVD and to one GEMM ``X @ (Y·s)ᵀ`` (a unit that is robust on a shared
machine), the bounds and the median relative width.

Usage::

    OPENBLAS_NUM_THREADS=1 python bench/bench_tight.py [--shapes 768x768,768x3072] [--repeat R]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np

from bench_enclose import median_relative_width, trained_like
from certbound.ball import float_upper
from certbound.enclose import enclose_singular_values
from certbound.enclose.tight import gram_deviation_bound_tight, residual_norm_bound_tight


def _cpu(fn) -> tuple[float, object]:
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out


def bench_one(W: np.ndarray, repeat: int) -> dict[str, tuple[float, object]]:
    """Median CPU seconds (and last result) of each job, jobs interleaved per repeat."""
    X, s, Yt = np.linalg.svd(W, full_matrices=False)
    Y = np.ascontiguousarray(Yt.T)
    Z = Y * s

    def tight():
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a fallback would distort the timing
            return enclose_singular_values(W, mode="tight")

    jobs = {
        "numpy.linalg.svd": lambda: np.linalg.svd(W, full_matrices=False),
        "enclose (tight)": tight,
        "one GEMM X @ Z.T": lambda: X @ Z.T,
        "alpha ||X^T X - I||": lambda: gram_deviation_bound_tight(X),
        "beta  ||Y^T Y - I||": lambda: gram_deviation_bound_tight(Y),
        "e ||W - X S Y^T||": lambda: residual_norm_bound_tight(W, X, s, Y),
    }
    times: dict[str, list[float]] = {k: [] for k in jobs}
    out: dict[str, object] = {}
    for _ in range(repeat):
        for k, f in jobs.items():
            t, out[k] = _cpu(f)
            times[k].append(t)
    return {k: (statistics.median(v), out[k]) for k, v in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="768x768,768x3072", help="comma-separated MxN")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    summary = []
    for shape in a.shapes.split(","):
        m, n = (int(v) for v in shape.lower().split("x"))
        for kind in ("gaussian", "trained"):
            W = rng.standard_normal((m, n)) if kind == "gaussian" else trained_like(m, n, rng)
            res = bench_one(W, a.repeat)
            t_svd, t_gemm = res["numpy.linalg.svd"][0], res["one GEMM X @ Z.T"][0]
            print(f"\n{m}x{n} {kind}: median CPU s of {a.repeat} interleaved repeats")
            print(f"  {'job':22s} {'cpu s':>7s} {'/svd':>6s} {'/gemm':>6s}  bound (upper end)")
            for k, (t, o) in res.items():
                bs = f"{float_upper(o):.3e}" if k[0] in "abe" and not k.startswith("enclose") else ""
                print(f"  {k:22s} {t:7.3f} {t / t_svd:6.2f} {t / t_gemm:6.1f}  {bs}")
            t_tight, enc = res["enclose (tight)"]
            width = median_relative_width(enc)
            summary.append((f"{m}x{n}", kind, t_svd, t_tight, t_tight / t_svd, width))
    print(f"\n{'shape':>9} {'matrix':>9} {'svd s':>7} {'tight s':>8} {'ratio':>6} {'med rel width':>14}")
    for shape, kind, ts, tt, ratio, width in summary:
        print(f"{shape:>9} {kind:>9} {ts:7.3f} {tt:8.3f} {ratio:6.2f} {width:14.2e}")


if __name__ == "__main__":
    main()
