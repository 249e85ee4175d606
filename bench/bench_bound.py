"""Bench: certified Theorem 2 bound (with the p search) for a 12-layer, 12-head, N = 768 network.

Goal (issue 4): ≤ 2 s once the spectra are certified. The spectra here are
synthetic (power-law decay, certified-enclosure-shaped objects: exact float
upper ends and certified rank bounds), so the time measured is the bound's
alone. For context the script also times, in the same run, the uncertified
float evaluation of the authors' proxy c(p) on the same grid (paper-known.md
§6) and prints the ratio.

Run: ``python bench/bench_bound.py [--n 1e9] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import math
import time
from types import SimpleNamespace

import numpy as np
from flint import arb


def synthetic_spectra(L: int, H: int, N: int, dh: int, dff: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)

    def enc(k: int, top: float, decay: float, rank: int):
        s = top * (np.arange(1, k + 1) ** -decay)
        s[rank:] = 0.0
        s = np.sort(s)[::-1]
        up = s * (1 + 1e-12)
        return SimpleNamespace(sigma=tuple(arb(float(u)) for u in up), upper=up, lower=s * (1 - 1e-12),
                               rank=SimpleNamespace(lower=rank, upper=rank), certified=True)

    out = {}
    for layer in range(L):
        for h in range(H):
            out[(layer, h, "QK")] = enc(N, float(rng.uniform(2, 8)), 0.8, dh)
            out[(layer, h, "VO")] = enc(N, float(rng.uniform(1, 3)), 0.6, dh)
        out[(layer, None, "M_in")] = enc(N, float(rng.uniform(4, 8)), 0.3, N)
        out[(layer, None, "M_out")] = enc(N, float(rng.uniform(3, 6)), 0.3, N)
    return out


def proxy_baseline(spectra: dict, L: int, N: int) -> float:
    """Uncertified float evaluation of the authors' per-matrix proxy c(p) over the p grid (timing reference)."""
    m = math.ceil(L + math.log(N))
    ps = np.arange(0, 2 * m + 1) / m
    t0 = time.perf_counter()
    tot = 0.0
    for e in spectra.values():
        u = e.upper[e.upper > 0]
        sp = np.where(ps[:, None] == 0, 1.0, u[None, :] ** ps[:, None]).sum(axis=1)
        sp[0] = len(u)
        c = sp ** (1 / (ps + 2)) * 10.0 ** (ps / (ps + 2)) * N ** ((ps + 1) / (ps + 2))
        tot += float(c.min())
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=1e9)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from certbound.ball import decimal_upper
    from certbound.bounds import TransformerSpec, theorem2_posthoc_bound

    L, H, N, dh, dff, T = 12, 12, 768, 64, 3072, 128
    spec = TransformerSpec(L, H, N, T, ffn_kind="two", d_ff=dff, d_head=dh, activation="gelu")
    spectra = synthetic_spectra(L, H, N, dh, dff)
    times, cpu = [], []
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        res = theorem2_posthoc_bound(spec, spectra, int(args.n), 0.05)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    base = min(proxy_baseline(spectra, L, N) for _ in range(args.repeat))
    best = min(times)
    ps = [float(m.p) for m in res.matrices if m.type != "readout"]
    print(f"network: L={L} H={H} N={N} d_ff={dff} d_head={dh} T={T}, J={len(res.matrices)} matrices, n={int(args.n)}")
    print(f"certified Theorem 2 bound (upper): {decimal_upper(res.bound, 6)}  "
          f"(2*Rademacher[{res.rademacher_method}]={decimal_upper(2 * res.rademacher, 6)}, confidence={decimal_upper(res.confidence_term, 6)}, "
          f"ln(1/pi)={decimal_upper(res.log_inv_prior, 6)}, partition points={len(res.partition)})")
    print(f"chosen p: {sorted(set(ps))} (counts: {[ps.count(v) for v in sorted(set(ps))]})")
    print(f"time per certified bound: best {best:.3f} s wall, {min(cpu):.3f} s CPU; "
          f"all wall {[round(t, 3) for t in times]} (goal <= 2 s)")
    print(f"float proxy baseline: {base * 1e3:.1f} ms; ratio certified/proxy = {best / base:.1f}")


if __name__ == "__main__":
    main()
