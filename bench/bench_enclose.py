"""Kernel speed and width, as ratios against a baseline timed in the same run.

Goals (issue 2): fast mode ÷ ``numpy.linalg.svd(W, full_matrices=False)``
≤ 1.3 at 768×768 and 768×3072; tight mode ≤ 3; the product path for a
(768×64)(64×768) product ≥ 20× faster than certifying the formed matrix;
median relative width ≤ 1e-9 (fast) and ≤ 1e-11 (tight) for σᵢ ≥ 1e-2·σ₁ at
768×3072.

Run: ``python bench/bench_enclose.py [--repeat 5] [--large]`` (``--large``
adds 4096×16384, several minutes and ~4 GB). Timings are medians over
interleaved repeats (baseline and candidate alternate), which keeps the ratio
meaningful on a busy machine.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np

from certbound.enclose import enclose_singular_values, enclose_singular_values_of_product


def _time(fn, repeat: int) -> float:
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def _interleaved(base, cand, repeat: int) -> tuple[float, float]:
    tb, tc = [], []
    for _ in range(repeat):
        tb.append(_time(base, 1))
        tc.append(_time(cand, 1))
    return statistics.median(tb), statistics.median(tc)


def median_relative_width(enc, cutoff: float = 1e-2) -> float:
    s1 = enc.upper[0]
    keep = enc.lower >= cutoff * s1
    mid = (enc.upper + enc.lower) / 2
    return float(np.median((enc.upper[keep] - enc.lower[keep]) / mid[keep]))


def trained_like(m: int, n: int, rng) -> np.ndarray:
    """A matrix with a decaying spectrum like trained weights (σᵢ ∝ i^-0.7), float32-stored."""
    k = min(m, n)
    U = np.linalg.qr(rng.standard_normal((m, k)))[0]
    V = np.linalg.qr(rng.standard_normal((n, k)))[0]
    s = (np.arange(1, k + 1) ** -0.7) * 3.0
    return ((U * s) @ V.T).astype(np.float32).astype(np.float64)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--large", action="store_true", help="also 4096×16384 (slow)")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    try:
        import certbound.enclose.tight  # noqa: F401

        modes = ["fast", "tight"]
    except ImportError:
        modes = ["fast"]
    shapes = [(768, 768), (768, 3072)] + ([(4096, 16384)] if args.large else [])
    print(f"{'shape':>12} {'matrix':>9} {'mode':>6} {'svd s':>8} {'cert s':>8} {'ratio':>6} {'med rel width':>14}")
    for shape in shapes:
        rep = args.repeat if shape[0] * shape[1] < 10**7 else 1
        for kind in ("gaussian", "trained"):
            W = rng.standard_normal(shape) if kind == "gaussian" else trained_like(*shape, rng)
            for mode in modes:
                with warnings.catch_warnings():
                    warnings.simplefilter("error")  # a fallback would distort the timing
                    enc = enclose_singular_values(W, mode=mode)
                tb, tc = _interleaved(
                    lambda: np.linalg.svd(W, full_matrices=False),
                    lambda: enclose_singular_values(W, mode=mode),
                    rep,
                )
                print(
                    f"{shape[0]:>5}x{shape[1]:<6} {kind:>9} {mode:>6} {tb:8.3f} {tc:8.3f} {tc / tb:6.2f} "
                    f"{median_relative_width(enc):14.2e}"
                )
    # Product path vs certifying the formed product.
    A = rng.standard_normal((768, 64)) * 0.05
    B = rng.standard_normal((768, 64)) * 0.05
    W = A @ B.T
    tf, tp = _interleaved(
        lambda: enclose_singular_values(W),
        lambda: enclose_singular_values_of_product(A, B),
        args.repeat,
    )
    print(f"product (768x64)(64x768): formed+certified {tf:.4f} s, product path {tp:.4f} s, speed-up {tf / tp:.1f}x")


if __name__ == "__main__":
    main()
