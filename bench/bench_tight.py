"""Benchmark of the tight-mode kernels against numpy's SVD (ratios measured in one run).

For one matrix size, times ``numpy.linalg.svd(W, full_matrices=False)``, one
plain GEMM ``X @ (Y·s)ᵀ`` (to express costs in GEMM-equivalents, which is
robust on a shared machine), and each certificate kernel of tight and fast
mode; timings are interleaved across repeats and the minimum is kept. Prints
ratios to the SVD time, the bounds, and the median relative width of the
Theorem R enclosures for σᵢ ≥ 1e-2·σ₁ that each mode's (α, β, e) give.

Usage::

    python bench/bench_tight.py [m n] [--repeat R] [--seed S]

Default 768 3072, W uniform in [-1, 1) scaled exactly so that max|W| ∈ [1, 2).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from certbound.ball import float_lower, float_upper
from certbound.enclose import fperror
from certbound.enclose.svd import theorem_r_intervals
from certbound.enclose.tight import gram_deviation_bound_tight, residual_norm_bound_tight


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shape", nargs="*", type=int, default=[768, 3072])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    m, n = a.shape
    rng = np.random.default_rng(a.seed)
    W = rng.uniform(-1, 1, (m, n))
    W *= 2.0 ** (1 - np.frexp(np.max(np.abs(W)))[1])  # exact: max|W| ∈ [1, 2)
    X, s, Yt = np.linalg.svd(W, full_matrices=False)
    Y = np.ascontiguousarray(Yt.T)
    Z = Y * s
    jobs = {
        "numpy.linalg.svd": lambda: np.linalg.svd(W, full_matrices=False),
        "one GEMM X @ Z.T": lambda: X @ Z.T,
        "tight alpha ||X^T X - I||": lambda: gram_deviation_bound_tight(X),
        "tight beta  ||Y^T Y - I||": lambda: gram_deviation_bound_tight(Y),
        "tight e ||W - X S Y^T||": lambda: residual_norm_bound_tight(W, X, s, Y),
        "fast alpha ||X^T X - I||": lambda: fperror.gram_deviation_bound(X),
        "fast beta  ||Y^T Y - I||": lambda: fperror.gram_deviation_bound(Y),
        "fast e ||W - X S Y^T||": lambda: fperror.residual_norm_bound(W, X, s, Y),
    }
    best = {k: float("inf") for k in jobs}
    out = {}
    for _ in range(a.repeat):
        for k, f in jobs.items():
            t = time.perf_counter()
            out[k] = f()
            best[k] = min(best[k], time.perf_counter() - t)
    t_svd, t_gemm = best["numpy.linalg.svd"], best["one GEMM X @ Z.T"]
    print(f"W: {m}x{n} uniform, max|W| in [1,2); best of {a.repeat} interleaved runs")
    print(f"{'job':28s} {'time/s':>8s} {'/svd':>7s} {'/gemm':>7s}  bound (upper end)")
    for k in jobs:
        b = out[k]
        bs = f"{float_upper(b):.4e}" if not isinstance(b, (tuple, np.ndarray)) else ""
        print(f"{k:28s} {best[k]:8.3f} {best[k] / t_svd:7.3f} {best[k] / t_gemm:7.2f}  {bs}")
    for mode in ("tight", "fast"):
        ks = [k for k in jobs if k.startswith(mode)]
        t = sum(best[k] for k in ks)
        alpha, beta, e = (out[k] for k in ks)
        sig = theorem_r_intervals(s, alpha, beta, e)
        keep = s >= 1e-2 * s[0]
        widths = [(float_upper(x) - float_lower(x)) / si for x, si, kp in zip(sig, s, keep) if kp]
        print(
            f"{mode:5s} mode: certificate {t:.3f} s, total incl. SVD / SVD = {(t + t_svd) / t_svd:.3f}; "
            f"median relative width (sigma_i >= 1e-2 sigma_1): {statistics.median(widths):.3e}"
        )


if __name__ == "__main__":
    main()
