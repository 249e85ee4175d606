"""Kernel speed, memory and width, as ratios against float SVDs timed in the same run.

Goals (issues 2, 13, 16): fast mode ÷ ``numpy.linalg.svd(W, full_matrices=False)``
≤ 1.3 at 768×768, 768×3072 and 4096×16384 (``--large``); tight mode ≤ 2.5;
median relative width of σᵢ ≥ 1e-2·σ₁ ≤ 1e-9 (fast) and ≤ 1e-11 (tight); the
certificate's workspace a small multiple of the matrix.

Columns: ``svd s`` is ``numpy.linalg.svd(W, full_matrices=False)`` (the issues'
peer) and ``gesdd s`` the thin SVD certbound itself calls
(``svd._gesdd_thin``: LAPACK dgesdd on the orientation with M ≥ N — the
fastest float SVD with vectors we found; ``cert/gesdd`` is the certificate's
own overhead factor). Times are **CPU** (process) seconds, medians over
interleaved repeats (peers and candidate alternate), so ratios stay
meaningful on a busy machine. ``--memory`` adds tracemalloc peaks as
multiples of ``W.nbytes`` (numpy's SVD allocates its LAPACK buffers with
``malloc``, which tracemalloc does not see: read ``rss×``, the growth of the
resident-set high-water mark, for it). Width columns: median relative width
of all σᵢ and of σᵢ ≥ 1e-2·σ₁.

Run: ``OPENBLAS_NUM_THREADS=1 python bench/bench_enclose.py [--repeat 5]
[--memory] [--large] [--shapes 2048x8192] [--before DIR --rounds 3]``.
``--before DIR`` runs the whole bench alternately with ``PYTHONPATH=DIR``
(e.g. an export of an older commit) and with this tree, ``--rounds`` times,
each in a fresh process, and prints both side by side (medians over rounds).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
import warnings

import numpy as np


def _cpu(fn) -> float:
    t = time.process_time()
    fn()
    return time.process_time() - t


def _interleaved(fns: list, repeat: int) -> list[float]:
    ts: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for t, fn in zip(ts, fns):
            t.append(_cpu(fn))
    return [statistics.median(t) for t in ts]


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


def _rss_bytes(key: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _peaks(fn, nbytes: int) -> tuple[float, float | None]:
    """(tracemalloc peak, resident high-water growth) of one call, as multiples of nbytes."""
    gc.collect()
    rss0 = _rss_bytes("VmRSS")
    try:  # Linux: reset the high-water mark to the current resident set
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        resettable = True
    except OSError:
        resettable = False
    out = fn()
    hwm = _rss_bytes("VmHWM")
    del out
    gc.collect()
    tracemalloc.start()
    out = fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del out
    rss = (hwm - rss0) / nbytes if resettable and hwm is not None and rss0 is not None else None
    return peak / nbytes, rss


def run_rows(args) -> list[dict]:
    from certbound.enclose import enclose_singular_values
    from certbound.enclose import svd as svd_mod

    gesdd = getattr(svd_mod, "_gesdd_thin", None)  # absent in older trees
    rng = np.random.default_rng(0)
    modes = ["fast"] + (["tight"] if args.tight else [])
    shapes = [tuple(map(int, s.split("x"))) for s in args.shapes.split(",") if s]
    if args.large:
        shapes.append((4096, 16384))
    rows = []
    for shape in shapes:
        rep = args.repeat if shape[0] * shape[1] < 10**7 else 1
        for kind in args.matrices.split(","):
            W = rng.standard_normal(shape) if kind == "gaussian" else trained_like(*shape, rng)
            for mode in modes:
                with warnings.catch_warnings():
                    warnings.simplefilter("error")  # a fallback would distort the timing
                    enc = enclose_singular_values(W, mode=mode)
                fns = [lambda: np.linalg.svd(W, full_matrices=False), lambda: enclose_singular_values(W, mode=mode)]
                if gesdd is not None:
                    fns.append(lambda: gesdd(W))
                ts = _interleaved(fns, rep)
                row = {"shape": f"{shape[0]}x{shape[1]}", "matrix": kind, "mode": mode, "svd": ts[0], "cert": ts[1],
                       "gesdd": ts[2] if gesdd is not None else None,
                       "width_all": median_relative_width(enc, 0.0), "width": median_relative_width(enc)}
                if args.memory:
                    row["tm"], row["rss"] = _peaks(lambda: enclose_singular_values(W, mode=mode), W.nbytes)
                    if mode == modes[0]:
                        row["svd_tm"], row["svd_rss"] = _peaks(lambda: np.linalg.svd(W, full_matrices=False), W.nbytes)
                        if gesdd is not None:
                            row["gesdd_tm"], row["gesdd_rss"] = _peaks(lambda: gesdd(W), W.nbytes)
                rows.append(row)
                if args.emit_json:
                    print(json.dumps(row), flush=True)
                else:
                    print(_format(row), flush=True)
    return rows


HEADER = (f"{'shape':>10} {'matrix':>8} {'mode':>5} {'svd s':>7} {'cert s':>7} {'ratio':>5} {'gesdd s':>7} "
          f"{'cert/gesdd':>10} {'width all':>9} {'width≥1e-2':>10} {'tm×':>5} {'rss×':>5} {'svd tm/rss×':>11} "
          f"{'gesdd tm/rss×':>13}")


def _f(x, fmt: str, width: int) -> str:
    return format(x, fmt).rjust(width) if x is not None else "-".rjust(width)


def _format(r: dict) -> str:
    g = r.get("gesdd")
    svd_mem = f"{r['svd_tm']:.2f}/{r['svd_rss']:.2f}" if r.get("svd_rss") is not None else None
    ges_mem = f"{r['gesdd_tm']:.2f}/{r['gesdd_rss']:.2f}" if r.get("gesdd_rss") is not None else None
    return (f"{r['shape']:>10} {r['matrix']:>8} {r['mode']:>5} {r['svd']:7.3f} {r['cert']:7.3f} "
            f"{r['cert'] / r['svd']:5.2f} {_f(g, '7.3f', 7)} {_f(r['cert'] / g if g else None, '10.2f', 10)} "
            f"{r['width_all']:9.2e} {r['width']:10.2e} {_f(r.get('tm'), '5.2f', 5)} {_f(r.get('rss'), '5.2f', 5)} "
            f"{svd_mem or '-':>11} {ges_mem or '-':>13}")


def product_path(repeat: int) -> None:
    from certbound.enclose import enclose_singular_values, enclose_singular_values_of_product

    rng = np.random.default_rng(1)
    A = rng.standard_normal((768, 64)) * 0.05
    B = rng.standard_normal((768, 64)) * 0.05
    W = A @ B.T
    tf, tp = _interleaved([lambda: enclose_singular_values(W), lambda: enclose_singular_values_of_product(A, B)],
                          repeat)
    print(f"product (768x64)(64x768): formed+certified {tf:.4f} s, product path {tp:.4f} s, speed-up {tf / tp:.1f}x")


def compare(args) -> None:
    """``--before DIR``: alternate fresh processes of the old tree and this one; medians over rounds."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    child = ["--repeat", str(args.repeat), "--shapes", args.shapes, "--matrices", args.matrices]
    child += ["--large"] * args.large + ["--no-tight"] * (not args.tight) + ["--memory"] * args.memory
    results: dict[str, list[list[dict]]] = {"before": [], "after": []}
    for rnd in range(args.rounds):
        for label, path in (("before", os.path.abspath(args.before)), ("after", here)):
            env = dict(os.environ, PYTHONPATH=path)
            out = subprocess.run([sys.executable, os.path.abspath(__file__), *child, "--emit-json", "--no-product"],
                                 env=env, capture_output=True, text=True, check=True).stdout
            results[label].append([json.loads(line) for line in out.splitlines() if line.startswith("{")])
            print(f"round {rnd + 1} {label} done", file=sys.stderr, flush=True)
    print(f"{'':>25} {'ratio (cert/svd)':>17} {'cert/gesdd':>10} {'width≥1e-2σ₁':>19} {'width all':>19} "
          f"{'tracemalloc×':>13} {'rss×':>11}")
    print(f"{'shape':>10} {'matrix':>8} {'mode':>5} {'before':>8} {'after':>8} {'after':>10} {'before':>9} "
          f"{'after':>9} {'before':>9} {'after':>9} {'before':>6} {'after':>6} {'before':>5} {'after':>5}")
    for i, a0 in enumerate(results["after"][0]):
        def med(label, f):
            vals = [f(rs[i]) for rs in results[label] if f(rs[i]) is not None]
            return statistics.median(vals) if vals else None
        rb = med("before", lambda r: r["cert"] / r["svd"])
        ra = med("after", lambda r: r["cert"] / r["svd"])
        rg = med("after", lambda r: r["cert"] / r["gesdd"] if r.get("gesdd") else None)
        b0 = results["before"][0][i]
        print(f"{a0['shape']:>10} {a0['matrix']:>8} {a0['mode']:>5} {rb:8.2f} {ra:8.2f} {_f(rg, '10.2f', 10)} "
              f"{b0['width']:9.2e} {a0['width']:9.2e} {b0['width_all']:9.2e} {a0['width_all']:9.2e} "
              f"{_f(b0.get('tm'), '6.2f', 6)} {_f(a0.get('tm'), '6.2f', 6)} {_f(b0.get('rss'), '5.2f', 5)} "
              f"{_f(a0.get('rss'), '5.2f', 5)}")
    if args.memory:
        print("SVD alone (after tree, ×W.nbytes, tracemalloc/rss): " + "; ".join(
            f"{r['shape']} {r['matrix']}: numpy {r['svd_tm']:.2f}/{_f(r.get('svd_rss'), '.2f', 0)}, "
            f"gesdd_thin {r['gesdd_tm']:.2f}/{_f(r.get('gesdd_rss'), '.2f', 0)}"
            for r in results["after"][0] if "svd_tm" in r and "gesdd_tm" in r))


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--shapes", default="768x768,768x3072", help="comma-separated MxN list")
    ap.add_argument("--matrices", default="gaussian,trained")
    ap.add_argument("--large", action="store_true", help="also 4096×16384 (minutes, ~4 GB)")
    ap.add_argument("--no-tight", dest="tight", action="store_false", help="fast mode only")
    ap.add_argument("--memory", action="store_true", help="tracemalloc and resident-set peaks per call")
    ap.add_argument("--before", metavar="DIR", help="compare with the certbound package under DIR")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds with --before")
    ap.add_argument("--emit-json", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--no-product", dest="product", action="store_false", help="skip the product-path line")
    args = ap.parse_args(argv)
    if args.tight:
        try:
            import certbound.enclose.tight  # noqa: F401
        except ImportError:
            args.tight = False
    if args.before:
        compare(args)
        return
    if not args.emit_json:
        print(HEADER)
    run_rows(args)
    if args.product and not args.emit_json:
        product_path(args.repeat)


if __name__ == "__main__":
    main()
