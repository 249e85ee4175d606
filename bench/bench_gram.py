"""Gram route (modes gram/auto on dense matrices): CPU time against the fastest float pipeline, and widths.

The peer is ``bench/bench_model.py``'s (a) for a dense matrix: the Gram matrix of
the shorter side (``W @ W.T``, which numpy runs as SYRK) and its values-only
``numpy.linalg.eigvalsh`` — no certificate. The certified Gram route (Theorem G-T,
``mode="gram"``) needs in addition ``dorgqr`` (Q̂), the residual and α products and
Sturm counts: its floor is about 1.6× the peer. The pseudo-mode ``gram-eigh`` times
the previous certificate (Theorem G with ``eigh``'s eigenvectors, floor ≈ 2×),
the fallback of the tridiagonal route, by making that route unavailable; ``gram-rec`` times
Theorem G-R (no Q̂, proofs/enclosure-reconstruct.md) where mode auto would take it (mode gram
with ``prefer_reconstruct``: the go/no-go and the width test apply, else Theorem G-T).

Matrices: ``trained`` (σᵢ ∝ i^-0.7, float32-stored) and ``gaussian`` (0.02·N(0,1)).
Times are CPU (process) times, medians over interleaved repeats (peer, gram,
auto alternate) in one process, so ratios stay meaningful on a busy machine;
wall times are printed too. BLAS is pinned to ``--threads`` (default 1) before
numpy is imported.

``--before DIR`` runs the whole bench alternately (``--rounds``) in fresh
processes with ``PYTHONPATH=DIR`` (e.g. ``git archive c5d75bb certbound | tar -x -C DIR``)
and with this tree, and prints the ratios side by side plus the width change
per σ (after ÷ before; σ-ends of the same matrices). With ``--same-process`` both
packages are imported into ONE process (each keeps its own modules) and peer,
before and after alternate per repeat on the same matrices: on a loaded machine
this gives steadier before/after ratios than separate processes (the pseudo-modes
``gram-eigh`` and ``gram-rec`` are not run there).

Run: ``python bench/bench_gram.py [--repeat 7] [--threads 1] [--shapes 384x1536,768x3072]
[--spectrum-mode gram,auto,gram-eigh] [--before DIR [--rounds 3 | --same-process]]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

SHAPES = "384x1536,1536x384,768x3072,3072x768,768x768"


def _parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1)")
    ap.add_argument("--shapes", default=SHAPES, help=f"comma-separated MxN list (default {SHAPES})")
    ap.add_argument("--matrices", default="trained,gaussian")
    ap.add_argument("--spectrum-mode", dest="modes", default="gram,auto",
                    help="comma-separated certificate modes: gram, auto, and the pseudo-modes gram-eigh, gram-rec "
                         "(default gram,auto)")
    ap.add_argument("--modes", "--mode", dest="modes", help=argparse.SUPPRESS)  # the old spellings
    ap.add_argument("--before", metavar="DIR", help="compare with the certbound package under DIR")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds with --before")
    ap.add_argument("--same-process", action="store_true",
                    help="with --before: both packages in one process, peer/before/after interleaved per repeat")
    ap.add_argument("--emit-json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    try:
        args.shape_list = [tuple(int(x) for x in s.lower().split("x")) for s in args.shapes.split(",") if s]
    except ValueError:
        ap.error(f"--shapes: expected MxN[,MxN...], got {args.shapes!r}")
    return args


def _matrix(kind: str, m: int, n: int):
    import numpy as np

    rng = np.random.default_rng(0)
    if kind == "gaussian":
        return 0.02 * rng.standard_normal((m, n))
    k = min(m, n)
    U = np.linalg.qr(rng.standard_normal((m, k)))[0]
    V = np.linalg.qr(rng.standard_normal((n, k)))[0]
    s = (np.arange(1, k + 1) ** -0.7) * 3.0
    return ((U * s) @ V.T).astype(np.float32).astype(np.float64)


def run(args: argparse.Namespace) -> list[dict]:
    import time
    import warnings

    import numpy as np

    from certbound.enclose import enclose_singular_values

    def enclose(W, md):
        if md == "gram-rec":  # Theorem G-R where mode auto would take it: mode gram with prefer_reconstruct
            from certbound.enclose import gram

            orig = gram.certify_gram
            gram.certify_gram = lambda *a, **k: orig(*a, **{**k, "prefer_reconstruct": True})
            try:
                return enclose_singular_values(W, mode="gram")
            finally:
                gram.certify_gram = orig
        if md != "gram-eigh":
            return enclose_singular_values(W, mode=md)
        from certbound.enclose import gram  # Theorem G with eigenvectors: the tridiagonal route made unavailable

        tri = getattr(gram, "tridiagonal", None)  # absent in trees before Theorem G-T (there mode gram is eigh)
        saved = tri.householder_tridiagonal if tri is not None else None
        if tri is not None:
            tri.householder_tridiagonal = lambda G: None
        try:
            return enclose_singular_values(W, mode="gram")
        finally:
            if tri is not None:
                tri.householder_tridiagonal = saved

    def peer(W):
        G = W @ W.T if W.shape[0] <= W.shape[1] else W.T @ W  # SYRK
        return np.sqrt(np.maximum(np.linalg.eigvalsh(G)[::-1], 0.0))

    modes = [m for m in args.modes.split(",") if m]
    rows = []
    for m, n in args.shape_list:
        for kind in args.matrices.split(","):
            W = _matrix(kind, m, n)
            s = np.linalg.svd(W, compute_uv=False)
            fns = {"peer": lambda: peer(W)}
            encs = {}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for md in modes:
                    encs[md] = enclose(W, md)
                    fns[md] = (lambda md=md: enclose(W, md))
                cpu = {k: [] for k in fns}
                wall = {k: [] for k in fns}
                for _ in range(args.repeat):
                    for k, f in fns.items():
                        c, t = time.process_time(), time.perf_counter()
                        f()
                        cpu[k].append(time.process_time() - c)
                        wall[k].append(time.perf_counter() - t)
            row = {"shape": f"{m}x{n}", "matrix": kind}
            keep = s >= 1e-2 * s[0]
            for k in fns:
                row[f"cpu_{k}"] = statistics.median(cpu[k])
                row[f"wall_{k}"] = statistics.median(wall[k])
            for md, enc in encs.items():
                rel = (enc.upper - enc.lower) / np.where(s > 0, s, 1.0)
                row[f"mode_{md}"] = enc.mode
                row[f"width_{md}"] = float(np.median(rel[keep]))
                row[f"width1_{md}"] = float(rel[0])
                row[f"widths_{md}"] = (enc.upper - enc.lower).tolist()
            rows.append(row)
    return rows


def _print_rows(rows: list[dict], modes: list[str]) -> None:
    print(f"{'shape':>10} {'matrix':>8} {'peer cpu s':>10} " + " ".join(
        f"{md + ' cpu s':>11} {md + '/peer':>10} {'wall/peer':>9} {'width≥1e-2σ₁':>12} {'width σ₁':>9}" for md in modes))
    for r in rows:
        p = r["cpu_peer"]
        print(f"{r['shape']:>10} {r['matrix']:>8} {p:10.4f} " + " ".join(
            f"{r['cpu_' + md]:11.4f} {r['cpu_' + md] / p:10.2f} {r['wall_' + md] / r['wall_peer']:9.2f} "
            f"{r['width_' + md]:12.2e} {r['width1_' + md]:9.2e}" for md in modes))


def compare(args: argparse.Namespace) -> None:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    child = ["--repeat", str(args.repeat), "--threads", str(args.threads), "--shapes", args.shapes,
             "--matrices", args.matrices, "--emit-json"]
    # Older trees' bench reads --modes; this file is run in both (PYTHONPATH selects the package).
    child += ["--modes", args.modes]
    results: dict[str, list[list[dict]]] = {"before": [], "after": []}
    for rnd in range(args.rounds):
        for label, path in (("before", os.path.abspath(args.before)), ("after", here)):
            env = dict(os.environ, PYTHONPATH=path)
            out = subprocess.run([sys.executable, os.path.abspath(__file__), *child],
                                 env=env, capture_output=True, text=True, check=True).stdout
            results[label].append([json.loads(line) for line in out.splitlines() if line.startswith("{")])
            print(f"round {rnd + 1} {label} done", file=sys.stderr, flush=True)
    modes = [m for m in args.modes.split(",") if m]
    print(f"BLAS threads {args.threads}; CPU ratios to the peer (SYRK + eigvalsh), medians over {args.rounds} rounds "
          f"of {args.repeat} interleaved repeats; width ratio = after/before per σ (max, median, #wider)")
    print(f"{'shape':>10} {'matrix':>8} {'mode':>9} {'before':>7} {'after':>7} {'wall b':>7} {'wall a':>7} "
          f"{'peer ms':>8} {'width≥1e-2σ₁ b/a':>19} {'w-ratio max':>11} {'median':>7} {'wider':>7} {'mode b→a':>16}")
    for i, a0 in enumerate(results["after"][0]):
        b0 = results["before"][0][i]
        for md in modes:
            def med(label, key):
                return statistics.median(rs[i][key] / rs[i][key.split("_")[0] + "_peer"] for rs in results[label])
            wb, wa = b0[f"widths_{md}"], a0[f"widths_{md}"]
            ratios = [y / x if x > 0 else (1.0 if y == 0 else float("inf")) for x, y in zip(wb, wa)]
            wider = sum(y > x for x, y in zip(wb, wa))
            peer_ms = 1e3 * statistics.median(rs[i]["cpu_peer"] for rs in results["after"])
            print(f"{a0['shape']:>10} {a0['matrix']:>8} {md:>9} {med('before', 'cpu_' + md):7.2f} "
                  f"{med('after', 'cpu_' + md):7.2f} {med('before', 'wall_' + md):7.2f} {med('after', 'wall_' + md):7.2f} "
                  f"{peer_ms:8.1f} {b0['width_' + md]:9.2e}/{a0['width_' + md]:9.2e} {max(ratios):11.4f} "
                  f"{statistics.median(ratios):7.4f} {wider:>3}/{len(wb):<3} {b0['mode_' + md]:>9}→{a0['mode_' + md]:<9}")


def _import_certbound(path: str):
    """``enclose_singular_values`` of the package under ``path``, run with that package's modules only.

    The ``certbound`` entries of ``sys.modules`` are removed before the import, so the
    next call imports another copy; functions keep their own module globals, and the
    returned wrapper puts this copy's modules back into ``sys.modules`` for each call
    (the kernel imports some modules lazily, inside functions).
    """
    def ours(name: str) -> bool:
        return name == "certbound" or name.startswith("certbound.")

    for name in [k for k in sys.modules if ours(k)]:
        del sys.modules[name]
    sys.path.insert(0, path)
    try:
        import importlib

        from certbound.enclose import enclose_singular_values
        for lazy in ("certbound.enclose.gram", "certbound.enclose.tridiagonal"):  # imported inside functions
            try:
                importlib.import_module(lazy)
            except ImportError:  # an older tree without that module
                pass
    finally:
        sys.path.remove(path)
    modules = {k: v for k, v in sys.modules.items() if ours(k)}

    def call(W, mode):
        for name in [k for k in sys.modules if ours(k) and k not in modules]:
            del sys.modules[name]
        sys.modules.update(modules)
        return enclose_singular_values(W, mode=mode)

    return call


def compare_in_process(args: argparse.Namespace) -> None:
    import time
    import warnings

    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    import numpy as np

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    encl = {"before": _import_certbound(os.path.abspath(args.before)), "after": _import_certbound(here)}
    modes = [m for m in args.modes.split(",") if m and m not in ("gram-eigh", "gram-rec")]

    def peer(W):
        G = W @ W.T if W.shape[0] <= W.shape[1] else W.T @ W
        return np.linalg.eigvalsh(G)

    print(f"BLAS threads {args.threads}; one process, {args.repeat} repeats of peer/before/after interleaved; CPU ms "
          f"medians; width ratio = after/before per σ (max, median, #wider)")
    print(f"{'shape':>10} {'matrix':>8} {'mode':>6} {'peer ms':>8} {'before ms':>9} {'after ms':>8} {'b/peer':>7} "
          f"{'a/peer':>7} {'a/b':>6} {'w-ratio max':>11} {'median':>7} {'wider':>8}")
    for m, n in args.shape_list:
        for kind in args.matrices.split(","):
            W = _matrix(kind, m, n)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for md in modes:
                    fns = {"peer": lambda: peer(W)}
                    fns.update((lab, (lambda f=f: f(W, mode=md))) for lab, f in encl.items())
                    ends = {lab: f(W, mode=md) for lab, f in encl.items()}
                    cpu = {k: [] for k in fns}
                    for _ in range(args.repeat):
                        for k, f in fns.items():
                            c = time.process_time()
                            f()
                            cpu[k].append(time.process_time() - c)
                    med = {k: 1e3 * statistics.median(v) for k, v in cpu.items()}
                    wb = ends["before"].upper - ends["before"].lower
                    wa = ends["after"].upper - ends["after"].lower
                    ratio = np.where(wb > 0, wa / np.where(wb > 0, wb, 1.0), np.where(wa == 0, 1.0, np.inf))
                    print(f"{m}x{n:<5} {kind:>8} {md:>6} {med['peer']:8.2f} {med['before']:9.2f} {med['after']:8.2f} "
                          f"{med['before'] / med['peer']:7.3f} {med['after'] / med['peer']:7.3f} "
                          f"{med['after'] / med['before']:6.3f} {float(ratio.max()):11.4f} "
                          f"{float(np.median(ratio)):7.4f} {int((wa > wb).sum()):>3}/{wa.size:<4}", flush=True)


def main(argv: list[str] | None = None) -> None:
    args = _parse(argv)
    if args.before and args.same_process:
        compare_in_process(args)
        return
    if args.before:
        compare(args)
        return
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    if "numpy" in sys.modules:  # pragma: no cover - only when imported from elsewhere
        print("warning: numpy already imported; --threads may not apply", file=sys.stderr)
    rows = run(args)
    if args.emit_json:
        for r in rows:
            print(json.dumps(r))
        return
    print(f"BLAS threads: {args.threads}; CPU medians of {args.repeat} interleaved repeats")
    _print_rows(rows, [m for m in args.modes.split(",") if m])


if __name__ == "__main__":
    main()
