"""Certified per-matrix quantities of a checkpoint for the reference paper's Section-6 proxies."""

from __future__ import annotations

import numbers
import os
from typing import Any, Sequence

from certbound._errors import OptionError
from certbound.bounds.proxies import MatrixQuantities, quantities_of_theory_matrix
from certbound.checkpoints import open_checkpoint, theory_coverage, theory_matrices
from certbound.pipeline._modes import DEFAULT_SPECTRUM_MODE, check_spectrum_mode, spectrum_mode_keyword
from certbound.pipeline._progress import ProgressSpec, progress_reporter
from certbound.pipeline._resolve import resolve_model
from certbound.pipeline._streaming import layer_indices

__all__ = ["model_quantities", "model_quantities_of", "prefix_depth_of"]


def model_quantities(
    spec: str | os.PathLike[str],
    *,
    spectrum_mode: str = DEFAULT_SPECTRUM_MODE,
    layers: int | Sequence[int] | None = None,
    mapping: str | None = None,
    progress: ProgressSpec = None,
    mode: str | None = None,
) -> tuple[dict[str, Any], list[MatrixQuantities]]:
    """Certified per-matrix quantities of a checkpoint (path or packaged name) and its layout summary.

    What the Section-6 proxies (:func:`certbound.bounds.proxies.paper_proxies`) are evaluated from:
    per-head QK/VO through their factors, the FFN matrices dense.

    Parameters
    ----------
    spec : str or path
        A checkpoint path or a packaged checkpoint name.
    spectrum_mode : {"fast", "tight", "arb", "gram", "auto"}
        Certificate mode of the singular-value kernel (:data:`certbound.pipeline.SPECTRUM_MODES`;
        default ``"auto"``).
    layers : int or sequence of int, optional
        ``layers=K`` (or the list ``[0, …, K-1]``) uses only the first K layers, 0..K-1 (a prefix-depth
        sub-model; :func:`prefix_depth_of`).
    mapping : str, optional
        A tensor-name mapping file for an unsupported architecture.
    progress : None, bool, "auto" or callable, optional
        See :mod:`certbound.pipeline._progress`.
    mode : str, optional
        Deprecated name of ``spectrum_mode`` (warns).

    Returns
    -------
    tuple
        ``(info, quantities)``: the layout summary with ``"path"``, ``"used_layers"`` and
        ``"spectrum_mode"`` (the requested mode), and one
        :class:`certbound.bounds.proxies.MatrixQuantities` per theory matrix.

    Examples
    --------
    >>> from certbound.models import demo_checkpoint_path
    >>> info, qs = model_quantities(demo_checkpoint_path())
    >>> info["spectrum_mode"], [q.type for q in qs]
    ('auto', ['QK', 'VO', 'M_in', 'M_out'])
    """
    spectrum_mode = spectrum_mode_keyword(spectrum_mode, mode)
    path = resolve_model(spec)
    ck, layout = open_checkpoint(path, mapping=mapping)
    try:
        return model_quantities_of(ck, layout, path, spectrum_mode=spectrum_mode, layers=layers, progress=progress)
    finally:
        ck.close()


def prefix_depth_of(layers: Any, num_layers: int) -> int | None:
    """The depth K of the prefix sub-model 0..K-1 a ``layers`` argument of the proxies names.

    Parameters
    ----------
    layers : int, sequence of int or None
        A depth K (1 ≤ K ≤ ``num_layers``), or the layer list ``[0, …, K-1]``; None for the whole model.
    num_layers : int
        The model's layer count.

    Returns
    -------
    int or None
        K, or None.

    Raises
    ------
    certbound.OptionError
        For any other value (a string, a layer list that is not a prefix, a depth out of range).

    Examples
    --------
    >>> prefix_depth_of(2, 6), prefix_depth_of([0, 1, 2], 6), prefix_depth_of(None, 6)
    (2, 3, None)
    >>> prefix_depth_of([1, 2], 6)
    Traceback (most recent call last):
    ...
    certbound.OptionError: `layers` [1, 2]: the proxies are defined for a prefix sub-network 0..K-1 (e.g. the first 2 layers, 0 to 1)
    """
    if layers is None:
        return None
    if isinstance(layers, numbers.Integral) and not isinstance(layers, bool):
        if not 1 <= layers <= num_layers:
            raise OptionError(f"`layers` {layers}: a prefix depth must lie in 1..{num_layers} (the model's layers)")
        return int(layers)
    if isinstance(layers, numbers.Number):
        raise OptionError(f"`layers` must be a prefix depth K (an integer) or the list [0, …, K-1], not {layers!r}")
    out = layer_indices(layers, num_layers)
    if not out or out != list(range(len(out))):
        k = len(out) or 1
        example = f"the first {k} layers, 0 to {k - 1}" if k > 1 else "layer 0 alone"
        raise OptionError(f"`layers` {out}: the proxies are defined for a prefix sub-network 0..K-1 (e.g. {example})")
    return len(out)


def model_quantities_of(ck: Any, layout: Any, path: str, *, spectrum_mode: str = DEFAULT_SPECTRUM_MODE,
                        layers: int | Sequence[int] | None = None,
                        progress: ProgressSpec = None) -> tuple[dict[str, Any], list[MatrixQuantities]]:
    """:func:`model_quantities` of an opened checkpoint and its layout (``ck`` stays open).

    Parameters
    ----------
    ck : certbound.checkpoints.Checkpoint
        The opened checkpoint (not closed here).
    layout : certbound.checkpoints.ModelLayout
        Its layout.
    path : str
        The checkpoint's path (recorded as ``info["path"]``, and named in messages).
    spectrum_mode : {"fast", "tight", "arb", "gram", "auto"}
        Certificate mode of the singular-value kernel (:data:`certbound.pipeline.SPECTRUM_MODES`).
    layers : int or sequence of int, optional
        ``layers=K`` (or ``[0, …, K-1]``) uses only the first K layers, 0..K-1.
    progress : None, bool, "auto" or callable, optional
        See :mod:`certbound.pipeline._progress`.

    Returns
    -------
    tuple
        ``(info, quantities)`` as :func:`model_quantities` returns them.

    Raises
    ------
    ValueError
        For an architecture outside the proxies' definition (not self-attention with a
        two-matrix feed-forward), or ``layers`` out of range.
    """
    check_spectrum_mode(spectrum_mode, "spectrum_mode")
    cov = theory_coverage(layout)
    if not cov.covered:
        raise ValueError(f"{path}: the paper's proxies B_ours/B_Edelman are defined for self-attention blocks with "
                         f"a two-matrix feed-forward (QK, VO, M_in, M_out); this {layout.architecture} model has "
                         + "; ".join(cov.uncovered) + ". Use `certbound spectrum` or `certbound audit` for it")
    if getattr(layout, "ffn_kind", "two") != "two":
        raise ValueError(f"{path}: this {layout.architecture} model is variant P (one feed-forward matrix M); "
                         "the paper's proxies B_ours/B_Edelman are defined for two (M_in, M_out). For this "
                         "model use `certbound bound` (a true certificate) or `certbound spectrum`")
    depth = prefix_depth_of(layers, layout.num_layers)
    n_layers = layout.num_layers if depth is None else depth
    prog = progress_reporter(progress, n_layers * (2 * layout.num_heads + 2))
    qs = []
    try:
        for r in theory_matrices(ck, layout=layout, layers=range(n_layers)):
            qs.append(quantities_of_theory_matrix(r, spectrum_mode))
            prog.step(r.label)
    finally:
        prog.close()
    info = dict(layout.summary())
    info["path"] = path
    info["used_layers"] = n_layers
    info["spectrum_mode"] = spectrum_mode
    return info, qs
