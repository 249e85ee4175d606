"""``certbound train-demo``: train the theory-faithful demo model (needs torch).

Generates the sparse-majority task offline from the seed, trains a
Π-Transformer (spec §1, variant P by default) with full-batch Adam, projects
the readout onto ‖w‖ ≤ C_w after every step, and writes a certbound-pi
checkpoint (model.safetensors + config.json + README.md recording the exact
command). Deterministic for a given seed, torch version and thread count.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

NAME = "train-demo"
HELP = "train the small theory-faithful Π-Transformer on the sparse-majority task (needs torch)"

#: Defaults of the shipped checkpoint (certbound/models/data/demo/).
DEFAULTS = dict(seed=0, epochs=200, n_train=1000, n_test=20000, lr=0.02, weight_decay=1e-3,
                layers=2, heads=2, d_head=4, seq_len=14, n_relevant=3, label_noise=0.05,
                readout_norm=4.0, ffn="single", d_ff=32, threads=1)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    d = DEFAULTS
    parser.add_argument("--out", default="certbound-demo-model", help="output directory (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=d["seed"], help="seed of task, data and init (default: %(default)s)")
    parser.add_argument("--epochs", type=int, default=d["epochs"], help="full-batch Adam steps (default: %(default)s)")
    parser.add_argument("--n-train", type=int, default=d["n_train"], help="training set size n (default: %(default)s)")
    parser.add_argument("--n-test", type=int, default=d["n_test"], help="test set size used by `certbound demo` "
                        "to measure the risk (default: %(default)s)")
    parser.add_argument("--lr", type=float, default=d["lr"], help="Adam learning rate (default: %(default)s)")
    parser.add_argument("--weight-decay", type=float, default=d["weight_decay"],
                        help="Adam L2 weight decay (default: %(default)s)")
    parser.add_argument("--layers", type=int, default=d["layers"], help="L (default: %(default)s)")
    parser.add_argument("--heads", type=int, default=d["heads"], help="H (default: %(default)s)")
    parser.add_argument("--d-head", type=int, default=d["d_head"], help="head width d_h (default: %(default)s)")
    parser.add_argument("--ffn", choices=("single", "two"), default=d["ffn"],
                        help="variant P ('single') or B ('two') (default: %(default)s)")
    parser.add_argument("--d-ff", type=int, default=d["d_ff"], help="FFN width for --ffn two (default: %(default)s)")
    parser.add_argument("--residual", action="store_true", help="use the Π-form residual of spec §1.3")
    parser.add_argument("--seq-len", type=int, default=d["seq_len"], help="T incl. [CLS] (default: %(default)s)")
    parser.add_argument("--n-relevant", type=int, default=d["n_relevant"],
                        help="hidden positions the label depends on (odd; default: %(default)s)")
    parser.add_argument("--label-noise", type=float, default=d["label_noise"],
                        help="label flip probability (default: %(default)s)")
    parser.add_argument("--readout-norm", type=float, default=d["readout_norm"],
                        help="C_w, also the clipped-logistic loss range B_L (default: %(default)s)")
    parser.add_argument("--threads", type=int, default=d["threads"], help="torch threads (default: %(default)s)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")


def _explicit_command(args: argparse.Namespace) -> str:
    """The command with every option spelled out (exact even if defaults change later)."""
    parts = ["certbound", "train-demo", "--out", str(args.out), "--seed", str(args.seed),
             "--epochs", str(args.epochs), "--n-train", str(args.n_train), "--n-test", str(args.n_test),
             "--lr", repr(args.lr), "--weight-decay", repr(args.weight_decay), "--layers", str(args.layers),
             "--heads", str(args.heads), "--d-head", str(args.d_head), "--ffn", args.ffn]
    if args.ffn == "two":
        parts += ["--d-ff", str(args.d_ff)]
    if args.residual:
        parts.append("--residual")
    parts += ["--seq-len", str(args.seq_len), "--n-relevant", str(args.n_relevant),
              "--label-noise", repr(args.label_noise), "--readout-norm", repr(args.readout_norm),
              "--threads", str(args.threads)]
    return shlex.join(parts)


def _readme(command: str, args: argparse.Namespace, result, test_loss: float, train_loss: float) -> str:
    import torch

    return (
        "# certbound demo checkpoint\n\n"
        "A theory-faithful Π-Transformer (model_type `certbound-pi`, see `config.json`) trained on the\n"
        "offline sparse-majority task. Made by exactly this command:\n\n"
        f"```\n{command}\n```\n\n"
        f"seed {args.seed}; torch {torch.__version__}; {args.threads} thread(s); "
        f"{result.seconds:.1f} s of training.\n\n"
        f"train loss {train_loss:.6f} (n = {args.n_train}), test loss {test_loss:.6f} "
        f"(n_test = {args.n_test}, stream 2).\n\n"
        "Weights are float64 in the row-vector convention (a token row x maps to x @ W);\n"
        "head h uses columns h*d_head:(h+1)*d_head of W_Q, W_K, W_V and the same rows of W_O.\n"
    )


def run(args: argparse.Namespace) -> int:
    try:
        import torch  # noqa: F401
    except ImportError:
        raise ValueError("train-demo needs torch: pip install 'certbound[torch]'") from None
    from certbound.models import LossSpec, PiTransformerConfig, SparseMajorityTask, save_pi_checkpoint
    from certbound.models.training import TrainSettings, train_demo_model

    if args.epochs < 1 or args.n_train < 1 or args.n_test < 1:
        raise ValueError("--epochs, --n-train and --n-test must be positive")
    task = SparseMajorityTask(seq_len=args.seq_len, n_relevant=args.n_relevant,
                              label_noise=args.label_noise, seed=args.seed)
    config = PiTransformerConfig(
        d_model=task.d_model, n_layers=args.layers, n_heads=args.heads, d_head=args.d_head,
        seq_len=task.seq_len, ffn_kind=args.ffn, d_ff=args.d_ff if args.ffn == "two" else None,
        residual=args.residual, readout_norm=args.readout_norm, loss=LossSpec(clip=args.readout_norm),
    )
    settings = TrainSettings(seed=args.seed, epochs=args.epochs, learning_rate=args.lr,
                             weight_decay=args.weight_decay, threads=args.threads)
    log = None if args.quiet else (lambda s: print(s, file=sys.stderr))
    result = train_demo_model(task, config, args.n_train, settings, log=log)
    X_tr, y_tr = task.sample(args.n_train, stream=1)
    X_te, y_te = task.sample(args.n_test, stream=2)
    train_loss = result.model.mean_loss(X_tr, y_tr)
    test_loss = result.model.mean_loss(X_te, y_te)
    extra = {
        "task": task.to_json_dict(),
        "data": {"n_train": args.n_train, "train_stream": 1, "n_test": args.n_test, "test_stream": 2},
        "training": result.record(),
    }
    out = Path(args.out)
    save_pi_checkpoint(result.model, out, extra=extra)
    command = _explicit_command(args)
    from certbound.models.checkpoint import _atomic_write_bytes

    _atomic_write_bytes(out / "README.md", _readme(command, args, result, test_loss, train_loss).encode())
    print(f"wrote {out}{os.sep} (train loss {train_loss:.4f}, test loss {test_loss:.4f}, "
          f"{result.seconds:.1f} s of training)")
    return 0
