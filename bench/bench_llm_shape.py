"""Bench: certified spectra of a LLaMA-7B-shaped checkpoint, time and peak RSS vs the float pipeline.

Writes once, into a cache folder (``--cache``, default
``~/.cache/certbound-bench``), a checkpoint with LLaMA-7B's tensor names,
shapes and bf16 storage (hidden 4096, 32 heads of 128, FFN 11008, vocabulary
32000) and random N(0, 0.02²) weights, sharded as Hugging Face shards it. By
default only the first ``--write-layers 2`` of the 32 layers are written (a
full 7B is 13.5 GB; the embeddings and LM head, which no theory matrix uses,
are written in full); ``--write-layers 32`` writes the whole model.

Then, in one run and on the same matrices of ``--layers`` (default layer 0):

* ``float``: the fastest uncertified float pipeline we know: per-head σ of
  QK = A Bᵀ through the factors (QR of A and B, then the values-only SVD of
  the d_h × d_h matrix R_A R_Bᵀ), values-only LAPACK SVD of each dense FFN
  matrix; the same loader reads the tensors.
* ``certified --jobs 1`` and ``certified --jobs 2``: ``certbound spectrum
  … --json`` (every σᵢ certified and written).

Each runs in its own child process; its wall time and peak RSS (the largest
``ru_maxrss`` among the process and its workers: per process, not summed)
are printed with the largest single matrix (float64) for scale. The projected
time for all 32 layers (and for the 70B shape) is per-layer time × layers,
printed as a projection — not measured.

Which FFN matrices: if certbound knows LLaMA (issue 15) its own mapping is
used; otherwise a mapping file (``--mapping``, written into the cache) maps
M_in → up_proj and M_out → down_proj and the bench says that gate_proj is
left out.

``--only TYPES`` (e.g. ``--only M_gate,M_up,M_down``, or ``dense`` for a
layout's FFN matrices) measures only the certified peak RSS and time of
those matrices of ``--layers``: one child process reads and certifies them
one at a time through the public API (``theory_matrices`` →
``certify_theory_matrix``, the call ``certbound spectrum``'s serial engine
makes per dense matrix; per-head products one by one, where the CLI batches
a layer's heads), each record appended to a temporary file,
with no float pipeline and no whole-layer run — a 7B-shape memory check in
minutes instead of a quarter of an hour. It prints, per matrix, the
certificate used (``gram``, ``fast+gram``, …) and CPU seconds, and the
child's peak RSS as "interpreter + k × the largest matrix".

Run:  OPENBLAS_NUM_THREADS=1 python bench/bench_llm_shape.py [--layers 0] [--jobs 1,2] [--write-layers 2]
      OPENBLAS_NUM_THREADS=1 python bench/bench_llm_shape.py --only dense [--spectrum-mode auto]
The machine may be shared: times are wall-clock of one run; compare ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # this checkout's certbound (the children get it through PYTHONPATH)

from _shape_checkpoints import SHAPES, write_checkpoint  # noqa: E402

from _bench_options import add_spectrum_mode_option  # noqa: E402

_MAPPING = {
    "layout": "linear",
    "tensors": {"W_Q": "model.layers.{layer}.self_attn.q_proj.weight",
                "W_K": "model.layers.{layer}.self_attn.k_proj.weight",
                "W_V": "model.layers.{layer}.self_attn.v_proj.weight",
                "W_O": "model.layers.{layer}.self_attn.o_proj.weight",
                "M_in": "model.layers.{layer}.mlp.up_proj.weight",
                "M_out": "model.layers.{layer}.mlp.down_proj.weight"},
}


def _float_pipeline(path: str, layers: list[int], mapping: str | None) -> None:
    """Child process: the uncertified float pipeline; prints JSON timings."""
    import numpy as np

    from certbound.checkpoints import open_checkpoint, theory_matrices

    t0 = time.perf_counter()
    ck, layout = open_checkpoint(path, mapping=mapping)
    by = {"product": 0.0, "dense": 0.0}
    n = 0
    with ck:
        for m in theory_matrices(ck, layout=layout, types=layout.matrix_types, layers=layers):
            t = time.perf_counter()
            if m.factors is not None:
                ra = np.linalg.qr(m.factors[0], mode="r")
                rb = np.linalg.qr(m.factors[1], mode="r")
                np.linalg.svd(ra @ rb.T, compute_uv=False)
                by["product"] += time.perf_counter() - t
            else:
                np.linalg.svd(m.dense, compute_uv=False)
                by["dense"] += time.perf_counter() - t
            n += 1
    print(json.dumps({"seconds": time.perf_counter() - t0, "matrices": n, **by}))


def _certify_child(path: str, layers: list[int], types: list[str], mode: str, mapping: str | None) -> None:
    """Child process: certify only ``types`` of ``layers``, one matrix at a time; prints JSON per matrix.

    Public API only: ``theory_matrices`` reads one matrix at a time and ``certify_theory_matrix``
    certifies it (the call the CLI's serial engine makes per dense matrix); each record is
    appended to a temporary JSONL file and dropped, as the CLI's record store does.
    """
    import gc

    from certbound.checkpoints import open_checkpoint, theory_matrices
    from certbound.pipeline import certify_theory_matrix

    ck, layout = open_checkpoint(path, mapping=mapping)
    if types == ["dense"]:
        types = [t for t in layout.matrix_types if t.startswith("M")]
    ps = ("0.5", "1", "2")
    rows = []
    with ck, tempfile.TemporaryDirectory() as tmp, open(os.path.join(tmp, "r.jsonl"), "w") as records:
        for layer in layers:
            for t in types:
                c = time.process_time()
                for m in theory_matrices(ck, layout=layout, types=(t,), layers=[layer]):
                    rec = certify_theory_matrix(m, mode, ps)
                    del m
                    gc.collect()
                    records.write(json.dumps(rec) + "\n")
                    rows.append({"key": [rec["layer"], rec["head"], rec["type"]], "mode": rec["mode"],
                                 "shape": rec["shape"], "cpu": time.process_time() - c})
                    del rec
                    c = time.process_time()
    print(json.dumps(rows))


def _measure(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Wall time (s), peak RSS (MiB) of the largest process in the child's tree, stdout."""
    wrapper = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
               "sys.stderr.write(r.stderr); print(r.stdout); "
               "print('MAXRSS', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(r.returncode)")
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", wrapper, *cmd], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stderr[-3000:]}")
    lines = r.stdout.strip().splitlines()
    rss = int(lines[-1].split()[1]) / 1024
    return wall, rss, "\n".join(lines[:-1])


def _parse_layers(ap: argparse.ArgumentParser, text: str, num_layers: int, where: str) -> list[int]:
    """``--layers`` as ints in ``range(num_layers)``, else a parser error naming the checkpoint."""
    try:
        layers = [int(x) for x in text.split(",")]
    except ValueError:
        ap.error(f"--layers: expected comma-separated layer indices, got {text!r}")
    bad = [x for x in layers if not 0 <= x < num_layers]
    if bad:
        ap.error(f"--layers: {bad} out of range: {where} has {num_layers} layers (0-based)")
    return layers


def _check_types(ap: argparse.ArgumentParser, text: str, layout_types: tuple[str, ...]) -> None:
    """``--only``: 'dense' or matrix types ``theory_matrices`` knows, else a parser error listing them."""
    from certbound.checkpoints import CROSS_TYPES, EXTRA_TYPES, GATED_TYPES, MATRIX_TYPES, RAW_TYPES

    known = MATRIX_TYPES + RAW_TYPES + EXTRA_TYPES + GATED_TYPES + CROSS_TYPES
    types = text.split(",")
    if types == ["dense"]:
        return
    unknown = [t for t in types if t not in known]
    if unknown:
        ap.error(f"--only: unknown matrix type(s) {unknown}; give 'dense' or types of {', '.join(known)} "
                 f"(this layout's: {', '.join(layout_types)})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", default=os.path.join(os.path.expanduser("~"), ".cache", "certbound-bench"))
    ap.add_argument("--shape", default="llama-7b", choices=sorted(SHAPES))
    ap.add_argument("--write-layers", type=int, default=2, help="layers written (default 2; 32 = the full 7B)")
    ap.add_argument("--layers", default="0", help="layers certified and timed (default 0)")
    ap.add_argument("--jobs", default="1,2", help="certified runs, one per --jobs value (default 1,2)")
    add_spectrum_mode_option(ap, deprecated_alias="--mode")  # the CLI's option; --mode: hidden deprecated alias
    ap.add_argument("--checkpoint", metavar="DIR",
                    help="use this checkpoint of --shape (written by bench/_shape_checkpoints.py) instead of the cache")
    ap.add_argument("--only", metavar="TYPES",
                    help="measure only the certified peak RSS/time of these matrix types of --layers "
                         "(comma-separated, or 'dense' for the FFN matrices); no float pipeline, no whole-layer run")
    ap.add_argument("--float-child", nargs=3, metavar=("PATH", "LAYERS", "MAPPING"), help=argparse.SUPPRESS)
    ap.add_argument("--certify-child", nargs=5, metavar=("PATH", "LAYERS", "TYPES", "MODE", "MAPPING"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.float_child:
        path, layers, mapping = args.float_child
        _float_pipeline(path, [int(x) for x in layers.split(",")], None if mapping == "-" else mapping)
        return 0
    if args.certify_child:
        path, layers, types, mode, mapping = args.certify_child
        _certify_child(path, [int(x) for x in layers.split(",")], types.split(","), mode,
                       None if mapping == "-" else mapping)
        return 0

    cfg, dtype = SHAPES[args.shape]
    total_layers = cfg.get("num_hidden_layers", cfg.get("n_layer"))
    t = time.perf_counter()
    if args.checkpoint:
        d, fresh = args.checkpoint, False
        with open(os.path.join(d, "config.json")) as f:
            written = json.load(f)
        args.write_layers = written.get("num_hidden_layers", written.get("n_layer"))
    else:
        d = os.path.join(args.cache, f"{args.shape}-{args.write_layers}layers")
        fresh = not os.path.exists(os.path.join(d, ".complete"))
        write_checkpoint(d, args.shape, layers=args.write_layers)
    size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
    print(f"checkpoint {d}: {size / 1e9:.2f} GB {dtype}, {args.write_layers} of {total_layers} layers"
          + (f" (written in {time.perf_counter() - t:.0f} s)" if fresh else " (cached)"))

    from certbound.checkpoints import open_checkpoint

    mapping = None
    try:
        ck, layout = open_checkpoint(d)
        ck.close()
        print(f"architecture: certbound's own {layout.architecture} layout")
    except ValueError:
        mapping = os.path.join(d, "mapping.json")
        with open(mapping, "w") as f:
            json.dump(_MAPPING, f, indent=1)
        ck, layout = open_checkpoint(d, mapping=mapping)
        ck.close()
        print("architecture: certbound has no LLaMA layout yet; mapping file M_in = up_proj, M_out = down_proj "
              "(gate_proj is left out of both pipelines)")
    N, F, H = layout.hidden_size, layout.intermediate_size, layout.num_heads
    largest = max(N * F, N * N) * 8 / 2**20
    layers = _parse_layers(ap, args.layers, layout.num_layers, d)
    if args.only:
        _check_types(ap, args.only, layout.matrix_types)
    print(f"matrices per layer: {H} QK + {H} VO heads ({N}x{N}, rank <= {layout.head_dim}), "
          f"{len(layout.matrix_types) - 2} FFN ({N}x{F}); largest matrix {largest:.0f} MiB as float64")
    print(f"timed layers: {layers}; mode: {args.spectrum_mode}; BLAS threads: OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")

    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(HERE) + os.pathsep + env.get("PYTHONPATH", "")
    rows = []
    _, interp, _ = _measure([sys.executable, "-c", "import certbound.cli, certbound.pipeline, certbound.enclose"], env)
    print(f"interpreter with certbound, numpy, scipy, flint imported: peak RSS {interp:.0f} MiB; "
          f"3 x largest matrix + interpreter = {3 * largest + interp:.0f} MiB")
    if args.only:
        mode = args.spectrum_mode
        wall, rss, out = _measure([sys.executable, __file__, "--certify-child", d, args.layers, args.only, mode,
                                   mapping or "-"], env)
        per = json.loads(out.strip().splitlines()[-1])
        for r in per:
            print(f"  {tuple(r['key'])} {r['shape'][0]}x{r['shape'][1]}: certificate {r['mode']}, {r['cpu']:.1f} s CPU")
        print(f"certified only {args.only} of layers {layers} (mode {mode}, one matrix at a time): {wall:.1f} s wall, "
              f"peak RSS {rss:.0f} MiB = interpreter + {(rss - interp) / largest:.2f} x the largest matrix "
              f"(criterion: <= 3 x, i.e. {3 * largest + interp:.0f} MiB)")
        return 0
    wall, rss, out = _measure([sys.executable, __file__, "--float-child", d, args.layers, mapping or "-"], env)
    info = json.loads(out.strip().splitlines()[-1])
    rows.append(("float (QR+SVD per head, values-only SVD dense)", wall, rss))
    print(f"  float: {wall:.1f} s (heads {info['product']:.1f} s, dense {info['dense']:.1f} s), "
          f"peak RSS {rss:.0f} MiB", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for jobs in (int(j) for j in args.jobs.split(",")):
            cmd = [sys.executable, "-m", "certbound", "spectrum", d, "--layers", args.layers,
                   "--quiet", "--jobs", str(jobs), "--json", os.path.join(tmp, f"r{jobs}.json")]
            cmd += ["--spectrum-mode", args.spectrum_mode]
            if mapping:
                cmd += ["--mapping", mapping]
            wall, rss, _ = _measure(cmd, env)
            rows.append((f"certified --jobs {jobs}", wall, rss))
            print(f"  certified --jobs {jobs}: {wall:.1f} s, peak RSS {rss:.0f} MiB "
                  f"(interpreter + {(rss - interp) / largest:.2f} x the largest matrix)", flush=True)
    base = rows[0][1]
    nl = total_layers
    print(f"\n{'pipeline':<50} {'s/layer':>9} {'ratio':>6} {'RSS MiB':>7} {f'{nl} layers (projected)':>22}")
    for name, wall, rss in rows:
        per = wall / len(layers)
        print(f"{name:<50} {per:9.1f} {wall / base:6.2f} {rss:7.0f} {per * nl / 3600:19.2f} h")
    print("projection = measured time per layer x layer count (process start-up included once per run; "
          "embeddings/LM head are not theory matrices)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
