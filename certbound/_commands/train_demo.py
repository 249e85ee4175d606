"""``certbound train-demo``: train the theory-faithful demo model (needs torch).

Generates the sparse-majority task offline from the seed, trains a
Π-Transformer (spec §1; by default L = 1, H = 1, d_h = 1, variant B with
d_ff = 2) with minibatch Adam on a stream of n examples (regenerated batch by
batch, so memory does not grow with n), projects the readout onto
‖w‖ ≤ C_w after every step, and writes a certbound-pi checkpoint
(model.safetensors + config.json + README.md recording the exact command).
Deterministic for a given seed, torch version and thread count.

The defaults make the shipped checkpoint: n = 10⁶ examples of 40 binary
tokens (2⁴⁰ ≈ 1.1·10¹² possible inputs), 3 epochs; the margin γ of the ramp
loss that ``certbound demo`` uses for its 0-1 error bound is fixed here, before
the data are drawn, and recorded in the checkpoint.
"""

from __future__ import annotations

import argparse
import math
import os
import shlex
import sys
from pathlib import Path

from certbound.models import LossSpec, PiTransformerConfig, SparseMajorityTask, save_pi_checkpoint
from certbound.models.network import loss_values
from certbound.models.training import TrainSettings, train_demo_model
from certbound.report.writers import atomic_open

__all__ = ["NAME", "HELP", "add_arguments", "run", "DEFAULTS"]

NAME = "train-demo"
HELP = "train the small theory-faithful Π-Transformer on the sparse-majority task (needs torch)"

#: Defaults of the shipped checkpoint (certbound/models/data/demo/).
DEFAULTS = dict(seed=0, epochs=3, batch_size=512, n_train=1_000_000, n_test=100_000, lr=0.02, warmup_steps=100,
                final_lr_fraction=0.01, weight_decay=0.0, layers=1, heads=1, d_head=1, seq_len=41, n_relevant=3,
                label_noise=0.05, readout_norm=4.0, ffn="two", d_ff=2, margin=1.0, threads=1)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``certbound train-demo``'s arguments to its parser.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser (made by :func:`certbound.cli.build_parser`).
    """
    d = DEFAULTS
    parser.add_argument("--out", default="certbound-demo-model",
                        help="output directory, new or empty (default: %(default)s)")
    parser.add_argument("--force", action="store_true", help="replace the checkpoint files in an existing --out")
    parser.add_argument("--seed", type=int, default=d["seed"], help="seed of task, data and init (default: %(default)s)")
    parser.add_argument("--init-seed", type=int, default=None,
                        help="seed of the initial weights only (default: --seed); a restart on the same data")
    parser.add_argument("--epochs", type=int, default=d["epochs"],
                        help="passes over the n training examples (default: %(default)s)")
    parser.add_argument("--batch-size", type=int, default=d["batch_size"], help="minibatch size (default: %(default)s)")
    parser.add_argument("--n-train", type=int, default=d["n_train"], help="training set size n (default: %(default)s)")
    parser.add_argument("--n-test", type=int, default=d["n_test"], help="test set size used by `certbound demo` "
                        "to measure the risk (default: %(default)s)")
    parser.add_argument("--lr", type=float, default=d["lr"], help="peak Adam learning rate (default: %(default)s)")
    parser.add_argument("--warmup-steps", type=int, default=d["warmup_steps"],
                        help="linear learning-rate warm-up steps (default: %(default)s)")
    parser.add_argument("--final-lr-fraction", type=float, default=d["final_lr_fraction"],
                        help="cosine decay ends at this fraction of the peak rate (default: %(default)s)")
    parser.add_argument("--weight-decay", type=float, default=d["weight_decay"],
                        help="Adam L2 weight decay (default: %(default)s)")
    parser.add_argument("--layers", type=int, default=d["layers"], metavar="L",
                        help="number of layers L, a count (elsewhere --layers picks 0-based layer indices; "
                             "default: %(default)s)")
    parser.add_argument("--heads", type=int, default=d["heads"], metavar="H",
                        help="number of heads H per layer (default: %(default)s)")
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
    parser.add_argument("--margin", type=float, default=d["margin"],
                        help="margin γ of the ramp loss behind the demo's 0-1 error bound, fixed before the data "
                        "(default: %(default)s)")
    parser.add_argument("--threads", type=int, default=d["threads"], help="torch threads (default: %(default)s)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")


def _explicit_command(args: argparse.Namespace) -> str:
    """The command with every option spelled out (exact even if defaults change later)."""
    parts = ["certbound", "train-demo", "--out", str(args.out), "--seed", str(args.seed)]
    if args.init_seed is not None:
        parts += ["--init-seed", str(args.init_seed)]
    parts += ["--epochs", str(args.epochs), "--batch-size", str(args.batch_size), "--n-train", str(args.n_train),
              "--n-test", str(args.n_test), "--lr", repr(args.lr), "--warmup-steps", str(args.warmup_steps),
              "--final-lr-fraction", repr(args.final_lr_fraction),
              "--weight-decay", repr(args.weight_decay), "--layers", str(args.layers),
              "--heads", str(args.heads), "--d-head", str(args.d_head), "--ffn", args.ffn]
    if args.ffn == "two":
        parts += ["--d-ff", str(args.d_ff)]
    if args.residual:
        parts.append("--residual")
    parts += ["--seq-len", str(args.seq_len), "--n-relevant", str(args.n_relevant),
              "--label-noise", repr(args.label_noise), "--readout-norm", repr(args.readout_norm),
              "--margin", repr(args.margin), "--threads", str(args.threads)]
    return shlex.join(parts)


def _readme(command: str, args: argparse.Namespace, result, measured: dict) -> str:
    import torch

    return (
        "# certbound demo checkpoint\n\n"
        "A theory-faithful Π-Transformer (model_type `certbound-pi`, see `config.json`) trained on the\n"
        "offline sparse-majority task. Made by exactly this command:\n\n"
        f"```\n{command}\n```\n\n"
        f"seed {args.seed}; torch {torch.__version__}; {args.threads} thread(s); {result.steps} Adam steps; "
        f"{result.seconds:.1f} s of training.\n\n"
        f"train loss {measured['train_loss']:.6f}, 0-1 error {measured['train_error']:.6f} (n = {args.n_train}, "
        f"stream 1); test loss {measured['test_loss']:.6f}, 0-1 error {measured['test_error']:.6f} "
        f"(n_test = {args.n_test}, stream 2).\n\n"
        "Weights are float64 in the row-vector convention (a token row x maps to x @ W);\n"
        "head h uses columns h*d_head:(h+1)*d_head of W_Q, W_K, W_V and the same rows of W_O.\n"
    )


def _measure(model, task, n: int, stream: int) -> tuple[float, float]:
    """(mean loss, 0-1 error) over examples 0 … n − 1 of a stream, in chunks."""
    loss, wrong = 0.0, 0
    for _, X, y in task.batches(n, stream, 4096):
        out = model.forward(X)
        loss += float(loss_values(out, y, model.config).sum())
        wrong += int((out * y <= 0).sum())
    return loss / n, wrong / n


def _check_out_dir(out: str, force: bool) -> None:
    """Refuse an --out that is a file, or a non-empty directory unless --force (never overwrite silently)."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise NotADirectoryError(f"--out: {out!r} exists and is not a directory")
    if os.path.isdir(out) and os.listdir(out) and not force:
        raise FileExistsError(f"--out: {out!r} is not empty; choose a new directory or pass --force to replace "
                              "its checkpoint files")
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent):
        raise FileNotFoundError(f"--out: cannot create {out!r}: directory {parent} does not exist")


def run(args: argparse.Namespace) -> int:
    """Run ``certbound train-demo`` on parsed arguments.

    Parameters
    ----------
    args : argparse.Namespace
        The arguments :func:`add_arguments` defines.

    Returns
    -------
    int
        The exit status: 0 on success.

    Raises
    ------
    ValueError, OSError
        For bad options or files; :func:`certbound.cli.main` prints them as
        ``certbound: error: …`` (exit status 2).
    """
    try:
        import torch  # noqa: F401
    except ImportError:
        raise ValueError("train-demo needs torch: pip install 'certbound[torch]'") from None
    _check_out_dir(args.out, args.force)  # before the (long) training
    if args.epochs < 1 or args.n_train < 1 or args.n_test < 1 or args.batch_size < 1:
        raise ValueError("--epochs, --batch-size, --n-train and --n-test must be positive")
    if not (math.isfinite(args.margin) and 0 < args.margin <= args.readout_norm):
        raise ValueError(f"--margin must lie in (0, C_w = {args.readout_norm}], got {args.margin}")
    task = SparseMajorityTask(seq_len=args.seq_len, n_relevant=args.n_relevant,
                              label_noise=args.label_noise, seed=args.seed)
    config = PiTransformerConfig(
        d_model=task.d_model, n_layers=args.layers, n_heads=args.heads, d_head=args.d_head,
        seq_len=task.seq_len, ffn_kind=args.ffn, d_ff=args.d_ff if args.ffn == "two" else None,
        residual=args.residual, readout_norm=args.readout_norm, loss=LossSpec(clip=args.readout_norm),
    )
    settings = TrainSettings(seed=args.seed if args.init_seed is None else args.init_seed, epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.lr,
                             warmup_steps=args.warmup_steps, final_lr_fraction=args.final_lr_fraction,
                             weight_decay=args.weight_decay, threads=args.threads)
    log = None if args.quiet else (lambda s: print(s, file=sys.stderr, flush=True))
    result = train_demo_model(task, config, args.n_train, settings, log=log)
    train_loss, train_error = _measure(result.model, task, args.n_train, 1)
    test_loss, test_error = _measure(result.model, task, args.n_test, 2)
    measured = {"train_loss": train_loss, "train_error": train_error, "test_loss": test_loss,
                "test_error": test_error, "certified": False}
    command = _explicit_command(args)
    extra = {
        "task": task.to_json_dict(),
        "data": {"n_train": args.n_train, "train_stream": 1, "n_test": args.n_test, "test_stream": 2},
        # fixed by the command, before any data are drawn (spec §6.5): the ramp loss of the 0-1 error bound
        "error_bound": {"loss": LossSpec(kind="ramp", margin=args.margin).to_json_dict()},
        "training": {**result.record(), "command": command, "measured": measured},
    }
    out = Path(args.out)
    save_pi_checkpoint(result.model, out, extra=extra)
    with atomic_open(out / "README.md", "wb", encoding=None) as f:
        f.write(_readme(command, args, result, measured).encode())
    print(f"wrote {out}{os.sep} (train loss {train_loss:.4f}, test loss {test_loss:.4f}, test error "
          f"{test_error:.4f}, {result.seconds:.1f} s of training)")
    return 0
