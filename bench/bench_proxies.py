"""Benchmark: proxies on a random-init model, exact grid vs pruned grid (one run).

Prints the time of the certified spectra (kernel), of ``paper_proxies`` with
every c(p) from the kernel's S_p (``exact_grid=True``) and with the pruned
grid (``exact_grid=False``), and the ratio pruned/exact measured in this run.
Also checks that both give overlapping B_ours and identical p* counts.

    OPENBLAS_NUM_THREADS=1 python bench/bench_proxies.py [--width 512] [--layers 12]
"""

from __future__ import annotations

import argparse
import time

from certbound.bounds.proxies import VARIANTS, paper_proxies, prefix_layers, random_init_quantities


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    t = time.perf_counter()
    qs = random_init_quantities(a.layers, a.width, seed=a.seed)
    t_enc = time.perf_counter() - t
    depths = sorted({max(1, a.layers * k // 6) for k in range(1, 7)})
    timings = {}
    results = {}
    for exact in (True, False):
        if not exact:  # the same draw again (same seed): no S_p memo carried over from the first pass
            qs = random_init_quantities(a.layers, a.width, seed=a.seed)
        t = time.perf_counter()
        results[exact] = [paper_proxies(prefix_layers(qs, L), v, exact_grid=exact) for L in depths for v in VARIANTS]
        timings[exact] = time.perf_counter() - t
    for a_, b_ in zip(results[True], results[False]):
        assert a_.B_ours.overlaps(b_.B_ours) and a_.p_star_counts() == b_.p_star_counts()
    print(f"random init L={a.layers} N={a.width}: spectra {t_enc:.2f} s; proxies over depths {depths} x 2 variants:")
    print(f"  exact grid  {timings[True]:.2f} s")
    print(f"  pruned grid {timings[False]:.2f} s   ratio pruned/exact = {timings[False] / timings[True]:.3f}")


if __name__ == "__main__":
    main()
