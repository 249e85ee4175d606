"""The reference paper's BERT-adapted proxies (its Section 6), certified.

Sakai & Imaizumi compare two *proxies* of the leading complexity factors of
their bound and of Edelman et al. (2022) across BERT checkpoints. This module
evaluates both in ball arithmetic from certified spectra, exactly as the
authors' code defines them (``paper`` variant; ``theory/paper-known.md`` §6),
and in a ``corrected`` variant that puts the activation's Lipschitz constant
:math:`L_\\varphi` where a derivation puts it (``theory/explicit-bound.md``
§1.6–1.7, ``proofs/theory-lipschitz.md``), with GELU's exact constant.

What is certified. Every returned number is an Arb ball that contains the
value of the proxy's formula at the *exact* singular values and norms of the
stored float weights. The proxies are *not* generalization bounds: they drop
constants, logarithms, the allocation over matrices and the peeling of radii
(``explicit-bound.md`` §1.7). A float search chooses the reported index
:math:`p^\\star` (first minimising index of the ball midpoints); the reported
per-matrix contribution is a ball containing :math:`\\min_{p\\in P_m} c(p)`
(taken on balls, so a float mis-ordering of two nearly equal c(p) can never
make the certified value wrong), and :math:`B_{\\rm ours}` is the ball sum.

Definitions (layers ``0 … L−1``, ``H`` heads, width ``N``, ``C₂`` = spectral
norm, empty product = 1):

* :math:`\\alpha^{(\\ell)}=\\prod_{k>\\ell} L_\\varphi\\,C_2(M_{in}^{(k)})\\,C_2(M_{out}^{(k)})
  \\sum_h C_2(\\tilde V^{(k,h)})(1+4C_2(QK^{(k,h)}))`;
* ``paper``: :math:`\\gamma_{QK}=2C_2(\\tilde V)C_2(M_{out})C_2(M_{in})`,
  :math:`\\gamma_{V}=C_2(M_{out})C_2(M_{in})`, :math:`\\gamma_{M_{in}}=C_2(M_{out})`,
  :math:`\\gamma_{M_{out}}=1`; ``corrected``: the first three times :math:`L_\\varphi`;
* :math:`c(p)=S_p(W)^{1/(p+2)}K^{p/(p+2)}N^{(p+1)/(p+2)}` with
  :math:`K=\\gamma\\,\\alpha^{(\\ell)}L` on the grid
  :math:`P_m=\\{0,1/m,\\dots,2\\}`, :math:`m=\\lceil L+\\ln\\max(N,2)\\rceil`;
* :math:`B_{\\rm ours}=\\sum_{\\rm matrices}\\min_p c(p)+\\sqrt L`;
* :math:`B_{\\rm Edelman}=(1+\\sum_\\ell(\\alpha^{(\\ell)})^{2/3}\\xi_\\ell)^{3/2}` with
  :math:`\\xi_\\ell` the sum of the per-matrix terms
  :math:`(\\gamma'\\,\\|W\\|_{2,1})^{2/3}` (``γ'`` is γ without the softmax 2).

At ``p = 0`` the authors use a float numerical rank; here :math:`S_0` is the
certified rank interval from the kernel (an upper bound on the rank is what
makes the proxy an upper bound).

Examples
--------
>>> from fractions import Fraction
>>> schatten_grid(6, 384)[0]          # m = ceil(6 + ln 384) = ceil(11.95)
12
>>> L = gelu_lipschitz_constant()
>>> L.str(12, radius=False)
'1.12890414519'

"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Iterable, Sequence

import numpy as np
from flint import arb, fmpq

from certbound.ball import DEFAULT_PREC, ball_to_json, working_precision

__all__ = [
    "MATRIX_TYPES",
    "VARIANTS",
    "PAPER_GELU_LIPSCHITZ",
    "gelu_lipschitz_constant",
    "schatten_grid",
    "MatrixQuantities",
    "quantities_from_enclosure",
    "quantities_of_dense",
    "quantities_of_product",
    "quantities_of_theory_matrix",
    "random_init_quantities",
    "prefix_layers",
    "MatrixProxy",
    "LayerProxy",
    "ProxyResult",
    "paper_proxies",
    "variant_ratios",
    "ball_min",
    "pow_nonnegative",
]

#: The theory matrix types the proxies use, in data-flow order within a layer.
MATRIX_TYPES: tuple[str, ...] = ("QK", "VO", "M_in", "M_out")

#: ``paper``: the authors' formulas; ``corrected``: L_φ also in γ (exact GELU).
VARIANTS: tuple[str, ...] = ("paper", "corrected")

#: The authors' L_φ, the decimal 1.13 (an upper bound on GELU's constant).
PAPER_GELU_LIPSCHITZ = Fraction(113, 100)


def _arb_fraction(q: Fraction) -> arb:
    """A ball containing the rational ``q`` (exact when ``q`` is dyadic)."""
    return arb(fmpq(q.numerator, q.denominator))


def gelu_lipschitz_constant() -> arb:
    """Ball containing GELU's Lipschitz constant max|GELU′| = Φ(√2) + √2 φ(√2).

    With ψ(x) = xΦ(x), ψ′(x) = Φ(x) + xφ(x) and ψ″(x) = φ(x)(2 − x²), so ψ′ is
    maximal at x = √2 (``explicit-bound.md`` §1.1 (A3),
    ``proofs/theory-lipschitz.md``). There Φ(√2) = (1 + erf(1))/2 and
    √2 φ(√2) = √2 e^{−1}/√(2π) = e^{−1}/√π. Every operation is an Arb ball
    operation, so the result encloses the exact constant 1.12890414518515….

    >>> x = gelu_lipschitz_constant()
    >>> x.str(20, radius=False)
    '1.1289041451851547863'
    >>> bool(x.rad() < 1e-30)
    True
    >>> bool(x < arb(113) / 100)    # the authors' 1.13 is a valid upper bound
    True
    """
    with working_precision(max(DEFAULT_PREC, 128)):
        return (1 + arb(1).erf()) / 2 + (-arb(1)).exp() / arb.pi().sqrt()


def schatten_grid(num_layers: int, width: int) -> tuple[int, list[Fraction]]:
    """The authors' grid ``P_m = {0, 1/m, …, 2}``, ``m = ⌈L + ln max(N, 2)⌉``.

    ``m`` is decided in Arb: ln N is irrational for integer N ≥ 2 (e is
    transcendental), so L + ln N is never an integer and its ceiling is found
    by tightening the ball until its floor is unique.

    >>> m, grid = schatten_grid(2, 128)
    >>> m, grid[:3], grid[-1]
    (7, [Fraction(0, 1), Fraction(1, 7), Fraction(2, 7)], Fraction(2, 1))
    """
    if num_layers < 1 or width < 1:
        raise ValueError(f"need L >= 1 and N >= 1, got L={num_layers}, N={width}")
    prec = 64
    while True:
        with working_precision(prec):
            x = arb(num_layers) + arb(max(width, 2)).log()
            c = x.ceil().unique_fmpz()
        if c is not None:
            m = int(c)
            break
        prec *= 2
    return m, [Fraction(k, m) for k in range(2 * m + 1)]


def pow_nonnegative(x: arb, y: arb) -> arb:
    """Ball containing ``t**y`` for every ``t ≥ 0`` in ``x``, for ``y > 0``.

    ``t ↦ t**y`` is increasing on ``[0, ∞)`` for ``y > 0``, so the image of
    ``[lo, hi] ∩ [0, ∞)`` is ``[lo⁺**y, hi**y]``; each endpoint power is an Arb
    ball (``exp(y log t)``), and 0**y = 0. Arb's own ``pow`` returns NaN when the
    base ball touches 0, which happens for S_p of a matrix whose smallest
    singular values are only known to be ≥ 0.

    >>> pow_nonnegative(arb(0).union(arb(4)), arb(0.5)).upper() >= 2
    True
    >>> pow_nonnegative(arb(9), arb(0.5))
    3.00000000000000
    """
    if not (y > 0):
        raise ValueError(f"pow_nonnegative needs a positive exponent, got {y}")
    if x.is_nan():
        # NaN encloses every real: so must the result (x.upper() > 0 is False for NaN, which
        # would otherwise return the exact 0).
        return arb.nan()
    if x.lower() > 0:
        return x**y
    hi = x.upper()
    if not (hi > 0):
        return arb(0)
    return arb(0).union(hi**y)


def ball_min(values: Sequence[arb]) -> arb:
    """A ball containing ``min_i v_i`` for any choice ``v_i ∈ values[i]``.

    The minimum of points of the balls lies in ``[min lowerᵢ, min upperᵢ]``;
    endpoints are exact dyadics compared exactly (``flint``'s ``arb.min`` and
    ``arb.max`` are valid but can be much wider, e.g. max([2, 3], 1) ⊂ [−3.01, 3.01]).

    >>> b = ball_min([arb(2).union(arb(3)), arb(1).union(arb(5))])
    >>> bool(b.lower() <= 1) and bool(3 <= b.upper() < 3.01)
    True
    """
    if not values:
        raise ValueError("ball_min of an empty sequence")
    if any(v.is_nan() for v in values):
        # A NaN ball may hold any value, so no finite lower end is valid; Arb cannot
        # represent [−∞, hi], so the result is the whole line.
        return arb.neg_inf().union(arb.pos_inf())
    los = [v.lower() for v in values]
    his = [v.upper() for v in values]
    lo = los[0]
    for v in los[1:]:
        if v < lo:
            lo = v
    hi = his[0]
    for v in his[1:]:
        if v < hi:
            hi = v
    return lo.union(hi)


# ---------------------------------------------------------------------------
# Per-matrix certified inputs
# ---------------------------------------------------------------------------


@dataclass
class MatrixQuantities:
    """Certified quantities of one theory matrix that the proxies need.

    Attributes
    ----------
    layer, head, type
        Position (``head`` is ``None`` for ``M_in``/``M_out``) and type
        (one of :data:`MATRIX_TYPES`).
    shape
        ``(rows, cols)`` in row-vector orientation.
    spectral
        Ball containing ‖W‖₂ (the proxies' C₂).
    schatten
        ``p ↦`` ball containing S_p(W) for a rational ``p ∈ [0, 2]``; at
        ``p = 0`` the certified rank interval.
    norm_21
        Ball containing ‖W‖_{2,1} = Σ_j ‖W_{:,j}‖₂ (column norms).
    norm_11
        Ball containing Σ|w_ij| (optional, figures only).
    rank
        Certified ``(lower, upper)`` rank bounds.
    sigma_lower, sigma_upper
        Outward-rounded float enclosures of the singular values (figures).
    """

    layer: int
    head: int | None
    type: str
    shape: tuple[int, int]
    spectral: arb
    schatten: Callable[[Fraction], arb]
    norm_21: arb
    norm_11: arb | None = None
    rank: tuple[int, int] | None = None
    sigma_lower: np.ndarray | None = None
    sigma_upper: np.ndarray | None = None
    _cache: dict = field(default_factory=dict, repr=False)

    def schatten_cached(self, p: Fraction) -> arb:
        """:attr:`schatten` memoised per ``p`` (both variants share the grid)."""
        if p not in self._cache:
            self._cache[p] = self.schatten(p)
        return self._cache[p]


def quantities_from_enclosure(
    layer: int,
    head: int | None,
    type: str,
    enc: Any,
    norm_21: arb,
    norm_11: arb | None = None,
) -> MatrixQuantities:
    """Wrap a ``certbound.enclose.SingularValueEnclosure`` for the proxies.

    C₂ is ``spectral_norm(enc)`` and S_p is ``schatten_quantity(enc, p)``
    (the kernel returns the certified rank interval at p = 0 and counts only
    singular values that may be nonzero, ``explicit-bound.md`` §11 item 3).
    """
    from certbound.enclose import schatten_quantity, spectral_norm

    rank = None
    if getattr(enc, "rank", None) is not None:
        rank = (int(enc.rank.lower), int(enc.rank.upper))
    return MatrixQuantities(
        layer=int(layer),
        head=None if head is None else int(head),
        type=str(type),
        shape=tuple(int(s) for s in enc.shape),
        spectral=spectral_norm(enc),
        schatten=lambda p, _enc=enc: schatten_quantity(_enc, p),
        norm_21=norm_21,
        norm_11=norm_11,
        rank=rank,
        sigma_lower=np.asarray(enc.lower, dtype=np.float64),
        sigma_upper=np.asarray(enc.upper, dtype=np.float64),
    )


def quantities_of_dense(
    layer: int, head: int | None, type: str, W: np.ndarray, mode: str = "fast"
) -> MatrixQuantities:
    """Certify a stored (dense, row-vector oriented) matrix: spectrum and norms."""
    from certbound.enclose import enclose_singular_values, norm_11, norm_21

    W = np.asarray(W)
    if W.ndim != 2:
        raise ValueError(f"layer {layer} {type}: expected a 2-D matrix, got shape {W.shape}")
    enc = enclose_singular_values(W, mode=mode)
    return quantities_from_enclosure(layer, head, type, enc, norm_21(W), norm_11(W))


def quantities_of_product(
    layer: int, head: int | None, type: str, A: np.ndarray, B: np.ndarray, mode: str = "fast"
) -> MatrixQuantities:
    """Certify ``W = A @ B.T`` (per-head QK or VO) without forming it."""
    from certbound.enclose import (
        enclose_singular_values_of_product,
        norm_11_of_product,
        norm_21_of_product,
    )

    A, B = np.asarray(A), np.asarray(B)
    enc = enclose_singular_values_of_product(A, B, mode=mode)
    return quantities_from_enclosure(
        layer, head, type, enc, norm_21_of_product(A, B), norm_11_of_product(A, B)
    )


def quantities_of_theory_matrix(record: Any, mode: str = "fast") -> MatrixQuantities:
    """Certified quantities of a ``certbound.checkpoints.TheoryMatrix``-like record.

    Duck-typed (``layer``, ``head``, ``type``, and ``dense`` or ``factors``), so
    this module does not import the loaders. The authors' proxies ignore the
    1/√d_h logit scale; a record carrying a pending (unfolded) scale is refused
    rather than silently mixed in.
    """
    if getattr(record, "logit_scale_d", 1) != 1 or getattr(record, "logit_scale_folded", 1) != 1:
        raise ValueError(
            f"{record.type} of layer {record.layer}: the proxies use unscaled QK "
            "(the authors ignore 1/sqrt(d_h)); load the matrices without scale_logits"
        )
    if getattr(record, "factors", None) is not None:
        A, B = record.factors
        return quantities_of_product(record.layer, record.head, record.type, A, B, mode)
    if getattr(record, "dense", None) is None:
        raise ValueError(f"layer {record.layer} {record.type}: neither dense matrix nor factors given")
    return quantities_of_dense(record.layer, record.head, record.type, record.dense, mode)


def random_init_quantities(
    num_layers: int,
    width: int,
    *,
    num_heads: int | None = None,
    d_ff: int | None = None,
    std: float = 0.02,
    seed: int = 0,
    mode: str = "fast",
) -> list[MatrixQuantities]:
    """Certified quantities of a randomly initialised BERT-shaped encoder.

    The untrained control of the sweep: every projection has i.i.d. N(0, std²)
    entries (BERT's initialiser uses std 0.02), ``num_heads = N/64`` and
    ``d_ff = 4N`` by default (the BERT Miniature shapes). Weights are drawn
    layer by layer from ``numpy.random.default_rng(seed)``, so the first ``k``
    layers of an ``L``-layer draw equal a ``k``-layer draw with the same seed:
    one deep draw serves every depth (see :func:`prefix_layers`). Per-head
    products are enclosed through their factors (never formed).

    >>> qs = random_init_quantities(1, 8, num_heads=2, d_ff=16, seed=1)
    >>> [(q.type, q.head, q.shape) for q in qs][:3]
    [('QK', 0, (8, 8)), ('QK', 1, (8, 8)), ('VO', 0, (8, 8))]
    """
    H = num_heads if num_heads is not None else max(width // 64, 1)
    dff = d_ff if d_ff is not None else 4 * width
    if width % H:
        raise ValueError(f"width {width} is not divisible by the number of heads {H}")
    dh = width // H
    rng = np.random.default_rng(seed)
    out: list[MatrixQuantities] = []
    for layer in range(num_layers):
        # Row-vector orientation (x ↦ xW), as certbound.checkpoints yields them.
        wq, wk, wv, wo = (rng.normal(0.0, std, (width, width)) for _ in range(4))
        m_in = rng.normal(0.0, std, (width, dff))
        m_out = rng.normal(0.0, std, (dff, width))
        for h in range(H):
            s = slice(h * dh, (h + 1) * dh)
            out.append(quantities_of_product(layer, h, "QK", wq[:, s], wk[:, s], mode))
        for h in range(H):
            s = slice(h * dh, (h + 1) * dh)
            out.append(quantities_of_product(layer, h, "VO", wv[:, s], wo[s, :].T, mode))
        out.append(quantities_of_dense(layer, None, "M_in", m_in, mode))
        out.append(quantities_of_dense(layer, None, "M_out", m_out, mode))
    return out


def prefix_layers(quantities: Iterable[MatrixQuantities], depth: int) -> list[MatrixQuantities]:
    """The matrices of layers ``0 … depth−1`` (a prefix-depth sub-model).

    Used for prefix-depth curves inside one model (labelled as such: a prefix
    of a trained model is not a trained shallower model).
    """
    return [q for q in quantities if q.layer < depth]


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------


@dataclass
class MatrixProxy:
    """One matrix's contribution to both proxies (all balls certified)."""

    layer: int
    head: int | None
    type: str
    shape: tuple[int, int]
    gamma: arb
    K: arb
    c: list[arb]
    p_star_index: int
    p_star: Fraction
    contribution: arb  # ball containing min_p c(p)
    contribution_at_p_star: arb
    spectral: arb
    norm_21: arb
    edelman_term: arb  # (γ' ‖W‖_{2,1})^{2/3}
    c_exact: list[bool] | None = None  # False: c(p) enclosed by a cheap bracket only (see paper_proxies)

    def to_json(self, digits: int = 17, full_grid: bool = True) -> dict[str, Any]:
        out = {
            "layer": self.layer,
            "head": self.head,
            "type": self.type,
            "shape": list(self.shape),
            "p_star": float(self.p_star),
            "p_star_exact": str(self.p_star),
            "p_star_index": self.p_star_index,
            "contribution": ball_to_json(self.contribution, digits),
            "contribution_at_p_star": ball_to_json(self.contribution_at_p_star, digits),
            "gamma": ball_to_json(self.gamma, digits),
            "K": ball_to_json(self.K, digits),
            "spectral_norm": ball_to_json(self.spectral, digits),
            "norm_21": ball_to_json(self.norm_21, digits),
            "edelman_term": ball_to_json(self.edelman_term, digits),
        }
        if full_grid:
            out["c"] = [ball_to_json(v, digits) for v in self.c]
            if self.c_exact is not None and not all(self.c_exact):
                out["c_exact"] = list(self.c_exact)
        return out


@dataclass
class LayerProxy:
    """Per-layer factors: α^{(ℓ)}, the layer's Lipschitz factor and ξ_ℓ."""

    layer: int
    alpha: arb
    lipschitz: arb
    xi: arb

    def to_json(self, digits: int = 17) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "alpha": ball_to_json(self.alpha, digits),
            "lipschitz": ball_to_json(self.lipschitz, digits),
            "xi": ball_to_json(self.xi, digits),
        }


@dataclass
class ProxyResult:
    """Both proxies of one model in one variant."""

    variant: str
    num_layers: int
    num_heads: int
    width: int
    m: int
    grid: list[Fraction]
    lipschitz_phi: arb
    B_ours: arb
    B_edelman: arb
    matrices: list[MatrixProxy]
    layers: list[LayerProxy]

    def p_star_counts(self) -> dict[str, int]:
        """How many matrices chose each p* (keys are exact fractions as text)."""
        counts: dict[str, int] = {}
        for mp in self.matrices:
            counts[str(mp.p_star)] = counts.get(str(mp.p_star), 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: Fraction(kv[0])))

    def to_json(self, digits: int = 17, full_grid: bool = True) -> dict[str, Any]:
        """The issue's JSON form (``Q`` = :func:`certbound.ball.ball_to_json`)."""
        return {
            "variant": self.variant,
            "B_ours": ball_to_json(self.B_ours, digits),
            "B_edelman": ball_to_json(self.B_edelman, digits),
            "m": self.m,
            "grid": [str(p) for p in self.grid],
            "L": self.num_layers,
            "heads": self.num_heads,
            "N": self.width,
            "lipschitz_phi": ball_to_json(self.lipschitz_phi, digits),
            "p_star_counts": self.p_star_counts(),
            "matrices": [mp.to_json(digits, full_grid) for mp in self.matrices],
            "layers": [lp.to_json(digits) for lp in self.layers],
            "note": (
                "Proxies of the leading factors (the reference paper's Section 6), not "
                "generalization bounds; every number is a certified enclosure of the "
                "proxy formula at the exact stored weights. Biases, LayerNorm, embeddings "
                "and the 1/sqrt(d_h) logit scale are ignored, as in the authors' code."
            ),
        }


# ---------------------------------------------------------------------------
# The proxies
# ---------------------------------------------------------------------------


def _index_model(
    quantities: Iterable[MatrixQuantities],
) -> tuple[int, int, int, dict[tuple[int, int | None, str], MatrixQuantities]]:
    """Check completeness; return L, H, N and the matrices keyed by position."""
    table: dict[tuple[int, int | None, str], MatrixQuantities] = {}
    for q in quantities:
        if q.type not in MATRIX_TYPES:
            continue  # raw W_Q etc. are not used by the proxies
        head = q.head if q.type in ("QK", "VO") else None
        key = (q.layer, head, q.type)
        if key in table:
            raise ValueError(f"duplicate matrix layer={q.layer} head={head} type={q.type}")
        table[key] = q
    if not table:
        raise ValueError("no QK/VO/M_in/M_out matrices given")
    layers = sorted({k[0] for k in table})
    if layers != list(range(len(layers))):
        raise ValueError(f"layers must be 0..L-1 without gaps, got {layers}")
    num_layers = len(layers)
    heads = sorted({k[1] for k in table if k[2] == "QK" and k[0] == 0})
    num_heads = len(heads)
    if heads != list(range(num_heads)) or num_heads == 0:
        raise ValueError(f"layer 0: QK heads must be 0..H-1, got {heads}")
    width = table[(0, 0, "QK")].shape[0]
    missing = []
    for layer in range(num_layers):
        for h in range(num_heads):
            for t in ("QK", "VO"):
                if (layer, h, t) not in table:
                    missing.append(f"layer {layer} head {h} {t}")
        for t in ("M_in", "M_out"):
            if (layer, None, t) not in table:
                missing.append(f"layer {layer} {t}")
    if missing:
        raise ValueError("incomplete model for the proxies; missing: " + ", ".join(missing[:8]))
    for key, q in table.items():
        expected = {"QK": (width, width), "VO": (width, width)}.get(q.type)
        if expected and tuple(q.shape) != expected:
            raise ValueError(f"layer {key[0]} head {key[1]} {q.type}: shape {q.shape}, expected {expected}")
        if q.type == "M_in" and q.shape[0] != width:
            raise ValueError(f"layer {key[0]} M_in: shape {q.shape}, expected ({width}, d_ff)")
        if q.type == "M_out" and q.shape[1] != width:
            raise ValueError(f"layer {key[0]} M_out: shape {q.shape}, expected (d_ff, {width})")
    return num_layers, num_heads, width, table


def _contribution_curve(
    S: Callable[[Fraction], arb], K: arb, width: int, grid: Sequence[Fraction]
) -> list[arb]:
    """c(p) = S_p^{1/(p+2)} K^{p/(p+2)} N^{(p+1)/(p+2)} on the grid, as balls.

    The exponents are exact rationals turned into balls; S_p and K are ≥ 0 and
    the exponents > 0 except K^0 = 1 at p = 0, so :func:`pow_nonnegative`
    encloses each factor.
    """
    N = arb(width)
    out = []
    for p in grid:
        e = _arb_fraction(1 / (p + 2))
        term = pow_nonnegative(S(p), e) * N ** _arb_fraction((p + 1) / (p + 2))
        if p != 0:
            term = term * pow_nonnegative(K, _arb_fraction(p / (p + 2)))
        out.append(term)
    return out


def _c_of_S(S_p: arb, K: arb, width: int, p: Fraction) -> arb:
    """c(p) from a ball containing S_p (same formula as :func:`_contribution_curve`)."""
    term = pow_nonnegative(S_p, _arb_fraction(1 / (p + 2))) * arb(width) ** _arb_fraction((p + 1) / (p + 2))
    if p != 0:
        term = term * pow_nonnegative(K, _arb_fraction(p / (p + 2)))
    return term


def _schatten_bracket_data(q: MatrixQuantities) -> tuple[int, arb, int, arb] | None:
    """Per-matrix data for cheap S_p brackets: (r, Σ log lo_i, r_up, Σ hi_i²), or None.

    r counts the singular values whose certified lower end is > 0 and
    r_up = the certified rank upper bound (only σ_1..σ_{r_up} can be nonzero).
    """
    if q.sigma_lower is None or q.sigma_upper is None:
        return None
    r_up = q.rank[1] if q.rank is not None else len(q.sigma_upper)
    lo = [float(v) for v in q.sigma_lower[:r_up] if v > 0]
    if not lo:
        return None
    hi = q.sigma_upper[:r_up]
    log_sum = sum((arb(v).log() for v in lo), arb(0))  # floats are exact balls
    sq_sum = sum((arb(float(v)) ** 2 for v in hi), arb(0))
    return len(lo), log_sum, r_up, sq_sum


def _schatten_bracket(data: tuple[int, arb, int, arb], p: Fraction) -> arb:
    """A ball containing S_p(W), p ∈ (0, 2], from two classical inequalities.

    Lower (AM–GM over the r singular values with positive certified lower
    ends, dropping the other nonnegative terms):
    S_p ≥ Σ_{lo_i>0} σ_i^p ≥ r·(Π σ_i)^{p/r} ≥ r·exp((p/r)·Σ log lo_i).
    Upper (power means, t ↦ t^{p/2} concave for p ≤ 2, at most r_up nonzero σ):
    S_p ≤ r_up^{1−p/2}·(Σ σ_i²)^{p/2} ≤ r_up^{1−p/2}·(Σ hi_i²)^{p/2}.
    """
    r, log_sum, r_up, sq_sum = data
    pa = _arb_fraction(p)
    lower = r * (pa * log_sum / r).exp()
    upper = pow_nonnegative(arb(r_up), 1 - pa / 2) * pow_nonnegative(sq_sum, pa / 2) if p != 2 else sq_sum
    return lower.lower().union(upper.upper())


def _contribution_curve_pruned(
    q: MatrixQuantities, K: arb, width: int, grid: Sequence[Fraction]
) -> tuple[list[arb], list[bool]]:
    """c(p) on the grid, exact (kernel S_p) only where p can be the minimiser.

    Every p gets a cheap certified bracket of c(p) (:func:`_schatten_bracket`;
    exact at p = 0). Let U = min_p (upper end of the bracket). A p whose
    bracket's lower end exceeds U cannot attain the minimum (its true c(p) >
    U ≥ min_q c(q)), so only the remaining p are evaluated exactly; the
    minimum over the grid is then the minimum over those, and every returned
    ball (exact or bracket) still contains its c(p).
    """
    data = _schatten_bracket_data(q)
    if data is None:
        return _contribution_curve(q.schatten_cached, K, width, grid), [True] * len(grid)
    balls, exact = [], []
    for p in grid:
        if p == 0:
            balls.append(_c_of_S(q.schatten_cached(p), K, width, p))
            exact.append(True)
        else:
            balls.append(_c_of_S(_schatten_bracket(data, p), K, width, p))
            exact.append(False)
    bound = balls[0].upper()
    for b in balls[1:]:
        if b.upper() < bound:
            bound = b.upper()
    for i, p in enumerate(grid):
        if not exact[i] and not (balls[i].lower() > bound):
            balls[i] = _c_of_S(q.schatten_cached(p), K, width, p)
            exact[i] = True
    return balls, exact


def _first_float_argmin(balls: Sequence[arb]) -> int:
    """Index of the smallest midpoint (first on ties) — a float *search* only."""
    mids = [float(b.mid()) if b.is_finite() else math.inf for b in balls]
    return int(np.argmin(np.asarray(mids)))


def paper_proxies(
    quantities: Iterable[MatrixQuantities],
    variant: str = "paper",
    lipschitz_phi: arb | None = None,
    exact_grid: bool = True,
) -> ProxyResult:
    """Certified B_ours and B_Edelman of one model (``paper-known.md`` §6).

    Parameters
    ----------
    quantities
        One :class:`MatrixQuantities` per QK/VO head and per M_in/M_out of every
        layer (other types are ignored).
    variant
        ``"paper"``: the authors' code (L_φ = 1.13 in α only). ``"corrected"``:
        L_φ also in γ_QK, γ_V, γ_{M_in} and in the matching Edelman factors, as
        Lemma 1.6 of ``explicit-bound.md`` §1.6 (``proofs/theory-lipschitz.md``)
        derives for BERT-like blocks (GELU between M_in and M_out).
    lipschitz_phi
        Override L_φ (a ball). Default: 113/100 (paper) or
        :func:`gelu_lipschitz_constant` (corrected).
    exact_grid
        ``True``: every c(p) from the kernel's S_p. ``False``: c(p) for grid
        points that provably cannot attain the minimum is reported as a cheap
        certified bracket (AM–GM / power-mean bounds on S_p) instead — same
        certified minimum and p*, much faster for wide models (used by the
        sweep's random-init grid).

    Returns
    -------
    ProxyResult
        Balls containing the proxies' values at the exact stored weights.

    Notes
    -----
    Soundness: every factor is a ball containing the exact quantity (kernel
    certificates), every operation is a ball operation, powers of nonnegative
    balls use :func:`pow_nonnegative`, and the minimum over the grid is
    :func:`ball_min`. The choice of p* uses floats but does not enter the
    certified minimum.
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown proxy variant {variant!r}; choose one of {VARIANTS}")
    num_layers, num_heads, width, table = _index_model(quantities)
    m, grid = schatten_grid(num_layers, width)
    with working_precision(DEFAULT_PREC):
        if lipschitz_phi is None:
            lipschitz_phi = (
                _arb_fraction(PAPER_GELU_LIPSCHITZ) if variant == "paper" else gelu_lipschitz_constant()
            )
        lphi_gamma = lipschitz_phi if variant == "corrected" else arb(1)

        def C2(layer: int, head: int | None, t: str) -> arb:
            return table[(layer, head, t)].spectral

        # Layer Lipschitz factors and the propagation factors α^{(ℓ)}.
        lip = []
        for k in range(num_layers):
            att = arb(0)
            for h in range(num_heads):
                att = att + C2(k, h, "VO") * (1 + 4 * C2(k, h, "QK"))
            lip.append(lipschitz_phi * C2(k, None, "M_in") * C2(k, None, "M_out") * att)
        alpha = [arb(1)] * num_layers
        for layer in range(num_layers - 2, -1, -1):
            alpha[layer] = alpha[layer + 1] * lip[layer + 1]

        two_thirds = _arb_fraction(Fraction(2, 3))
        matrices: list[MatrixProxy] = []
        layers: list[LayerProxy] = []
        total = arb(0)
        edelman_sum = arb(0)
        for layer in range(num_layers):
            m_in, m_out = C2(layer, None, "M_in"), C2(layer, None, "M_out")
            entries: list[tuple[int | None, str, arb, arb]] = []  # head, type, γ, Edelman γ'
            for h in range(num_heads):
                v = C2(layer, h, "VO")
                entries.append((h, "QK", 2 * v * m_out * m_in * lphi_gamma, v * m_out * m_in * lphi_gamma))
                entries.append((h, "VO", m_out * m_in * lphi_gamma, m_out * m_in * lphi_gamma))
            entries.append((None, "M_in", m_out * lphi_gamma, m_out * lphi_gamma))
            entries.append((None, "M_out", arb(1), arb(1)))
            xi = arb(0)
            for head, t, gamma, gamma_e in entries:
                q = table[(layer, head, t)]
                K = gamma * alpha[layer] * num_layers
                if exact_grid:
                    c, c_exact = _contribution_curve(q.schatten_cached, K, width, grid), None
                else:
                    c, c_exact = _contribution_curve_pruned(q, K, width, grid)
                # Bracketed (pruned) grid points provably cannot be the minimiser.
                k_star = _first_float_argmin(
                    c if c_exact is None else [v if e else arb.pos_inf() for v, e in zip(c, c_exact)]
                )
                contribution = ball_min(c)
                e_term = pow_nonnegative(gamma_e * q.norm_21, two_thirds)
                xi = xi + e_term
                total = total + contribution
                matrices.append(
                    MatrixProxy(
                        layer=layer,
                        head=head,
                        type=t,
                        shape=tuple(q.shape),
                        gamma=gamma,
                        K=K,
                        c=c,
                        c_exact=c_exact,
                        p_star_index=k_star,
                        p_star=grid[k_star],
                        contribution=contribution,
                        contribution_at_p_star=c[k_star],
                        spectral=q.spectral,
                        norm_21=q.norm_21,
                        edelman_term=e_term,
                    )
                )
            edelman_sum = edelman_sum + pow_nonnegative(alpha[layer], two_thirds) * xi
            layers.append(LayerProxy(layer=layer, alpha=alpha[layer], lipschitz=lip[layer], xi=xi))
        B_ours = total + arb(num_layers).sqrt()
        B_edelman = pow_nonnegative(1 + edelman_sum, _arb_fraction(Fraction(3, 2)))
    return ProxyResult(
        variant=variant,
        num_layers=num_layers,
        num_heads=num_heads,
        width=width,
        m=m,
        grid=grid,
        lipschitz_phi=lipschitz_phi,
        B_ours=B_ours,
        B_edelman=B_edelman,
        matrices=matrices,
        layers=layers,
    )


def variant_ratios(corrected: ProxyResult, paper: ProxyResult) -> dict[str, arb]:
    """Balls containing corrected/paper for B_ours and B_Edelman (the audit finding).

    The corrected variant multiplies γ (and the Edelman factors) by L_φ ≈ 1.129
    and uses the exact constant in α instead of 1.13, so the ratios are usually
    a little above 1 for B_ours and above 1 for B_Edelman.
    """
    with working_precision(DEFAULT_PREC):
        return {
            "B_ours": corrected.B_ours / paper.B_ours,
            "B_edelman": corrected.B_edelman / paper.B_edelman,
        }

