"""The demo pipeline: certified spectra → Theorem 2 bounds → certified 0-1 error → measurements → counterfactual n*.

For a certbound-pi checkpoint (default: the shipped one) this

1. encloses the singular values of every theory matrix with
   :mod:`certbound.enclose` (per-head A = W_Q W_Kᵀ and V = W_V W_O through the
   product path, never formed; ``M``/``M_in``/``M_out`` and the readout dense);
2. evaluates the certified post hoc bound of Theorem 2
   (:func:`certbound.bounds.theorem2_posthoc_bound`, ``proofs/theory-theorems.md``)
   at the task's training-set size n and δ (default 0.01); the readout norm is
   peeled on its a-priori grid (mode (ii)), so the bound does not rely on the
   training having respected C_w;
3. recomputes the training set from the recorded seed and stream (in chunks)
   and measures train and test risks (:func:`certbound.models.demo.measure_gap`;
   test samples are fresh, stream 2); for one-block models the training
   margins come with proved lower ends (``proofs/demo-task.md`` §2);
4. when the checkpoint fixes a ramp margin γ (``error_bound`` in config.json,
   written by ``certbound train-demo`` before any data are drawn), evaluates
   Theorem 2 for the ramp loss (B_ℒ = 1, L_ℒ = 1/γ) at the same n and δ and
   certifies P(error) ≤ R̂_γ + gap (Corollary T3 of ``proofs/theory-theorems.md``,
   R̂_γ bounded by Lemma T3.1 from the certified margins);
5. evaluates the trivial input-counting bound at n (``proofs/demo-task.md`` §1);
6. searches the counterfactual sample size at which the certified loss-gap bound
   falls below B_ℒ *if these weights had come from n samples* (re-evaluated
   and certified at the reported n).

No torch is needed. For this model class the bound is a true certificate
(not a proxy): the network *is* the Π-Transformer of spec §1, the data rows
lie in the unit ball (A1), the loss is bounded and Lipschitz for every output
value (A2) and ReLU satisfies (A3) with L_φ = 1.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Optional

from flint import arb

from certbound._errors import OptionError
from certbound.ball import float_upper
from certbound.bounds import (
    TransformerSpec,
    empirical_ramp_loss_upper,
    ramp_loss_constants,
    theorem2_posthoc_bound,
    zero_one_error_bound,
)
from certbound.enclose import enclose_singular_values, enclose_singular_values_of_product
from certbound.models.checkpoint import demo_checkpoint_path, load_pi_checkpoint
from certbound.models.demo import MeasuredGap, measure_gap
from certbound.models.network import PiTransformer
from certbound.models.task import SparseMajorityTask
from certbound.pipeline._bound import float_reading, parse_number
from certbound.pipeline._modes import DEFAULT_SPECTRUM_MODE, check_spectrum_mode, spectrum_mode_keyword

__all__ = [
    "DEFAULT_DELTA",
    "DemoResult",
    "ErrorBound",
    "DemoPoint",
    "demo_point",
    "counterfactual_curve",
    "ramp_margin_of",
    "NonVacuity",
    "certified_statements",
    "enclose_model_spectra",
    "transformer_spec_of",
    "pi_model_bound",
    "nonvacuous_sample_size",
    "run_demo",
]

#: δ = 1/100 exactly: the float 0.01 is slightly *larger* than 1/100, so a bound evaluated at it
#: would hold with probability ≥ 1 − 0.0100000000000000002…, not the printed 0.99.
DEFAULT_DELTA = Fraction(1, 100)


def transformer_spec_of(net: PiTransformer) -> TransformerSpec:
    """The :class:`certbound.bounds.TransformerSpec` of a certbound-pi model (architecture + constants).

    Parameters
    ----------
    net : certbound.models.PiTransformer
        The theory-faithful network.

    Returns
    -------
    certbound.bounds.TransformerSpec
        Its sizes, variant, residual flag, T, c_sm and activation (readout learned).

    Examples
    --------
    >>> from certbound.models import demo_checkpoint_path
    >>> from certbound.models.checkpoint import load_pi_checkpoint
    >>> spec = transformer_spec_of(load_pi_checkpoint(demo_checkpoint_path())[0])
    >>> spec.n_layers, spec.readout_learned
    (1, True)
    """
    cfg = net.config
    return TransformerSpec(
        n_layers=cfg.n_layers, n_heads=cfg.n_heads, d_model=cfg.d_model, seq_len=cfg.seq_len,
        ffn_kind=cfg.ffn_kind, d_ff=cfg.d_ff, d_head=cfg.d_head, residual=cfg.residual,
        softmax_lip=cfg.softmax_lip, activation=cfg.activation, readout_learned=True,
    )


def enclose_model_spectra(net: PiTransformer, spectrum_mode: str = DEFAULT_SPECTRUM_MODE) -> tuple[dict, Any]:
    """Certified singular values of every theory matrix: ({(layer, head, type): enclosure}, readout enclosure).

    Per-head products go through ``enclose_singular_values_of_product`` (the
    product is never formed; σ_i = 0 exactly for i > d_h). ``spectrum_mode`` is the
    certificate mode (:data:`certbound.pipeline.SPECTRUM_MODES`) of every
    enclosure, products included; each enclosure records the certificate used.

    Parameters
    ----------
    net : PiTransformer
        The theory-faithful network whose weight matrices are certified.
    spectrum_mode : {"fast", "tight", "arb", "gram", "auto"}
        Certificate mode (:data:`certbound.pipeline.SPECTRUM_MODES`), default ``"auto"``.

    Returns
    -------
    tuple of (dict, SingularValueEnclosure)
        ``{(layer, head, type): enclosure}`` of the QK/VO products and FFN matrices
        (``head`` is None for FFN matrices), and the readout vector's enclosure.
    """
    mode = check_spectrum_mode(spectrum_mode, "spectrum_mode")
    spectra: dict = {}
    readout = None
    for m in net.theory_matrices():
        if m.kind == "readout":
            readout = enclose_singular_values(m.dense, mode=mode)
        elif m.dense is None:
            spectra[(m.layer, m.head, m.kind)] = enclose_singular_values_of_product(m.left, m.right, mode=mode)
        else:
            spectra[(m.layer, m.head, m.kind)] = enclose_singular_values(m.dense, mode=mode)
    return spectra, readout


def pi_model_bound(net: PiTransformer, spectra: dict, readout: Any, n: int, delta: Any = DEFAULT_DELTA,
                    options: Any = None):
    """Theorem 2 for the model at sample size n (a :class:`certbound.bounds.BoundResult`).

    The loss constants (B_ℒ, L_ℒ) and the architecture come from the config
    (fixed before training); the readout norm is certified and peeled.

    Parameters
    ----------
    net : certbound.models.PiTransformer
        The network (its config holds the a-priori constants).
    spectra : dict
        Certified enclosures keyed ``(layer, head, type)`` (:func:`enclose_model_spectra`).
    readout : SingularValueEnclosure
        The readout vector's enclosure (certified ‖w‖₂).
    n : int
        The sample size.
    delta : Fraction, str or float
        The confidence parameter in (0, 1).
    options : certbound.bounds.BoundOptions, optional
        Options of the Theorem 2 evaluation.

    Returns
    -------
    certbound.bounds.BoundResult
        The certified bound (its upper end) and its terms, as balls.
    """
    cfg = net.config
    return theorem2_posthoc_bound(
        transformer_spec_of(net), spectra, int(n), delta,
        readout_norm=cfg.readout_norm, readout_spectrum=readout,
        loss_bound=cfg.loss.loss_bound, loss_lipschitz=cfg.loss.loss_lip, options=options,
    )


@dataclass
class NonVacuity:
    """Where the certified bound drops below the loss range B_ℒ.

    ``n_certified``: a sample size at which the certified bound (``bound``) is
    proved < B_ℒ; ``n_below``: the largest tried n where it was not (None if the
    search started non-vacuous at its lower limit); ``n_certified`` is None when
    no n ≤ ``n_max`` works.
    """

    loss_bound: float
    n_certified: Optional[int]
    bound: Optional[arb]
    n_below: Optional[int]
    evaluations: int
    n_max: int
    result: Any = None  # the full BoundResult at n_certified (None if not found)


def nonvacuous_sample_size(evaluate: Callable[[int], Any], loss_bound: arb, n_start: int,
                           n_max: int = 10**18, rel_precision: float = 0.05) -> NonVacuity:
    """Smallest n (to ``rel_precision``) where ``evaluate(n)`` is proved < B_ℒ; geometric bracket + bisection.

    The bound is nonincreasing in n for fixed analysis parameters (spec §9
    item 7) but the float-optimised parameters change with n, so the reported
    ``n_certified`` is the point where it was *verified*; the bracket only locates it.

    Parameters
    ----------
    evaluate : callable
        ``evaluate(n)`` returns the certified bound at n: an ``arb``, or an object with a
        ``.bound`` ball (e.g. a ``BoundResult``, kept in ``NonVacuity.result``).
    loss_bound : arb
        B_ℒ: the bound is non-vacuous where it is proved below it.
    n_start : int
        Where the search starts (it goes down by factors of 10 if the bound is already below
        B_ℒ there, up otherwise).
    n_max : int
        The largest n tried.
    rel_precision : float
        The bisection stops when the bracket's ends are within this relative distance.

    Returns
    -------
    NonVacuity
        ``n_certified`` (None if no n ≤ ``n_max`` works), the certified bound there, the largest
        tried n where it was not proved, and the number of evaluations.

    Examples
    --------
    >>> from flint import arb
    >>> r = nonvacuous_sample_size(lambda n: arb(1000) / arb(n).sqrt(), arb(1), 10)
    >>> 10**6 <= r.n_certified <= 1.05 * 10**6 + 1
    True
    """
    calls = 0

    results: dict = {}

    def ok(n: int) -> tuple[bool, arb]:
        nonlocal calls
        calls += 1
        r = evaluate(n)
        b = r.bound if hasattr(r, "bound") else r
        results[n] = r
        return bool(b < loss_bound), b

    lb = float(loss_bound.mid())
    n_start = max(1, int(n_start))
    good, b = ok(n_start)
    if good:  # search downwards for the crossing
        hi, hib = n_start, b
        lo = None
        n = n_start
        while n > 1:
            n = max(1, n // 10)
            g, bb = ok(n)
            if not g:
                lo = n
                break
            hi, hib = n, bb
        if lo is None:
            return NonVacuity(lb, hi, hib, None, calls, n_max, results[hi])
    else:
        lo, hi, hib = n_start, None, None
        n = n_start
        while n < n_max:
            n = min(n_max, n * 10)
            g, bb = ok(n)
            if g:
                hi, hib = n, bb
                break
            lo = n
        if hi is None:
            return NonVacuity(lb, None, None, lo, calls, n_max)
    while hi > lo * (1 + rel_precision) and hi - lo > 1:
        mid = int(round(math.sqrt(lo * hi)))
        mid = min(max(mid, lo + 1), hi - 1)
        g, bb = ok(mid)
        if g:
            hi, hib = mid, bb
        else:
            lo = mid
    return NonVacuity(lb, hi, hib, lo, calls, n_max, results[hi])


@dataclass
class DemoResult:
    """Everything ``certbound demo`` prints."""

    model_path: Path
    meta: dict
    net: PiTransformer
    n: int
    delta: Any  # exactly as given (float, Fraction or int); see DEFAULT_DELTA
    bound: Any  # certbound.bounds.BoundResult
    measured: Optional[MeasuredGap]
    nonvacuity: Optional[NonVacuity]
    spectra: dict
    readout: Any
    timing_seconds: dict = field(default_factory=dict)  # wall-clock per step (+ cpu_total); not certified
    error: Optional["ErrorBound"] = None
    input_counting: Optional[arb] = None  # √((|𝒳| ln 2 + ln 1/δ)/(2n)), proofs/demo-task.md §1
    spectrum_mode: str = DEFAULT_SPECTRUM_MODE  # the requested certificate mode; each enclosure records the one used
    #: the probabilistic statements certified (see :func:`certified_statements`), each at ``certificate_delta``
    statements: tuple[str, ...] = ("loss_gap",)
    certificate_delta: Any = None  # δ, or δ/len(statements) with split_delta (proofs/demo-task.md §3)

    @property
    def mode(self) -> str:
        """Deprecated name of :attr:`spectrum_mode` (warns)."""
        warnings.warn("DemoResult.mode is deprecated: use DemoResult.spectrum_mode", DeprecationWarning, stacklevel=2)
        return self.spectrum_mode

    @property
    def joint_confidence(self) -> Fraction:
        """A lower bound on the probability that every certified statement holds at once (union bound, §3)."""
        d = Fraction(self.delta if self.certificate_delta is None else self.certificate_delta)
        return 1 - len(self.statements) * d


@dataclass
class ErrorBound:
    """The certified 0-1 error bound P(y f(X) ≤ 0) ≤ R̂_γ + gap_γ (Corollary T3).

    ``ramp_bound``: Theorem 2 for the ramp loss (a BoundResult); ``empirical_ramp_upper``:
    a proved upper bound on R̂_γ over the n training examples (exact rational, Lemma T3.1);
    ``bound``: their sum as a ball (the upper end is the certificate).
    """

    margin: Fraction
    ramp_bound: Any
    empirical_ramp_upper: Fraction
    bound: arb


def ramp_margin_of(meta: dict) -> Optional[Fraction]:
    """The ramp margin γ the checkpoint fixed before training (config ``error_bound.loss.margin``), exactly.

    Parameters
    ----------
    meta : dict
        The checkpoint's config (``load_pi_checkpoint``'s second value).

    Returns
    -------
    Fraction or None
        γ exactly, or ``None`` when the config fixes no ramp loss.

    Raises
    ------
    ValueError
        For a margin ≤ 0.

    Examples
    --------
    >>> ramp_margin_of({"error_bound": {"loss": {"kind": "ramp", "margin": 0.25}}}), ramp_margin_of({})
    (Fraction(1, 4), None)
    """
    spec = (meta.get("error_bound") or {}).get("loss") or {}
    if spec.get("kind") != "ramp" or "margin" not in spec:
        return None
    gamma = Fraction(spec["margin"])  # a JSON float converts exactly
    if gamma <= 0:
        raise ValueError(f"config error_bound margin must be > 0, got {spec['margin']!r}")
    return gamma


def _error_bound(net: PiTransformer, spectra: dict, readout: Any, n: int, delta: Any, gamma: Fraction,
                 margins_lower, options: Any) -> ErrorBound:
    """Corollary T3 at the training n: Theorem 2 for the ramp loss plus the certified empirical ramp risk."""
    bl, ll = ramp_loss_constants(gamma)
    cfg = net.config
    ramp = theorem2_posthoc_bound(transformer_spec_of(net), spectra, int(n), delta,
                                  readout_norm=cfg.readout_norm, readout_spectrum=readout,
                                  loss_bound=bl, loss_lipschitz=ll, options=options)
    # the margins' proved lower ends: ramp is nonincreasing in the margin, so forward_error = 0 (demo-task §2)
    u_hat = empirical_ramp_loss_upper(margins_lower, gamma, forward_error=0.0)
    return ErrorBound(gamma, ramp, u_hat, zero_one_error_bound(ramp, u_hat))


def certified_statements(net: PiTransformer, meta: dict, n: int) -> tuple[str, ...]:
    """Which probabilistic statements :func:`run_demo` certifies, decided before any sample is drawn.

    ``"loss_gap"`` (Theorem 2) always; ``"error"`` (Corollary T3) when the
    config fixes a ramp margin, the task is described, n is the training-set
    size and the model has one block (certified outputs); ``"input_counting"``
    when the task is described. Each holds with probability ≥ 1 − δ′ at the
    δ′ it is evaluated at; all of them together with ≥ 1 − k·δ′ (union bound,
    ``proofs/demo-task.md`` §3). The list depends on the config and n only,
    never on the data, so splitting δ over it is sound.

    Parameters
    ----------
    net : PiTransformer
        The network of the checkpoint.
    meta : dict
        The checkpoint's config (its ``task``, ``data.n_train`` and ``error_bound`` entries are read).
    n : int
        The sample size the bounds are evaluated at.

    Returns
    -------
    tuple of str
        The statements in report order, a sub-sequence of ``("loss_gap", "error", "input_counting")``.

    >>> from certbound.models.checkpoint import demo_checkpoint_path, load_pi_checkpoint
    >>> net, meta = load_pi_checkpoint(demo_checkpoint_path())
    >>> certified_statements(net, meta, 10**6), certified_statements(net, meta, 10**5)
    (('loss_gap', 'error', 'input_counting'), ('loss_gap', 'input_counting'))
    """
    task, data = _task_and_sizes(meta)
    n_train = int(data.get("n_train", 0)) or None
    out = ["loss_gap"]
    if ramp_margin_of(meta) is not None and task is not None and n == n_train and net.config.n_layers == 1:
        out.append("error")
    if task is not None:
        out.append("input_counting")
    return tuple(out)


def _task_and_sizes(meta: dict) -> tuple[Optional[SparseMajorityTask], dict]:
    task = SparseMajorityTask.from_json_dict(meta["task"]) if "task" in meta else None
    data = meta.get("data", {})
    return task, data


def run_demo(model: str | Path | None = None, *, delta: Any = DEFAULT_DELTA, n: Optional[int] = None,
             n_test: Optional[int] = None, spectrum_mode: str = DEFAULT_SPECTRUM_MODE,
             search_nonvacuous: bool = True, options: Any = None, split_delta: bool = False,
             mode: str | None = None) -> DemoResult:
    """Run the whole demo on a certbound-pi checkpoint (default: the shipped one), as ``certbound demo``.

    Parameters
    ----------
    model : str or Path, optional
        A certbound-pi checkpoint directory (default: the shipped demo model).
    delta : Fraction, str or float
        The confidence parameter in (0, 1) (default 1/100, exact). A float is
        read as the smaller of its binary and decimal values, so ``0.01``
        certifies at 1/100 and the printed confidence 0.99 holds.
    n : int, optional
        The sample size of the bound; defaults to the checkpoint's training-set
        size (config ``data.n_train``).
    n_test : int, optional
        Fresh test samples for the measured error (default: the checkpoint's own).
    spectrum_mode : {"fast", "tight", "arb", "gram", "auto"}
        Certificate mode of the singular-value kernel (:data:`certbound.pipeline.SPECTRUM_MODES`;
        default ``"auto"``, as the CLI's ``--spectrum-mode``).
    search_nonvacuous : bool
        Also search the counterfactual n* from which the loss-gap bound is non-vacuous.
    options : certbound.bounds.BoundOptions, optional
        Options of the Theorem 2 evaluation.
    split_delta : bool
        Evaluate each of the k certified statements (:func:`certified_statements`: the loss gap,
        the 0-1 error, the input-counting bound) at δ/k, so that all of them hold *together* with
        probability ≥ 1 − δ (``proofs/demo-task.md`` §3). By default each is evaluated at δ and
        holds with probability ≥ 1 − δ; together they hold with ≥ 1 − k·δ
        (:attr:`DemoResult.joint_confidence`).
    mode : str, optional
        Deprecated name of ``spectrum_mode`` (warns).

    Returns
    -------
    DemoResult
        The certified loss-gap and 0-1 error bounds, the measurements and timings.
        The measured gap needs the task description in the config (certbound-pi
        checkpoints written by ``certbound train-demo`` have it) and is skipped otherwise.
    """
    t0, c0 = time.perf_counter(), time.process_time()
    spectrum_mode = spectrum_mode_keyword(spectrum_mode, mode)
    path = Path(model) if model is not None else demo_checkpoint_path()
    net, meta = load_pi_checkpoint(path)
    task, data = _task_and_sizes(meta)
    n_train = int(data.get("n_train", 0)) or None
    if n is None:
        if n_train is None:
            raise OptionError(f"{path}: config has no data.n_train; give the sample size `n` explicitly")
        n = n_train
    if not (isinstance(n, int) and n >= 1):
        raise OptionError(f"the sample size `n` must be a positive integer, got {n!r}")
    if isinstance(delta, float):  # certify for the smaller of its binary and decimal readings (pipeline.md §1)
        delta = float_reading(delta, upper=False)
    elif isinstance(delta, str):  # a decimal such as "0.01", read exactly
        delta = parse_number(delta, "delta")
    if not 0 < delta < 1:
        raise OptionError(f"`delta` must lie in (0, 1), got {delta}")
    statements = certified_statements(net, meta, n)
    # the δ of each statement, fixed before any sample is drawn (proofs/demo-task.md §3)
    delta_each = Fraction(delta) / len(statements) if split_delta else delta
    t1 = time.perf_counter()
    spectra, readout = enclose_model_spectra(net, spectrum_mode)
    t2 = time.perf_counter()
    bound = pi_model_bound(net, spectra, readout, n, delta_each, options)
    t3 = time.perf_counter()
    measured = None
    if task is not None and n_train is not None:
        measured = measure_gap(net, task, n_train, int(n_test or data.get("n_test", 20000)),
                               int(data.get("train_stream", 1)), int(data.get("test_stream", 2)))
    t4 = time.perf_counter()
    error = None
    gamma = ramp_margin_of(meta)
    # R̂_γ must be over the same n examples as the bound: only at the training n, with certified margins
    if ("error" in statements and gamma is not None and measured is not None and measured.outputs_certified
            and n == measured.n_train):
        error = _error_bound(net, spectra, readout, n, delta_each, gamma, measured.train_margin_lower, options)
    # report what was certified: a planned statement left out only makes the split conservative
    statements = tuple(s for s in statements if s != "error" or error is not None)
    counting = task.input_counting_bound(n, delta_each) if task is not None else None
    t5 = time.perf_counter()
    nonvac = None
    if search_nonvacuous:
        nonvac = nonvacuous_sample_size(
            lambda m: pi_model_bound(net, spectra, readout, m, delta_each, options), bound.loss_bound, n)
    t6 = time.perf_counter()
    timing_seconds = {"load": t1 - t0, "spectra": t2 - t1, "bound": t3 - t2, "measure": t4 - t3,
                      "error_bound": t5 - t4, "nonvacuity_search": t6 - t5, "total": t6 - t0,
                      "cpu_total": time.process_time() - c0}
    return DemoResult(path, meta, net, n, delta, bound, measured, nonvac, spectra, readout, timing_seconds,
                      error, counting, spectrum_mode, statements, delta_each)


@dataclass
class DemoPoint:
    """One model of a train-size sweep: certified bounds (upper ends) and measurements at its own n."""

    model_path: str
    n_train: int
    loss_range: float
    gap_bound: float            # certified loss-gap bound (upper end, rounded up to a float)
    error_bound: Optional[float]  # certified 0-1 error bound (None: not certified for this model)
    input_counting: float       # the complexity term of the input-counting bound (rounded up)
    measured_gap: float
    train_error: float
    test_error: float
    n_test: int
    label_noise: Optional[float]
    command: Optional[str]

    def to_json(self) -> dict:
        """The point as a JSON-ready dict (its fields; the figure's ``points`` entries).

        Returns
        -------
        dict
            Field name → value.
        """
        return dict(self.__dict__)


def demo_point(model: str | Path, *, delta: Any = DEFAULT_DELTA, n_test: Optional[int] = None,
               options: Any = None, spectrum_mode: str = DEFAULT_SPECTRUM_MODE) -> DemoPoint:
    """:func:`run_demo` at the model's own n (no n* search), reduced to the numbers the sweep figure plots.

    Parameters
    ----------
    model : str or Path
        A certbound-pi checkpoint directory with a task description (``certbound train-demo`` writes one).
    delta : Fraction, str or float
        The confidence parameter (as for :func:`run_demo`).
    n_test : int, optional
        Fresh test samples for the measured error (default: the checkpoint's own).
    options : certbound.bounds.BoundOptions, optional
        Options of the Theorem 2 evaluation.
    spectrum_mode : {"fast", "tight", "arb", "gram", "auto"}
        Certificate mode of the singular-value kernel (:data:`certbound.pipeline.SPECTRUM_MODES`).

    Returns
    -------
    DemoPoint
        The certified bounds (upper ends, rounded up to floats) and the measurements.
    """
    res = run_demo(model, delta=delta, n_test=n_test, search_nonvacuous=False, options=options,
                   spectrum_mode=spectrum_mode)
    m = res.measured
    if m is None:
        raise ValueError(f"{model}: the checkpoint has no task description, so nothing can be measured")
    task = res.meta.get("task") or {}
    return DemoPoint(
        model_path=str(res.model_path), n_train=res.n, loss_range=float(res.net.config.loss.loss_bound),
        gap_bound=float_upper(res.bound.bound),
        error_bound=float_upper(res.error.bound) if res.error is not None else None,
        input_counting=float_upper(res.input_counting) if res.input_counting is not None else float("inf"),
        measured_gap=m.gap, train_error=m.train_error, test_error=m.test_error, n_test=m.n_test,
        label_noise=task.get("label_noise"), command=(res.meta.get("training") or {}).get("command"),
    )


def counterfactual_curve(model: str | Path, ns: list[int], *, delta: Any = DEFAULT_DELTA,
                         options: Any = None,
                         spectrum_mode: str = DEFAULT_SPECTRUM_MODE) -> list[tuple[int, float]]:
    """(n, certified loss-gap bound) for ONE model's weights as if they had come from n samples (upper ends).

    Parameters
    ----------
    model : str or Path
        A certbound-pi checkpoint directory.
    ns : list of int
        The sample sizes to evaluate the bound at.
    delta : Fraction, str or float
        The confidence parameter (an exact number in (0, 1)).
    options : certbound.bounds.BoundOptions, optional
        Options of the Theorem 2 evaluation.
    spectrum_mode : {"fast", "tight", "arb", "gram", "auto"}
        Certificate mode of the singular-value kernel (:data:`certbound.pipeline.SPECTRUM_MODES`).

    Returns
    -------
    list of (int, float)
        ``(n, upper end of the certified Theorem 2 loss-gap bound)`` per n, spectra certified once.

    Examples
    --------
    >>> from certbound.models import demo_checkpoint_path
    >>> [(n, b > 0) for n, b in counterfactual_curve(demo_checkpoint_path(), [10**6], spectrum_mode="fast")]
    [(1000000, True)]
    """
    net, _ = load_pi_checkpoint(Path(model))
    spectra, readout = enclose_model_spectra(net, spectrum_mode)
    return [(int(n), float_upper(pi_model_bound(net, spectra, readout, int(n), delta, options).bound)) for n in ns]
