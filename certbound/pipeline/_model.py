"""``certbound.open_model(source)``: a model to certify, from disk, the local Hugging Face cache or memory.

A :class:`Model` knows how to open its tensors and has a resolved layout
(architecture, sizes, tensor names; all shapes checked on opening). Its
methods are the pipeline: :meth:`Model.spectra` → :class:`SpectrumReport`,
:meth:`Model.bound` → :class:`BoundResult`, :meth:`Model.proxies` →
:class:`ProxiesReport`. They run exactly the computations of ``certbound
spectrum``, ``certbound bound`` and ``certbound proxies``.

In-memory sources (a torch ``nn.Module``, e.g. a ``transformers``
``PreTrainedModel`` with its ``.config``, or a state dict plus a config) are
never written to disk: each method reads the module's *current* tensors,
widening float16/bfloat16/float32 to float64 exactly
(:func:`certbound.checkpoints.checkpoint_from_tensors`).
"""

from __future__ import annotations

import contextlib
import os
from fractions import Fraction
from typing import Any, Callable, Iterator, Mapping, Sequence

from certbound._errors import OptionError, option_name
from certbound.bounds.proxies import VARIANTS, paper_proxies
from certbound.checkpoints import (
    Checkpoint,
    ModelLayout,
    PACKAGED_CHECKPOINTS,
    checkpoint_from_tensors,
    find_packaged_checkpoint,
    load_checkpoint,
    load_mapping,
    read_config,
    resolve_layout,
)
from certbound.pipeline._bound import BoundSettings, certified_bound_of, float_reading, parse_count, parse_number
from certbound.pipeline._hub import looks_like_hub_id, resolve_hub_id
from certbound.pipeline._modes import DEFAULT_SPECTRUM_MODE, spectrum_mode_keyword
from certbound.pipeline._progress import ProgressSpec
from certbound.pipeline._proxies import model_quantities_of
from certbound.pipeline._results import BoundResult, ProxiesReport, SpectrumReport
from certbound.pipeline._spectrum import spectrum_run_of
from certbound.pipeline._streaming import layer_indices

__all__ = ["Model", "open_model", "parse_schatten_indices"]

def parse_schatten_indices(ps: str | Sequence[Any], what: str = "p") -> list[str]:
    """Schatten indices p ∈ (0, 2] as exact decimal strings (``"0.5,1,2"`` or a sequence).

    Parameters
    ----------
    ps : str or sequence
        Comma-separated indices, or a sequence of numbers / strings (each read exactly).
    what : str
        The option's name in error messages (an identifier is written ```what```).

    Returns
    -------
    list of str
        The indices as given, in order (at least one).

    Raises
    ------
    certbound.OptionError
        For a token that is not a number or not in (0, 2], or no index at all.

    Examples
    --------
    >>> parse_schatten_indices("0.5, 1,2"), parse_schatten_indices([1, "1/3"])
    (['0.5', '1', '2'], ['1', '1/3'])
    >>> parse_schatten_indices("3")
    Traceback (most recent call last):
    ...
    certbound.OptionError: `p`: 3 is not in (0, 2] (p = 0 is the certified rank, always reported)
    """
    what = option_name(what)
    toks = ps.split(",") if isinstance(ps, str) else [str(p) for p in ps]
    out = []
    for tok in toks:
        tok = tok.strip()
        if not tok:
            continue
        try:
            q = Fraction(tok)
        except (ValueError, ZeroDivisionError):
            raise OptionError(f"{what}: {tok!r} is not a number") from None
        if not 0 < q <= 2:
            raise OptionError(f"{what}: {tok} is not in (0, 2] (p = 0 is the certified rank, always reported)")
        out.append(tok)
    if not out:
        raise OptionError(f"{what}: give at least one Schatten index")
    return out


_UPPER_CONSTANTS = ("loss_bound", "loss_lipschitz", "readout_norm", "softmax_lip", "act_lip")


def _config_dict(config: Any, what: str) -> dict[str, Any] | None:
    if config is None:
        return None
    if isinstance(config, Mapping):
        return dict(config)
    if hasattr(config, "to_dict"):  # a transformers PretrainedConfig
        return dict(config.to_dict())
    if isinstance(config, (str, os.PathLike)):
        return read_config(config)
    raise TypeError(f"{what}: config must be a dict, a transformers config or a config.json path, "
                    f"not {type(config).__name__}")


def _mapping_dict(mapping: Any) -> dict[str, Any] | None:
    if mapping is None or isinstance(mapping, Mapping):
        return None if mapping is None else dict(mapping)
    return load_mapping(mapping)


class Model:
    """A model opened for certification (see :func:`open_model`).

    Attributes
    ----------
    name : str
        The path, or a description of an in-memory model; reports name the model by it.
    source : str
        ``"path"``, ``"packaged"``, ``"hub"``, ``"module"`` or ``"state_dict"``.
    layout : certbound.checkpoints.ModelLayout
        Architecture, sizes and tensor names (all shapes checked).

    Examples
    --------
    >>> import certbound
    >>> from certbound.models import demo_checkpoint_path
    >>> m = certbound.open_model(demo_checkpoint_path())  # the shipped certbound-pi model
    >>> m.source, m.layout.architecture
    ('path', 'certbound-pi')
    """

    def __init__(self, opener: Callable[[], Checkpoint], *, name: str, source: str,
                 mapping: dict[str, Any] | None = None):
        self._opener = opener
        self._mapping = mapping
        self.name = name
        self.source = source
        ck = opener()
        try:
            self.layout: ModelLayout = resolve_layout(ck, mapping)
            self.config: dict[str, Any] = dict(ck.config or {})
        finally:
            ck.close()

    def __repr__(self) -> str:
        s = self.layout.summary()
        return (f"Model({self.name!r}, {s['architecture']}: {s['num_layers']} layers, width {s['hidden_size']}, "
                f"{s['num_heads']} heads)")

    @contextlib.contextmanager
    def open(self) -> Iterator[tuple[Checkpoint, ModelLayout]]:
        """The opened checkpoint and its layout, closed on exit.

        Yields
        ------
        tuple of (Checkpoint, ModelLayout)
            The checkpoint (re-opened for each call) and the model's layout.
        """
        ck = self._opener()
        try:
            yield ck, self.layout
        finally:
            ck.close()

    # ------------------------------------------------------------ pipeline
    def spectra(self, spectrum_mode: str = DEFAULT_SPECTRUM_MODE, *, jobs: int = 1,
                layers: Sequence[int] | None = None, p: str | Sequence[Any] = ("0.5", "1", "2"), raw: bool = False,
                scale_logits: bool = False, include_sigma: bool = True, progress: ProgressSpec = None,
                dask: str | None = None, mode: str | None = None) -> SpectrumReport:
        """Certified spectra of every theory matrix (``certbound spectrum``).

        Parameters
        ----------
        spectrum_mode : {"fast", "tight", "arb", "gram", "auto"}
            Certificate mode of the singular-value kernel (:data:`certbound.pipeline.SPECTRUM_MODES`;
            default ``"auto"``, as the CLI's ``--spectrum-mode``).
        jobs : int
            Worker processes (1: in this process). Workers reopen the checkpoint from its path,
            so an in-memory model runs with one job.
        layers : sequence of int, optional
            Only these layers (0-based).
        p : str or sequence
            Schatten indices in (0, 2] to report S_p for.
        raw : bool
            Also certify the raw per-layer W_Q, W_K, W_V, W_O.
        scale_logits : bool
            Fold the logit scale 1/√d_h into QK.
        include_sigma : bool
            Keep every σᵢ (``False``: norms and S_p only; faster).
        progress
            ``None`` (silent), ``True`` (a bar on a terminal) or a callback ``(done, total, label)``.
        dask : str, optional
            A Dask scheduler address or ``"local"`` (``certbound spectrum --dask``; the ``dask`` extra).
        mode : str, optional
            Deprecated name of ``spectrum_mode`` (warns).

        Returns
        -------
        SpectrumReport
            One :class:`MatrixSpectrum` per theory matrix (certified σ balls, norms, S_p, rank
            bounds and the certificate used, ``mode``), with ``to_json``/``to_frame``/``to_csv``.

        Examples
        --------
        >>> import certbound
        >>> from certbound.models import demo_checkpoint_path
        >>> rep = certbound.open_model(demo_checkpoint_path()).spectra()
        >>> len(rep), rep[0].type, rep.find(0, "QK", head=0).rank
        (5, 'QK', (1, 1))
        """
        spectrum_mode = spectrum_mode_keyword(spectrum_mode, mode)
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise OptionError(f"`jobs` must be at least 1, not {jobs}")
        ps = parse_schatten_indices(p)
        try:
            lay = layer_indices(layers, self.layout.num_layers)
        except OptionError as exc:
            raise OptionError(f"{self.name}: {exc}") from None
        with self.open() as (ck, layout):
            run = spectrum_run_of(ck, layout, self.name, spectrum_mode=spectrum_mode, raw=raw,
                                  scale_logits=scale_logits, ps=ps, layers=lay, jobs=jobs, include_sigma=include_sigma, progress=progress, dask=dask)
            doc = run.report()
        return SpectrumReport(doc)

    def bound(self, n: Any, delta: Any, settings: BoundSettings | None = None, *, progress: ProgressSpec = None,
              **options: Any) -> BoundResult:
        """The certified generalization-gap bound (``certbound bound``): Theorem 2 post hoc by default.

        Soundness: ``proofs/theory-theorems.md`` §T1/§T2; float arguments:
        ``proofs/pipeline.md`` §1.

        Parameters
        ----------
        n : int or str
            The sample size (an int, or a string such as ``"1e6"``).
        delta : str, Fraction or float
            The confidence parameter in (0, 1). A string such as ``"0.01"`` is
            read exactly; a float is read so that the bound holds for both its
            binary and its decimal value.
        settings : BoundSettings, optional
            All options at once; give either this or keyword ``options``.
        progress : None, bool, "auto" or callable, optional
            ``True`` draws a bar on a terminal; a callable
            ``progress(done, total, label)`` receives the steps.
        **options
            The :class:`BoundSettings` fields (``seq_len``, ``loss_bound``,
            ``residual``, ``mode="fixed"`` with ``constraints``, ...), as the
            flags of ``certbound bound``.

        Returns
        -------
        BoundResult
            The certified bound and its terms as balls (upper ends are the
            certified values), with its assumptions.

        Examples
        --------
        >>> import certbound
        >>> from certbound.models import demo_checkpoint_path
        >>> res = certbound.open_model(demo_checkpoint_path()).bound(n=10**6, delta="0.01")
        >>> res.n, res.vacuous, res.theorem
        (1000000, False, 'Theorem 2 (post hoc)')
        """
        if settings is not None and options:
            raise OptionError("give either `settings` or keyword options, not both")
        if settings is None:
            for k in _UPPER_CONSTANTS:
                if isinstance(options.get(k), float):
                    options[k] = float_reading(options[k], upper=True)
            settings = BoundSettings.from_options(**options)
        n_v = parse_count(n)
        delta_v = float_reading(delta, upper=False) if isinstance(delta, float) else parse_number(delta, "delta")
        if not 0 < delta_v < 1:
            raise OptionError(f"`delta` must lie in (0, 1), got {delta}")
        with self.open() as (ck, layout):
            res, path, layout, t_spec = certified_bound_of(ck, layout, self.name, n_v, delta_v, settings,
                                                           progress=progress)
        return BoundResult(res, path, layout.summary(), {"spectra": t_spec, "bound": res.elapsed_seconds})

    def proxies(self, variant: str = "both", *, spectrum_mode: str = DEFAULT_SPECTRUM_MODE,
                layers: int | Sequence[int] | None = None, progress: ProgressSpec = None,
                mode: str | None = None) -> ProxiesReport:
        """The certified Section-6 proxies B_ours / B_Edelman (``certbound proxies``); not bounds.

        Parameters
        ----------
        variant : {"both", "paper", "corrected"}
            Which proxy formulas (``"both"``: both and their certified ratio).
        spectrum_mode : {"fast", "tight", "arb", "gram", "auto"}
            Certificate mode of the singular-value kernel (:data:`certbound.pipeline.SPECTRUM_MODES`;
            default ``"auto"``, as the CLI's ``--spectrum-mode``).
        layers : int or sequence of int, optional
            ``layers=K`` uses the first K layers 0..K-1 only (a prefix-depth sub-model); the list
            ``[0, …, K-1]`` means the same (as ``certbound proxies --layers 0-2``), any other list is refused.
        progress : None, bool, "auto" or callable, optional
            As for :meth:`bound`.
        mode : str, optional
            Deprecated name of ``spectrum_mode`` (warns).

        Returns
        -------
        ProxiesReport
            Per variant the certified B_ours and B_Edelman balls and the per-matrix quantities.

        Examples
        --------
        >>> import certbound
        >>> from certbound.models import demo_checkpoint_path
        >>> sorted(certbound.open_model(demo_checkpoint_path()).proxies().results)
        ['corrected', 'paper']
        """
        if variant not in (*VARIANTS, "both"):
            raise OptionError(f"`variant` must be one of {', '.join((*VARIANTS, 'both'))}, not {variant!r}")
        spectrum_mode = spectrum_mode_keyword(spectrum_mode, mode)
        with self.open() as (ck, layout):
            info, qs = model_quantities_of(ck, layout, self.name, spectrum_mode=spectrum_mode, layers=layers,
                                           progress=progress)
        variants = VARIANTS if variant == "both" else (variant,)
        return ProxiesReport(info, {v: paper_proxies(qs, v) for v in variants})


def _is_torch_module(obj: Any) -> bool:
    return any(f"{c.__module__}.{c.__name__}" == "torch.nn.modules.module.Module" for c in type(obj).__mro__)


def open_model(source: Any, *, config: Any = None, mapping: Any = None, revision: str | None = None) -> Model:
    """Open a model for certification.

    Parameters
    ----------
    source
        * a model directory or weights file (``.safetensors``, sharded
          index, ``.bin``, ``.onnx``), as for the CLI;
        * a packaged checkpoint name (``"all-MiniLM-L6-v2"``, ...);
        * a Hugging Face model id (``"org/name"``) already in the local cache,
          resolved offline with ``huggingface_hub`` (never a download; the
          ``hub`` extra); ``revision`` picks another cached revision;
        * a torch ``nn.Module`` — a ``transformers`` ``PreTrainedModel`` brings
          its ``.config``; other modules need ``config`` or ``mapping``;
        * a state dict (mapping of names to torch tensors or numpy arrays)
          with ``config``.
    config : dict, transformers config or path, optional
        The model config (for files: instead of the one next to the weights).
    mapping : dict or path, optional
        A tensor-name mapping for an unsupported architecture
        (:data:`certbound.checkpoints.MAPPING_HELP`).
    revision : str, optional
        For a Hugging Face model id: the cached revision to use.

    Returns
    -------
    Model
        The opened model: its layout is resolved and every shape checked; tensors are
        read again by each method (an in-memory module's *current* weights).

    Raises
    ------
    FileNotFoundError, ValueError, TypeError
        A missing source, a bad config or mapping, or an unsupported kind of source.

    Examples
    --------
    >>> import numpy as np, certbound
    >>> rng = np.random.default_rng(0)
    >>> N, F = 4, 8
    >>> sd = {f"encoder.layer.0.{k}.weight": rng.standard_normal(s).astype(np.float32) for k, s in [
    ...     ("attention.self.query", (N, N)), ("attention.self.key", (N, N)), ("attention.self.value", (N, N)),
    ...     ("attention.output.dense", (N, N)), ("intermediate.dense", (F, N)), ("output.dense", (N, F))]}
    >>> cfg = {"model_type": "bert", "hidden_size": N, "num_hidden_layers": 1, "num_attention_heads": 2,
    ...        "intermediate_size": F, "hidden_act": "gelu", "max_position_embeddings": 8}
    >>> m = certbound.open_model(sd, config=cfg)
    >>> len(m.spectra()), m.spectra()[0].type
    (6, 'QK')
    >>> res = m.bound(n=10**6, delta=0.01)
    >>> res.theorem_result.n_samples, bool(res.bound > 0)
    (1000000, True)
    """
    mp = _mapping_dict(mapping)
    if isinstance(source, (str, os.PathLike)):
        text = os.fspath(source)
        if config is not None and not isinstance(config, (str, os.PathLike, Mapping)):
            config = _config_dict(config, text)
        if os.path.exists(text):
            return Model(lambda: load_checkpoint(text, config=config), name=text, source="path", mapping=mp)
        if text.split("/")[-1] in PACKAGED_CHECKPOINTS:
            try:
                path = str(find_packaged_checkpoint(text))
            except LookupError as exc:
                raise FileNotFoundError(str(exc)) from None
            return Model(lambda: load_checkpoint(path, config=config), name=path, source="packaged", mapping=mp)
        if looks_like_hub_id(text):
            path = resolve_hub_id(text, revision=revision)
            return Model(lambda: load_checkpoint(path, config=config), name=path, source="hub", mapping=mp)
        raise FileNotFoundError(f"{text}: no such file or directory, and not a packaged checkpoint name or a "
                                "Hugging Face model id")
    if _is_torch_module(source):
        cfg = _config_dict(config, type(source).__name__)
        if cfg is None and getattr(source, "config", None) is not None:
            cfg = _config_dict(source.config, type(source).__name__)
        if cfg is None and mp is None:
            raise ValueError(f"{type(source).__name__}: a module without a .config needs config= (a dict with "
                             "model_type and sizes) or mapping=")
        name = f"<in-memory {type(source).__name__}>"
        return Model(lambda: checkpoint_from_tensors(source.state_dict(), cfg, name=name), name=name,
                     source="module", mapping=mp)
    if isinstance(source, Mapping):
        cfg = _config_dict(config, "state dict")
        if cfg is None and mp is None:
            raise ValueError("a state dict needs config= (a dict with model_type and sizes, a transformers "
                             "config or a config.json path) or mapping=")
        name = "<in-memory state dict>"
        return Model(lambda: checkpoint_from_tensors(source, cfg, name=name), name=name, source="state_dict",
                     mapping=mp)
    raise TypeError(f"open_model: cannot open a {type(source).__name__}; give a path, a packaged name, a Hugging "
                    "Face model id, a torch nn.Module or a state dict with config=")
