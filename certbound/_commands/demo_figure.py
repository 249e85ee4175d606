"""``certbound demo-figure``: certified bound and measured test error against n, for demo models trained at each n.

For every n in ``--n`` it uses the model ``MODELS/n<n>`` (trained there with
``--train`` if missing: ``certbound train-demo --n-train n --epochs E(n)``
with the shipped model's other settings, E(n) = max(3, ⌈2000 / steps per
epoch⌉) so that every model gets at least 2000 Adam steps; if the training
error stays above 0.2 — a failed optimisation — it retrains from the next
initial seed (``--init-seed 1, 2``), a choice made on the training data only,
which the post hoc bound allows). Each model is then evaluated exactly as
``certbound demo`` does at its own n, and the figure (PNG and PDF, Type-42
fonts) and a JSON file of the plotted numbers are written. The JSON records
no machine-local path: each model as ``MODELS/n<n>`` with MODELS as given
(its last component only, if given as an absolute path), the command that
trained it with ``--out`` rewritten to that name, and the command that made
the figure.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import shlex
import shutil
import sys
import tempfile
from pathlib import Path

from certbound._commands import train_demo
from certbound._commands._options import add_spectrum_mode_option, make_output_directory
from certbound.models import is_pi_checkpoint
from certbound.pipeline import parse_count
from certbound.pipeline._demo import counterfactual_curve, demo_point
from certbound.report.figures import plot_demo_vs_n
from certbound.report.writers import json_text, write_all

__all__ = ["NAME", "HELP", "add_arguments", "run", "epochs_for", "portable_model_name", "DEFAULT_NS", "MIN_STEPS",
           "MAX_TRAIN_ERROR", "RESTARTS"]

NAME = "demo-figure"
HELP = "figure: certified bounds and measured test error of demo models trained at several n (log scale)"

DEFAULT_NS = "1000,3000,10000,30000,100000,300000,1000000"
MIN_STEPS = 2000
MAX_TRAIN_ERROR = 0.2
RESTARTS = 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``certbound demo-figure``'s arguments to its parser.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser (made by :func:`certbound.cli.build_parser`).
    """
    parser.add_argument("--models", default="certbound-demo-models", metavar="DIR",
                        help="directory holding (or receiving) one model per n, as DIR/n<n> (default: %(default)s)")
    parser.add_argument("--n", default=DEFAULT_NS, help="comma-separated training-set sizes (default: %(default)s)")
    parser.add_argument("--train", action="store_true", help="train the missing models (needs torch)")
    parser.add_argument("--n-test", type=int, default=None,
                        help="fresh test samples per model (default: each checkpoint's own)")
    parser.add_argument("--out", default="docs/figures", metavar="DIR",
                        help="output directory of demo_vs_n.png/.pdf/.json, created if missing (its parent must "
                             "exist; default: %(default)s)")
    add_spectrum_mode_option(parser, deprecated_alias="--mode")


def portable_model_name(models: str, n: int) -> str:
    """How the JSON names the model of n: ``MODELS/n<n>`` with MODELS as given, never a machine-local prefix.

    Parameters
    ----------
    models : str
        The ``--models`` directory as given.
    n : int
        The training-set size.

    Returns
    -------
    str
        ``MODELS/n<n>``; an absolute MODELS is cut to its last component.

    Examples
    --------
    >>> portable_model_name("certbound-demo-models", 1000), portable_model_name("/tmp/x/fig", 10)
    ('certbound-demo-models/n1000', 'fig/n10')
    """
    return f"{_portable_dir(models)}/n{n}"


def _portable_dir(models: str) -> str:
    base = Path(models)
    return (Path(base.name) if base.is_absolute() else base).as_posix()


def _portable_command(command: str | None, model_name: str) -> str | None:
    """The recorded training command with its ``--out`` value replaced by the portable model name.

    >>> _portable_command("certbound train-demo --out /tmp/a/n10 --seed 0", "m/n10")
    'certbound train-demo --out m/n10 --seed 0'
    """
    if command is None:
        return None
    words = shlex.split(command)
    for i, w in enumerate(words[:-1]):
        if w == "--out":
            words[i + 1] = model_name
    return shlex.join(words)


def epochs_for(n: int, batch_size: int = 512) -> int:
    """Epochs giving at least MIN_STEPS Adam steps (at least 3 epochs).

    Parameters
    ----------
    n : int
        Training-set size.
    batch_size : int
        Samples per Adam step.

    Returns
    -------
    int
        The number of epochs.

    Examples
    --------
    >>> epochs_for(1000), epochs_for(10**6)
    (1000, 3)
    """
    steps_per_epoch = -(-n // batch_size)
    return max(3, -(-MIN_STEPS // steps_per_epoch))


def _train_demo(argv: list[str]) -> int:
    """``certbound train-demo ARGV`` (the sibling command, parsed by its own parser)."""
    parser = argparse.ArgumentParser(prog="certbound train-demo")
    train_demo.add_arguments(parser)
    return train_demo.run(parser.parse_args(argv))


def _train(directory: Path, n: int, log) -> None:
    for init_seed in range(RESTARTS):
        argv = ["--out", str(directory), "--n-train", str(n), "--epochs", str(epochs_for(n)),
                "--n-test", "100000", "--quiet"]
        if init_seed:  # a restart replaces the failed run's checkpoint
            argv += ["--init-seed", str(init_seed), "--force"]
        log(f"certbound train-demo {' '.join(argv)}")
        if _train_demo(argv) != 0:
            raise RuntimeError(f"training the n = {n} model failed")
        meta = json.loads((directory / "config.json").read_text())
        if meta["training"]["measured"]["train_error"] <= MAX_TRAIN_ERROR:
            return
        last = init_seed == RESTARTS - 1
        log(f"  training error {meta['training']['measured']['train_error']:.3f} > {MAX_TRAIN_ERROR}: "
            + ("no restarts left, kept" if last else "restart from the next initial seed"))


def _parse_ns(text: str) -> list[int]:
    try:
        ns = sorted({int(parse_count(t.strip())) for t in text.split(",") if t.strip()})
    except (ValueError, TypeError) as exc:
        raise ValueError(f"--n must be comma-separated positive integers, got {text!r}") from exc
    if not ns or ns[0] < 1:
        raise ValueError(f"--n must be comma-separated positive integers, got {text!r}")
    return ns


def run(args: argparse.Namespace) -> int:
    """Run ``certbound demo-figure`` on parsed arguments.

    Parameters
    ----------
    args : argparse.Namespace
        The arguments :func:`add_arguments` defines.

    Returns
    -------
    int
        The exit status: 0 if every model's loss-gap bound is finite, else 1.

    Raises
    ------
    ValueError, OSError
        For bad options or files; :func:`certbound.cli.main` prints them as
        ``certbound: error: …`` (exit status 2).
    """
    ns = _parse_ns(args.n)
    models = Path(args.models)
    log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    dirs = {n: models / f"n{n}" for n in ns}
    missing = [n for n, d in dirs.items() if not is_pi_checkpoint(d)]
    if missing and not args.train and not models.is_dir():
        raise FileNotFoundError(f"--models: {args.models!r}: no such directory (pass --train to train the models "
                                "into it, needs torch)")
    if missing and not args.train:
        raise ValueError(f"no model for n = {missing} under {models}/ (pass --train to train them, needs torch)")
    out = Path(make_output_directory(args.out))  # before any training or certificate
    for n in missing:
        _train(dirs[n], n, log)
    points = []
    for n in ns:
        p = demo_point(dirs[n], n_test=args.n_test, spectrum_mode=args.spectrum_mode)
        name = portable_model_name(args.models, n)
        p = dataclasses.replace(p, model_path=name, command=_portable_command(p.command, name))
        eb = "-" if p.error_bound is None else f"{p.error_bound:.4f}"
        log(f"n = {n:>8}: loss-gap bound {p.gap_bound:.4f} (B_L = {p.loss_range:g}), error bound {eb}, "
            f"test error {p.test_error:.4f}, input-counting {p.input_counting:.4g}")
        points.append(p)
    grid = sorted({int(10 ** (k / 4)) for k in range(12, 29)})
    cf = counterfactual_curve(dirs[ns[-1]], grid, spectrum_mode=args.spectrum_mode)
    caption = (f"Sparse-majority demo models (certbound-pi, one head, 40 binary tokens, 5% label noise), each trained "
               f"on its own n and evaluated by `certbound demo` at that n with delta = 0.01. Left: certified bound on "
               f"the 0-1 test error vs measured test error ({points[0].n_test} fresh samples). Right: certified bound "
               f"on the loss gap divided by the loss range; dashed: the n = {ns[-1]} model's weights evaluated as if "
               f"they had come from n samples. Shaded: vacuous. Made by: certbound demo-figure --train.")
    command = ["certbound", "demo-figure", "--models", _portable_dir(args.models), "--n", ",".join(map(str, ns)),
               "--spectrum-mode", args.spectrum_mode] + ([] if args.n_test is None else ["--n-test", str(args.n_test)])
    # The record's text first (a serialisation error then leaves no file), the figure into a staging directory
    # next to it, and the three files moved into place only when all exist.
    record = json_text({"command": shlex.join(command), "spectrum_mode": args.spectrum_mode,
                        "points": [p.to_json() for p in points],
                        "counterfactual": [{"n": n, "gap_bound": b} for n, b in cf],
                        "caption": caption})
    stage = tempfile.mkdtemp(prefix=".demo-figure.", dir=out)
    try:
        staged = plot_demo_vs_n(points, stage, counterfactual=cf, caption=caption)
        write_all([(out / "demo_vs_n.json", record)])
        paths = {ext: str(out / os.path.basename(staged[ext])) for ext in ("pdf", "png")}
        for ext in ("pdf", "png"):
            os.replace(staged[ext], paths[ext])
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    print(f"wrote {paths['png']}, {paths['pdf']} and {out / 'demo_vs_n.json'}")
    for p in points:
        print(f"n = {p.n_train:>8}  gap <= {p.gap_bound:.4f}  error <= "
              f"{'-' if p.error_bound is None else f'{p.error_bound:.4f}'}  test error {p.test_error:.4f}")
    return 0 if all(math.isfinite(p.gap_bound) for p in points) else 1
