"""Theorem 1 (fixed constraints) and Theorem 2 (post hoc) — the certified generalization bounds.

``proofs/theory-theorems.md`` §T1, §T2 (spec §5, §6, recipe §7.1).

Both return a :class:`BoundResult` whose ``bound`` is an Arb ball: its **upper
endpoint** is a proven upper bound on ``|R(f) − R̂_S(f)|``, with probability
≥ 1 − δ over the sample, for the Π-normalised network of
:class:`~certbound.bounds._spec.TransformerSpec` carrying the given weights,
under assumptions (A1)–(A3) listed in ``result.assumptions``.

* :func:`theorem1_fixed_bound`: a configuration κ fixed *a priori*; the
  trained weights are checked against it (certified).
* :func:`theorem2_posthoc_bound`: fully post hoc. The Schatten index ``p_j`` of
  each matrix is searched on ``𝒫_m`` with floats; the certified ``S_{p_j}``
  and ``σ₁`` (upper endpoints of the enclosures) are rounded up onto the
  a-priori peeling grids, the rounding **verified** in ball arithmetic; the
  union-bound price ``ln(1/π(κ))`` enters the confidence term; everything
  reported is re-evaluated in Arb at the selected parameters.

Floats only *choose* (p, τ, splits, δ's, the cut-off α, the partition); any
choice is valid (spec §6.5: they may depend on the sample and the weights),
so the optimiser can make the bound loose but never wrong.

Example (spec §7.3, Theorem 2 mode (ii); the spec prints 0.14647)
-------------------------------------------------------------------
>>> from fractions import Fraction as F
>>> from certbound.bounds._spec import TransformerSpec
>>> spec = TransformerSpec(2, 1, 4, 3, ffn_kind="single", qk_rank=2, activation="relu")
>>> spectra = {(0, 0, "QK"): [0.5, 0.2, 0, 0], (0, 0, "VO"): [1, 0.5, 0.25, 0.1], (0, None, "M"): [1.2, 0.6, 0.3, 0.1],
...            (1, 0, "QK"): [0.4, 0.1, 0, 0], (1, 0, "VO"): [0.8, 0.4, 0.2, 0.1], (1, None, "M"): [1, 0.5, 0.25, 0.1]}
>>> p = {k: F(0) if k[2] == "QK" else F(1) if k[2] == "VO" else F(2) for k in spectra}
>>> opts = BoundOptions(cutoff=1e-5, partition_ratio=1.05, allow_p0_tail=False, fixed_p=p, one_step=False,
...                     prior="spec")
>>> res = theorem2_posthoc_bound(spec, spectra, 10**6, 0.05, readout_spectrum=1, options=opts)
>>> round(float(res.log_inv_prior.mid()), 3), round(float(res.bound.mid()), 5)
(48.513, 0.14647)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Mapping, Optional, Sequence

import numpy as np
from flint import arb

from certbound.ball import ball_to_json, float_upper, under_float_model, upper_fraction
from certbound.bounds._arbutil import prec, Number, as_arb, exact_dyadic, upper_float
from certbound.bounds._covering import _float_log_cover
from certbound.bounds._dudley import dudley_partition
from certbound.bounds._grids import (
    PRIOR_FAMILIES,
    grid_round_up,
    index_log_inv_prior,
    p_grid,
    p_grid_m,
    rank_log_inv_prior,
    spectral_grid_round_up,
    two_sided_log_inv_prior,
)
from certbound.bounds._network_cover import (
    READOUT_KEY,
    MatrixConstraint,
    NetworkConfiguration,
    alloc_weights,
)
from certbound.bounds._rademacher import (
    _exact_cutoff,
    _slope_weights,
    _split_contributions,
    certified_rademacher_minimum,
    diameter_bound,
    one_step_bound,
    one_step_cutoff,
)
from certbound.bounds._spec import TransformerSpec

__all__ = [
    "BoundOptions",
    "MatrixReport",
    "BoundResult",
    "theorem1_fixed_bound",
    "theorem2_posthoc_bound",
    "certified_spectrum",
    "CertifiedSpectrum",
]


# ---------------------------------------------------------------------------
# Options and results
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class BoundOptions:
    """Analysis choices (free, may be post hoc) and a-priori grids (Theorem 2).

    Analysis (any value is valid): ``cutoff`` α (``None``: float-chosen),
    ``partition_ratio`` of the geometric Riemann partition, or an explicit
    ``partition`` (exact rationals from α to ``B_ℒ/4``), ``allow_p0_tail`` (spec
    §11 (c)), ``running_min`` (spec §11 (f)), ``fixed_p`` (force the index of
    some matrices: key → Fraction on the grid), ``search_nodes``,
    ``thorough_search`` (all candidate thresholds and sphere-net δ's at every
    partition node; slower, slightly smaller numbers).

    A priori (must not be tuned after seeing the weights, spec §6.5):
    ``p_grid_m`` (default ``⌈L + ln N⌉``), Schatten peeling ``schatten_grid_base``
    ``s₀`` and ``schatten_grid_steps`` ``ν_s``; spectral mode ``"posthoc"`` (mode (ii):
    grid ``c₀ 2^{q/ν₂}``, ``spectral_grid_base``, ``spectral_grid_steps``; readout grid
    ``readout_grid_base``, ``readout_grid_steps``) or ``"fixed"`` (mode (i):
    ``spectral_constraints`` key → ``c_j``, checked against the weights).
    ``trust_structural_rank``: removed (issue 12): the rank bound ``r̄_j`` must
    be certified by the enclosure itself (the product path certifies
    ``rank ≤ d_h``; a dense matrix's rank by ``exact_rank=True``). Kept as a
    field so old code gets a clear error: ``True`` raises ``ValueError``.
    ``one_step``: also evaluate the one-step bound (Lemma C2); the reported
    Rademacher term is the minimum of the floor ``B_ℒ/2``, the Dudley sum and
    (if on) the one-step bound (theory-chaining §C3; free: a minimum of valid bounds).
    ``prior`` (a priori): ``"light"`` (default, theory-theorems §6.1b) or
    ``"spec"`` (§6.1). ``margin_grid_size`` (a priori): the number G of margins
    of a ramp-loss grid fixed before the data; ``ln G`` is added to ``ln 1/π``
    (§6.1b), so the bound holds for every margin of that grid at once.
    """

    cutoff: Optional[Number] = None
    partition_ratio: float = 1.25
    partition: Optional[Sequence[Fraction]] = None
    allow_p0_tail: bool = True
    running_min: bool = True
    fixed_p: Optional[Mapping[tuple, Any]] = None
    search_nodes: int = 12
    thorough_search: bool = False
    p_grid_m: Optional[int] = None
    schatten_grid_base: Number = 1
    schatten_grid_steps: int = 1
    spectral_mode: str = "posthoc"
    spectral_constraints: Optional[Mapping[tuple, Number]] = None
    spectral_grid_base: Number = 1
    spectral_grid_steps: int = 16
    readout_grid_base: Number = 1
    readout_grid_steps: int = 16
    trust_structural_rank: bool = False
    one_step: bool = True
    prior: str = "light"
    margin_grid_size: int = 1

    def __post_init__(self) -> None:
        if self.trust_structural_rank:
            raise ValueError(
                "BoundOptions(trust_structural_rank=True) is no longer accepted: a rank bound taken on trust is "
                "not certified. Certify rank <= d_h with the product enclosure "
                "(enclose_singular_values_of_product) or a dense matrix's rank with "
                "enclose_singular_values(W, exact_rank=True)"
            )


@dataclass
class MatrixReport:
    """Per-matrix outcome: the constraint used, its certificate, prior price and share of 𝔇_n."""

    layer: Optional[int]
    head: Optional[int]
    type: str
    shape: tuple[int, int]
    rank_arch: int
    p: Fraction
    schatten_radius: arb
    spectral_radius: arb
    contribution: arb
    scale: arb
    schatten_certified: Optional[arb] = None
    spectral_certified: Optional[arb] = None
    schatten_level: Optional[int] = None
    spectral_level: Optional[int] = None
    log_inv_prior: arb = field(default_factory=lambda: arb(0))
    #: Light priors: the spectral level is on the coarse (one step per octave) grid (theory-theorems §6.1b).
    spectral_coarse: bool = False

    def to_json(self) -> dict:
        """JSON form (Q = :func:`certbound.ball.ball_to_json`)."""
        d = {
            "layer": self.layer,
            "head": self.head,
            "type": self.type,
            "p": float(self.p),
            "p_exact": str(self.p),
            "schatten_radius": ball_to_json(self.schatten_radius),
            "spectral_radius": ball_to_json(self.spectral_radius),
            "contribution": ball_to_json(self.contribution),
            "shape": list(self.shape),
            "rank_bound": self.rank_arch,
            "scale": ball_to_json(self.scale),
            "log_inv_prior": ball_to_json(self.log_inv_prior),
            "schatten_level": self.schatten_level,
            "spectral_level": self.spectral_level,
            "spectral_coarse": self.spectral_coarse,
        }
        if self.schatten_certified is not None:
            d["schatten_certified"] = ball_to_json(self.schatten_certified)
        if self.spectral_certified is not None:
            d["spectral_certified"] = ball_to_json(self.spectral_certified)
        return d


@dataclass
class BoundResult:
    """A certified generalization-gap bound and everything that went into it.

    ``bound = 2·rademacher + confidence_term``; ``rademacher`` is the certified
    minimum of the floor ``B_ℒ/2`` (Lemma C0), the one-step bound (Lemma C2) and
    the Dudley sum ``dudley`` (Theorem R), ``proofs/theory-chaining.md`` §C3;
    ``confidence_term = B_ℒ √((ln(2/δ) + log_inv_prior)/(2n))``. All Arb balls; upper endpoints
    are the certified values. ``vacuous`` is True when the bound is not
    provably below ``B_ℒ`` (the gap is trivially ≤ B_ℒ).
    """

    theorem: str
    bound: arb
    dudley: arb
    confidence_term: arb
    log_inv_prior: arb
    n_samples: int
    #: δ as a float rounded *up* (the statement "with probability ≥ 1 − delta" stays true
    #: when δ is not a binary64 value, e.g. 3/10); exact for float inputs.
    delta: float
    loss_bound: arb
    loss_lipschitz: arb
    cutoff: Fraction
    partition: list
    node_entropies: list
    matrices: list
    assumptions: dict
    elapsed_seconds: float = 0.0

    #: The Rademacher term of the bound (``bound = 2·rademacher + confidence_term``): the certified
    #: minimum of the estimates in ``rademacher_estimates`` (``proofs/theory-chaining.md`` §C3).
    rademacher: Optional[arb] = None
    #: Which estimate attained the minimum: ``"diameter"`` (Lemma C0, B_ℒ/2), ``"one-step"``
    #: (Lemma C2) or ``"dudley"`` (Theorem R, the value in ``dudley``).
    rademacher_method: str = "dudley"
    rademacher_estimates: dict = field(default_factory=dict)
    #: The scale α of the one-step estimate (exact), when it was evaluated.
    one_step_cutoff: Optional[Fraction] = None

    def __post_init__(self) -> None:
        if self.rademacher is None:
            self.rademacher = self.dudley
        if not self.rademacher_estimates:
            self.rademacher_estimates = {self.rademacher_method: self.rademacher}

    @property
    def vacuous(self) -> bool:
        """True unless ``bound < B_ℒ`` is proved."""
        return not bool(self.bound < self.loss_bound)

    def dominant_matrices(self, top: int = 5) -> list[MatrixReport]:
        """The ``top`` matrices with the largest contributions to 𝔇_n (by their upper ends), largest first.

        Parameters
        ----------
        top : int
            How many (≥ 0; more than there are gives all of them).

        Returns
        -------
        list of MatrixReport

        Raises
        ------
        ValueError
            If ``top`` is not an integer ≥ 0 (a negative slice would silently drop the smallest instead).
        """
        if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or top < 0:
            raise ValueError(f"dominant_matrices: top must be an integer >= 0, got {top!r}")
        return sorted(self.matrices, key=lambda m: -upper_float(m.contribution))[:top]

    def summary(self) -> dict:
        """What dominates: Dudley vs confidence/prior terms, and contributions by matrix type."""
        by_type: dict = {}
        for m in self.matrices:
            by_type[m.type] = by_type.get(m.type, 0.0) + upper_float(m.contribution)
        two_r = 2 * upper_float(self.rademacher)
        conf = upper_float(self.confidence_term)
        return {
            "twice_rademacher_upper": two_r,
            "rademacher_method": self.rademacher_method,
            "twice_dudley_upper": 2 * upper_float(self.dudley),
            "confidence_term_upper": conf,
            "dominant_term": f"rademacher ({self.rademacher_method})" if two_r >= conf else "confidence",
            "dudley_share_by_type": by_type,
            "cutoff_is_top": self.cutoff == self.partition[-1],
        }

    def to_json(self) -> dict:
        """The JSON form of issue 4: ``{"bound": Q, "dudley": Q, ...,"matrices": [...]}``."""
        return {
            "theorem": self.theorem,
            "bound": ball_to_json(self.bound),
            "rademacher": ball_to_json(self.rademacher),
            "rademacher_method": self.rademacher_method,
            "rademacher_estimates": {k: ball_to_json(v) for k, v in self.rademacher_estimates.items()},
            "one_step_cutoff": None if self.one_step_cutoff is None else ball_to_json(as_arb(self.one_step_cutoff)),
            "dudley": ball_to_json(self.dudley),
            "confidence_term": ball_to_json(self.confidence_term),
            "log_inv_prior": ball_to_json(self.log_inv_prior),
            "n": self.n_samples,
            "delta": self.delta,
            "loss_bound": ball_to_json(self.loss_bound),
            "loss_lipschitz": ball_to_json(self.loss_lipschitz),
            "vacuous": self.vacuous,
            "cutoff": ball_to_json(as_arb(self.cutoff)),
            "partition_points": len(self.partition),
            "summary": self.summary(),
            "assumptions": self.assumptions,
            "matrices": [m.to_json() for m in self.matrices],
            "elapsed_seconds": self.elapsed_seconds,
        }


# ---------------------------------------------------------------------------
# Spectra
# ---------------------------------------------------------------------------


@dataclass
class CertifiedSpectrum:
    """Upper endpoints of a certified singular-value enclosure, cut to the rank bound.

    ``upper``: exact balls ``σ_i^up`` (i < ``rank_upper``, zeros dropped),
    ``sigma1``: certified ``σ₁`` upper end, ``rank_upper``: certified/structural
    rank bound used, ``rank_source``: how it is known.
    """

    upper: list
    upper_f: np.ndarray
    sigma1: arb
    rank_upper: int
    rank_source: str

    def schatten_upper(self, p: Fraction) -> arb:
        """Upper bound on ``S_p = Σ σ_i^p`` (``p > 0``) in Arb; ``S_p`` is increasing in each ``σ_i``.

        Only the first ``rank_upper`` values enter (spec §11 erratum 3: when
        ``rank W ≤ r`` is known, ``S_p = Σ_{i≤r} σ_i^p`` exactly).
        """
        with prec():
            if p == 0:
                return arb(self.rank_upper)
            pa = as_arb(Fraction(p))
            tot = arb(0)
            for u in self.upper:
                tot += u * u if p == 2 else u**pa
            return tot.upper()

    def schatten_float(self, ps: np.ndarray) -> np.ndarray:
        """Float ``S_p`` for an array of p (search only)."""
        u = self.upper_f
        if u.size == 0:
            return np.zeros(len(ps))
        with np.errstate(divide="ignore"):
            lu = np.log(u)
        return np.exp(np.asarray(ps)[:, None] * lu[None, :]).sum(axis=1)


def certified_spectrum(obj: Any, rank_arch: int, *, name: str = "matrix") -> CertifiedSpectrum:
    """Normalise a spectrum input: a ``SingularValueEnclosure`` (``.sigma``, ``.rank``) or a sequence of numbers.

    The rank bound ``r̄`` = ``rank_arch`` enters the theorems as a constraint the
    weights must satisfy, so it must be *certified* for this matrix: by the
    enclosure's rank upper bound (the product path proves ``rank ≤ d_h`` for a
    never-formed ``A Bᵀ``; ``enclose_singular_values(W, exact_rank=True)``
    gives a dense matrix's exact rank), or by upper ends that are exactly 0
    (those σᵢ are 0). It is never taken on trust from the architecture: a
    per-head product *formed* in floating point has full rank in general.

    Raises ``ValueError`` if the enclosure is not certified, if its certified
    rank lower bound exceeds ``rank_arch`` (the weights contradict the
    architecture), or if ``rank ≤ rank_arch`` is not certified.
    """
    rank_upper: Optional[int] = None
    rank_lower = 0
    source = "exact values"
    if hasattr(obj, "sigma"):
        if getattr(obj, "certified", True) is False:
            raise ValueError(f"{name}: singular-value enclosure is not certified (trivial enclosure); cannot bound")
        rk = getattr(obj, "rank", None)
        if rk is not None:
            rank_upper, rank_lower = int(rk.upper), int(rk.lower)
            source = "certified enclosure rank bound"
        else:
            source = "enclosure (no rank certificate)"
        up_attr = getattr(obj, "upper", None)
        if isinstance(up_attr, np.ndarray) and up_attr.shape == (len(obj.sigma),):
            # outward-rounded floats: each is an exact dyadic ≥ the singular value
            upf = np.asarray(up_attr, dtype=np.float64)
        else:
            upf = np.array([upper_float(as_arb(s)) for s in obj.sigma], dtype=np.float64)
        exact_input = False
    else:
        vals = [as_arb(s) for s in obj]
        exact_input = all(v.is_exact() for v in vals)
        upf = np.array([upper_float(v) for v in vals], dtype=np.float64)
    if not np.all(np.isfinite(upf)):
        raise ValueError(f"{name}: non-finite singular value enclosure")
    if np.any(upf < 0):
        raise ValueError(f"{name}: negative singular value bound")
    upf = np.sort(upf)[::-1]
    nonzero = int(np.count_nonzero(upf > 0))
    if rank_upper is None:
        # plain numbers: the values with upper end 0 are exactly 0, so the
        # rank is at most the count of the others (exact inputs: equal to it)
        rank_upper = nonzero
        rank_lower = nonzero if exact_input else 0
    elif nonzero < rank_upper:
        # σᵢ with upper end 0 are exactly 0: a certified rank bound too
        rank_upper = nonzero
        source = "certified enclosure (sigma_i = 0 proved for the rest)"
    if rank_lower > rank_arch:
        raise ValueError(
            f"{name}: certified rank ≥ {rank_lower} exceeds the architectural rank bound {rank_arch}"
        )
    if rank_upper > rank_arch:
        raise ValueError(
            f"{name}: rank ≤ {rank_arch} is not certified by the enclosure (certified rank upper bound "
            f"{rank_upper}); a product formed in floating point has full rank in general. Certify the "
            "never-formed product (enclose_singular_values_of_product) or the stored matrix's exact rank "
            "(enclose_singular_values(W, exact_rank=True))"
        )
    r = min(rank_upper, rank_arch)
    # Sorted upper ends bound the sorted singular values (σ_(i) ≤ i-th largest upper end).
    kept_f = upf[:r]
    kept_f = kept_f[kept_f > 0]
    with prec():
        kept = [arb(float(u)) for u in kept_f]
        sigma1 = arb(float(upf[0])) if upf.size else arb(0)
    return CertifiedSpectrum(kept, kept_f, sigma1, r, source)


def _lookup(spectra: Mapping, key: tuple) -> Any:
    layer, head, typ = key
    if key in spectra:
        return spectra[key]
    if head is None:
        for k, v in spectra.items():
            if len(k) == 3 and k[0] == layer and k[2] == typ:
                return v
    raise ValueError(f"no spectrum for matrix (layer={layer}, head={head}, type={typ!r})")


# ---------------------------------------------------------------------------
# Shared Dudley evaluation
# ---------------------------------------------------------------------------


def _dudley_certified(
    net: NetworkConfiguration,
    loss_bound: arb,
    loss_lipschitz: arb,
    options: BoundOptions,
) -> tuple[arb, Fraction, list, list, list]:
    """Certified 𝔇_n for a configuration: returns (𝔇, α, partition, node totals, per-matrix contributions)."""
    n = net.n_samples
    with prec():
        # The last partition point may be any exact number ≥ B_ℒ/4 (integrating further only adds
        # nonnegative terms; for α above B_ℒ/4 the bound 4α ≥ B_ℒ exceeds R̂ ≤ B_ℒ/2 trivially):
        # use the exact upper endpoint of the ball B_ℒ/4 (= B_ℒ/4 itself when it is dyadic).
        top = upper_fraction(loss_bound / 4)
        if top is None or top <= 0:
            raise ValueError("loss_bound must be a finite positive number")
        if options.partition is not None:
            part = [Fraction(x) if not isinstance(x, float) else exact_dyadic(x) for x in options.partition]
            if part[-1] != top:
                raise ValueError(f"the partition must end at B_L/4 = {float(top)}")
            if any(b <= a for a, b in zip(part, part[1:])) or part[0] <= 0:
                raise ValueError("the partition must be strictly increasing and positive")
        else:
            if options.cutoff is not None:
                cut = options.cutoff
                cut = exact_dyadic(cut) if isinstance(cut, float) else Fraction(cut)
                if not (0 < cut <= top):
                    raise ValueError(f"cutoff must lie in (0, B_L/4 = {float(top)}]")
                part = dudley_partition(cut, top, options.partition_ratio)
            else:
                part = None
        w = alloc_weights(net.J)
        quick = not options.thorough_search
        if part is None:
            # One float pass on a geometric grid downward from the top (ratio as asked, down to
            # 1e-9·B_ℒ/4): it chooses the cut-off α (largest region where Ĥ ≤ n/9, see
            # dudley_cutoff) *and* the Lemma A parameters at the nodes kept.
            topf, r = float(top), float(options.partition_ratio)
            kmax = int(math.ceil(math.log(1e9) / math.log(r)))
            grid = sorted({exact_dyadic(topf * r ** (-k)) for k in range(1, kmax + 1)} - {top})
            grid = [g for g in grid if 0 < g < top]
            ch_all, vals = net.choose_node_covers([float(e) / float_upper(loss_lipschitz) for e in grid], w,
                                                  allow_p0_tail=options.allow_p0_tail, quick=quick)
            H = vals.sum(axis=0)
            keep = len(grid)
            for k in range(len(grid) - 1, -1, -1):
                if H[k] <= n / 9.0:
                    keep = k
                else:
                    break
            part = grid[keep:] + [top]
            choices = ch_all[keep:]
        else:
            choices = None
        nodes = part[:-1]
        if not nodes:
            return 4 * as_arb(part[0]), part[0], part, [], [arb(0)] * net.J
        etas = [as_arb(e) / loss_lipschitz for e in nodes]
        if choices is None:
            etas_f = [float(e) / float_upper(loss_lipschitz) for e in nodes]
            choices, _ = net.choose_node_covers(etas_f, w, allow_p0_tail=options.allow_p0_tail, quick=quick)
        totals, parts = [], []
        from certbound.bounds._network_cover import _check_weights

        _check_weights(w, net.J)
        w_arb = [as_arb(x) for x in w]
        for k, eta in enumerate(etas):
            t, ps = net.log_cover_network(eta, w_arb, choices[k], allow_p0_tail=options.allow_p0_tail,
                                          _weights_checked=True)
            totals.append(t)
            parts.append(ps)
        # Lemma R with the running minimum (spec §11 (f)): node k uses the
        # smallest upper bound among nodes k' ≤ k (valid: the true integrand
        # is nonincreasing).
        used, best_k, best_q = [], None, None
        for k, t in enumerate(totals):
            q = upper_fraction(t) if not t.is_nan() else None
            if options.running_min and best_k is not None and (q is None or (best_q is not None and best_q <= q)):
                used.append(best_k)
            else:
                best_k, best_q = k, q
                used.append(k)
        sq = [totals[u].upper().sqrt() if totals[u].is_finite() else arb.pos_inf() for u in used]
        s = arb(0)
        contrib = [arb(0)] * net.J
        rootn = arb(int(n)).sqrt()
        for k in range(len(nodes)):
            de = as_arb(part[k + 1] - part[k])
            s += de * sq[k]
            u = used[k]
            if totals[u].is_finite() and bool(totals[u] > 0):
                for j in range(net.J):
                    contrib[j] = contrib[j] + 12 * de * parts[u][j] / (totals[u].upper().sqrt() * rootn)
        dud = 4 * as_arb(part[0]) + 12 * s / rootn
        return dud, part[0], part, totals, contrib


@dataclass
class _RademacherOutcome:
    """The three certified estimates of ``R̂(𝒢(κ)|_S)`` and the reported minimum (theory-chaining §C3)."""

    value: arb
    method: str
    estimates: dict
    contributions: list
    dudley: arb
    cutoff: Fraction
    partition: list
    node_entropies: list
    one_step_cutoff: Optional[Fraction]


def _one_step_certified(net: NetworkConfiguration, loss_bound: arb, loss_lipschitz: arb,
                        options: BoundOptions) -> tuple[arb, Optional[Fraction], list]:
    """Lemma C2 at a float-searched α, evaluated in Arb: (𝔒_n(α), α, per-matrix shares)."""
    n = net.n_samples
    w = alloc_weights(net.J)
    quick = not options.thorough_search
    blf, llf = upper_float(loss_bound), upper_float(loss_lipschitz)

    def entropy_float(alphas: np.ndarray) -> np.ndarray:
        _, vals = net.choose_node_covers(list(np.asarray(alphas) / llf), w, allow_p0_tail=options.allow_p0_tail,
                                         quick=quick)
        return vals.sum(axis=0)

    ratio = max(float(options.partition_ratio), 1.01)
    a_f = one_step_cutoff(entropy_float, n, blf, ratio=ratio)
    alpha = _exact_cutoff(a_f)

    def entropies_at(weights: Sequence[Fraction], eta: float) -> np.ndarray:
        _, vals = net.choose_node_covers([eta], list(weights), allow_p0_tail=options.allow_p0_tail, quick=quick)
        return vals[:, 0]

    from certbound.bounds._network_cover import _check_weights

    best = None
    # uniform weights and the slope-proportional ones of Corollary B1's heuristic: both valid, keep the smaller
    for weights in (w, _slope_weights(entropies_at, net.J, float(alpha) / llf)):
        with prec():
            choices, _ = net.choose_node_covers([float(alpha) / llf], weights, allow_p0_tail=options.allow_p0_tail,
                                                quick=quick)
            _check_weights(weights, net.J)
            total, parts = net.log_cover_network(as_arb(alpha) / loss_lipschitz, [as_arb(x) for x in weights],
                                                 choices[0], allow_p0_tail=options.allow_p0_tail,
                                                 _weights_checked=True)
            value = one_step_bound(alpha, total, n, loss_bound)
        up = upper_fraction(value) if value.is_finite() else None
        if best is None or (up is not None and (best[0] is None or up < best[0])):
            best = (up, value, _split_contributions(parts, total, n, loss_bound))
    return best[1], alpha, best[2]


def _rademacher_certified(net: NetworkConfiguration, loss_bound: arb, loss_lipschitz: arb,
                          options: BoundOptions) -> _RademacherOutcome:
    """The reported Rademacher term: min{B_ℒ/2 (Lemma C0), 𝔇_n (Theorem R), 𝔒_n(α) (Lemma C2)} (§C3)."""
    dud, cut, part, totals, contrib = _dudley_certified(net, loss_bound, loss_lipschitz, options)
    estimates = {"diameter": diameter_bound(loss_bound)}
    shares = {"diameter": [arb(0)] * net.J, "dudley": contrib}
    alpha = None
    if options.one_step:
        estimates["one-step"], alpha, shares["one-step"] = _one_step_certified(net, loss_bound, loss_lipschitz, options)
    estimates["dudley"] = dud
    method, value = certified_rademacher_minimum(estimates)
    return _RademacherOutcome(value, method, estimates, shares[method], dud, cut, part, totals, alpha)


def _confidence(loss_bound: arb, delta: arb, log_inv_prior: arb, n: int) -> arb:
    """``B_ℒ √((ln(2/δ) + ln(1/π))/(2n))`` (McDiarmid, two-sided; Theorem 1/2)."""
    with prec():
        return loss_bound * (((2 / delta).log() + log_inv_prior) / (2 * arb(int(n)))).sqrt()


_METHOD_TEXT = {
    "diameter": "the floor B_L/2 (Lemma C0, theory-chaining §C)",
    "one-step": "the one-step bound alpha + (B_L/2) sqrt(2 H_net(alpha/L_L)/n) (Lemma C2, theory-chaining §C2)",
    "dudley": "the Dudley sum D_n (Lemma C / Theorem R, theory-chaining §R)",
}


def _rademacher_text(rad: _RademacherOutcome) -> str:
    """The assumptions line naming the reported Rademacher estimate and the candidates' values."""
    from certbound.ball import decimal_upper

    cands = ", ".join(f"{k} {decimal_upper(v, 6)}" for k, v in rad.estimates.items())
    extra = f", alpha = {float(rad.one_step_cutoff):.4g}" if rad.method == "one-step" and rad.one_step_cutoff else ""
    return (f"minimum of valid sample-uniform bounds (no union-bound cost, theory-chaining §C3): "
            f"{_METHOD_TEXT[rad.method]}{extra}; candidates: {cands}")


def _check_common(n_samples: Any, delta: Any, loss_bound: Any, loss_lipschitz: Any) -> tuple[arb, arb, arb]:
    if not (isinstance(n_samples, (int, np.integer)) and n_samples >= 1):
        raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}")
    with prec():
        d, bl, ll = as_arb(delta), as_arb(loss_bound), as_arb(loss_lipschitz)
    if not (bool(d > 0) and bool(d < 1)):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    if not bool(bl > 0):
        raise ValueError(f"loss_bound must be > 0, got {loss_bound!r}")
    if not bool(ll > 0):
        raise ValueError(f"loss_lipschitz must be > 0, got {loss_lipschitz!r}")
    return d, bl, ll


def _base_assumptions(spec: TransformerSpec, loss_bound: arb, loss_lipschitz: arb, readout_norm: arb) -> dict:
    from certbound.ball import decimal_upper

    a = spec.assumptions()
    a.update(
        {
            "loss": "0 <= loss <= B_L and L_L-Lipschitz in the network output on [-C_w, C_w] (A2); Borel measurable",
            "loss_bound": decimal_upper(loss_bound, 17),
            "loss_lipschitz": decimal_upper(loss_lipschitz, 17),
            "readout_norm_upper": decimal_upper(readout_norm, 17),
            "sample": "i.i.d. sample of size n; every token row of every input in the closed unit ball (A1)",
            "certified_quantity": "|R(f) - R_hat_S(f)| of the Pi-surrogate network carrying these weights, "
            "with probability >= 1 - delta over the sample",
        }
    )
    return a


# ---------------------------------------------------------------------------
# Theorem 1
# ---------------------------------------------------------------------------


@under_float_model
def theorem1_fixed_bound(
    spec: TransformerSpec,
    constraints: Mapping[tuple, MatrixConstraint],
    n_samples: int,
    delta: Number,
    *,
    readout_norm: Number = 1,
    loss_bound: Number = 1,
    loss_lipschitz: Number = 1,
    spectra: Optional[Mapping[tuple, Any]] = None,
    options: Optional[BoundOptions] = None,
    readout_spectrum: Any = None,
) -> BoundResult:
    """Theorem 1: ``|R(f) − R̂_S(f)| ≤ 2𝔇_n(κ) + B_ℒ√(ln(2/δ)/(2n))`` for all ``f ∈ ℱ(κ)``.

    ``proofs/theory-theorems.md`` §T1 (spec §5). κ (``constraints``,
    ``readout_norm``) must be fixed independently of the sample. If
    ``spectra`` (certified enclosures) are given, the weights are checked to
    satisfy κ (``σ₁ ≤ c_j``, ``S_{p_j} ≤ s_j`` or rank ≤ ``s_j`` proved in Arb);
    a violation raises ``ValueError``. ``readout_spectrum`` (an enclosure of
    the readout vector as an N×1 matrix) checks ‖w‖₂ ≤ C_w the same way;
    without it the assumptions say the readout norm was not checked.
    𝔇_n uses Lemma B with uniform weights and float-optimised Lemma A
    parameters, evaluated in Arb (Lemma R).
    """
    t0 = time.perf_counter()
    options = options or BoundOptions()
    d, bl, ll = _check_common(n_samples, delta, loss_bound, loss_lipschitz)
    with prec():
        cw = as_arb(readout_norm)
        net = NetworkConfiguration(spec, constraints, readout_norm=cw, n_samples=int(n_samples))
        if spectra is not None:
            for slot, cls in zip(net.slots, net.classes):
                cs = certified_spectrum(_lookup(spectra, slot.key), slot.rank_arch, name=str(slot.key))
                if not bool(cs.sigma1 <= cls.c):
                    raise ValueError(f"{slot.key}: certified sigma_1 ≤ {float_upper(cs.sigma1):.6g} is not ≤ the "
                                     f"constraint c = {float_upper(cls.c):.6g}")
                sp = cs.schatten_upper(cls.schatten_p)
                if not bool(sp <= cls.s):
                    raise ValueError(f"{slot.key}: certified S_p (p={cls.schatten_p}) ≤ {float_upper(sp):.6g} is not "
                                     f"≤ the constraint s = {float_upper(cls.s):.6g}")
        if readout_spectrum is not None:
            wn = certified_spectrum(readout_spectrum, 1, name="readout").sigma1
            if not bool(wn <= cw):
                raise ValueError(f"readout: certified ‖w‖₂ ≤ {float_upper(wn):.6g} is not ≤ the readout norm "
                                 f"C_w = {float_upper(cw):.6g}")
        rad = _rademacher_certified(net, bl, ll, options)
        lip = arb(0)
        conf = _confidence(bl, d, lip, int(n_samples))
        bound = 2 * rad.value + conf
        mats = _matrix_reports(net, rad.contributions, {}, {})
        assumptions = _base_assumptions(spec, bl, ll, cw)
        checked = "matrix weights checked against it" if spectra is not None else \
            "matrix weights NOT checked (no spectra given)"
        checked += "; readout norm checked" if readout_spectrum is not None else \
            "; readout norm ‖w‖ ≤ C_w NOT checked (no readout_spectrum given)"
        assumptions["configuration"] = f"fixed a priori (Theorem 1); {checked}"
        assumptions["rademacher_estimate"] = _rademacher_text(rad)
        return BoundResult("Theorem 1 (fixed constraints)", bound, rad.dudley, conf, lip, int(n_samples), float_upper(d),
                           bl, ll, rad.cutoff, rad.partition, rad.node_entropies, mats, assumptions,
                           time.perf_counter() - t0, rademacher=rad.value, rademacher_method=rad.method,
                           rademacher_estimates=rad.estimates, one_step_cutoff=rad.one_step_cutoff)


def _matrix_reports(net: NetworkConfiguration, contrib: list, certs: dict, levels: dict,
                    coarse: Optional[dict] = None) -> list[MatrixReport]:
    out = []
    keys = net.keys()
    for j, cls in enumerate(net.classes):
        key = keys[j]
        layer, head, typ = key
        sc, cc = certs.get(key, (None, None))
        ks, qs, cost = levels.get(key, (None, None, arb(0)))
        out.append(MatrixReport(layer, head, typ, (cls.n_in, cls.n_out), cls.rank_arch, cls.schatten_p, cls.s, cls.c,
                                contrib[j], net.k_prime[j], sc, cc, ks, qs, cost, bool((coarse or {}).get(key, False))))
    return out


# ---------------------------------------------------------------------------
# Theorem 2
# ---------------------------------------------------------------------------


@under_float_model
def theorem2_posthoc_bound(
    spec: TransformerSpec,
    spectra: Mapping[tuple, Any],
    n_samples: int,
    delta: Number,
    *,
    readout_norm: Number = 1,
    readout_spectrum: Optional[Any] = None,
    loss_bound: Number = 1,
    loss_lipschitz: Number = 1,
    options: Optional[BoundOptions] = None,
) -> BoundResult:
    """Theorem 2 (post hoc): the certified bound for the trained weights with the best-found ``p`` per matrix.

    ``proofs/theory-theorems.md`` §T2, §6.1–6.5 (spec §6; recipe §7.1).

    Parameters
    ----------
    spec : TransformerSpec
        Architecture (variant P/B, residual, L, H, N, d_ff, d_head, T) and the
        constants ``c_sm``, ``L_φ``, ``φ₀``, ``φ₁``.
    spectra : mapping
        ``(layer, head, type) → SingularValueEnclosure`` (or a sequence of
        numbers, taken as exact singular values), types ``"QK"``, ``"VO"``,
        ``"M"`` (P) or ``"M_in"``, ``"M_out"`` (B); ``head`` is ignored for
        the feed-forward types. Layers/heads 0-based.
    n_samples, delta : int, number
        Sample size ``n`` and confidence ``δ``.
    readout_norm : number
        ``C_w`` fixed a priori (used when ``readout_spectrum`` is None).
    readout_spectrum : number or enclosure, optional
        Certified ``‖w‖₂`` of a learned readout; then (mode (ii)) ``C_w`` is its
        grid value on the readout grid and pays its prior cost.
    loss_bound, loss_lipschitz : number
        ``B_ℒ``, ``L_ℒ`` (A2), fixed a priori.
    options : BoundOptions

    Returns
    -------
    BoundResult
        ``bound``, ``dudley``, ``confidence_term``, ``log_inv_prior``, per-matrix
        chosen p, grid radii, contributions, assumptions.
    """
    t0 = time.perf_counter()
    options = options or BoundOptions()
    d, bl, ll = _check_common(n_samples, delta, loss_bound, loss_lipschitz)
    n = int(n_samples)
    if options.spectral_mode not in ("posthoc", "fixed"):
        raise ValueError(f"spectral_mode must be 'posthoc' or 'fixed', got {options.spectral_mode!r}")
    prior = options.prior
    if prior not in PRIOR_FAMILIES:
        raise ValueError(f"prior must be one of {PRIOR_FAMILIES}, got {prior!r}")
    G = options.margin_grid_size
    if isinstance(G, bool) or not isinstance(G, int) or G < 1:
        raise ValueError(f"margin_grid_size must be an integer ≥ 1, got {G!r}")
    with prec():
        slots = spec.slots()
        m = options.p_grid_m if options.p_grid_m is not None else p_grid_m(spec.n_layers, spec.d_model)
        grid = p_grid(m)
        specs_c: dict = {}
        c_coarse: dict = {}
        c_vals: dict = {}
        c_levels: dict = {}
        c_costs: dict = {}
        for slot in slots:
            cs = certified_spectrum(_lookup(spectra, slot.key), slot.rank_arch, name=str(slot.key))
            specs_c[slot.key] = cs
            if options.spectral_mode == "posthoc":
                q, cval, coarse, cost = spectral_grid_round_up(cs.sigma1, options.spectral_grid_base,
                                                               options.spectral_grid_steps, prior)
                c_vals[slot.key], c_levels[slot.key], c_costs[slot.key] = cval, q, cost
                c_coarse[slot.key] = coarse
            else:
                sc = options.spectral_constraints or {}
                if slot.key not in sc:
                    raise ValueError(f"spectral_mode='fixed' needs a spectral constraint for {slot.key}")
                cval = as_arb(sc[slot.key])
                if not bool(cs.sigma1 <= cval):
                    raise ValueError(f"{slot.key}: certified sigma_1 ≤ {float_upper(cs.sigma1):.6g} is not ≤ the "
                                     f"a-priori spectral constraint {float_upper(cval):.6g}")
                c_vals[slot.key], c_levels[slot.key], c_costs[slot.key] = cval, None, arb(0)
            if bool(c_vals[slot.key] <= 0):
                raise ValueError(f"{slot.key}: spectral radius must be > 0")
        # readout
        readout_cost, readout_level, readout_cert = arb(0), None, None
        if readout_spectrum is not None:
            rs = readout_spectrum
            if hasattr(rs, "sigma"):
                readout_cert = certified_spectrum(rs, 1, name="readout").sigma1
            else:
                readout_cert = as_arb(rs).upper() if not isinstance(rs, (list, tuple)) else as_arb(rs[0]).upper()
            if options.spectral_mode == "posthoc":
                readout_level, cw, coarse, readout_cost = spectral_grid_round_up(
                    readout_cert, options.readout_grid_base, options.readout_grid_steps, prior)
                c_coarse[READOUT_KEY] = coarse
            else:
                cw = as_arb(readout_norm)
                if not bool(readout_cert <= cw):
                    raise ValueError("certified readout norm exceeds the a-priori readout_norm")
        else:
            cw = as_arb(readout_norm)
        if not bool(cw > 0):
            raise ValueError("readout norm must be > 0")

        # --- float search over p (scales do not depend on p) ---------------
        placeholder = {s.key: MatrixConstraint(0, s.rank_arch, c_vals[s.key]) for s in slots}
        net0 = NetworkConfiguration(spec, placeholder, readout_norm=cw, n_samples=n)
        margin_cost = arb(G).log()
        chosen = _search_p(spec, net0, slots, specs_c, grid, options, bl, ll, d, n, m, c_costs,
                           readout_cost + margin_cost)

        # --- certified constraint values at the chosen p -------------------
        constraints: dict = {}
        levels: dict = {}
        certs: dict = {}
        lip = arb(0)
        for slot in slots:
            cs = specs_c[slot.key]
            p = chosen[slot.key]
            if p == 0:
                s_val = arb(cs.rank_upper)
                k_level = cs.rank_upper
                cost = rank_log_inv_prior(cs.rank_upper, slot.rank_arch, prior)
                s_cert = arb(cs.rank_upper)
            else:
                s_cert = cs.schatten_upper(p)
                k_level, s_val = grid_round_up(s_cert, options.schatten_grid_base, options.schatten_grid_steps)
                cost = two_sided_log_inv_prior(k_level)
            total_cost = index_log_inv_prior(p, m, prior) + cost + c_costs[slot.key]
            lip += total_cost
            constraints[slot.key] = MatrixConstraint(p, s_val, c_vals[slot.key])
            levels[slot.key] = (k_level, c_levels[slot.key], total_cost)
            certs[slot.key] = (s_cert, cs.sigma1)
        lip += readout_cost + margin_cost
        levels[READOUT_KEY] = (None, readout_level, readout_cost)
        certs[READOUT_KEY] = (None, readout_cert)
        net = NetworkConfiguration(spec, constraints, readout_norm=cw, n_samples=n)
        rad = _rademacher_certified(net, bl, ll, options)
        conf = _confidence(bl, d, lip, n)
        bound = 2 * rad.value + conf
        mats = _matrix_reports(net, rad.contributions, certs, levels, c_coarse)
        assumptions = _base_assumptions(spec, bl, ll, cw)
        assumptions.update(
            {
                "configuration": "post hoc (Theorem 2): p per matrix on the grid P_m, radii peeled on a-priori grids",
                "p_grid_m": m,
                "prior": ("light (theory-theorems §6.1b: pi(p=0) = 1/2, pi(s = rank bound | p=0) = 1/2, "
                          "two-resolution spectral grid; coarse for sigma_1 < 2^-20"
                          + (f": {sum(c_coarse.values())} coarse radii" if c_coarse else "") + ")")
                if prior == "light" else "spec (theory-theorems §6.1: uniform index and rank priors)",
                "a_priori": "the loss and its constants, delta, the index grid m, the grid bases/steps and the prior "
                            "family are fixed before the sample (theory-theorems §6.5)"
                            + (f"; margin grid of {G} values (+ ln {G} in ln 1/prior)" if G > 1 else ""),
                "schatten_grid": {"base": str(options.schatten_grid_base), "steps_per_octave": options.schatten_grid_steps},
                "spectral_mode": options.spectral_mode,
                "spectral_grid": {"base": str(options.spectral_grid_base), "steps_per_octave": options.spectral_grid_steps}
                if options.spectral_mode == "posthoc" else None,
                "readout": ("learned, norm peeled on grid base %s, %d steps/octave"
                            % (options.readout_grid_base, options.readout_grid_steps)) if readout_level is not None
                else "norm bound C_w fixed a priori",
                "rank_bounds": sorted({specs_c[s.key].rank_source for s in slots}),
            }
        )
        assumptions["rademacher_estimate"] = _rademacher_text(rad)
        return BoundResult("Theorem 2 (post hoc)", bound, rad.dudley, conf, lip, n, float_upper(d), bl, ll, rad.cutoff,
                           rad.partition, rad.node_entropies, mats, assumptions, time.perf_counter() - t0,
                           rademacher=rad.value, rademacher_method=rad.method, rademacher_estimates=rad.estimates,
                           one_step_cutoff=rad.one_step_cutoff)


def _search_p(spec, net0, slots, specs_c, grid, options, bl, ll, d, n, m, c_costs, readout_cost) -> dict:
    """Float search of p per matrix (linearised coordinate descent on the bound; any result is valid)."""
    fixed = options.fixed_p or {}
    top = float_upper(bl) / 4
    K = max(int(options.search_nodes), 4)
    nodes = top * np.geomspace(1e-9, 1.0, K)
    de = np.diff(np.append(nodes, top * 1.0000001))
    de[-1] = max(top - nodes[-1], 0.0)
    etas = nodes / float_upper(ll)
    w = alloc_weights(net0.J)
    E = net0.float_matrix_accuracies(etas, w)
    tables, costs, cands = [], [], []
    s0, nu = float(as_arb(options.schatten_grid_base).mid()), options.schatten_grid_steps
    base_conf = float(((2 / d).log()).mid()) + \
        sum(float(c.mid()) for c in c_costs.values()) + float(readout_cost.mid())
    light = options.prior == "light"
    for j, slot in enumerate(slots):
        cs = specs_c[slot.key]
        if slot.key in fixed:
            ps = [Fraction(fixed[slot.key])]
            if ps[0] not in grid:
                raise ValueError(f"fixed p={ps[0]} for {slot.key} is not on the grid P_m (m={len(grid) // 2})")
        else:
            ps = list(grid)
        pf = np.array([float(p) for p in ps])
        sp = cs.schatten_float(pf)
        with np.errstate(divide="ignore"):
            kk = np.where(sp > 0, np.ceil(nu * np.log2(np.maximum(sp, 1e-300) / s0) - 1e-12), 0)
        sgrid = np.where(pf == 0, cs.rank_upper, s0 * 2.0 ** (kk / nu))
        if light:
            rank_cost = math.log(2) if cs.rank_upper == slot.rank_arch else math.log(2 * slot.rank_arch)
            index_cost = np.where(pf == 0, math.log(2), math.log(4 * m))
        else:
            rank_cost = math.log(slot.rank_arch + 1)
            index_cost = np.full(len(pf), math.log(2 * m + 1))
        cost = index_cost + np.where(pf == 0, rank_cost, np.log(1.5 * (np.abs(kk) + 1) * (np.abs(kk) + 2)))
        cls = net0.classes[j]
        tab, _ = _float_log_cover(cls.n_in, cls.n_out, cls.rank_arch, cls.n_rows, float_upper(cls.c), pf, sgrid,
                                  np.broadcast_to(E[j], (len(pf), K)), options.allow_p0_tail, quick=True)
        tables.append(tab)
        costs.append(cost)
        cands.append(ps)
    # readout entropy (fixed)
    extra = np.zeros(K)
    for j in range(len(slots), net0.J):
        cls = net0.classes[j]
        b, _ = _float_log_cover(cls.n_in, cls.n_out, cls.rank_arch, cls.n_rows, float_upper(cls.c),
                                np.array([2.0]), np.array([float_upper(cls.s)]), E[j][None, :], options.allow_p0_tail,
                                quick=True)
        extra += b[0]
    blf = float_upper(bl)
    rootn = math.sqrt(n)

    def evaluate(idx: list[int]) -> tuple[float, np.ndarray, float, int, int]:
        H = extra.copy()
        pc = base_conf
        for t, c, i in zip(tables, costs, idx):
            H += t[i]
            pc += c[i]
        sq = np.sqrt(H)
        # α at node i: 4e_i + 12/√n Σ_{k≥i} Δe_k √H_k; also α = top (empty sum)
        tail = np.cumsum((de * sq)[::-1])[::-1]
        vals = 4 * nodes + 12 / rootn * tail
        ib = int(np.argmin(vals))
        dud = min(vals[ib], 4 * top)
        if 4 * top <= vals[ib]:
            ib = K
        # the reported term is min{B_ℒ/2, 𝔇_n, one-step} (theory-chaining §C3); io: best one-step node
        io = -1
        if options.one_step:
            ov = nodes + blf / 2 * np.sqrt(2 * np.maximum(H, 0) / n)
            io = int(np.argmin(ov))
            if ov[io] < dud:
                dud, ib = float(ov[io]), K
            else:
                io = -1
        if blf / 2 <= dud:
            dud, ib, io = blf / 2, K, -1
        return 2 * dud + blf * math.sqrt(pc / (2 * n)), H, pc, ib, io

    # initial: minimise each matrix's Riemann integral over the whole range
    idx = [int(np.argmin((t * de[None, :]).sum(axis=1) + 1e-12 * c)) for t, c in zip(tables, costs)]
    best_val, H, pc, ib, io = evaluate(idx)
    best_idx = list(idx)
    for _ in range(6):
        gk = np.zeros(K)
        if ib < K:
            gk[ib:] = 12 / rootn * de[ib:] / np.sqrt(np.maximum(H[ib:], 1e-300))
        elif io >= 0:
            gk[io] = blf / 2 * math.sqrt(2 / n) / (2 * math.sqrt(max(H[io], 1e-300)))
        gc = blf / (2 * math.sqrt(2 * n * pc))
        new = [int(np.argmin(t @ gk + gc * c)) for t, c in zip(tables, costs)]
        if new == idx:
            break
        idx = new
        val, H, pc, ib, io = evaluate(idx)
        if val < best_val:
            best_val, best_idx = val, list(idx)
    return {slot.key: cands[j][best_idx[j]] for j, slot in enumerate(slots)}
