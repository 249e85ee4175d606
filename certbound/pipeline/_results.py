"""Typed results of the pipeline, with the JSON / CSV / LaTeX / DataFrame forms the CLI writes.

:class:`SpectrumReport` is a sequence of :class:`MatrixSpectrum` records (one
per theory matrix, the balls of ``certbound spectrum``); :class:`BoundResult`
is a certified bound for a named model (the theorem's
:class:`certbound.bounds.BoundResult` with provenance); :class:`ProxiesReport`
holds the Section-6 proxies. ``to_json()`` returns exactly the document the
CLI writes; ``to_frame()`` needs the optional ``pandas`` (``pip install
'certbound[frame]'``). Frames hold floats rounded *outward* from the balls
(``*_lower`` down, ``*_upper`` up), for reading and plotting; the balls stay
on the records.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence, overload

from flint import arb

from certbound._optional import import_optional
from certbound.ball import ball_from_json, ball_to_json, decimal_upper, float_lower, float_upper
from certbound.bounds.proxies import ProxyResult, variant_ratios
from certbound.report.latex import Raw, latex_count, latex_escape, latex_fragment, latex_table, latex_upper
from certbound.report.writers import atomic_write_text, csv_text

__all__ = ["MatrixSpectrum", "SpectrumReport", "BoundResult", "ProxiesReport", "bound_latex", "require_pandas",
           "matrix_type_label", "spectrum_csv_rows"]


def require_pandas() -> Any:
    """The ``pandas`` module, or a :class:`~certbound._optional.MissingDependencyError` naming the extra.

    Returns
    -------
    module
        ``pandas``.
    """
    return import_optional("pandas", "frame", "DataFrames (to_frame())")


_NORMS = ("spectral_norm", "frobenius_norm", "nuclear_norm", "norm_21")


def matrix_type_label(record: dict[str, Any]) -> str:
    """A spectrum record's type, with its expert (mixtures of experts) when it has one.

    Parameters
    ----------
    record : dict
        A spectrum record (``type``, optionally ``expert``).

    Returns
    -------
    str
        ``type``, or ``type[e<expert>]``.

    Examples
    --------
    >>> matrix_type_label({"type": "M_gate", "expert": 2}), matrix_type_label({"type": "QK"})
    ('M_gate[e2]', 'QK')
    """
    return record["type"] + (f"[e{record['expert']}]" if record.get("expert") is not None else "")


def spectrum_csv_rows(doc: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """Header and rows of ``certbound spectrum --csv`` for a spectrum report document.

    Parameters
    ----------
    doc : dict
        The ``certbound spectrum --json`` document (``options["p"]`` and ``matrices``; the σ lists are not used).

    Returns
    -------
    header, rows : list of str, list of list
        One row per matrix: lower/upper decimal ends of each norm and S_p, the certified rank bounds,
        the certified flag and the certificate mode.
    """
    ps = doc["options"]["p"]
    header = ["layer", "head", "type", "rows", "cols"]
    for q in _NORMS:
        header += [f"{q}_lower", f"{q}_upper"]
    for p in ps:
        header += [f"S_{p}_lower", f"S_{p}_upper"]
    header += ["rank_lower", "rank_upper", "certified", "mode"]
    rows = []
    for r in doc["matrices"]:
        row: list[Any] = [r["layer"], r["head"], matrix_type_label(r), r["shape"][0], r["shape"][1]]
        for q in _NORMS:
            row += [r[q]["lower"], r[q]["upper"]]
        for p in ps:
            row += [r["schatten"][p]["lower"], r["schatten"][p]["upper"]]
        row += [r["rank"]["lower"], r["rank"]["upper"], r["certified"], r["mode"]]
        rows.append(row)
    return header, rows


def _int_columns(df: Any) -> Any:
    """Layer, head and grid levels as nullable integers (a readout has no head: <NA>, not a float NaN)."""
    cols = {c: "Int64" for c in ("layer", "head", "schatten_level", "spectral_level") if c in df.columns}
    return df.astype(cols) if len(df) else df


@dataclass(frozen=True, eq=False)
class MatrixSpectrum:
    """The certified spectrum of one theory matrix (one record of ``certbound spectrum``).

    Every quantity is an Arb ball containing the exact value for the matrix
    held in the checkpoint (``proofs/enclosure.md``); ``sigma`` lists all
    singular values (empty when the report was made without them).

    Attributes
    ----------
    layer, head, type, shape
        Which matrix (``head`` is ``None`` for per-layer matrices).
    sigma : tuple of arb
        σ₁ ≥ σ₂ ≥ … enclosures.
    spectral_norm, frobenius_norm, nuclear_norm, norm_21 : arb
        σ₁, ‖·‖_F, ‖·‖_*, ‖·‖_{2,1}.
    schatten : dict of str to arb
        S_p = Σ σᵢᵖ at each requested p (keys as given, e.g. ``"0.5"``).
    rank : (int, int)
        Certified lower and upper bounds on the rank.
    certified : bool
        False when the certificate failed (then the balls are trivial, [0, ∞]).
    expert : int or None
        The expert of a mixture-of-experts FFN matrix (else ``None``).
    stack : str
        ``"encoder"``/``"decoder"`` for encoder-decoder models (else ``""``).

    Examples
    --------
    >>> import numpy as np
    >>> from certbound.checkpoints import TheoryMatrix
    >>> from certbound.pipeline import certify_theory_matrix
    >>> m = TheoryMatrix(0, None, "M_in", (2, 2), dense=np.diag([3.0, 4.0]))
    >>> s = MatrixSpectrum.from_record(certify_theory_matrix(m, ps=["1"]))
    >>> s.rank, bool(s.spectral_norm.contains(4)), bool(s.schatten["1"].contains(7))
    ((2, 2), True, True)
    """

    layer: int
    head: int | None
    type: str
    shape: tuple[int, int]
    sigma: tuple[arb, ...]
    spectral_norm: arb
    frobenius_norm: arb
    nuclear_norm: arb
    norm_21: arb
    schatten: dict[str, arb]
    rank: tuple[int, int]
    certified: bool
    mode: str
    warnings: tuple[str, ...] = ()
    record: dict[str, Any] = field(default_factory=dict, repr=False)
    expert: int | None = None
    stack: str = ""

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> "MatrixSpectrum":
        """The typed form of a JSON record (balls rebuilt exactly from its ``exact`` endpoints).

        Parameters
        ----------
        rec : dict
            One entry of a spectrum report's ``matrices``.

        Returns
        -------
        MatrixSpectrum
            Its balls (exact endpoints), rank bounds, certificate and the record itself.
        """
        return cls(
            layer=rec["layer"], head=rec["head"], type=rec["type"], shape=(int(rec["shape"][0]), int(rec["shape"][1])),
            sigma=tuple(ball_from_json(q) for q in rec.get("sigma", ())),
            spectral_norm=ball_from_json(rec["spectral_norm"]), frobenius_norm=ball_from_json(rec["frobenius_norm"]),
            nuclear_norm=ball_from_json(rec["nuclear_norm"]), norm_21=ball_from_json(rec["norm_21"]),
            schatten={p: ball_from_json(q) for p, q in rec["schatten"].items()},
            rank=(int(rec["rank"]["lower"]), int(rec["rank"]["upper"])), certified=bool(rec["certified"]),
            mode=str(rec["mode"]), warnings=tuple(rec.get("warnings", ())), record=rec,
            expert=rec.get("expert"), stack=str(rec.get("stack", "")),
        )

    def to_json(self) -> dict[str, Any]:
        """The JSON record (today's ``certbound spectrum --json`` schema).

        Returns
        -------
        dict
            The record it was built from.
        """
        return self.record


class SpectrumReport(Sequence[MatrixSpectrum]):
    """Certified spectra of every theory matrix of a model: a sequence of :class:`MatrixSpectrum`.

    ``to_json()`` is the ``certbound spectrum --json`` document (model,
    config, options, version, weights digest, records), ``to_csv()`` its CSV,
    ``to_frame()`` one DataFrame row per matrix.

    Examples
    --------
    >>> import certbound
    >>> from certbound.models import demo_checkpoint_path
    >>> rep = certbound.open_model(demo_checkpoint_path()).spectra(include_sigma=False)
    >>> rep.to_csv().splitlines()[0].split(",")[:6]
    ['layer', 'head', 'type', 'rows', 'cols', 'spectral_norm_lower']
    >>> len(rep.to_json()["matrices"]) == len(rep)
    True
    """

    def __init__(self, document: dict[str, Any]):
        self._doc = document
        self._matrices = [MatrixSpectrum.from_record(r) for r in document["matrices"]]

    @overload
    def __getitem__(self, i: int) -> MatrixSpectrum: ...
    @overload
    def __getitem__(self, i: slice) -> list[MatrixSpectrum]: ...

    def __getitem__(self, i: Any) -> Any:
        return self._matrices[i]

    def __len__(self) -> int:
        return len(self._matrices)

    def __iter__(self) -> Iterator[MatrixSpectrum]:
        return iter(self._matrices)

    def __repr__(self) -> str:
        return f"SpectrumReport({self.model!r}, {len(self)} matrices, mode={self.options['mode']!r})"

    @property
    def model(self) -> str:
        """What the model was (a path, or a description of an in-memory model)."""
        return self._doc["model"]

    @property
    def config(self) -> dict[str, Any]:
        """The architecture summary (layers, width, heads, head dim, FFN size, format)."""
        return self._doc["config"]

    @property
    def options(self) -> dict[str, Any]:
        """The options the spectra were certified with (mode, raw, scale_logits, p, layers)."""
        return self._doc["options"]

    @property
    def weights_sha256(self) -> str:
        """sha256 of the certified matrices (``BoundSettings(spectra=...)`` checks it)."""
        return self._doc["weights_sha256"]

    def find(self, layer: int, type: str, head: int | None = None, expert: int | None = None) -> MatrixSpectrum:
        """The record of one matrix (``expert`` for a mixture of experts); ``KeyError`` naming it when absent.

        Parameters
        ----------
        layer : int
            0-based layer.
        type : str
            Matrix type (``"QK"``, ``"VO"``, ``"M_in"``, ...).
        head : int, optional
            The head (QK/VO only).
        expert : int, optional
            The expert of a mixture of experts.

        Returns
        -------
        MatrixSpectrum
            The first matching record.
        """
        for m in self._matrices:
            if (m.layer, m.head, m.type, m.expert) == (layer, head, type, expert):
                return m
        raise KeyError(f"no matrix layer={layer} head={head} type={type!r}"
                       + ("" if expert is None else f" expert={expert}") + " in this report")

    def to_json(self) -> dict[str, Any]:
        """The ``certbound spectrum --json`` document (a dict; ``json_text`` writes it).

        Returns
        -------
        dict
            The document itself (not a copy).
        """
        return self._doc

    def csv_rows(self) -> tuple[list[str], list[list[Any]]]:
        """Header and rows of the CSV (decimal endpoints as in the JSON).

        Returns
        -------
        tuple
            ``(header, rows)``.
        """
        return spectrum_csv_rows(self._doc)

    def to_csv(self, path: str | os.PathLike[str] | None = None) -> str:
        """The CSV text of ``certbound spectrum --csv``; also written atomically to ``path`` if given.

        Parameters
        ----------
        path : str or path, optional
            A file to write (atomically) as well.

        Returns
        -------
        str
            The CSV text.
        """
        text = csv_text(*reversed(self.csv_rows()))
        if path is not None:
            atomic_write_text(path, text)
        return text

    def to_frame(self) -> Any:
        """A pandas DataFrame, one row per matrix (floats rounded outward from the balls).

        Returns
        -------
        pandas.DataFrame
            Lower/upper float ends per norm and S_p, rank bounds, certificate (needs ``certbound[frame]``).
        """
        pd = require_pandas()
        rows = []
        for m in self._matrices:
            row: dict[str, Any] = {"layer": m.layer, "head": m.head, "type": m.type, "rows": m.shape[0],
                                   "cols": m.shape[1]}
            if m.expert is not None or m.stack:
                row.update({"expert": m.expert, "stack": m.stack})
            for q in _NORMS:
                b = getattr(m, q)
                row[f"{q}_lower"], row[f"{q}_upper"] = float_lower(b), float_upper(b)
            for p, b in m.schatten.items():
                row[f"S_{p}_lower"], row[f"S_{p}_upper"] = float_lower(b), float_upper(b)
            row.update({"rank_lower": m.rank[0], "rank_upper": m.rank[1], "certified": m.certified, "mode": m.mode})
            rows.append(row)
        return _int_columns(pd.DataFrame(rows))


def bound_latex(res: Any, *, model: str, digits: int = 5) -> str:
    """A booktabs LaTeX fragment of a theorem result for ``model`` (upper bounds rounded up; preamble:
    ``LATEX_PREAMBLE``).

    Parameters
    ----------
    res : certbound.bounds.BoundResult
        The theorem's result (``BoundResult.theorem_result`` of the pipeline's result).
    model : str
        The model's name in the caption.
    digits : int
        Significant digits; every certified number is rounded *up* to them.

    Returns
    -------
    str
        The fragment (``certbound bound --latex``): the bound, its terms and the per-matrix table.

    Examples
    --------
    >>> import certbound
    >>> from certbound.models import demo_checkpoint_path
    >>> res = certbound.open_model(demo_checkpoint_path()).bound(n=10**6, delta="0.01")
    >>> tex = bound_latex(res.theorem_result, model="demo")
    >>> tex.startswith("% certbound bound"), "toprule" in tex
    (True, True)
    """
    rows = [
        [Raw("bound"), latex_upper(res.bound, digits)],
        [Raw(rf"$2\,\bar{{\mathfrak R}}_n$ ({latex_escape(res.rademacher_method)})"),
         latex_upper(2 * res.rademacher, digits)],
        [Raw("confidence term"), latex_upper(res.confidence_term, digits)],
        [Raw(r"$\ln(1/\pi)$"), latex_upper(res.log_inv_prior, digits)],
    ]
    name = latex_escape(os.path.basename(model.rstrip("/")))
    caption = (rf"Certified generalization-gap bound ({latex_escape(res.theorem)}) for the $\Pi$-surrogate network "
               rf"of \texttt{{{name}}}, $n={latex_count(res.n_samples)}$, "
               rf"$\delta={latex_escape(str(res.delta))}$; certified upper bounds, rounded up.")
    return latex_fragment(latex_table(rows, ["quantity", "upper bound"], caption=caption, align="lr"),
                          "certbound bound")


@dataclass(frozen=True, eq=False)
class BoundResult:
    """A certified generalization-gap bound of a named model.

    With probability ≥ 1 − δ over an i.i.d. sample of size n, ``|R(f) −
    R̂_S(f)| ≤ bound`` for the network that ``assumptions["network"]``
    describes (``proofs/theory-theorems.md`` §T1/§T2). The balls are those of
    the theorem's :class:`certbound.bounds.BoundResult` (``theorem_result``);
    their upper ends are the certified values.

    Attributes
    ----------
    theorem_result : certbound.bounds.BoundResult
        The theorem's result: terms, per-matrix Schatten indices, radii and
        grid levels (``matrices``), the partition, the assumptions.
    model : str
        The model's path or description.
    config : dict
        Its architecture summary.
    timing_seconds : dict
        ``{"spectra": s, "bound": s}`` (wall-clock; not part of the certificate).

    Examples
    --------
    >>> import certbound
    >>> from certbound.models import demo_checkpoint_path
    >>> res = certbound.open_model(demo_checkpoint_path()).bound(n=10**6, delta="0.01")
    >>> bool(res.bound < res.theorem_result.loss_bound), res.to_json()["model"] == res.model
    (True, True)
    >>> res.to_latex().startswith("% certbound bound")
    True
    """

    theorem_result: Any
    model: str
    config: dict[str, Any]
    timing_seconds: dict[str, float]

    # the certified balls and the data behind them
    @property
    def bound(self) -> arb:
        """The certified bound (its upper end is the number to report)."""
        return self.theorem_result.bound

    @property
    def rademacher(self) -> arb:
        """The Rademacher term (bound = 2 · rademacher + confidence_term): the least certified estimate."""
        return self.theorem_result.rademacher

    @property
    def rademacher_method(self) -> str:
        """Which certified estimate of the Rademacher term is the smallest (and so used)."""
        return self.theorem_result.rademacher_method

    @property
    def dudley(self) -> arb:
        """The Dudley sum 𝔇_n (one of the Rademacher estimates, ≥ ``rademacher``)."""
        return self.theorem_result.dudley

    @property
    def confidence_term(self) -> arb:
        """B_ℒ √((ln(2/δ) + ln(1/π)) / (2n))."""
        return self.theorem_result.confidence_term

    @property
    def log_inv_prior(self) -> arb:
        """ln(1/π) of the chosen configuration."""
        return self.theorem_result.log_inv_prior

    @property
    def theorem(self) -> str:
        return self.theorem_result.theorem

    @property
    def n(self) -> int:
        return self.theorem_result.n_samples

    @property
    def delta(self) -> float:
        """δ as a float rounded up (exact when δ is a binary64 number)."""
        return self.theorem_result.delta

    @property
    def vacuous(self) -> bool:
        """True unless bound < B_ℒ is proved."""
        return self.theorem_result.vacuous

    @property
    def matrices(self) -> list:
        """Per-matrix :class:`certbound.bounds.MatrixReport` (p, radii, levels, contribution)."""
        return self.theorem_result.matrices

    @property
    def assumptions(self) -> dict[str, Any]:
        """What the bound assumes, as data (network, constants and where they came from, rounding)."""
        return self.theorem_result.assumptions

    def __repr__(self) -> str:
        return (f"BoundResult({self.theorem}, model={self.model!r}, n={self.n}, delta={self.delta}, "
                f"bound <= {decimal_upper(self.bound, 6)})")

    def to_json(self) -> dict[str, Any]:
        """The ``certbound bound --json`` document.

        Returns
        -------
        dict
            The theorem result's JSON form with ``model``, ``config`` and ``timing_seconds``.
        """
        doc = self.theorem_result.to_json()
        doc["model"] = self.model
        doc["config"] = self.config
        doc["timing_seconds"] = dict(self.timing_seconds)
        return doc

    def to_latex(self, digits: int = 5) -> str:
        """The booktabs LaTeX fragment of ``certbound bound --latex`` (upper bounds rounded up).

        Parameters
        ----------
        digits : int
            Significant digits of the printed upper bounds.

        Returns
        -------
        str
            The LaTeX fragment.
        """
        return bound_latex(self.theorem_result, model=self.model, digits=digits)

    def to_frame(self) -> Any:
        """A pandas DataFrame, one row per matrix: p, radii, grid levels, contribution (outward-rounded floats).

        Returns
        -------
        pandas.DataFrame
            One row per matrix (needs ``certbound[frame]``).
        """
        pd = require_pandas()
        rows = []
        for m in self.matrices:
            row: dict[str, Any] = {"layer": m.layer, "head": m.head, "type": m.type, "rows": m.shape[0],
                                   "cols": m.shape[1], "p": float(m.p)}
            for name in ("schatten_radius", "spectral_radius", "contribution", "log_inv_prior"):
                row[f"{name}_upper"] = float_upper(getattr(m, name))
            row["schatten_level"], row["spectral_level"] = m.schatten_level, m.spectral_level
            rows.append(row)
        return _int_columns(pd.DataFrame(rows))


@dataclass(frozen=True, eq=False)
class ProxiesReport:
    """Certified Section-6 proxies (B_ours, B_Edelman) of a model, per variant.

    ``results`` maps ``"paper"``/``"corrected"`` to a
    :class:`certbound.bounds.proxies.ProxyResult`; ``info`` is the model
    summary (path, used layers). These are proxies of leading factors, not
    generalization bounds.

    Examples
    --------
    >>> import certbound
    >>> from certbound.models import demo_checkpoint_path
    >>> rep = certbound.open_model(demo_checkpoint_path()).proxies("corrected")
    >>> rep.to_json()["variant"], bool(rep["corrected"].B_ours > 0)
    ('corrected', True)
    """

    info: dict[str, Any]
    results: dict[str, ProxyResult]

    def __getitem__(self, variant: str) -> ProxyResult:
        return self.results[variant]

    def to_json(self, *, full_grid: bool = True, digits: int = 17) -> dict[str, Any]:
        """The ``certbound proxies --json`` document (one variant's form, or both plus their ratios).

        Parameters
        ----------
        full_grid : bool
            Include the per-p contribution balls of every matrix.
        digits : int
            Significant digits of the decimal ball ends.

        Returns
        -------
        dict
            One variant's document, or both variants with their certified ratios.
        """
        results = list(self.results.values())
        docs = [r.to_json(digits=digits, full_grid=full_grid) for r in results]
        for d in docs:
            d["model"] = self.info
        if len(results) == 1:
            return docs[0]
        ratios = variant_ratios(self.results["corrected"], self.results["paper"])
        return {
            "model": self.info,
            "variants": {d["variant"]: d for d in docs},
            "ratio_corrected_over_paper": {k: ball_to_json(v, digits) for k, v in ratios.items()},
        }

    def to_frame(self) -> Any:
        """A pandas DataFrame, one row per (variant, matrix): p*, contribution, norms (outward-rounded floats).

        Returns
        -------
        pandas.DataFrame
            One row per matrix and variant (needs ``certbound[frame]``).
        """
        pd = require_pandas()
        rows = []
        for v, r in self.results.items():
            for m in r.matrices:
                rows.append({"variant": v, "layer": m.layer, "head": m.head, "type": m.type, "rows": m.shape[0],
                             "cols": m.shape[1], "p_star": float(m.p_star),
                             "contribution_upper": float_upper(m.contribution),
                             "spectral_upper": float_upper(m.spectral), "norm_21_upper": float_upper(m.norm_21)})
        return _int_columns(pd.DataFrame(rows))
