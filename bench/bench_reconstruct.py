"""Theorem G-R (reconstruct.certify_reconstructed) against Theorem G-T (gram._certify_tridiagonal): CPU and widths.

Both certify the same Ĝ, β (``gram.rounded_gram``, not timed) of each matrix; what is timed is
everything after: G-T = ``dsytrd`` + ``dorgqr`` + Lemma 3.4-T's residual + α of Q̂ + Sturm +
floats; G-R = ``dsytrd`` + the block reconstruction with its a-priori bounds + Sturm + floats.
The peer (``bench/bench_model.py``'s (a) for a dense matrix: SYRK + values-only ``eigvalsh``) is
timed in the same interleaved loop, so the savings can be read as a fraction of the peer on a
loaded machine. Widths: median and maximum relative width of the σᵢ ≥ 10⁻²σ₁, and α, e/(u‖Ĝ‖).

Matrices: all-MiniLM-L6-v2's 12 FFN matrices (384×1536 / 1536×384, from the packaged checkpoint,
loaded as ``bench/bench_model.py`` does), and 768×3072 ``gaussian`` (0.02·N(0,1), GPT-2-small
shape) and ``trained`` (σᵢ ∝ i^-0.7) matrices. CPU (process) times, medians over ``--repeat``
interleaved repeats; BLAS pinned to one thread before numpy is imported.

Run: ``python bench/bench_reconstruct.py [--repeat 7] [--block 32] [--no-minilm] [--mpnet 4] [--shapes 768x3072]``
(``--mpnet N``: the first N FFN matrices of all-mpnet-base-v2, trained 768×3072, when its data package is installed).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

U = 2.0**-53


def _dense_of(model: str) -> list[np.ndarray]:
    """The dense (FFN) matrices of a packaged checkpoint, loaded as bench/bench_model.py does."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import tempfile

    import bench_model

    with tempfile.TemporaryDirectory() as tmp:
        ms, _ = bench_model.load_matrices(bench_model.resolve_model(model, tmp))
    return [m.dense for m in ms if m.factors is None]


def _synthetic(shape: tuple[int, int], kind: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    m, n = shape
    if kind == "gaussian":
        return 0.02 * rng.standard_normal(shape)
    k = min(m, n)
    Uq, _ = np.linalg.qr(rng.standard_normal((m, k)))
    Vq, _ = np.linalg.qr(rng.standard_normal((n, k)))
    return ((Uq * np.arange(1, k + 1) ** -0.7) @ Vq.T).astype(np.float32).astype(np.float64)


def _widths(sig) -> tuple[float, float]:
    lo = np.array([float(x.lower()) for x in sig])
    hi = np.array([float(x.upper()) for x in sig])
    keep = lo >= 1e-2 * hi[0]
    w = (hi[keep] - lo[keep]) / ((hi[keep] + lo[keep]) / 2)
    return float(np.median(w)), float(w.max())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--block", type=int, default=None, help="reflectors per block (default RECONSTRUCT_BLOCK)")
    ap.add_argument("--shapes", default="768x3072", help="synthetic shapes, comma-separated MxN ('' for none)")
    ap.add_argument("--no-minilm", action="store_true", help="skip all-MiniLM-L6-v2's FFN matrices")
    ap.add_argument("--mpnet", type=int, default=0, metavar="N",
                    help="also the first N FFN matrices (768×3072, trained) of all-mpnet-base-v2, if installed")
    args = ap.parse_args(argv)

    from certbound.ball import float_upper
    from certbound.enclose import gram, reconstruct

    block = args.block or reconstruct.RECONSTRUCT_BLOCK
    mats: list[tuple[str, np.ndarray]] = []
    if not args.no_minilm:
        mats += [(f"MiniLM FFN {i} {W.shape[0]}x{W.shape[1]}", W) for i, W in enumerate(_dense_of("all-MiniLM-L6-v2"))]
    if args.mpnet:
        try:
            mp = _dense_of("all-mpnet-base-v2")[:args.mpnet]
        except Exception as exc:  # noqa: BLE001 — an optional data package
            print(f"(all-mpnet-base-v2 not available: {exc})")
            mp = []
        mats += [(f"mpnet FFN {i} {W.shape[0]}x{W.shape[1]}", W) for i, W in enumerate(mp)]
    for s in filter(None, args.shapes.split(",")):
        shape = tuple(int(x) for x in s.lower().split("x"))
        mats += [(f"{kind} {shape[0]}x{shape[1]}", _synthetic(shape, kind)) for kind in ("gaussian", "trained")]
    print(f"load average {os.getloadavg()[0]:.2f}, BLAS threads {os.environ.get('OPENBLAS_NUM_THREADS')}, "
          f"block {block}, repeat {args.repeat}")
    hdr = ("matrix", "peer ms", "G-T ms", "G-R ms", "saved/peer", "G-T med w", "G-R med w", "G-R max w",
           "α G-T", "α G-R", "e/uG G-T", "e/uG G-R")
    print(" | ".join(hdr))
    for name, W in mats:
        Ws = np.ascontiguousarray(W if W.shape[0] <= W.shape[1] else W.T)
        G, beta = gram.rounded_gram(Ws)
        gnorm = float(np.linalg.norm(G, 2))
        times: dict[str, list[float]] = {"peer": [], "gt": [], "gr": []}
        res = {}
        for _ in range(args.repeat):
            for key in ("peer", "gt", "gr"):
                t0 = time.process_time()
                if key == "peer":
                    np.linalg.eigvalsh(Ws @ Ws.T)
                elif key == "gt":
                    res[key] = gram._certify_tridiagonal(G, beta, 0)
                else:
                    res[key] = reconstruct.certify_reconstructed(G, beta, 0, block=block)
                times[key].append(time.process_time() - t0)
        med = {k: 1e3 * statistics.median(v) for k, v in times.items()}
        row = [name, f"{med['peer']:.1f}", f"{med['gt']:.1f}", f"{med['gr']:.1f}",
               f"{(med['gt'] - med['gr']) / med['peer']:+.2f}"]
        if res["gt"] is None or res["gr"] is None:
            row += ["(a certificate failed)"]
        else:
            wt, wr = _widths(res["gt"][0]), _widths(res["gr"][0])
            row += [f"{wt[0]:.2e}", f"{wr[0]:.2e}", f"{wr[1]:.2e}", f"{float_upper(res['gt'][1]):.1e}",
                    f"{float_upper(res['gr'][1]):.1e}", f"{float_upper(res['gt'][2]) / (U * gnorm):.3g}",
                    f"{float_upper(res['gr'][2]) / (U * gnorm):.3g}"]
        print(" | ".join(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
