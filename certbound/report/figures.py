"""Figures of the paper's Section 6, from certified proxies (matplotlib, optional).

Each figure is written as PDF and PNG (fonts embedded as TrueType, Type 42)
with a caption printed under the plot that says what was run, and the same
caption returned for tables/README use. Plotted values are the *upper ends*
of certified balls (rounded up to floats), so a plotted bound is never below
the certified one; curves normalised by a reference point divide two such
upper ends and are for reading the *shape* (growth) only.

What the data are is always labelled:

* ``trained``  — a real checkpoint (different checkpoints come from
  different training recipes; points of different models are not a clean
  scaling experiment);
* ``prefix``   — the first k layers (0..k-1) of one trained model (not a trained k-layer model);
* ``random-init`` — untrained weights with i.i.d. N(0, 0.02²) entries in the
  BERT-Miniature shapes (the control).

matplotlib is imported lazily (the ``plot`` extra: ``pip install 'certbound[plot]'``, from a checkout
``pip install -e '.[plot]'``).

>>> from certbound.report.figures import FIGURE_KINDS
>>> "trained" in FIGURE_KINDS
True
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from certbound._optional import import_optional
from certbound.ball import float_upper
from certbound.report.writers import set_usual_permissions

__all__ = [
    "FIGURE_KINDS",
    "ModelRun",
    "import_pyplot",
    "save_figure",
    "plot_proxies_vs_width",
    "plot_proxies_vs_depth",
    "plot_singular_value_decay",
    "plot_norms_vs_width",
    "plot_demo_vs_n",
    "plot_contribution_curves",
]

#: Labels of where a model's weights come from.
FIGURE_KINDS = ("trained", "prefix", "random-init")

_KIND_STYLE = {"trained": "-", "prefix": "--", "random-init": ":"}


@dataclass
class ModelRun:
    """One model's certified proxies, for tables and figures.

    ``results`` maps a variant name to its :class:`~certbound.bounds.proxies.ProxyResult`;
    ``quantities`` (optional) are the per-matrix certified quantities, used by
    the singular-value and norm figures.

    Parameters
    ----------
    name : str
        The model's name (legends, captions).
    kind : {"trained", "prefix", "random-init"}
        Where the weights come from (:data:`FIGURE_KINDS`).
    results : dict
        Variant name → :class:`~certbound.bounds.proxies.ProxyResult`.
    quantities : list of MatrixQuantities, optional
        The certified per-matrix quantities.
    note : str
        The series name of a prefix run (e.g. ``"prefix of all-MiniLM-L6-v2"``).

    Examples
    --------
    >>> from certbound.bounds.proxies import paper_proxies, random_init_quantities
    >>> qs = random_init_quantities(2, 8, num_heads=2, d_ff=16)
    >>> run = ModelRun("init", "random-init", {"paper": paper_proxies(qs)}, qs)
    >>> run.num_layers, run.width
    (2, 8)
    >>> ModelRun("x", "fine-tuned", {})
    Traceback (most recent call last):
    ...
    ValueError: model kind 'fine-tuned' is not one of ('trained', 'prefix', 'random-init')
    """

    name: str
    kind: str
    results: dict[str, Any]
    quantities: list[Any] = field(default_factory=list, repr=False)
    note: str = ""

    def __post_init__(self) -> None:
        if self.kind not in FIGURE_KINDS:
            raise ValueError(f"model kind {self.kind!r} is not one of {FIGURE_KINDS}")

    @property
    def num_layers(self) -> int:
        """Depth L of the model the proxies were computed for."""
        return next(iter(self.results.values())).num_layers

    @property
    def width(self) -> int:
        """Hidden width N."""
        return next(iter(self.results.values())).width

    def upper(self, proxy: str, variant: str = "paper") -> float:
        """Float ≥ the certified ball's upper end (``proxy`` = B_ours or B_edelman).

        Parameters
        ----------
        proxy : {"B_ours", "B_edelman"}
            Which proxy.
        variant : str
            Which variant's result (a key of ``results``).

        Returns
        -------
        float
            An upper bound on the proxy (rounded up from the ball's upper end).

        Examples
        --------
        >>> from certbound.ball import upper_fraction
        >>> from certbound.bounds.proxies import paper_proxies, random_init_quantities
        >>> qs = random_init_quantities(1, 8, num_heads=2, d_ff=16)
        >>> res = paper_proxies(qs)
        >>> run = ModelRun("init", "random-init", {"paper": res})
        >>> run.upper("B_ours") >= upper_fraction(res.B_ours)
        True
        """
        return float_upper(getattr(self.results[variant], proxy))


def import_pyplot() -> Any:
    """matplotlib.pyplot with a non-interactive backend and Type-42 fonts.

    Returns
    -------
    module
        ``matplotlib.pyplot`` (backend Agg unless a non-interactive one is set).

    Raises
    ------
    certbound.MissingDependencyError
        Without matplotlib (the ``plot`` extra), saying what to install.

    Examples
    --------
    >>> plt = import_pyplot()
    >>> plt.rcParams["pdf.fonttype"]
    42
    """
    matplotlib = import_optional("matplotlib", "plot", "figures")
    if matplotlib.get_backend().lower() not in ("agg", "pdf", "module://matplotlib_inline.backend_inline"):
        matplotlib.use("Agg")
    matplotlib.rcParams["pdf.fonttype"] = 42  # embed TrueType (Type 42), not Type 3
    matplotlib.rcParams["ps.fonttype"] = 42
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, out_dir: str | os.PathLike[str], stem: str, caption: str) -> dict[str, str]:
    """Write ``stem.pdf`` and ``stem.png`` atomically, caption printed under the plot.

    The files get the usual permissions (``0o666 & ~umask``, not a temporary
    file's ``0o600``) and no creation date, so the same figure gives the same
    bytes (a figure in a repository regenerated by its recorded command shows
    no spurious change).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    out_dir : str or path-like
        An existing directory.
    stem : str
        The file name without extension.
    caption : str
        Printed under the plot (wrapped at 150 characters).

    Returns
    -------
    dict
        ``{"pdf": path, "png": path, "caption": caption}``.

    Examples
    --------
    >>> import os, tempfile
    >>> tmp = tempfile.TemporaryDirectory()  # removed with the example
    >>> plt = import_pyplot()
    >>> fig, ax = plt.subplots()
    >>> _ = ax.plot([1, 2], [3, 4])
    >>> d = tmp.name
    >>> out = save_figure(fig, d, "line", "A line.")
    >>> sorted(os.listdir(d)), out["caption"]
    (['line.pdf', 'line.png'], 'A line.')
    >>> plt.close(fig)
    """
    import textwrap

    out_dir = os.fspath(out_dir)
    wrapped = "\n".join(textwrap.wrap(caption, 150))
    nlines = wrapped.count("\n") + 1
    fig.subplots_adjust(bottom=min(0.12 + 0.035 * nlines, 0.45))
    fig.text(0.01, 0.01, wrapped, fontsize=7, va="bottom", ha="left", wrap=True)
    paths = {}
    for ext in ("pdf", "png"):
        final = os.path.join(out_dir, f"{stem}.{ext}")
        fd, tmp = tempfile.mkstemp(prefix=f".{stem}.", suffix=f".{ext}", dir=out_dir)
        os.close(fd)
        try:
            fig.savefig(tmp, format=ext, dpi=150, metadata={"CreationDate": None} if ext == "pdf" else None)
            set_usual_permissions(tmp)
            os.replace(tmp, final)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        paths[ext] = final
    paths["caption"] = caption
    return paths


#: Marker shapes and (decreasing) sizes per series: a curve drawn later is smaller, so coinciding
#: curves (e.g. QK and VO of a random initialisation) stay visible one inside the other.
_MARKERS = "osD^vPX<>"
_SIZES = (7.0, 5.5, 4.2, 3.2, 2.6, 2.2, 2.0, 1.8, 1.6)


def _style(i: int) -> tuple[str, float]:
    return _MARKERS[i % len(_MARKERS)], _SIZES[min(i, len(_SIZES) - 1)]


def _legend_right(fig: Any, ax: Any) -> None:
    """One legend outside the axes, on the right (never over the data); nothing if nothing is labelled."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)


def _series(runs: Sequence[ModelRun], key: str) -> dict[tuple[str, str, int], list[ModelRun]]:
    """Group runs by (kind, series name, fixed value) for curves over ``key``.

    Trained checkpoints are never grouped into one curve: each is its own
    series (different checkpoints come from different training recipes).
    """
    groups: dict[tuple[str, str, int], list[ModelRun]] = {}
    for r in runs:
        fixed = r.num_layers if key == "N" else r.width
        series = r.note if r.kind == "prefix" else (r.name if r.kind == "trained" else r.kind)
        groups.setdefault((r.kind, series, fixed), []).append(r)
    return groups


def _normalised_panels(plt: Any, runs: Sequence[ModelRun], key: str, variant: str) -> Any | None:
    """Two panels (B_ours, B_Edelman) of curves normalised at their first point; None if nothing to draw."""
    groups = _series(runs, key)
    drawable = {k: v for k, v in groups.items() if len(v) >= 2}
    if not drawable:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
    fig.subplots_adjust(right=0.74, wspace=0.28)
    ordered = sorted(drawable.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2]))
    for ax, proxy, title in zip(axes, ("B_ours", "B_edelman"), ("$B_{ours}$", "$B_{Edelman}$")):
        for i, ((kind, series, fixed), members) in enumerate(ordered):
            xs = np.asarray([m.width if key == "N" else m.num_layers for m in members])
            order = np.argsort(xs)
            ys = np.asarray([members[j].upper(proxy, variant) for j in order])
            marker, size = _style(i)
            label = f"{series}, {'L' if key == 'N' else 'N'}={fixed}"
            ax.plot(xs[order], ys / ys[0], _KIND_STYLE[kind], marker=marker, ms=size, lw=1.2, label=label,
                    zorder=2 + i)
        ax.set_yscale("log")
        ax.set_xlabel("hidden width N" if key == "N" else "depth L (number of layers)")
        ax.set_ylabel(f"{title} / value at smallest {'N' if key == 'N' else 'L'}")
        ax.set_title(f"{title} ({variant} variant)")
        ax.grid(True, which="both", alpha=0.3)
    _legend_right(fig, axes[-1])
    return fig


def plot_proxies_vs_width(runs: Sequence[ModelRun], out_dir: str, *, variant: str = "paper",
                          what_was_run: str = "") -> dict[str, str] | None:
    """Both proxies vs N at fixed L, normalised at the smallest N (log y); None if no curve has two widths.

    Parameters
    ----------
    runs : sequence of ModelRun
        The models; random-init runs of one depth and several widths form a curve, a trained
        checkpoint is its own series.
    out_dir : str
        An existing directory (``proxies_vs_N.pdf`` and ``.png`` are written there).
    variant : str
        Which proxy variant to plot.
    what_was_run : str
        Appended to the caption (the command, versions).

    Returns
    -------
    dict or None
        :func:`save_figure`'s paths and caption, or None (nothing written).

    Examples
    --------
    >>> import tempfile
    >>> tmp = tempfile.TemporaryDirectory()  # removed with the example
    >>> from certbound.bounds.proxies import paper_proxies, random_init_quantities
    >>> runs = [ModelRun(f"N={n}", "random-init", {"paper": paper_proxies(random_init_quantities(1, n, num_heads=2,
    ...                                                                                  d_ff=2 * n))})
    ...         for n in (4, 8)]
    >>> sorted(plot_proxies_vs_width(runs, tmp.name))
    ['caption', 'pdf', 'png']
    >>> plot_proxies_vs_width(runs[:1], tmp.name) is None  # one width: no curve
    True
    """
    plt = import_pyplot()
    fig = _normalised_panels(plt, runs, "N", variant)
    if fig is None:
        return None
    caption = ("Proxies vs hidden width N at fixed depth L, each curve divided by its value at the smallest N "
               "(certified upper ends). Dotted: untrained random initialisation (std 0.02, BERT-Miniature "
               "shapes, heads N/64, d_ff 4N) - a control, not trained weights. Coinciding curves are drawn "
               "with decreasing marker sizes. " + what_was_run)
    out = save_figure(fig, out_dir, "proxies_vs_N", caption)
    plt.close(fig)
    return out


def plot_proxies_vs_depth(runs: Sequence[ModelRun], out_dir: str, *, variant: str = "paper",
                          what_was_run: str = "") -> dict[str, str] | None:
    """Both proxies vs L at fixed N, normalised at the smallest L (log y); None if no curve has two depths.

    Prefix-depth curves (layers 0..k-1 of one trained model) are dashed and
    labelled; a trained checkpoint is never joined to another (different
    checkpoints come from different training recipes).

    Parameters
    ----------
    runs : sequence of ModelRun
        The models (prefix runs of one model share its ``note``).
    out_dir : str
        An existing directory (``proxies_vs_L.pdf`` and ``.png`` are written there).
    variant : str
        Which proxy variant to plot.
    what_was_run : str
        Appended to the caption.

    Returns
    -------
    dict or None
        :func:`save_figure`'s paths and caption, or None (nothing written).

    Examples
    --------
    >>> import tempfile
    >>> tmp = tempfile.TemporaryDirectory()  # removed with the example
    >>> from certbound.bounds.proxies import paper_proxies, random_init_quantities
    >>> from certbound.bounds.proxies import prefix_layers
    >>> qs = random_init_quantities(2, 8, num_heads=2, d_ff=16)
    >>> runs = [ModelRun(f"k={k}", "prefix", {"paper": paper_proxies(prefix_layers(qs, k))}, note="prefix of init")
    ...         for k in (1, 2)]
    >>> out = plot_proxies_vs_depth(runs, tmp.name)
    >>> "the first k layers, 0..k-1" in out["caption"]
    True
    """
    plt = import_pyplot()
    fig = _normalised_panels(plt, runs, "L", variant)
    if fig is None:
        return None
    caption = ("Proxies vs depth L at fixed width N, each curve divided by its value at the smallest L "
               "(certified upper ends). Dashed: prefix-depth curves (the first k layers, 0..k-1, of one trained "
               "model; not trained k-layer models). Dotted: untrained random initialisation (control). Trained "
               "checkpoints of different depths are different training recipes and are not joined. Coinciding "
               "curves are drawn with decreasing marker sizes. " + what_was_run)
    out = save_figure(fig, out_dir, "proxies_vs_L", caption)
    plt.close(fig)
    return out


def plot_singular_value_decay(run: ModelRun, out_dir: str, *, layers: Sequence[int] = (0,),
                              what_was_run: str = "") -> dict[str, str] | None:
    """Certified singular values (upper ends) of every QK head, VO head, M_in, M_out (layers 0-based).

    Parameters
    ----------
    run : ModelRun
        One model, with ``quantities`` (their ``sigma_upper`` lists).
    out_dir : str
        An existing directory (``singular_values.pdf`` and ``.png``).
    layers : sequence of int
        The layers drawn (0-based).
    what_was_run : str
        Appended to the caption.

    Returns
    -------
    dict or None
        :func:`save_figure`'s paths and caption, or None if those layers have no σ lists.

    Examples
    --------
    >>> import tempfile
    >>> tmp = tempfile.TemporaryDirectory()  # removed with the example
    >>> from certbound.bounds.proxies import paper_proxies, random_init_quantities
    >>> qs = random_init_quantities(2, 8, num_heads=2, d_ff=16)
    >>> run = ModelRun("init", "random-init", {"paper": paper_proxies(qs)}, qs)
    >>> sorted(plot_singular_value_decay(run, tmp.name, layers=(0, 1)))
    ['caption', 'pdf', 'png']
    >>> plot_singular_value_decay(run, tmp.name, layers=(5,)) is None
    True
    """
    plt = import_pyplot()
    present = [q for q in run.quantities if q.layer in layers and q.sigma_upper is not None]
    if not present:
        return None
    fig, axes = plt.subplots(1, 4, figsize=(15, 4.2))
    fig.subplots_adjust(wspace=0.32, right=0.88)
    palette = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")
    for j, (ax, t) in enumerate(zip(axes, ("QK", "VO", "M_in", "M_out"))):
        for q in present:
            if q.type != t:
                continue
            k = q.rank[1] if q.rank is not None else len(q.sigma_upper)
            s = np.asarray(q.sigma_upper[:k])
            first = q.head in (None, 0)
            ax.plot(np.arange(1, len(s) + 1), s, lw=0.7, alpha=0.7, color=palette[q.layer % len(palette)],
                    label=(f"layer {q.layer}" + (" (every head)" if q.head is not None else "")) if first else None)
        ax.set_yscale("log")
        ax.set_xlabel("index i")
        if j == 0:
            ax.set_ylabel("sigma_i (certified upper end)")
        ax.set_title(t)
        ax.grid(True, which="both", alpha=0.3)
    _legend_right(fig, axes[-1])
    caption = (f"Singular-value decay of {run.name} ({run.kind}), layers {', '.join(str(l) for l in layers)} "
               "(0-based, as in the tables): every head's QK and VO (only singular values that may be nonzero, "
               "up to the certified rank) and M_in, M_out. " + what_was_run)
    out = save_figure(fig, out_dir, "singular_values", caption)
    plt.close(fig)
    return out


def _mean_norms(run: ModelRun, layer_limit: int | None) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for t in ("QK", "VO", "M_in", "M_out"):
        qs = [q for q in run.quantities if q.type == t and (layer_limit is None or q.layer < layer_limit)]
        if not qs:
            continue
        out[t] = {
            "spectral": float(np.mean([float_upper(q.spectral) for q in qs])),
            "(2,1)": float(np.mean([float_upper(q.norm_21) for q in qs])),
            "(1,1)": float(np.mean([float_upper(q.norm_11) for q in qs])) if all(
                q.norm_11 is not None for q in qs) else float("nan"),
        }
    return out


def plot_norms_vs_width(runs: Sequence[ModelRun], out_dir: str, *, depth: int = 2,
                        what_was_run: str = "") -> dict[str, str] | None:
    """(2,1)-, (1,1)- and spectral-norm growth with N (mean over heads and layers 0..depth-1); None if empty.

    Parameters
    ----------
    runs : sequence of ModelRun
        The models, with ``quantities`` (random-init runs of depth ``depth`` form the lines).
    out_dir : str
        An existing directory (``norms_vs_N.pdf`` and ``.png``).
    depth : int
        Layers 0..depth-1 are averaged over.
    what_was_run : str
        Appended to the caption.

    Returns
    -------
    dict or None
        :func:`save_figure`'s paths and caption, or None if no run has quantities.

    Examples
    --------
    >>> import tempfile
    >>> tmp = tempfile.TemporaryDirectory()  # removed with the example
    >>> from certbound.bounds.proxies import paper_proxies, random_init_quantities
    >>> runs = []
    >>> for n in (4, 8):
    ...     qs = random_init_quantities(2, n, num_heads=2, d_ff=2 * n)
    ...     runs.append(ModelRun(f"N={n}", "random-init", {"paper": paper_proxies(qs)}, qs))
    >>> sorted(plot_norms_vs_width(runs, tmp.name, depth=2))
    ['caption', 'pdf', 'png']
    """
    plt = import_pyplot()
    series = []
    for kind in ("trained", "random-init"):  # prefix runs are subsets of trained ones
        members = sorted((r for r in runs if r.kind == kind and r.quantities
                          and (kind != "random-init" or r.num_layers == depth)), key=lambda r: r.width)
        for t in ("QK", "VO", "M_in", "M_out"):
            pts = [(r, _mean_norms(r, depth).get(t, {})) for r in members]
            pts = [(r, v) for r, v in pts if v]
            if pts:
                series.append((kind, t, pts))
    if not series:
        return None
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    fig.subplots_adjust(wspace=0.32, right=0.84)
    types = ("QK", "VO", "M_in", "M_out")
    for ax, norm in zip(axes, ("(2,1)", "(1,1)", "spectral")):
        for i, (kind, t, pts) in enumerate(series):
            # Dodge the four types sideways (×2^(±0.03)) so coinciding values stay visible.
            dodge = 2.0 ** (0.03 * (types.index(t) - 1.5))
            xs = [r.width * dodge for r, v in pts if np.isfinite(v.get(norm, np.nan))]
            ys = [v[norm] for r, v in pts if np.isfinite(v.get(norm, np.nan))]
            if not xs:
                continue
            marker, _ = _style(types.index(t))
            trained = kind == "trained"
            ax.plot(xs, ys, linestyle="none" if trained else _KIND_STYLE[kind], marker=marker,
                    ms=7 if trained else 4, mfc="none" if trained else None, label=f"{t} ({kind})")
        ax.set_yscale("log")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("hidden width N")
        ax.set_title(f"{norm} norm")
        ax.set_ylabel("mean per matrix (certified upper ends)")
        ax.grid(True, which="both", alpha=0.3)
    _legend_right(fig, axes[-1])
    caption = (f"Norm growth with width: mean per-matrix (2,1)-, (1,1)- and spectral norms over heads and layers "
               f"0..{depth - 1}. Lines: untrained random initialisation with L={depth} (control); hollow markers: "
               "trained checkpoints (different recipes). The four matrix types are shifted slightly sideways "
               "so that equal values (QK and VO of a random initialisation) do not hide each other. " + what_was_run)
    out = save_figure(fig, out_dir, "norms_vs_N", caption)
    plt.close(fig)
    return out


def plot_contribution_curves(run: ModelRun, out_dir: str, *, variant: str = "paper",
                             what_was_run: str = "") -> dict[str, str]:
    """Per-type median and range of c(p) over the grid P_m (upper ends), with where p* falls.

    Parameters
    ----------
    run : ModelRun
        One model.
    out_dir : str
        An existing directory (``contribution_curves.pdf`` and ``.png``).
    variant : str
        Which proxy variant's c(p).
    what_was_run : str
        Appended to the caption.

    Returns
    -------
    dict
        :func:`save_figure`'s paths and caption.

    Examples
    --------
    >>> import tempfile
    >>> tmp = tempfile.TemporaryDirectory()  # removed with the example
    >>> from certbound.bounds.proxies import paper_proxies, random_init_quantities
    >>> qs = random_init_quantities(1, 8, num_heads=2, d_ff=16)
    >>> run = ModelRun("init", "random-init", {"paper": paper_proxies(qs)})
    >>> out = plot_contribution_curves(run, tmp.name)
    >>> "for the 6 matrices of init" in out["caption"]  # 2 QK heads, 2 VO heads, M_in, M_out
    True
    """
    plt = import_pyplot()
    res = run.results[variant]
    fig, ax = plt.subplots(figsize=(9, 4.8))
    fig.subplots_adjust(right=0.78)
    colors = {"QK": "tab:blue", "VO": "tab:orange", "M_in": "tab:green", "M_out": "tab:red"}
    grid = np.asarray([float(p) for p in res.grid])
    for t, color in colors.items():
        ms = [m for m in res.matrices if m.type == t]
        if not ms:
            continue
        ys = np.asarray([[float_upper(c) for c in m.c] for m in ms])
        ax.fill_between(grid, ys.min(axis=0), ys.max(axis=0), color=color, alpha=0.18, lw=0)
        ax.plot(grid, np.median(ys, axis=0), color=color, lw=1.5, label=f"{t}: median, range ({len(ms)})")
        stars = np.asarray([float(m.p_star) for m in ms])
        vals = np.asarray([float_upper(m.contribution_at_p_star) for m in ms])
        ax.plot(stars, vals, linestyle="none", marker="|", ms=9, color=color)
    ax.set_yscale("log")
    ax.set_xlabel("Schatten index p (grid P_m)")
    ax.set_ylabel("c(p) (certified upper end)")
    ax.set_title(f"Per-matrix contributions c(p), {run.name} ({variant} variant)")
    ax.grid(True, which="both", alpha=0.3)
    _legend_right(fig, ax)
    counts = res.p_star_counts()
    total = len(res.matrices)
    chosen = ", ".join(f"p* = {p} for {k} of {total}" for p, k in sorted(counts.items(), key=lambda kv: -kv[1]))
    caption = (f"c(p) = S_p^(1/(p+2)) K^(p/(p+2)) N^((p+1)/(p+2)) over P_m (m={res.m}) for the {total} matrices of "
               f"{run.name} ({run.kind}): per matrix type the median (line) and the range (band); ticks: each "
               f"matrix's chosen p* and c(p*) ({chosen}). " + what_was_run)
    out = save_figure(fig, out_dir, "contribution_curves", caption)
    plt.close(fig)
    return out


def plot_demo_vs_n(points: Sequence[Any], out_dir: str | os.PathLike[str], *,
                   counterfactual: Sequence[tuple[int, float]] = (), stem: str = "demo_vs_n",
                   caption: str = "") -> dict[str, str]:
    """Certified bounds and measured errors of demo models trained at several n (log-log), PDF + PNG.

    ``points``: :class:`certbound.pipeline._demo.DemoPoint` objects (one model each);
    ``counterfactual``: (n, loss-gap bound) of one fixed set of weights as if from n samples.
    Left: the certified 0-1 error bound, the measured test error and the Bayes error; right: the
    certified loss-gap bound and the measured gap, both divided by the loss range B_L. Values ≥ 1
    are vacuous (shaded).

    Parameters
    ----------
    points : sequence of DemoPoint
        One per trained model (``n_train``, ``error_bound``, ``test_error``, ``train_error``,
        ``gap_bound``, ``measured_gap``, ``loss_range``, ``input_counting``, ``label_noise``).
    out_dir : str or path-like
        An existing directory.
    counterfactual : sequence of (int, float)
        ``(n, loss-gap bound)`` of the largest model's weights as if trained on n samples.
    stem : str
        The file name without extension.
    caption : str
        Printed under the plot.

    Returns
    -------
    dict
        :func:`save_figure`'s paths and caption.

    Examples
    --------
    >>> import tempfile
    >>> tmp = tempfile.TemporaryDirectory()  # removed with the example
    >>> from types import SimpleNamespace
    >>> pts = [SimpleNamespace(n_train=n, error_bound=None, test_error=0.1, train_error=0.05, gap_bound=8.0,
    ...                        measured_gap=0.01, loss_range=4.0, input_counting=50.0, label_noise=0.05)
    ...        for n in (1000, 10000)]
    >>> sorted(plot_demo_vs_n(pts, tmp.name, caption="demo"))
    ['caption', 'pdf', 'png']
    """
    plt = import_pyplot()
    pts = sorted(points, key=lambda p: p.n_train)
    ns = [p.n_train for p in pts]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.6))
    for ax in (ax1, ax2):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.axhspan(1.0, 1e6, color="0.92", zorder=0)
        ax.axhline(1.0, color="0.5", lw=0.8)
        ax.set_xlabel("training-set size n")
        ax.grid(True, which="major", color="0.85", lw=0.5)
    err = [(p.n_train, p.error_bound) for p in pts if p.error_bound is not None]
    if err:
        ax1.plot(*zip(*err), "o-", color="C3", label="certified 0-1 error bound (R̂_γ + gap_γ)")
    ax1.plot(ns, [p.test_error for p in pts], "s-", color="C0", ms=5, label="measured test error")
    ax1.plot(ns, [p.train_error for p in pts], "x:", color="C0", ms=5, label="measured training error")
    noise = next((p.label_noise for p in pts if p.label_noise), None)
    if noise:
        ax1.axhline(noise, color="C2", ls="--", lw=1, label=f"Bayes error (label noise {noise:g})")
    low = min(p.input_counting for p in pts) if pts else float("inf")
    top = 10.0  # room above the vacuous line for the legend
    if low < top:
        ax1.plot(ns, [p.input_counting for p in pts], "^--", color="0.4", ms=4,
                 label="input-counting bound (complexity term)")
    else:  # far off the scale: say so instead of squashing the interesting part of the plot
        ax1.plot([], [], "^--", color="0.4", label=f"input-counting bound: ≥ {low:.4g} at every n (off the scale)")
    ax1.set_ylim(0.03, top)
    ax1.set_ylabel("probability of error")
    ax1.set_title("0-1 test error", fontsize=10)
    ax1.legend(fontsize=7, loc="upper right")
    ax2.plot(ns, [p.gap_bound / p.loss_range for p in pts], "o-", color="C3",
             label="certified loss-gap bound / B_L (each model at its own n)")
    ax2.plot(ns, [max(p.measured_gap, 1e-6) / p.loss_range for p in pts], "s-", color="C0", ms=5,
             label="measured |test − train loss| / B_L")
    if counterfactual:
        b_l = pts[-1].loss_range if pts else 1.0
        ax2.plot([c[0] for c in counterfactual], [c[1] / b_l for c in counterfactual], "--", color="C1",
                 label=f"certified bound / B_L for the n = {pts[-1].n_train:,} model's weights\nas if from n samples"
                 if pts else "counterfactual")
    ax2.set_ylim(1e-5, 300)
    ax2.set_ylabel("loss gap / loss range")
    ax2.set_title("loss gap (clipped logistic, B_L = 4)", fontsize=10)
    ax2.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    out = save_figure(fig, out_dir, stem, caption)
    plt.close(fig)
    return out
