"""Gram-mode certificate: time and width against a values-only SVD and fast mode.

Goal (issue 2/3): ``enclose_singular_values_gram(W)`` ÷ ``numpy.linalg.svd(W,
compute_uv=False)`` ≤ ~0.6 for wide/tall matrices (FFN shapes 384×1536 and
768×3072), far below fast mode (which needs the SVD *with* vectors).

Matrices are trained-like (σᵢ ∝ i^-0.7, float32-stored). Timings are medians
over interleaved repeats (baseline, gram, fast alternate), so the ratios stay
meaningful on a busy machine. BLAS is pinned to one thread unless
``--threads`` says otherwise (set before numpy is imported).

Run: ``python bench/bench_gram.py [--repeat 7] [--threads 1] [--tall]``.
"""

from __future__ import annotations

import argparse
import os
import sys


def _parse() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1)")
    ap.add_argument("--tall", action="store_true", help="also the transposed (tall) shapes")
    return ap.parse_args()


def main() -> None:
    args = _parse()
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    if "numpy" in sys.modules:  # pragma: no cover - only when imported from elsewhere
        print("warning: numpy already imported; --threads may not apply")
    import statistics
    import time
    import warnings

    import numpy as np

    from certbound.enclose import enclose_singular_values
    from certbound.enclose.gram import enclose_singular_values_gram

    def trained_like(m: int, n: int, rng) -> np.ndarray:
        k = min(m, n)
        U = np.linalg.qr(rng.standard_normal((m, k)))[0]
        V = np.linalg.qr(rng.standard_normal((n, k)))[0]
        s = (np.arange(1, k + 1) ** -0.7) * 3.0
        return ((U * s) @ V.T).astype(np.float32).astype(np.float64)

    def widths(enc, s):
        rel = (enc.upper - enc.lower) / s
        keep = s >= 1e-2 * s[0]
        return float(np.median(rel[keep])), float(rel[0]), float(np.max(rel))

    rng = np.random.default_rng(0)
    shapes = [(384, 1536), (768, 3072)]
    if args.tall:
        shapes += [(1536, 384)]
    print(f"BLAS threads: {args.threads}; medians of {args.repeat} interleaved repeats")
    print(
        f"{'shape':>10} {'svdvals s':>9} {'gram s':>8} {'fast s':>8} {'gram/svdvals':>12} {'gram/fast':>9}"
        f"   {'rel width (median | σ₁ | max)':>40}"
    )
    for m, n in shapes:
        W = trained_like(m, n, rng)
        s = np.linalg.svd(W, compute_uv=False)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a fallback would distort the comparison
            eg = enclose_singular_values_gram(W)
            ef = enclose_singular_values(W, mode="fast")
        assert eg.mode == "gram" and ef.mode == "fast"
        assert np.all(eg.lower <= s * (1 + 1e-15)) and np.all(s <= eg.upper * (1 + 1e-15))  # sanity only
        fns = {
            "svdvals": lambda: np.linalg.svd(W, compute_uv=False),
            "gram": lambda: enclose_singular_values_gram(W),
            "fast": lambda: enclose_singular_values(W, mode="fast"),
        }
        ts = {k: [] for k in fns}
        for _ in range(args.repeat):
            for k, f in fns.items():
                t = time.perf_counter()
                f()
                ts[k].append(time.perf_counter() - t)
        med = {k: statistics.median(v) for k, v in ts.items()}
        wg, wf = widths(eg, s), widths(ef, s)
        print(
            f"{m:>4}x{n:<5} {med['svdvals']:9.4f} {med['gram']:8.4f} {med['fast']:8.4f} "
            f"{med['gram'] / med['svdvals']:12.2f} {med['gram'] / med['fast']:9.2f}"
            f"   gram {wg[0]:.1e} | {wg[1]:.1e} | {wg[2]:.1e}   fast {wf[0]:.1e} | {wf[1]:.1e} | {wf[2]:.1e}"
        )


if __name__ == "__main__":
    main()
