"""The paper's Section-6 scaling experiment as a computation: the runs behind ``certbound sweep``.

:func:`run_sweep` certifies the proxies (both variants) of trained
checkpoints, their prefix-depth sub-models and an untrained random-init grid
of BERT-Miniature shapes, and returns the runs
(:class:`certbound.report.figures.ModelRun`); the command writes the tables,
figures and the claims check from them.
"""

from __future__ import annotations

import os
import time
from typing import Any, Sequence

from certbound.bounds.proxies import VARIANTS, paper_proxies, prefix_layers, random_init_quantities
from certbound.pipeline._modes import DEFAULT_SPECTRUM_MODE, spectrum_mode_keyword
from certbound.pipeline._proxies import model_quantities
from certbound.report.figures import ModelRun

__all__ = ["MINIATURE_L", "MINIATURE_N", "run_sweep"]

#: The BERT Miniatures grid of the paper's Section 6.
MINIATURE_L = (2, 4, 6, 8, 10, 12)
MINIATURE_N = (128, 256, 512, 768)


def run_sweep(
    models: Sequence[str],
    *,
    random_grid: bool = True,
    grid_L: Sequence[int] = MINIATURE_L,
    grid_N: Sequence[int] = MINIATURE_N,
    seed: int = 0,
    prefix: bool = True,
    spectrum_mode: str = DEFAULT_SPECTRUM_MODE,
    log: Any = None,
    progress: Any = None,
    mode: str | None = None,
) -> list[Any]:
    """Certified proxies (both variants) of every requested model; returns ``ModelRun``s.

    The random-init control draws one ``max(grid_L)``-layer model per width
    (seed ``seed + N``) and uses its first L layers for each depth L. Trained
    models get every c(p) exactly; prefix and random-init runs use the pruned
    grid (``exact_grid=False``: same certified minimum and p*, cheap brackets
    for grid points that cannot be the minimiser).

    Parameters
    ----------
    models : sequence of str
        Checkpoint paths or packaged checkpoint names.
    random_grid : bool
        Also certify the untrained random-init control grid.
    grid_L, grid_N : sequence of int
        Depths and widths of the control grid (default: the BERT Miniatures).
    seed : int
        Base seed of the control (width N draws with seed ``seed + N``).
    prefix : bool
        Also report the prefix-depth sub-models of each trained model.
    spectrum_mode : {"fast", "tight", "arb", "gram", "auto"}
        Certificate mode of the singular-value kernel (:data:`certbound.pipeline.SPECTRUM_MODES`;
        default ``"auto"``).
    log : file, optional
        Where progress lines go (``None``: silent).
    progress : None, bool, "auto" or callable, optional
        See :mod:`certbound.pipeline._progress`.
    mode : str, optional
        Deprecated name of ``spectrum_mode`` (warns).

    Returns
    -------
    list of certbound.report.figures.ModelRun
        The trained, prefix and random-init runs, in that order per model.

    Examples
    --------
    >>> from certbound.models import demo_checkpoint_path
    >>> runs = run_sweep([demo_checkpoint_path()], grid_L=(1,), grid_N=(64,))
    >>> [(r.kind, r.name) for r in runs]
    [('trained', 'demo'), ('prefix', 'demo[0..0]'), ('random-init', 'random L=1 N=64')]
    """
    spectrum_mode = spectrum_mode_keyword(spectrum_mode, mode)

    def say(msg: str) -> None:
        if log is not None:
            print(msg, file=log, flush=True)

    runs: list[ModelRun] = []
    for spec in models:
        t = time.perf_counter()
        info, qs = model_quantities(spec, spectrum_mode=spectrum_mode, progress=progress)
        name = os.path.basename(os.path.normpath(os.fspath(spec)))
        L = info["num_layers"]
        trained = ModelRun(name, "trained", {v: paper_proxies(qs, v) for v in VARIANTS}, qs,
                           note=f"trained checkpoint ({info.get('architecture')})")
        runs.append(trained)
        if prefix:
            for k in range(1, L):
                sub = prefix_layers(qs, k)
                runs.append(ModelRun(f"{name}[0..{k - 1}]", "prefix",
                                     {v: paper_proxies(sub, v, exact_grid=False) for v in VARIANTS},
                                     sub, note=f"prefix of {name}"))
            # the full depth closes the prefix curve (it is the trained model itself)
            runs.append(ModelRun(f"{name}[0..{L - 1}]", "prefix", trained.results, qs, note=f"prefix of {name}"))
        say(f"  {name}: L={L}, N={info['hidden_size']} in {time.perf_counter() - t:.1f} s")
    if random_grid:
        depth = max(grid_L)
        for N in grid_N:
            t = time.perf_counter()
            say(f"  random-init N={N} (L up to {depth}): certifying ...")
            qs = random_init_quantities(depth, N, seed=seed + N, mode=spectrum_mode)
            for L in sorted(grid_L):
                sub = prefix_layers(qs, L)
                runs.append(ModelRun(f"random L={L} N={N}", "random-init",
                                     {v: paper_proxies(sub, v, exact_grid=False) for v in VARIANTS}, sub,
                                     note=f"untrained N(0, 0.02^2), first {L} of {depth} layers, seed {seed + N}"))
            say(f"  random-init N={N} (L up to {depth}) in {time.perf_counter() - t:.1f} s")
    return runs
