"""The certified generalization-gap bound of a model: the computation behind ``certbound bound``.

What is certified (``proofs/theory-theorems.md``): with probability ≥ 1 − δ over
an i.i.d. sample of size n, ``|R(f) − R̂_S(f)|`` is at most the returned bound
for the **Π-surrogate network** carrying the checkpoint's weights — the model
class of ``proofs/theory-lipschitz.md`` §1 (variant B: multi-head attention,
two-matrix feed-forward with the checkpoint's activation; LayerNorm replaced by
the row projection Π; biases, embeddings, pooler, attention masks (causal,
padding: every token attends to every token) and (unless ``residual``)
residual connections dropped; inputs with unit-norm token rows; a learned
readout of the first token with ``‖w‖ ≤ readout_norm``; a loss in
``[0, loss_bound]`` that is ``loss_lipschitz``-Lipschitz). It is **not** a
bound for the original BERT-like network. For a certbound-pi checkpoint the
network *is* the theorems' model class and the a-priori constants come from
its config.

``BoundSettings(mode="posthoc")`` (default) is Theorem 2 (Schatten index per
matrix chosen after training on the grid P_m, radii peeled on a-priori grids);
``mode="fixed"`` is Theorem 1 with an a-priori configuration
(``constraints``: a JSON file of ``{"layer", "head", "type", "p",
"schatten_radius", "spectral_radius"}``), checked against the certified
weights.

Numbers are read exactly: strings as decimals or ratios (``"0.01"``,
``"1/100"``), ints and Fractions as they are, floats as the binary64 number
they are. Error messages (:class:`~certbound.OptionError`) name each option as its
parameter (```delta```, ```seq_len```); ``certbound bound`` re-spells them as its flags.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
import warnings
from dataclasses import dataclass, fields
from fractions import Fraction
from types import SimpleNamespace
from typing import Any, Union

import numpy as np
from flint import arb

from certbound._blas import single_threaded
from certbound._errors import OptionError, option_name
from certbound.ball import DEFAULT_PREC, ball_from_json, float_upper, upper_fraction, working_precision
from certbound.bounds import (
    BoundOptions,
    MatrixConstraint,
    TransformerSpec,
    ramp_loss_constants,
    theorem1_fixed_bound,
    theorem2_posthoc_bound,
)
from certbound.checkpoints import open_checkpoint, require_theory_coverage, theory_matrices
from certbound.enclose import enclose_singular_values
from certbound.pipeline._modes import DEFAULT_SPECTRUM_MODE, check_spectrum_mode, spectrum_mode_keyword
from certbound.pipeline._progress import ProgressSpec, progress_reporter
from certbound.pipeline._resolve import resolve_model_name
from certbound.pipeline._spectrum import enclose_theory_matrices, records_digest, scaled_enclosure, weights_digest

__all__ = ["BoundSettings", "Number", "float_reading", "parse_count", "parse_number", "model_spectra",
           "model_spectra_of", "spectra_from_report", "spec_from_layout", "certified_bound"]

#: Sample sizes are accepted below 10^MAX_COUNT_DIGITS (n ≤ 1e99). The bound is
#: certified in Arb, but its float search over p and α uses binary64 (√n, ln n).
MAX_COUNT_DIGITS = 100

#: Decimal exponents beyond ±MAX_DECIMAL_EXPONENT are refused before any exact
#: arithmetic: Fraction("1e999999999") alone would take minutes and gigabytes.
MAX_DECIMAL_EXPONENT = 10_000
_EXPONENT = re.compile(r"[eE]([+-]?[0-9]+)$")


def _refuse_huge_literal(text: str, what: str) -> None:
    what = option_name(what)
    if len(text) > MAX_DECIMAL_EXPONENT:
        raise OptionError(f"{what}: a number of {len(text)} characters is out of range")
    m = _EXPONENT.search(text)
    if m and abs(int(m.group(1))) > MAX_DECIMAL_EXPONENT:
        raise OptionError(f"{what}: {text!r} is out of range: the decimal exponent must lie within "
                         f"±{MAX_DECIMAL_EXPONENT}")


#: An exact number as the bound options accept it (see the module docstring).
Number = Union[str, int, float, Fraction]


def parse_count(text: Any, what: str = "n") -> int:
    """A positive integer from ``"1000000"``, ``"1e6"`` or ``"10**6"`` (exactly), or an int.

    Parameters
    ----------
    text : str or int
        The count as written (never read through a binary float).
    what : str
        The option's name in error messages (an identifier is written ```what```,
        see :func:`certbound._errors.option_name`).

    Returns
    -------
    int
        The count (≤ 10⁹⁹).

    Examples
    --------
    >>> parse_count("1e6"), parse_count("10**6"), parse_count(1000)
    (1000000, 1000000, 1000)
    >>> parse_count("1.5")
    Traceback (most recent call last):
    ...
    certbound.OptionError: `n`: '1.5' is not a positive integer
    >>> parse_count("1e400", "--n")
    Traceback (most recent call last):
    ...
    certbound.OptionError: --n: '1e400' is out of range: at most 1e99 (the bound's float search works in binary64)
    """
    raw_what, what = what, option_name(what)
    if isinstance(text, bool):
        raise OptionError(f"{what}: {text!r} is not a positive integer")
    too_large = OptionError(f"{what}: {text!r} is out of range: at most 1e{MAX_COUNT_DIGITS - 1} "
                           "(the bound's float search works in binary64)")
    if isinstance(text, (int, Fraction)) or (isinstance(text, float) and math.isfinite(text)):
        q = Fraction(text)
    else:
        t = str(text).strip().replace("_", "")
        _refuse_huge_literal(t, raw_what)
        # Refuse astronomically large counts from the text, before building them exactly.
        m = re.fullmatch(r"([0-9.]+)[eE]\+?([0-9]+)", t)
        if m and int(m.group(2)) > MAX_COUNT_DIGITS + len(m.group(1)):
            raise too_large
        try:
            if "**" in t:
                b, e = (int(v) for v in t.split("**"))
                if b > 1 and e * math.log10(b) > MAX_COUNT_DIGITS:
                    raise too_large
                q = Fraction(b) ** e
            else:
                q = Fraction(t)
        except (ValueError, ZeroDivisionError) as exc:
            if exc is too_large:
                raise
            raise OptionError(f"{what}: {text!r} is not a number") from None
    if q.denominator != 1 or q < 1:
        raise OptionError(f"{what}: {text!r} is not a positive integer")
    if q >= 10**MAX_COUNT_DIGITS:
        raise too_large
    return int(q)


def parse_number(value: Any, what: str) -> Fraction | float:
    """An exact number: a float when it is one (dyadic), else a Fraction.

    Strings are read as exact decimals or ratios, never through a binary float;
    a float argument is the binary64 number it is.

    Parameters
    ----------
    value : str, int, float or Fraction
        The number as given.
    what : str
        The option's name in error messages (an identifier is written ```what```,
        see :func:`certbound._errors.option_name`).

    Returns
    -------
    float or Fraction
        A float when the value is exactly a binary64 number, else the exact Fraction.

    Examples
    --------
    >>> parse_number("0.25", "delta"), parse_number("0.01", "delta"), parse_number(Fraction(1, 3), "x")
    (0.25, Fraction(1, 100), Fraction(1, 3))
    >>> parse_number("0.0.1", "delta")
    Traceback (most recent call last):
    ...
    certbound.OptionError: `delta`: '0.0.1' is not a number
    """
    raw_what, what = what, option_name(what)
    if isinstance(value, bool):
        raise OptionError(f"{what}: {value!r} is not a number")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise OptionError(f"{what}: {value!r} is not a finite number")
        return value
    if isinstance(value, (int, Fraction)):
        q = Fraction(value)
    else:
        text = str(value).strip()
        _refuse_huge_literal(text, raw_what)
        try:
            q = Fraction(text)
        except (ValueError, ZeroDivisionError):
            raise OptionError(f"{what}: {value!r} is not a number") from None
    # dyadic values stay exact floats; others stay exact Fractions (turned into balls)
    return float(q) if Fraction(float(q)) == q else q


def float_reading(x: float, *, upper: bool) -> Fraction | float:
    """A float argument read so that the bound holds under both readings of it.

    ``0.01`` in Python source is the binary64 number 0.01000000000000000020…,
    while the writer meant the decimal 1/100. For an upper constant (B_ℒ, L_ℒ,
    C_w, L_φ, c_sm) the larger reading is used, for δ the smaller: a bound
    valid at the larger constants and the smaller δ is valid at either
    reading too (``proofs/pipeline.md`` §1). So ``delta=0.01`` gives the
    bound of ``delta="0.01"`` (and of ``certbound bound --delta 0.01``).

    Parameters
    ----------
    x : float
        The argument as given.
    upper : bool
        True for a constant the bound increases with (take the larger
        reading), False for δ (the smaller).

    Returns
    -------
    Fraction or float
        The chosen reading: the float itself when it is exactly that value,
        else the exact decimal fraction.

    Examples
    --------
    >>> float_reading(0.01, upper=False), float_reading(0.1, upper=True) == 0.1
    (Fraction(1, 100), True)
    """
    a, b = Fraction(x), Fraction(repr(x))
    q = max(a, b) if upper else min(a, b)
    return float(q) if Fraction(float(q)) == q else q



_parse_number = parse_number


@dataclass(frozen=True)
class BoundSettings:
    """Options of the certified bound (the flags of ``certbound bound``), checked on construction.

    Every field has the CLI's default; ``None`` means "from the model's config
    (certbound-pi), else the documented default".

    Parameters
    ----------
    seq_len : int, optional
        Tokens per input T (default: ``max_position_embeddings`` of the config, else 512).
    loss_bound, loss_lipschitz, readout_norm : exact number, optional
        B_ℒ, L_ℒ and the a-priori readout norm C_w (default: the certbound-pi config's, else 1).
    fixed_readout : bool
        The readout is fixed (not learned), so it is not covered.
    softmax_lip : exact number, optional
        c_sm (1 proved, the default; 2 reproduces the paper).
    act_lip : exact number, optional
        Activation Lipschitz constant (default from the config's activation).
    residual : bool
        Π-form residual connections (spec §1.3).
    logit_scale : bool
        Keep the 1/√d_h logit scale in QK (``False`` drops it, as the authors' proxies do).
    mode : {"posthoc", "fixed"}
        Theorem 2 (default) or Theorem 1 with ``constraints``.
    constraints : str, optional
        JSON configuration file for ``mode="fixed"``.
    spectra : str, optional
        A ``certbound spectrum --json`` report to reuse instead of certifying again
        (checked to be of the same weights).
    spectrum_mode : {"fast", "tight", "arb", "gram", "auto"}
        Certificate mode of the singular-value kernel (:data:`certbound.pipeline.SPECTRUM_MODES`;
        default ``"auto"``).
    partition_ratio : float
        Ratio (> 1) of the geometric Riemann partition.
    p_grid_m : int, optional
        Index grid resolution m (default ⌈L + ln N⌉).
    loss : {"given", "ramp"}
        ``"given"``: a loss with the constants ``loss_bound``/``loss_lipschitz``;
        ``"ramp"``: the ramp loss with margin ``margin`` (B_ℒ = 1, L_ℒ = 1/γ,
        ``proofs/theory-theorems.md`` §T3), fixed a priori.
    margin : exact number, optional
        The ramp-loss margin γ > 0 (required with ``loss="ramp"``).

    Examples
    --------
    >>> BoundSettings(residual=True, loss_bound="0.5").loss_bound
    '0.5'
    >>> BoundSettings(mode="fixed")
    Traceback (most recent call last):
    ...
    certbound.OptionError: `mode` 'fixed' needs `constraints` (a JSON file: the a-priori configuration)
    """

    seq_len: int | None = None
    loss_bound: Number | None = None
    loss_lipschitz: Number | None = None
    readout_norm: Number | None = None
    fixed_readout: bool = False
    softmax_lip: Number | None = None
    act_lip: Number | None = None
    residual: bool = False
    logit_scale: bool = True
    mode: str = "posthoc"
    constraints: str | None = None
    spectra: str | None = None
    spectrum_mode: str = DEFAULT_SPECTRUM_MODE
    partition_ratio: float = 1.25
    p_grid_m: int | None = None
    loss: str = "given"
    margin: Number | None = None

    def __post_init__(self) -> None:
        if self.loss not in ("given", "ramp"):
            raise OptionError(f"`loss` must be 'given' or 'ramp', not {self.loss!r}")
        if self.loss == "ramp":
            if self.margin is None:
                raise OptionError("`margin` (the a-priori margin γ > 0) is required when `loss` is 'ramp'")
            if self.loss_bound is not None or self.loss_lipschitz is not None:
                raise OptionError("`loss` 'ramp' fixes B_L = 1 and L_L = 1/γ: do not give `loss_bound` "
                                  "or `loss_lipschitz`")
            if not parse_number(self.margin, "margin") > 0:
                raise OptionError(f"`margin` must be > 0, not {self.margin!r}")
        elif self.margin is not None:
            raise OptionError("`margin` is only used when `loss` is 'ramp'")
        if self.mode not in ("posthoc", "fixed"):
            raise OptionError(f"`mode` must be 'posthoc' or 'fixed', not {self.mode!r}")
        if self.mode == "fixed" and not self.constraints:
            raise OptionError("`mode` 'fixed' needs `constraints` (a JSON file: the a-priori configuration)")
        if self.mode != "fixed" and self.constraints:
            # silently computing Theorem 2 instead of the Theorem 1 the user asked for would mislead
            raise OptionError("`constraints` is only used when `mode` is 'fixed' (Theorem 1); the post hoc "
                              "bound chooses its configuration itself")
        check_spectrum_mode(self.spectrum_mode, "spectrum_mode")
        if isinstance(self.partition_ratio, bool) or not isinstance(self.partition_ratio, (int, float)) \
                or not 1 < self.partition_ratio < math.inf:
            raise OptionError(f"`partition_ratio`: {self.partition_ratio!r} is not a finite number > 1")
        for name in ("seq_len", "p_grid_m"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                raise OptionError(f"`{name}` must be an integer, not {v!r}")
        if self.seq_len is not None and self.seq_len < 1:
            raise OptionError("`seq_len` must be ≥ 1")
        if self.p_grid_m is not None and self.p_grid_m < 1:
            raise OptionError("`p_grid_m` must be ≥ 1")
        for name in ("loss_bound", "loss_lipschitz", "readout_norm", "softmax_lip", "act_lip"):
            v = getattr(self, name)
            if v is not None:
                parse_number(v, name)  # refuse what is not a number now

    @classmethod
    def from_options(cls, **options: Any) -> "BoundSettings":
        """Settings from keyword options; an unknown name is an error naming the known ones.

        Parameters
        ----------
        **options
            :class:`BoundSettings` fields by name.

        Returns
        -------
        BoundSettings
            The checked settings.

        Examples
        --------
        >>> BoundSettings.from_options(seqlen=3)
        Traceback (most recent call last):
        ...
        ValueError: the bound has no option 'seqlen' (options: seq_len, loss_bound, loss_lipschitz, readout_norm, fixed_readout, softmax_lip, act_lip, residual, logit_scale, mode, constraints, spectra, spectrum_mode, partition_ratio, p_grid_m, loss, margin)
        """
        names = [f.name for f in fields(cls)]
        for k in options:
            if k not in names:
                raise ValueError(f"the bound has no option {k!r} (options: {', '.join(names)})")
        return cls(**options)


# ---------------------------------------------------------------------------
# model → spectra


def model_spectra(model: str, *, scale_logits: bool = True, spectrum_mode: str = DEFAULT_SPECTRUM_MODE,
                  config: str | None = None, mapping: str | None = None,
                  progress: ProgressSpec = None, mode: str | None = None) -> tuple[dict, Any, dict]:
    """Certified enclosures of every theory matrix of a checkpoint, keyed ``(layer, head, type)``.

    Per-head ``QK``/``VO`` through the product path (never formed, rank ≤ d_h
    certified); the logit scale ``1/√d_h`` applied as an Arb factor when it
    was not folded exactly.

    Parameters
    ----------
    model : str
        A checkpoint directory or weights file, or a packaged checkpoint name.
    scale_logits : bool
        Include the attention logit scale in ``QK`` (as the bound needs).
    spectrum_mode : {"fast", "tight", "arb", "gram", "auto"}
        Certificate mode of the singular-value kernel (:data:`certbound.pipeline.SPECTRUM_MODES`).
    config, mapping : str, optional
        A ``config.json`` to use instead of the checkpoint's, and a JSON tensor-name mapping
        for an unsupported architecture (as :func:`certbound.checkpoints.open_checkpoint`).
    progress : None, bool, "auto" or callable, optional
        See :mod:`certbound.pipeline._progress`.
    mode : str, optional
        Deprecated name of ``spectrum_mode`` (warns).

    Returns
    -------
    tuple
        ``(spectra, layout, config)``: the enclosures (a learned readout's under
        the key ``"readout"``), the checkpoint layout and its config dict.
    """
    spectrum_mode = spectrum_mode_keyword(spectrum_mode, mode)  # before the model is opened
    path = resolve_model_name(model)
    ck, layout = open_checkpoint(path, config=config, mapping=mapping)
    try:
        spectra = model_spectra_of(ck, layout, path, scale_logits=scale_logits, spectrum_mode=spectrum_mode,
                                   progress=progress)
        cfg = dict(ck.config or {})
    finally:
        ck.close()
    return spectra, layout, cfg


def _single_threaded_iter(it: Any) -> Any:
    """Iterate with one BLAS thread while the producer works (not while the consumer does)."""
    while True:
        with single_threaded():
            try:
                x = next(it)
            except StopIteration:
                return
        yield x


def model_spectra_of(ck: Any, layout: Any, path: str, *, scale_logits: bool = True,
                     spectrum_mode: str = DEFAULT_SPECTRUM_MODE, progress: ProgressSpec = None) -> dict:
    """:func:`model_spectra` of an opened checkpoint and its layout (the spectra dict only; ``ck`` stays open).

    Parameters
    ----------
    ck : certbound.checkpoints.Checkpoint
        The opened checkpoint (not closed here).
    layout : certbound.checkpoints.ModelLayout
        Its layout.
    path : str
        The checkpoint's path, for messages.
    scale_logits : bool
        Include the attention logit scale in ``QK`` (as the bound needs).
    spectrum_mode : {"fast", "tight", "arb", "gram", "auto"}
        Certificate mode of the singular-value kernel (:data:`certbound.pipeline.SPECTRUM_MODES`).
    progress : None, bool, "auto" or callable, optional
        See :mod:`certbound.pipeline._progress`.

    Returns
    -------
    dict
        The enclosures keyed ``(layer, head, type)`` (``head`` None for FFN matrices), a learned
        readout's under ``"readout"``.

    Raises
    ------
    ValueError
        If a certificate failed (no bound can be given from a trivial enclosure).

    Examples
    --------
    >>> from certbound.checkpoints import open_checkpoint
    >>> from certbound.models import demo_checkpoint_path
    >>> ck, layout = open_checkpoint(demo_checkpoint_path())
    >>> sorted(str(k) for k in model_spectra_of(ck, layout, "demo", spectrum_mode="fast"))[:2]
    ["(0, 0, 'QK')", "(0, 0, 'VO')"]
    >>> ck.close()
    """
    spectra: dict = {}
    types = tuple(getattr(layout, "matrix_types", ("QK", "VO", "M_in", "M_out")))
    if getattr(layout, "has_readout", False):
        types = types + ("readout",)
    scale_logits = scale_logits and getattr(layout, "attention_logit_scale", True)
    total = layout.num_layers * (2 * layout.num_heads + len(types) - 2)
    prog = progress_reporter(progress, total)
    try:
        # Heads of a layer certified as one batch (enclose_theory_matrices), one BLAS thread for
        # the small products (certbound._blas; the kernel raises it for big dense SVDs).
        matrices = enclose_theory_matrices(
            theory_matrices(ck, layout=layout, types=types, scale_logits=scale_logits), spectrum_mode,
            skip_shared=True)
        for m, enc, _, _ in _single_threaded_iter(matrices):
            if getattr(m, "same_as_layer", None) is not None:  # a shared layer (ALBERT): certified once
                spectra[(m.layer, m.head if m.type in ("QK", "VO") else None, m.type)] = spectra[
                    (m.same_as_layer, m.head if m.type in ("QK", "VO") else None, m.type)]
                prog.step(m.label)
                continue
            if m.logit_scale_d != 1:
                with working_precision(DEFAULT_PREC):
                    enc = scaled_enclosure(enc, m.scale())
            if not enc.certified:
                raise ValueError(f"{path}: {m.label}: the singular-value certificate failed; no bound can be given")
            if m.type == "readout":
                spectra["readout"] = enc
                continue
            head = m.head if m.type in ("QK", "VO") else None
            spectra[(m.layer, head, m.type)] = enc
            prog.step(m.label)
    finally:
        prog.close()
    return spectra


def spectra_from_report(path: str, *, scale_logits: bool) -> tuple[dict, dict]:
    """Spectra from a ``certbound spectrum --json`` report (σ upper ends exact from the ``exact`` fields).

    Parameters
    ----------
    path : str
        The report file.
    scale_logits : bool
        Whether the bound needs QK with the logit scale 1/√d_h (applied in Arb when the
        report was written without it, ``scale_logits=False``).

    Returns
    -------
    tuple
        ``(spectra, config)``: enclosures keyed ``(layer, head, type)`` (a learned readout's under
        ``"readout"``) and the report's config dict.

    Raises
    ------
    ValueError
        For a file that is not such a report, a failed certificate in it, or a logit-scale mismatch.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            rep = json.load(fh)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not a JSON spectrum report ({exc})") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not a JSON spectrum report (not UTF-8 text: {exc.reason} at byte {exc.start})") \
            from None
    try:
        scaled = bool(rep["options"]["scale_logits"])
        recs = rep["matrices"]
        cfg = rep.get("config", {})
        layers = rep["options"].get("layers")
    except (KeyError, TypeError, AttributeError):
        raise ValueError(f"{path}: not a certbound spectrum report (no options/matrices)") from None
    # A report of some layers (`spectrum --layers`) cannot give a bound, which needs every layer: say so here, not
    # as a missing matrix later.
    num_layers = cfg.get("num_layers") if isinstance(cfg, dict) else None
    if layers is not None and (not isinstance(num_layers, int) or not isinstance(layers, list)
                               or sorted(layers, key=str) != sorted(range(num_layers), key=str)):
        # Worded for both callers (test_option_errors_partial_report.py): the library's `layers` and the CLI's
        # `spectrum --layers` made it, and `bound` itself has neither, so the message names no option.
        raise ValueError(f"{path}: the report covers layers {layers} only (the spectra of some layers); the bound "
                         "needs every layer: give a spectrum report of every layer (certified with no layer "
                         "selection)")
    if scaled and not scale_logits:
        raise OptionError(f"{path}: the report's spectra include the logit scale 1/sqrt(d_h) (`scale_logits`), "
                          "which this bound leaves out (`logit_scale`); give spectra computed without it")
    extra = None
    # certbound-pi reports: the architecture has no 1/sqrt(d_h), so there is nothing to apply
    if scale_logits and not scaled and cfg.get("attention_logit_scale", True):
        dh = int(cfg.get("head_dim", 0))
        if dh < 1:
            raise ValueError(f"{path}: cannot apply the logit scale: head_dim missing from the report's config")
        with working_precision(DEFAULT_PREC):
            extra = 1 / arb(dh).sqrt()
    if not isinstance(recs, list):
        raise ValueError(f"{path}: not a certbound spectrum report (its \"matrices\" is not a list of records)")
    spectra = {}
    for i, r in enumerate(recs):
        if not isinstance(r, dict):
            raise ValueError(f"{path}: matrix record {i} is not a JSON object; not a report certbound spectrum wrote")
        if r.get("type") not in ("QK", "VO", "M", "M_in", "M_out", "readout"):
            continue
        if not r.get("certified", False):
            raise ValueError(f"{path}: layer {r.get('layer')} {r.get('type')}: certificate failed in the report")
        if "sigma" not in r:
            raise ValueError(f"{path}: matrix record {i} ({_record_label(r)}) has no \"sigma\" list: a report "
                             "written without its σ lists cannot give a bound")
        try:
            sig = [ball_from_json(q) for q in r["sigma"]]
            if extra is not None and r["type"] == "QK":
                sig = [s * extra for s in sig]
            up = np.array([float_upper(s) for s in sig], dtype=np.float64)
            head = r["head"] if r["type"] in ("QK", "VO") else None
            key = "readout" if r["type"] == "readout" else (int(r["layer"]), head, r["type"])
            rank = SimpleNamespace(lower=int(r["rank"]["lower"]), upper=int(r["rank"]["upper"]))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            # A hand-made or damaged file: say which record and what, not a bare KeyError halfway through.
            what = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
            raise ValueError(f"{path}: matrix record {i} ({_record_label(r)}) is malformed ({what}); a bound needs "
                             "the σ and rank records as certbound spectrum writes them") from None
        spectra[key] = SimpleNamespace(sigma=tuple(sig), upper=up, certified=True, rank=rank)
    return spectra, cfg


def _record_label(r: dict[str, Any]) -> str:
    """``layer L head H TYPE`` of a report record, for messages (whatever its fields hold)."""
    head = r.get("head")
    return f"layer {r.get('layer')}" + ("" if head is None else f" head {head}") + f" {r.get('type')}"


def _check_report_matches(rep_cfg: Any, layout: Any, report_path: str, model_path: str) -> None:
    """Refuse a spectrum report whose recorded architecture differs from the model's.

    The bound is printed for ``model_path``; spectra of another architecture (e.g. a
    deeper model, whose first layers would silently be used) would make it a bound
    for other weights. Same-shape checkpoints cannot be told apart here (the report
    stores no weight digest): reusing a report is the user's assertion that it is of
    this model.
    """
    if not isinstance(rep_cfg, dict):
        raise ValueError(f"{report_path}: the report has no config block to check against {model_path}")
    mine = layout.summary()
    for key in ("architecture", "num_layers", "hidden_size", "num_heads", "head_dim", "intermediate_size",
                "ffn_kind"):
        if key in rep_cfg and key in mine and rep_cfg[key] != mine[key]:
            raise ValueError(f"{report_path}: the spectrum report is of another model ({key} = {rep_cfg[key]!r}, "
                             f"but {model_path} has {mine[key]!r})")


def _check_report_digest(report_path: str, ck: Any, layout: Any, model_path: str) -> None:
    """Refuse a spectrum report that was not computed from this model's exact weights.

    The report stores a sha256 of every certified matrix (identity and exact
    float64 values, ``spectrum.weights_digest``); it is recomputed here from the
    model with the report's own options, so a report of another checkpoint —
    even one of the same shape — cannot be reused.
    """
    with open(report_path, encoding="utf-8") as fh:
        rep = json.load(fh)
    stored = rep.get("weights_sha256")
    if not stored:
        raise ValueError(f"{report_path}: the spectrum report has no weights digest (made by an older certbound?); "
                         "compute it again with this certbound (the spectrum command's JSON, or "
                         "Model.spectra().to_json())")
    opts = rep.get("options", {})
    mine = weights_digest(ck, layout, raw=bool(opts.get("raw", False)),
                          scale_logits=bool(opts.get("scale_logits", False)), layers=opts.get("layers"))
    if mine != stored:
        raise ValueError(f"{report_path}: the spectrum report was computed from other weights than {model_path} "
                         "(weights digest differs)")
    # The σ and rank records are what the bound uses: they must be the ones `certbound spectrum` wrote.
    stored_records = rep.get("records_sha256")
    if not stored_records:
        raise ValueError(f"{report_path}: the spectrum report has no records digest (made by an older certbound?); "
                         "compute it again with this certbound (the spectrum command's JSON, or "
                         "Model.spectra().to_json())")
    if records_digest(stored, rep.get("matrices", [])) != stored_records:
        raise ValueError(f"{report_path}: the report's singular-value or rank records were changed after "
                         "`certbound spectrum` wrote them (records digest differs); a bound from them would not "
                         "be certified")


def _activation(cfg: dict, act_lip: Any, layout: Any = None) -> tuple[str, Any]:
    # the architecture's own activation key (DistilBERT `activation`, T5 `dense_act_fn`, ...), read by the loader
    stated = getattr(layout, "activation", None) or cfg.get("hidden_act", cfg.get("activation_function"))
    if act_lip is not None:
        return str(stated if stated is not None else "unstated").lower(), _parse_number(act_lip, "act_lip")
    if stated is None:
        # (A3) needs the constants of the activation the weights are used with; an unstated one
        # (e.g. a config inferred from an ONNX graph) must not silently become the exact GELU.
        raise OptionError(
            "the model's config states no activation (hidden_act / activation_function), so no certified "
            "Lipschitz constant can be chosen: give `act_lip`, a proven upper bound (φ(0) = 0 and "
            "‖φ(z)‖ ≤ ‖z‖ are assumed; exact GELU: 1.1289042, tanh GELU: 1.128994, ReLU: 1), or a `config` "
            "file"
        )
    act = str(stated).lower()
    if act in ("gelu", "relu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast"):
        return act, None
    raise OptionError(
        f"activation {act!r} of the config has no built-in certified Lipschitz constant (exact 'gelu' and 'relu' "
        "do); give `act_lip`, a proven upper bound (φ(0) = 0 and ‖φ(z)‖ ≤ ‖z‖ are assumed)"
    )




def spec_from_layout(layout: Any, cfg: dict, settings: BoundSettings | None = None) -> TransformerSpec:
    """The :class:`~certbound.bounds.TransformerSpec` of a checkpoint layout and the bound settings.

    Parameters
    ----------
    layout : certbound.checkpoints.ModelLayout
        The checkpoint's layout (a certbound-pi model brings its a-priori constants in
        ``layout.theory_config``; any other model gives the Π-surrogate of its architecture).
    cfg : dict
        The model config (activation, sequence length).
    settings : BoundSettings, optional
        The bound's options (default: the CLI's defaults).

    Returns
    -------
    certbound.bounds.TransformerSpec
        Sizes, variant, residual, T and the constants c_sm and L_φ the theorems use.

    Examples
    --------
    >>> from certbound.checkpoints import open_checkpoint
    >>> from certbound.models import demo_checkpoint_path
    >>> ck, layout = open_checkpoint(demo_checkpoint_path())
    >>> spec = spec_from_layout(layout, dict(ck.config)); ck.close()
    >>> spec.n_layers, spec.ffn_kind, spec.seq_len
    (1, 'two', 41)
    """
    s = settings if settings is not None else BoundSettings()
    tc = getattr(layout, "theory_config", None)
    if tc:  # a certbound-pi model: the a-priori constants come from its config
        _check_pi_overrides(tc, s)
        ffn = str(tc.get("ffn_kind", "two"))
        lip = _parse_number(s.act_lip, "act_lip") if s.act_lip is not None else tc.get("act_lip")
        return TransformerSpec(
            n_layers=int(layout.num_layers), n_heads=int(layout.num_heads), d_model=int(layout.hidden_size),
            seq_len=int(s.seq_len or tc["seq_len"]), ffn_kind=ffn,
            d_ff=int(tc["d_ff"]) if ffn == "two" and tc.get("d_ff") else None, d_head=int(layout.head_dim),
            residual=bool(s.residual or tc.get("residual", False)),
            softmax_lip=_parse_number(s.softmax_lip, "softmax_lip") if s.softmax_lip is not None
            else tc.get("softmax_lip", 1),
            activation=str(tc.get("activation", "relu")), act_lip=lip,
            act_norm_at_zero=tc.get("act_norm_at_zero"), act_growth=tc.get("act_growth"),
            readout_learned=not s.fixed_readout,
        )
    act, lip = _activation(cfg, s.act_lip, layout)
    # the architecture's own context-length key (GPT-2 `n_positions`, ...), read by the loader
    seq = s.seq_len if s.seq_len else int(getattr(layout, "max_positions", None)
                                          or cfg.get("max_position_embeddings", 512) or 512)
    if seq < 1:
        raise OptionError("`seq_len` must be ≥ 1")
    return TransformerSpec(
        n_layers=int(layout.num_layers), n_heads=int(layout.num_heads), d_model=int(layout.hidden_size),
        seq_len=int(seq), ffn_kind=str(getattr(layout, "ffn_kind", "two")), d_ff=int(layout.intermediate_size),
        d_head=int(layout.head_dim), residual=bool(s.residual),
        softmax_lip=_parse_number(s.softmax_lip, "softmax_lip") if s.softmax_lip is not None else 1,
        activation=act, act_lip=lip,
        act_norm_at_zero=0 if lip is not None else None, act_growth=1 if lip is not None else None,
        readout_learned=not s.fixed_readout,
    )


def _check_pi_overrides(tc: dict, s: BoundSettings) -> None:
    """Refuse options that would make a certbound-pi bound claim more than its config guarantees.

    The config states facts about the trained model (its loss range and
    Lipschitz constant, activation, residual flag, learned readout); a
    *larger* B_ℒ, L_ℒ, L_φ or c_sm keeps the bound valid, a smaller one or a
    different architecture does not.
    """
    if s.residual and not tc.get("residual", False):
        raise OptionError("`residual`: this certbound-pi model has no residual connections (config residual=false)")
    if s.fixed_readout:
        raise OptionError("`fixed_readout`: a certbound-pi model's readout (readout.w) is learned and must be covered")
    if s.seq_len is not None and tc.get("seq_len") is not None and s.seq_len < int(tc["seq_len"]):
        # T enters Lemmas A2a/A2b (nT rows): a smaller T certifies only inputs shorter than the model's.
        raise OptionError(f"`seq_len` {s.seq_len} is below the certbound-pi config's seq_len = {tc['seq_len']}: "
                         "the bound would hold only for shorter inputs than this model reads")
    for opt, key in (("loss_bound", "loss_bound"), ("loss_lipschitz", "loss_lip"), ("act_lip", "act_lip"),
                     ("softmax_lip", "softmax_lip")):
        given = getattr(s, opt, None)
        if given is not None and tc.get(key) is not None:
            if Fraction(_parse_number(given, opt)) < Fraction(tc[key]):
                raise OptionError(f"`{opt}` {given} is below the certbound-pi config's {key} = {tc[key]}: "
                                 "the bound would not hold for this model")


def _constant(arg: str | None, tc: dict | None, key: str, what: str) -> Any:
    """The option's value if given, else the certbound-pi config's a-priori value, else 1."""
    if arg is not None:
        return _parse_number(arg, what)
    if tc and tc.get(key) is not None:
        v = tc[key]
        # A float in the config is the exact binary64 number the model uses (e.g. the loss clip):
        # keep it. str() would give the shortest decimal, which may lie *below* it (0.1 → 1/10).
        if isinstance(v, float) and not isinstance(v, bool):
            if not math.isfinite(v):
                raise OptionError(f"{option_name(what)}: the certbound-pi config's {key} = {v!r} is not finite")
            return v
        return v if isinstance(v, (int, Fraction)) else _parse_number(str(v), what)
    return 1


def _load_constraints(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: invalid JSON ({exc})") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: invalid JSON (not UTF-8 text: {exc.reason} at byte {exc.start})") from None
    if isinstance(data, dict):
        data = data.get("matrices", data.get("constraints"))
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of {{layer, head, type, p, schatten_radius, spectral_radius}}")
    out: dict[tuple[int, Any, str], MatrixConstraint] = {}
    for i, r in enumerate(data):
        where = f"{path}: entry {i}"
        if not isinstance(r, dict):
            raise ValueError(f"{where}: expected an object {{layer, head, type, p, schatten_radius, spectral_radius}}, "
                             f"got {type(r).__name__} {r!r:.60}")
        try:
            if r.get("type") == "readout":
                continue  # the readout norm is the readout_norm option, not a matrix constraint
            head = r.get("head") if r["type"] in ("QK", "VO") else None
            p_text = str(r.get("p_exact", r["p"]))
            try:
                p = Fraction(p_text)
            except (ValueError, ZeroDivisionError):
                raise ValueError(f"p: {p_text!r} is not an exact number (e.g. 1, 0.5, \"1/3\")") from None
            key = (int(r["layer"]), head, r["type"])
            value = MatrixConstraint(
                p, _constraint_number(r["schatten_radius"], f"{where}: schatten_radius"),
                _constraint_number(r["spectral_radius"], f"{where}: spectral_radius"))
        except KeyError as exc:
            raise ValueError(f"{where}: missing key {exc}") from None
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc}") from None
        if key in out:
            raise ValueError(f"{where}: a second constraint for layer {key[0]}"
                             + (f" head {key[1]}" if key[1] is not None else "") + f" {key[2]} (one per matrix)")
        out[key] = value
    return out


def _constraint_number(value: Any, where: str) -> Fraction | float:
    """A constraint value: a number (string or JSON number), or a certified quantity of ``bound --json``.

    A certified quantity ``{"lower", "upper", "exact": {...}}`` stands for its exact upper end, the
    smallest value the constraint can take and still hold for those weights.
    """
    if isinstance(value, dict):
        if "exact" not in value:
            raise ValueError(f"{where}: expected a number or a certified quantity with 'exact' end points")
        hi = upper_fraction(ball_from_json(value))
        if hi is None:
            raise ValueError(f"{where}: the certified quantity is unbounded")
        value = str(hi)
    return _parse_number(str(value), where)


# ---------------------------------------------------------------------------
# output



def _fixed_before_data(s: BoundSettings, spec: TransformerSpec, common: dict) -> dict:
    """The a-priori choices of this run (theory-theorems §6.5), as the output's assumptions state them."""
    out = {
        "seq_len": spec.seq_len,
        "loss_bound": str(common["loss_bound"]),
        "loss_lipschitz": str(common["loss_lipschitz"]),
        "readout_norm": str(common["readout_norm"]),
        "p_grid_m": s.p_grid_m if s.p_grid_m is not None else "default ceil(L + ln N)",
        "grids": "Schatten/spectral/readout peeling grid bases and steps (BoundOptions defaults)",
        "priors": "the light priors of theory-theorems §6.1b (BoundOptions default prior='light')",
        "delta": "the confidence parameter",
    }
    if s.mode == "fixed":
        out["constraints"] = f"{s.constraints} (mode fixed: every constraint value)"
    if s.loss == "ramp":
        out["ramp_margin"] = str(s.margin)
    out["network_class"] = {"residual": bool(spec.residual), "readout_learned": bool(spec.readout_learned),
                            "logit_scale": bool(s.logit_scale)}
    return out


def certified_bound(model: str, n: Any, delta: Any, settings: BoundSettings | None = None, *,
                    config: str | None = None, mapping: str | None = None,
                    progress: ProgressSpec = None) -> tuple[Any, str, Any, float]:
    """The certified bound that ``certbound bound`` prints, for a checkpoint path or packaged name.

    Soundness: ``proofs/theory-theorems.md`` §T1/§T2.

    Parameters
    ----------
    model : str
        A checkpoint directory or weights file, or a packaged checkpoint name.
    n : int or str
        The sample size, a positive integer (or a string such as ``"1e6"``).
    delta : str or Fraction
        The confidence parameter, an exact number in (0, 1) (a string such as
        ``"0.01"`` is read exactly).
    settings : BoundSettings, optional
        The options of ``certbound bound`` (default: its defaults).
    config, mapping : str, optional
        A ``config.json`` to use instead of the checkpoint's, and a JSON tensor-name mapping
        for an unsupported architecture (as :func:`certbound.checkpoints.open_checkpoint`).
    progress : None, bool, "auto" or callable, optional
        See :mod:`certbound.pipeline._progress`.

    Returns
    -------
    tuple
        ``(result, path, layout, seconds)``: the :mod:`certbound.bounds` result
        (Theorem 1 or 2), the resolved model path, its layout, and the seconds
        spent certifying spectra.
    """
    n = parse_count(n)
    delta_v = _parse_number(delta, "delta")
    if not 0 < delta_v < 1:
        raise OptionError(f"`delta` must lie in (0, 1), got {delta}")
    s = settings if settings is not None else BoundSettings()
    path = resolve_model_name(model)
    ck, layout = open_checkpoint(path, config=config, mapping=mapping)
    try:
        return certified_bound_of(ck, layout, path, n, delta_v, s, progress=progress)
    finally:
        ck.close()


def unused_weight_matrices(ck: Any, layout: Any) -> tuple[list[str], list[str]]:
    """Stored matrices (tensors with ≥ 2 axes) that the layout's theory matrices do not use.

    Returns ``(inside, outside)``: names inside a layer block of the layout
    (``…layer.<i>.…`` of any stack — an adapter, an extra projection, a layer
    the mapping does not know: the bounded network does not contain them) and
    names outside every layer block (embeddings, pooler, heads: dropped by the
    Π-surrogate by design). Issue 12 item 6: weights beyond what is certified
    are named, never silently ignored.

    Parameters
    ----------
    ck : certbound.checkpoints.Checkpoint
        The opened checkpoint.
    layout : certbound.checkpoints.ModelLayout
        Its layout.

    Returns
    -------
    tuple of (list of str, list of str)
        ``(inside, outside)`` tensor names.

    Examples
    --------
    >>> from certbound.checkpoints import open_checkpoint
    >>> from certbound.models import demo_checkpoint_path
    >>> ck, lay = open_checkpoint(str(demo_checkpoint_path()))
    >>> unused_weight_matrices(ck, lay)
    ([], [])
    >>> ck.close()
    """
    used: set[str] = set()
    blocks: set[str] = set()
    for layer in range(layout.num_layers):
        st, _ = layout.stack_of(layer)
        for role, template in st.templates.items():
            experts = range(st.num_experts) if st.num_experts and "{expert}" in template else [None]
            for e in experts:
                name = layout.tensor_name(role, layer, e)
                used.add(name.split("[")[0])  # "base[i]": a first-axis slice of a stacked tensor
            if "{layer}" in template:
                blocks.add(layout.prefix + template[: template.index("{layer}")])
    inside, outside = [], []
    for name in ck.names():
        if name in used or len(ck.shape(name)) < 2:
            continue  # certified, or a vector (bias, LayerNorm scale): dropped by the surrogate by design
        in_block = any(name.startswith(b) and re.match(r"\d+\.", name[len(b):]) for b in blocks)
        (inside if in_block else outside).append(name)
    return inside, outside


def certified_bound_of(ck: Any, layout: Any, path: str, n: int, delta: Fraction | float,
                       settings: BoundSettings, *, progress: ProgressSpec = None) -> tuple[Any, str, Any, float]:
    """:func:`certified_bound` of an opened checkpoint and its layout (``n``, ``delta`` already checked).

    Parameters
    ----------
    ck : certbound.checkpoints.Checkpoint
        The opened checkpoint (left open).
    layout : certbound.checkpoints.ModelLayout
        Its layout.
    path : str
        The checkpoint's path (named in the result and in messages).
    n : int
        The sample size (checked by the caller).
    delta : Fraction or float
        The confidence parameter in (0, 1), read exactly (checked by the caller).
    settings : BoundSettings
        The bound's options.
    progress : None, bool, "auto" or callable, optional
        See :mod:`certbound.pipeline._progress`.

    Returns
    -------
    tuple
        As :func:`certified_bound`: ``(result, path, layout, seconds spent on spectra)``.
    """
    s = settings
    # gated FFNs, experts, cross-attention: outside the theorems (proofs/architectures.md §4), refused up front
    coverage = require_theory_coverage(layout, path)
    unused_inside, unused_outside = unused_weight_matrices(ck, layout)
    if unused_inside:
        warnings.warn(f"{path}: {len(unused_inside)} stored matrices inside the layers are not part of the "
                      f"bounded network (the bound does not cover them): {', '.join(unused_inside[:8])}"
                      + (" …" if len(unused_inside) > 8 else ""), UserWarning, stacklevel=2)
    # a malformed constraints file is refused before any certificate is computed
    constraints = _load_constraints(s.constraints) if s.mode == "fixed" else None
    t0 = time.perf_counter()
    scale_logits = s.logit_scale
    cfg = dict(ck.config or {})
    if s.spectra:
        scale_logits = scale_logits and getattr(layout, "attention_logit_scale", True)
        spectra, rep_cfg = spectra_from_report(s.spectra, scale_logits=scale_logits)
        _check_report_matches(rep_cfg, layout, s.spectra, path)
        _check_report_digest(s.spectra, ck, layout, path)
        if getattr(layout, "has_readout", False) and "readout" not in spectra:
            # spectrum reports omit the readout: certify ‖w‖₂ from the checkpoint (one vector)
            for m in theory_matrices(ck, layout=layout, types=("readout",)):
                spectra["readout"] = enclose_singular_values(m.dense, mode=s.spectrum_mode)
    else:
        spectra = model_spectra_of(ck, layout, path, scale_logits=scale_logits, spectrum_mode=s.spectrum_mode,
                                   progress=progress)
    t_spec = time.perf_counter() - t0
    spec = spec_from_layout(layout, cfg, s)
    tc = getattr(layout, "theory_config", None)
    readout_enc = spectra.pop("readout", None)
    opts = BoundOptions(partition_ratio=s.partition_ratio, p_grid_m=s.p_grid_m)
    if s.loss == "ramp":
        # the analysed loss is the analyst's a-priori choice, not a fact of the training (theory-theorems §T3)
        loss_bound, loss_lipschitz = ramp_loss_constants(Fraction(_parse_number(s.margin, "margin")))
    else:
        loss_bound = _constant(s.loss_bound, tc, "loss_bound", "loss_bound")
        loss_lipschitz = _constant(s.loss_lipschitz, tc, "loss_lip", "loss_lipschitz")
    common = dict(readout_norm=_constant(s.readout_norm, tc, "readout_norm", "readout_norm"),
                  loss_bound=loss_bound, loss_lipschitz=loss_lipschitz, options=opts)
    if s.mode == "fixed":
        if readout_enc is not None and spec.readout_learned:
            cw = Fraction(common["readout_norm"])
            with working_precision(DEFAULT_PREC):
                # ‖w‖₂ ≤ C_w  ⇔  ‖w‖₂ · den ≤ num (exact integers, no rounding of C_w)
                if not bool(readout_enc.sigma[0] * cw.denominator <= arb(cw.numerator)):
                    raise OptionError(f"{path}: the certified readout norm ||w||_2 is not <= the a-priori "
                                      f"C_w = {common['readout_norm']} (`readout_norm`)")
        res = theorem1_fixed_bound(spec, constraints, n, delta, spectra=spectra, **common)
    else:
        if readout_enc is not None and spec.readout_learned:
            common["readout_spectrum"] = readout_enc  # certified ‖w‖₂, peeled on the readout grid
        res = theorem2_posthoc_bound(spec, spectra, n, delta, **common)
    name = os.path.basename(path.rstrip("/"))
    if tc:
        network = (f"{name} is a certbound-pi model: it IS the theorems' model class (variant {spec.variant}); "
                   "the a-priori constants come from its config.json")
    else:
        network = (f"Pi-surrogate of {name} ({layout.architecture}): "
                   "LayerNorm replaced by the row projection Pi; biases, embeddings, pooler/classifier and attention "
                   "masks (causal, padding: every token attends to every token) dropped; "
                   + ("Pi-form residuals" if s.residual else "residual connections dropped")
                   + "; NOT a bound for the original network")
    if s.loss == "ramp":
        res.assumptions["loss"] = (
            f"ramp loss min(1, max(0, 1 - y f(X)/gamma)), labels y in {{-1, +1}}, margin gamma = {s.margin} fixed "
            "a priori (theory-theorems §T3): B_L = 1, L_L = 1/gamma; it dominates the 0-1 loss, so with the same "
            "probability P(y f(X) <= 0) <= (training ramp loss) + bound")
    res.assumptions.update({
        "network": network,
        "spectra_source": (f"taken from the spectrum report {s.spectra} (written by `certbound spectrum`; its weights "
                           "digest and its records digest were checked against this model)" if s.spectra else
                           "certified from the checkpoint's weights in this run"),
        "fixed_before_data": _fixed_before_data(s, spec, common),
        "weights_not_in_the_network": {
            "inside_layers": unused_inside,
            "outside_layers": unused_outside,
            "note": "stored matrices the bounded network does not contain (vectors such as biases and LayerNorm "
                    "scales are dropped by the surrogate and not listed); inside_layers should be empty",
        },
        "choosing_among_runs": ("the fixed_before_data values must be chosen before seeing the sample: reporting the "
                                "best of several runs over them invalidates delta (it then needs a union bound "
                                "over the runs)"),
        "logit_scale_1_over_sqrt_d_head": scale_logits and getattr(layout, "attention_logit_scale", True),
        "seq_len_source": "given (seq_len)" if s.seq_len else ("certbound-pi config" if tc else
                                                        "config max_position_embeddings / n_positions "
                                                        "(default 512)"),
    })
    if coverage.surrogate_notes:
        res.assumptions["architecture_notes"] = "; ".join(coverage.surrogate_notes) + " (the surrogate omits these)"
    return res, path, layout, t_spec
