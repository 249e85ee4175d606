"""Certified singular values: the a-posteriori certificate (Theorem R).

Theorem R (proofs/enclosure.md §1). Let W ∈ ℝ^{m×n}, k = min(m, n), and let
X ∈ ℝ^{m×k}, Y ∈ ℝ^{n×k} and s ∈ ℝ^k be *any* matrices and vector (in
practice a float64 thin SVD). If ``‖XᵀX − I‖₂ ≤ α < 1``, ``‖YᵀY − I‖₂ ≤ β < 1``
and ``‖W − X diag(s) Yᵀ‖₂ ≤ e``, then with ``s₍₁₎ ≥ … ≥ s₍ₖ₎`` the sorted
``|sᵢ|``, for every i ≤ k

    max(0, s₍ᵢ₎√((1−α)(1−β)) − e) ≤ σᵢ(W) ≤ s₍ᵢ₎√((1+α)(1+β)) + e.

No gap or simplicity assumption is needed: clusters, repeated and zero
singular values are covered.

Three modes compute α, β, e:

``fast``  three BLAS products with a-priori error bounds (:mod:`.fperror`);
``tight`` the same products made near-exact by error-free splitting
          (:mod:`.tight`);
``arb``   the products in ``arb_mat`` ball arithmetic (slow; the reference);
``gram``  a different certificate: eigenvalues of the rounded Gram matrix
          W Wᵀ (Theorem G, proofs/enclosure-gram.md; from order
          :data:`~certbound.enclose.gram.TRIDIAGONAL_MIN_ORDER` on Theorem G-T,
          a tridiagonal T and Sturm counts, recorded as ``"gram-tri"``) —
          3.5–4× cheaper than ``fast`` at 768×3072 (measured; README, kernel
          section), tight at σ₁ but with widths growing like (σ₁/σᵢ)².
``auto``  per matrix the cheapest certificate meeting a width target:
          ``gram`` when every σᵢ's width is ≤ 1e-8·max(σᵢ, 1e-2·σ₁)
          (:func:`meets_width_target`), else ``fast`` intersected with it
          (mode recorded as ``"fast+gram"`` or ``"fast+gram-tri"``), so never
          wider than ``fast`` where the target is missed. Where the two cost
          about the same (m·n·min(m, n) ≤ :data:`AUTO_SMALL_WORK`, all below
          1 ms) width decides: fast ∩ gram, never wider than either. From
          order ``reconstruct.RECONSTRUCT_MIN_ORDER`` on, where it is cheaper,
          Theorem G-R (no Q̂; recorded ``"gram-rec"``) is tried first when a
          Sturm test (three shifts) predicts it meets the target, and kept only if
          it does, per σᵢ and in the median (proofs/enclosure.md §12).

A failed certificate (α ≥ 1, NaN from LAPACK, non-convergence) is retried with
LAPACK's ``gesvd`` driver, then in ``arb`` mode for small matrices, and at
worst returns the trivial enclosure [0, ∞] with a warning — never a wrong
number.

>>> import numpy as np
>>> enc = enclose_singular_values(np.array([[3.0, 0.0], [0.0, 4.0]]))
>>> [float(lo) <= t <= float(hi) for lo, hi, t in zip(enc.lower, enc.upper, [4, 3])]
[True, True]
>>> enc.rank
RankBounds(lower=2, upper=2)
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

import numpy as np
import scipy.linalg
import scipy.linalg.lapack
from flint import arb, arb_mat

from certbound._blas import blas_threads, threads_for, threads_for_gram
from certbound.ball import (
    arb_from_float,
    ball_to_json,
    decimal_lower,
    decimal_upper,
    float_lower,
    float_upper,
    trivial_nonnegative,
    under_float_model,
    working_precision,
)
from certbound.enclose import fperror
from certbound.enclose._input import exact_float64_operand_amax, power_of_two_scaling

__all__ = [
    "RankBounds",
    "SingularValueEnclosure",
    "CertificateWarning",
    "enclose_singular_values",
    "theorem_r_intervals",
    "theorem_r_float_bounds",
    "meets_width_target",
    "AUTO_RELATIVE_TARGET",
    "AUTO_SMALL_WORK",
    "MODES",
]

MODES = ("fast", "tight", "arb", "gram", "auto")

#: The recorded modes of the Gram certificates (Theorem G-T, Theorem G with eigenvectors, its fallback,
#: and Theorem G-R in mode auto; proofs/enclosure-gram.md §1a, §1, proofs/enclosure-reconstruct.md):
#: α, β there are not Theorem R's X, Y bounds.
GRAM_CERTIFICATES = ("gram", "gram-tri", "gram-rec")

#: Above this many scalar multiply-adds (m·n·k) the arb mode is not used as a
#: silent fallback (it would take minutes); it is still available on request.
_ARB_FALLBACK_LIMIT = 4_000_000


class CertificateWarning(UserWarning):
    """A certificate failed and a weaker (still valid) enclosure was returned."""


@dataclasses.dataclass(frozen=True)
class RankBounds:
    """Certified bounds ``lower ≤ rank(W) ≤ upper``."""

    lower: int
    upper: int

    @property
    def exact(self) -> bool:
        """True when the rank is known exactly."""
        return self.lower == self.upper


@dataclasses.dataclass(frozen=True, repr=False)
class SingularValueEnclosure:
    """Certified enclosures of all singular values of one matrix.

    Attributes
    ----------
    shape : (m, n) of the certified matrix.
    sigma : tuple of ``flint.arb``, length min(m, n); ``sigma[i]`` contains
        the (i+1)-th largest singular value.
    lower, upper : float64 arrays, outward rounded (``lower[i] ≤ σᵢ₊₁ ≤
        upper[i]``), descending, ``lower ≥ 0``.
    mode : the certificate that succeeded (``"fast"``, ``"tight"``, ``"arb"``,
        ``"gram"`` (Theorem G with eigenvectors), ``"gram-tri"`` (Theorem G-T),
        ``"gram-rec"`` (Theorem G-R, mode auto), ``"fast+gram"``, ``"fast+gram-tri"``,
        ``"product"``, ``"zero"``) or ``"trivial"``.
    certified : False when the trivial enclosure [0, ∞] was returned.
    alpha, beta, residual : the certificate's bounds on ‖XᵀX − I‖₂,
        ‖YᵀY − I‖₂ and ‖W − X diag(s) Yᵀ‖₂ (in the matrix's own units). In
        ``gram`` mode: ‖UᵀU − I‖₂, ‖Ĝ − WWᵀ‖₂ and ‖Ĝ − UΛUᵀ‖₂ (squared units;
        ``gram-tri``: Q̂, T in place of U, diag(λ)).
    rank : certified :class:`RankBounds`.
    """

    shape: tuple[int, int]
    sigma: tuple[arb, ...]
    lower: np.ndarray
    upper: np.ndarray
    mode: str
    certified: bool
    alpha: arb
    beta: arb
    residual: arb
    rank: RankBounds

    def __len__(self) -> int:
        return len(self.sigma)

    def __repr__(self) -> str:
        """Short: shape, mode, σ₁'s certified interval and the rank (the full σ list is in ``sigma``/``to_json``).

        >>> import numpy as np
        >>> enclose_singular_values(np.diag([3.0, 1.0]))
        SingularValueEnclosure(2x2, mode='fast', sigma_1 in [2.99999, 3.00001], rank 2, 2 values)
        """
        m, n = self.shape
        # directed-rounding printers: the shown interval still contains σ₁
        head = (f"sigma_1 in [{decimal_lower(self.sigma[0], 6)}, {decimal_upper(self.sigma[0], 6)}]"
                if len(self.sigma) else "no values")
        rank = str(self.rank.lower) if self.rank.exact else f"in [{self.rank.lower}, {self.rank.upper}]"
        flag = "" if self.certified else ", NOT certified (trivial enclosure)"
        return (f"SingularValueEnclosure({m}x{n}, mode={self.mode!r}, {head}, rank {rank}, "
                f"{len(self.sigma)} values{flag})")

    def to_json(self, digits: int = 17) -> dict[str, Any]:
        """JSON form: shape, mode, rank and every σᵢ as a certified quantity.

        Parameters
        ----------
        digits : int
            Significant digits of the decimal ends (outward rounded; the
            ``"exact"`` dyadic strings are always exact).

        Returns
        -------
        dict
            ``shape``, ``mode``, ``certified``, ``rank``, the certificate's
            ``alpha``/``beta``/``residual`` and ``sigma`` (one
            :func:`certbound.ball.ball_to_json` dict per σᵢ).

        Examples
        --------
        >>> import numpy as np
        >>> from certbound.enclose import enclose_singular_values
        >>> d = enclose_singular_values(np.diag([2.0, 1.0])).to_json(digits=6)
        >>> d["shape"], d["rank"], d["sigma"][0]["lower"] <= "2" <= d["sigma"][0]["upper"]
        ([2, 2], {'lower': 2, 'upper': 2}, True)
        """
        return {
            "shape": list(self.shape),
            "mode": self.mode,
            "certified": self.certified,
            "rank": {"lower": self.rank.lower, "upper": self.rank.upper},
            "certificate": {
                "alpha": ball_to_json(self.alpha, digits),
                "beta": ball_to_json(self.beta, digits),
                "residual": ball_to_json(self.residual, digits),
            },
            "sigma": [ball_to_json(x, digits) for x in self.sigma],
        }


def _theorem_r_factors(alpha: arb, beta: arb, e: arb) -> tuple[arb, arb, arb] | None:
    """Theorem R's factors √((1−α)(1−β)), √((1+α)(1+β)) and e's upper end, from the upper ends
    of α, β, e (call inside ``working_precision``); None unless all are finite and α, β < 1."""
    a, b, ee = alpha.upper(), beta.upper(), e.upper()
    if not (a.is_finite() and b.is_finite() and ee.is_finite()):
        return None
    if not (a < 1 and b < 1):
        return None
    return ((1 - a) * (1 - b)).sqrt(), ((1 + a) * (1 + b)).sqrt(), ee


def theorem_r_intervals(
    s: np.ndarray, alpha: arb, beta: arb, e: arb, scale_exponent: int = 0
) -> list[arb] | None:
    """Theorem R: balls for σᵢ from sorted ``|s|`` and the bounds α, β, e.

    The result is multiplied by ``2**scale_exponent`` (exact). Returns None if
    the hypotheses fail (α or β not < 1, or a non-finite bound).
    Proof: proofs/enclosure.md §1.

    Parameters
    ----------
    s : ndarray
        The float singular values of the scaled matrix (any order, signs ignored).
    alpha, beta : arb
        Balls whose upper ends bound ‖XᵀX − I‖₂ and ‖YᵀY − I‖₂.
    e : arb
        A ball whose upper end bounds the residual ‖W − X diag(s) Yᵀ‖₂.
    scale_exponent : int
        The balls are multiplied by ``2**scale_exponent``.

    Returns
    -------
    list of arb or None
        One ball per σᵢ, in decreasing order (lower ends ≥ 0); None if the
        hypotheses fail.

    Examples
    --------
    >>> from flint import arb
    >>> [str(b) for b in theorem_r_intervals(np.array([2.0]), arb(0), arb(0), arb(0))]
    ['2.00000000000000']
    """
    with working_precision():
        factors = _theorem_r_factors(alpha, beta, e)
        if factors is None:
            return None
        down, up, ee = factors
        two = arb(2) ** scale_exponent
        out = []
        for si in sorted((abs(float(x)) for x in s), reverse=True):
            sv = arb_from_float(si)
            lo = (sv * down - ee).lower()
            hi = (sv * up + ee).upper()
            if not lo > 0:
                lo = arb(0)
            out.append(lo.union(hi) * two)
        return out


class _BallsWithEnds(list):
    """The balls σᵢ of a certificate (a list of arb, as every certificate returns) with their float ends.

    ``lower[i] ≤ σᵢ₊₁ ≤ upper[i]`` are the outward floats the balls were made
    from, so :func:`_build` need not convert every ball back to floats.
    """

    lower: np.ndarray
    upper: np.ndarray
    #: True when ``lower``/``upper`` are already monotone (non-increasing), ``lower ≥ 0``, and the balls are
    #: their exact hulls: then :func:`_build` uses the balls as they are.
    tightened: bool = False


_MIN_NORMAL = 2.0**-1022


def _hull_balls(lower: np.ndarray, upper: np.ndarray) -> list[arb]:
    """Balls containing ``[lower[i], upper[i]]``, one Arb construction each (proofs/enclosure.md §1, *Balls*).

    The midpoint and radius floats are formed for all i at once: ``m = fl(lo/2 + hi/2)`` (any float would
    do) and ``r = succ(max(|fl(hi − m)|, |fl(m − lo)|))``, so ``r ≥ max(|hi − m|, |m − lo|)`` (Lemma 10.1), and
    ``arb(m, r)`` is ``[m ± r']`` with ``r' ≥ r`` (Arb rounds the radius up): it contains ``[lo, hi]``.
    Where ``lo == hi`` the ball is the exact point. ≈ 1.7× faster than ``arb(lo).union(arb(hi))`` per σ
    (whose 30-bit radius also rounds up); non-finite ends take that path.

    >>> b = _hull_balls(np.array([1.0, 2.0, 0.0]), np.array([1.0 + 2.0**-30, 2.0, 3.0]))
    >>> [bool(x.lower() <= lo and hi <= x.upper()) for x, lo, hi in zip(b, [1.0, 2.0, 0.0], [1.0 + 2.0**-30, 2.0, 3.0])]
    [True, True, True]
    >>> bool(b[1] == 2), bool(b[1].rad() == 0)
    (True, True)
    """
    lo = np.asarray(lower, dtype=np.float64).reshape(-1)
    hi = np.asarray(upper, dtype=np.float64).reshape(-1)
    with np.errstate(all="ignore"):
        mid = 0.5 * lo + 0.5 * hi  # no overflow; inexact (subnormal halves) is fine: r covers the actual m
        rad = np.nextafter(np.maximum(np.abs(hi - mid), np.abs(mid - lo)), np.inf)
        point = lo == hi
    if not (np.all(np.isfinite(rad)) and np.all(np.isfinite(mid))):
        with working_precision():
            return [arb(x) if x == y else arb(x).union(arb(y)) for x, y in zip(lo.tolist(), hi.tolist())]
    mid = np.where(point, lo, mid)
    rad = np.where(point, 0.0, rad)
    with working_precision():
        return list(map(arb, mid.tolist(), rad.tolist()))


def theorem_r_float_bounds(
    s: np.ndarray, alpha: arb, beta: arb, e: arb, scale_exponent: int = 0
) -> list[arb] | None:
    """Theorem R for all σᵢ at once in floats, one step outward per operation (proofs/enclosure.md §1, Lemma 10.1).

    Same contract as :func:`theorem_r_intervals` (None when α or β is not < 1
    or a bound is infinite); the balls are the hulls of the float ends
    ``pred(pred(s₍ᵢ₎·ℓ) − ē)`` (clamped at 0) and ``succ(succ(s₍ᵢ₎·h) + ē)`` with
    floats ``ℓ ≤ √((1−α)(1−β))``, ``h ≥ √((1+α)(1+β))``, ``ē ≥ e`` from Arb,
    scaled by ``2**scale_exponent`` with ``ldexp`` (exact when every scaled end is
    a normal float or 0; otherwise :func:`theorem_r_intervals` is used).

    Parameters
    ----------
    s : ndarray
        Computed singular values (any order and sign; ``|s|`` sorted descending is used).
    alpha, beta, e : arb
        The certificate's bounds on ‖UᵀU − I‖₂, ‖VᵀV − I‖₂ and the residual (Theorem R).
    scale_exponent : int
        The balls are multiplied by ``2**scale_exponent``.

    Returns
    -------
    list of arb or None
        Balls for σ₁ ≥ σ₂ ≥ …, as a :class:`_BallsWithEnds` carrying the float
        ends as ``.lower`` / ``.upper``; None when the hypotheses are not certified.

    >>> b = theorem_r_float_bounds(np.array([1.0, 2.0]), arb(0), arb(0), arb(0))
    >>> float(b.lower[0]) <= 2.0 <= float(b.upper[0]), float(b.lower[1]) <= 1.0 <= float(b.upper[1])
    (True, True)
    """
    with working_precision():
        factors = _theorem_r_factors(alpha, beta, e)
        if factors is None:
            return None
        dn = max(float_lower(factors[0]), 0.0)
        upf = float_upper(factors[1])
        ef = float_upper(factors[2])
    sv = np.sort(np.abs(np.asarray(s, dtype=np.float64).reshape(-1)))[::-1]
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        # Lemma 10.1 after each rounded operation; monotone in the operands.
        lo = np.maximum(np.nextafter(np.nextafter(sv * dn, -np.inf) - ef, -np.inf), 0.0)
        hi = np.nextafter(np.nextafter(sv * upf, np.inf) + ef, np.inf)
        lo2, hi2 = np.ldexp(lo, scale_exponent), np.ldexp(hi, scale_exponent)
    # Lower ends strictly above 2⁻¹⁰²²: 2⁻¹⁰²²(1 − 2⁻⁵³) rounds (ties to even) up onto it.
    exact = (bool(np.all(np.isfinite(hi2))) and bool(np.all((lo == 0) | (lo2 > _MIN_NORMAL)))
             and bool(np.all(hi2 >= _MIN_NORMAL)))
    if not exact:
        return theorem_r_intervals(s, alpha, beta, e, scale_exponent)
    out = _BallsWithEnds(_hull_balls(lo2, hi2))
    out.lower, out.upper = lo2, hi2
    return out


def _build(
    shape: tuple[int, int],
    sigma: list[arb],
    mode: str,
    alpha: arb,
    beta: arb,
    residual: arb,
    rank_upper: int,
    certified: bool = True,
) -> SingularValueEnclosure:
    """The :class:`SingularValueEnclosure` of a certificate's balls (float ends outward, monotone tightening).

    Parameters
    ----------
    shape : (m, n)
        Shape of the certified matrix.
    sigma : list of arb
        Balls for σ₁ ≥ … (descending). A :class:`_BallsWithEnds` list (float
        evaluations of Theorems R and G) is built from its float ends by
        :func:`_build_from_bounds`: no per-σ Arb→float conversion.
    mode : str
        The certificate that produced the balls.
    alpha, beta, residual : arb
        The certificate's bounds (reported as they are).
    rank_upper : int
        Known upper bound on the rank.
    certified : bool
        False for the trivial enclosure.

    Returns
    -------
    SingularValueEnclosure
        ``lower``/``upper`` are outward floats of the balls, made monotone
        (proofs/enclosure.md §1, monotone tightening).
    """
    if isinstance(sigma, _BallsWithEnds) and certified:
        return _build_from_bounds(shape, sigma.lower, sigma.upper, mode, alpha, beta, residual, rank_upper,
                                  balls=tuple(sigma) if sigma.tightened else None)
    # Exact-zero tails repeat one ball object: convert each distinct object once.
    memo: dict[int, tuple[float, float]] = {}
    ends = []
    for x in sigma:
        e = memo.get(id(x))
        if e is None:
            e = memo[id(x)] = (max(float_lower(x), 0.0), float_upper(x))
        ends.append(e)
    lower = np.array([e[0] for e in ends], dtype=np.float64).reshape(-1)
    upper = np.array([e[1] for e in ends], dtype=np.float64).reshape(-1)
    # Enclosures of sorted values can be made monotone: σᵢ ≥ σᵢ₊₁ ≥ lowerᵢ₊₁.
    if len(lower):
        lower = np.maximum.accumulate(lower[::-1])[::-1]
        upper = np.minimum.accumulate(upper)
    rank_lower = int(np.count_nonzero(lower > 0))
    return SingularValueEnclosure(
        shape=shape,
        sigma=tuple(sigma),
        lower=lower,
        upper=upper,
        mode=mode,
        certified=certified,
        alpha=alpha,
        beta=beta,
        residual=residual,
        rank=RankBounds(rank_lower, max(rank_upper, rank_lower)),
    )


def _build_from_bounds(
    shape: tuple[int, int],
    lower: np.ndarray,
    upper: np.ndarray,
    mode: str,
    alpha: arb,
    beta: arb,
    residual: arb,
    rank_upper: int,
    balls: tuple[arb, ...] | None = None,
) -> SingularValueEnclosure:
    """:func:`_build` from float bounds ``lower[i] ≤ σᵢ₊₁ ≤ upper[i]`` (no per-σ float conversion).

    The floats must already be valid outward bounds (e.g. from the stacked
    path, proofs/enclosure.md §10, or Lemma G.4 of proofs/enclosure-gram.md).
    Each ball is the exact hull of its two (monotonically tightened) float
    ends; exact zeros share one ball.

    Parameters
    ----------
    shape : (m, n)
        Shape of the certified matrix.
    lower, upper : (k,) float64 arrays
        Valid float bounds of σ₁ ≥ … ≥ σ_k (negative lower ends are read as 0).
    mode : str
        The certificate that produced them.
    alpha, beta, residual : arb
        The certificate's bounds (reported as they are).
    rank_upper : int
        Known upper bound on the rank.
    balls : tuple of arb, optional
        The hulls of ``lower``/``upper``, when these are already monotone and
        ≥ 0 (:attr:`_BallsWithEnds.tightened`): used as they are.

    Returns
    -------
    SingularValueEnclosure
        Certified, with ``sigma`` the hulls of the tightened ends.
    """
    lower = np.maximum(np.asarray(lower, dtype=np.float64).reshape(-1), 0.0)
    upper = np.asarray(upper, dtype=np.float64).reshape(-1)
    if balls is not None and len(balls) == len(upper):
        sigma = balls
    else:
        if len(lower):
            lower = np.maximum.accumulate(lower[::-1])[::-1]
            upper = np.minimum.accumulate(upper)
        zero = arb(0)
        live = int(np.count_nonzero(upper > 0))  # upper ends are non-increasing: the zeros are a suffix
        sigma = tuple(_hull_balls(lower[:live], upper[:live])) + (zero,) * (len(upper) - live)
    rank_lower = int(np.count_nonzero(lower > 0))
    return SingularValueEnclosure(
        shape=shape,
        sigma=sigma,
        lower=lower,
        upper=upper,
        mode=mode,
        certified=True,
        alpha=alpha,
        beta=beta,
        residual=residual,
        rank=RankBounds(rank_lower, max(rank_upper, rank_lower)),
    )


def _zero_enclosure(shape: tuple[int, int], mode: str = "zero") -> SingularValueEnclosure:
    k = min(shape)
    z = arb(0)
    return _build(shape, [z] * k, mode, z, z, z, rank_upper=0)


def trivial_enclosure(shape: tuple[int, int], reason: str, rank_upper: int | None = None) -> SingularValueEnclosure:
    """The valid enclosure σᵢ ∈ [0, ∞] for all i, with a warning.

    Parameters
    ----------
    shape : (int, int)
        The matrix's shape.
    reason : str
        Why the certificate failed (in the warning).
    rank_upper : int, optional
        A proved upper bound on the rank (default min(shape)).

    Returns
    -------
    SingularValueEnclosure
        Every σᵢ ∈ [0, ∞], ``certified=False``, mode ``"trivial"``.

    Warns
    -----
    CertificateWarning
        Always, naming the shape and the reason.
    """
    warnings.warn(
        f"singular value certificate failed for a {shape[0]}x{shape[1]} matrix ({reason}); "
        "returning the trivial enclosure [0, inf]",
        CertificateWarning,
        stacklevel=3,
    )
    k = min(shape)
    t = trivial_nonnegative()
    return _build(shape, [t] * k, "trivial", t, t, t, rank_upper=k if rank_upper is None else rank_upper, certified=False)


#: LAPACK through scipy uses 32-bit integers: above this many entries (or
#: workspace) the gesdd call goes through numpy's (64-bit) LAPACK instead.
_LAPACK32_LIMIT = 2**31 - 1


def _gesdd_thin(Ws: np.ndarray, overwrite: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Thin SVD ``Ws ≈ X diag(s) Yᵀ`` by LAPACK ``dgesdd`` called on the orientation with M ≥ N.

    A C-ordered m×n array with m < n *is* the column-major n×m array Wsᵀ, so
    LAPACK gets it with a plain copy (no transposition) and takes its QR path;
    ``numpy.linalg.svd`` transposes into column-major m×n and takes the LQ path,
    and keeps its own copies of the factors. Measured (1 BLAS thread): 0.48 s
    vs 0.67 s at 768×3072, 8.8 s vs 11.3 s at 2048×8192, and 3.2× vs 4.4× the
    matrix in peak memory. Which float SVD is used does not matter to the
    certificate (Theorem R holds for any X, s, Y); raises ``LinAlgError`` on
    LAPACK failure. ``overwrite=True`` lets LAPACK destroy a C-ordered Ws with
    m ≤ n (then ``Wsᵀ`` is already column-major: no copy at all).
    """
    m, n = Ws.shape
    A = Ws.T if m <= n else Ws  # the orientation with M = max(m, n) rows
    M, N = A.shape
    lw, info = scipy.linalg.lapack.dgesdd_lwork(M, N, compute_uv=1, full_matrices=0)
    if info != 0 or not np.isfinite(lw) or lw > _LAPACK32_LIMIT or M * N > _LAPACK32_LIMIT:
        U, s, Vt = np.linalg.svd(Ws, full_matrices=False)
        return U, s, Vt.T
    # overwrite_a=0: f2py copies A into column-major order (a plain copy when m ≤ n).
    destroy = int(overwrite and m <= n and A.flags.f_contiguous)
    u, s, vt, info = scipy.linalg.lapack.dgesdd(A, compute_uv=1, full_matrices=0, lwork=int(lw), overwrite_a=destroy)
    if info != 0:
        raise np.linalg.LinAlgError(f"dgesdd returned info={info}")
    # A = u diag(s) vt; for A = Wsᵀ: Ws = vtᵀ diag(s) uᵀ.
    return (vt.T, s, u) if m <= n else (u, s, vt.T)


def _float_svd(Ws: np.ndarray, driver: str, overwrite: bool = False
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    try:
        if driver == "gesdd":
            X, s, Y = _gesdd_thin(Ws, overwrite)
        else:
            U, s, Vt = scipy.linalg.svd(Ws, full_matrices=False, lapack_driver=driver, check_finite=False)
            X, Y = U, Vt.T
    except (np.linalg.LinAlgError, ValueError):
        return None
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(s)) and np.all(np.isfinite(Y))):
        return None
    return X, s, Y


def _bounds_fast(Ws, X, s, Y, source=None):
    # Lemmas 3.1, 3.2′ with blocked products: no |X|, |Y|, V or R copies (proofs/enclosure.md §3).
    # ``source = (A, k)``: Ws = fl(2^k A) was given to LAPACK to overwrite; the
    # residual scales A's blocks again (Lemma 3.3), the same floats.
    W, k = (Ws, 0) if source is None else source
    return (
        fperror.gram_deviation_bound(X),
        fperror.gram_deviation_bound(Y),
        fperror.residual_norm_bound(W, X, s, Y, scale_exponent=k),
    )


def _bounds_tight(Ws, X, s, Y):
    from certbound.enclose import tight

    # Tight mode's splitting refuses entries beyond 2^256 (a ValueError meant for
    # callers' inputs). An SVD of the scaled Ws never has such entries unless
    # LAPACK misbehaved: then this certificate fails (infinite bounds) and the
    # fallback chain continues, instead of the whole call crashing (§5).
    if max(float(np.max(np.abs(X), initial=0.0)), float(np.max(np.abs(s), initial=0.0)),
           float(np.max(np.abs(Y), initial=0.0))) > tight.MAX_ABS_ENTRY:
        inf = arb.pos_inf()
        return inf, inf, inf
    return (
        tight.gram_deviation_bound_tight(X),
        tight.gram_deviation_bound_tight(Y),
        tight.residual_norm_bound_tight(Ws, X, s, Y),
    )


def _arb_frobenius_upper(M: arb_mat) -> arb:
    """Ball whose upper end bounds ‖M‖_F for every matrix in the ball matrix M.

    Each entry is replaced by the exact upper end of its absolute value, so
    the sum is of nonnegative exact numbers: ``x * x`` of a ball straddling 0
    would contain negatives and make the square root NaN (the certificate
    then failed for inexact zero entries of XᵀX − I, e.g. ±1e-52).
    """
    acc = arb(0)
    for x in M.entries():
        a = abs(x).upper()
        acc += a * a
    return acc.sqrt()


def _arb_matrix(a: np.ndarray) -> arb_mat:
    # Entry-wise exact: arb(float) is exact.
    return arb_mat(a.shape[0], a.shape[1], [float(v) for v in a.ravel()])


def _bounds_arb(Ws, X, s, Y):
    """α, β, e with every product in ball arithmetic (the reference mode).

    Proof: the balls contain the exact matrices, and ‖·‖₂ ≤ ‖·‖_F evaluated
    in Arb (proofs/enclosure.md §4).
    """
    m, n = Ws.shape
    k = X.shape[1]
    # Precision so that every product of two doubles and the k-term sums are
    # exact whenever exponents allow; wider ranges still give valid balls.
    with working_precision(2 * 53 + k.bit_length() + 64):
        Xa, Ya, Wa = _arb_matrix(X), _arb_matrix(Y), _arb_matrix(Ws)
        eye_k = arb_mat(k, k, [1 if i == j else 0 for i in range(k) for j in range(k)])
        alpha = _arb_frobenius_upper(Xa.transpose() * Xa - eye_k)
        beta = _arb_frobenius_upper(Ya.transpose() * Ya - eye_k)
        S = arb_mat(k, k, [float(s[i]) if i == j else 0 for i in range(k) for j in range(k)])
        e = _arb_frobenius_upper(Wa - Xa * S * Ya.transpose())
        return alpha, beta, e


_BOUNDS = {"fast": _bounds_fast, "tight": _bounds_tight, "arb": _bounds_arb}


def _certify_dense(
    Ws: np.ndarray, mode: str, extra_residual: arb, scale_exponent: int,
    source: tuple[np.ndarray, int] | None = None,
) -> tuple[list[arb], arb, arb, arb, str] | None:
    """Try the requested mode, then other drivers/modes; None if all fail.

    ``source = (A, k)`` says that Ws is our own array ``fl(2^k A)`` (the
    scaling copy of §5): the first fast-mode SVD may then overwrite it (no
    LAPACK input copy; the residual is formed from A's blocks, scaled again)
    and it is rewritten from A if a later attempt needs it.
    """
    if mode == "auto":
        return _certify_auto(Ws, extra_residual, scale_exponent, source=source)
    if mode == "gram":
        from certbound.enclose import gram  # lazy: gram imports this module

        res = gram.certify_gram(Ws, extra_residual, scale_exponent)
        if res is not None:
            return res
        mode = "fast"  # the Gram certificate failed: fall back to the SVD chain
    m, n = Ws.shape
    attempts = [(mode, "gesdd")]
    if mode != "arb":
        attempts.append((mode, "gesvd"))
    if mode != "arb" and m * n * min(m, n) <= _ARB_FALLBACK_LIMIT:
        attempts.append(("arb", "gesvd"))
    intact = True
    for md, driver in attempts:
        if not intact:  # the first SVD destroyed Ws: the same floats again, in place
            fperror.scale_by_power_of_two(source[0], source[1], out=Ws)
            intact = True
        consume = source is not None and md == "fast" and driver == "gesdd" and Ws.flags.c_contiguous \
            and Ws.shape[0] <= Ws.shape[1]
        svd = _float_svd(Ws, driver, overwrite=consume)
        intact = not consume
        if svd is None:
            continue
        X, s, Y = svd
        alpha, beta, e = _bounds_fast(Ws, X, s, Y, source) if consume else _BOUNDS[md](Ws, X, s, Y)
        with working_precision():
            e = e + extra_residual
        sig = theorem_r_float_bounds(s, alpha, beta, e, scale_exponent)
        if sig is not None:
            with working_precision():
                two = arb(2) ** scale_exponent
                return sig, alpha, beta, e * two, md
    return None


#: Mode ``auto``: the relative-width target τ and the spectrum fraction c of
#: :func:`meets_width_target` (proofs/enclosure.md §12). The bounds need σᵢ to
#: about 1e-7 relative where they matter; τ = 1e-8 leaves a factor 10.
AUTO_RELATIVE_TARGET = 1e-8
AUTO_SPECTRUM_FRACTION = 1e-2
#: Mode ``auto``: up to this many multiply–adds m·n·min(m, n) the fast chain costs about as much as Theorem G
#: (measured, one thread: 0.8–1.4× at 8×8 … 64×64, 32×500; both below 1 ms; 1.6× at 64×256, 3.7× at 64×2000),
#: so ``auto`` returns fast ∩ Theorem G there even when Theorem G alone meets τ: never wider than either, where
#: Theorem G alone was up to 12× wider than fast at the small σᵢ (proofs/enclosure.md §12).
AUTO_SMALL_WORK = 1 << 19


def _auto_small(shape: tuple[int, ...]) -> bool:
    """Whether mode ``auto`` intersects with the fast chain even when Theorem G meets τ (:data:`AUTO_SMALL_WORK`)."""
    m, n = int(shape[0]), int(shape[1])
    return m * n * min(m, n) <= AUTO_SMALL_WORK


def meets_width_target(sigma: list[arb], tau: float = AUTO_RELATIVE_TARGET,
                       c: float = AUTO_SPECTRUM_FRACTION) -> bool:
    """Whether every ball's width is ≤ τ·max(σᵢ, c·σ₁) (relative above c·σ₁, absolute below).

    A *decision*, not a bound: widths and midpoints are read as floats (from
    the float ends when the balls carry them, e.g. Theorem G's float evaluation).

    Parameters
    ----------
    sigma : list of arb
        Balls for σ₁ ≥ σ₂ ≥ … (descending).
    tau : float
        Relative width target τ.
    c : float
        Spectrum fraction: below c·σ₁ the width target is the absolute τ·c·σ₁.

    Returns
    -------
    bool
        True when every ball meets the target (also for an empty list).

    >>> meets_width_target([arb(1), arb(0.5).union(arb(0.5 + 1e-10))])
    True
    >>> meets_width_target([arb(1), arb(0).union(arb(1e-6))])
    False
    """
    if not sigma:
        return True
    if isinstance(sigma, _BallsWithEnds):
        lo, hi = sigma.lower, sigma.upper
        top = float(hi[0])
        if not math.isfinite(top):
            return False
        with np.errstate(all="ignore"):
            return bool(np.all(hi - lo <= tau * np.maximum(0.5 * (lo + hi), c * top)))
    top = float(sigma[0].mid()) + float(sigma[0].rad())
    if not math.isfinite(top):
        return False
    floor = c * top
    for x in sigma:
        w = 2 * float(x.rad())
        if not w <= tau * max(float(x.mid()), floor):
            return False
    return True


def _intersect_ends(f: _BallsWithEnds, g: _BallsWithEnds) -> _BallsWithEnds:
    """σᵢ ∈ [max(loᶠᵢ, loᵍᵢ), min(hiᶠᵢ, hiᵍᵢ)] from two certificates' float ends (both valid bounds of σᵢ).

    Exact in floats (never wider than either at any end); the balls are the exact hulls of the new ends.
    Where the two enclosures do not meet (impossible when both are valid) the fast one is kept.
    """
    lo = np.maximum(f.lower, g.lower)
    hi = np.minimum(f.upper, g.upper)
    bad = ~(lo <= hi)
    if np.any(bad):
        lo, hi = np.where(bad, f.lower, lo), np.where(bad, f.upper, hi)
    out = _BallsWithEnds(_hull_balls(lo, hi))
    out.lower, out.upper = lo, hi
    return out


def _intersect(a: arb, b: arb) -> arb:
    """The hull of the intersection of two balls that both contain the same number.

    A ball's radius carries a 30-bit mantissa, so a hull of two exact ends
    can stick out of them by ≤ 2⁻²⁹ of its width; a ball inside the other is
    returned as is.
    """
    if b.contains(a):
        return a
    if a.contains(b):
        return b
    lo = a.lower() if a.lower() >= b.lower() else b.lower()
    hi = a.upper() if a.upper() <= b.upper() else b.upper()
    return lo.union(hi) if lo <= hi else a


def _certify_auto(
    Ws: np.ndarray, extra_residual: arb, scale_exponent: int, res_g: Any = "compute",
    source: tuple[np.ndarray, int] | None = None,
) -> tuple[list[arb], arb, arb, arb, str] | None:
    """Mode ``auto`` (proofs/enclosure.md §12): Theorem G if it meets the width target, else fast ∩ Theorem G.

    Small matrices (:data:`AUTO_SMALL_WORK`) always get fast ∩ Theorem G. The
    intersection takes the better float end per σᵢ when both carry their ends.

    Parameters
    ----------
    Ws : (m, n) float64 array
        The (scaled) matrix.
    extra_residual : arb
        Bound on the scaling perturbation ‖Δ‖₂ (proofs/enclosure.md §5).
    scale_exponent : int
        The σ's are multiplied by ``2**scale_exponent``.
    res_g : tuple, None or "compute"
        A Theorem G result (or None: it failed) already computed for the
        same matrix, e.g. on the unscaled W (:func:`_certify_matrix`);
        ``"compute"`` computes it here.
    source : (A, k), optional
        Ws is our own copy ``fl(2^k A)`` (the fast chain may consume it).

    Returns
    -------
    tuple or None
        ``(sigma, alpha, beta, e, mode)`` as :func:`_certify_dense`, mode
        ``"gram"``, ``"fast+gram"`` or the fast chain's; None if all failed.
    """
    from certbound.enclose import gram  # lazy: gram imports this module

    if isinstance(res_g, str):
        res_g = gram.certify_gram(Ws, extra_residual, scale_exponent, prefer_reconstruct=True,
                                  chunk=gram.auto_gram_chunk(Ws.shape))
    if res_g is not None and meets_width_target(res_g[0]) and not _auto_small(Ws.shape):
        return res_g
    res_f = _certify_dense(Ws, "fast", extra_residual, scale_exponent, source)
    if res_f is None or res_g is None:
        return res_f if res_f is not None else res_g
    f, g = res_f[0], res_g[0]
    if isinstance(f, _BallsWithEnds) and isinstance(g, _BallsWithEnds) and len(f) == len(g):
        sig: list[arb] = _intersect_ends(f, g)
    else:
        with working_precision():
            sig = [_intersect(a, b) for a, b in zip(f, g)]
    return sig, res_f[1], res_f[2], res_f[3], res_f[4] + "+" + res_g[4]


def _certify_matrix(
    A: np.ndarray, mode: str, owned: bool, amax: float | None = None
) -> tuple[list[arb], arb, arb, arb, str] | None:
    """Scale A (in place if ``owned``) and certify it; modes ``gram``/``auto`` try Theorem G on A itself first.

    Theorem G needs no scaling when A's largest entry (``amax`` if the caller
    has it) is in :func:`certbound.enclose.gram.unscaled_gram_ok`'s range
    (proofs/enclosure-gram.md §3): then no scaled copy of A is made unless the
    fast chain has to run after all.
    """
    res_g: Any = "compute"
    if mode in ("gram", "auto"):
        from certbound.enclose import gram  # lazy: gram imports this module

        if gram.unscaled_gram_ok(A, amax):
            auto = mode == "auto"
            res_g = gram.certify_gram(A, arb(0), 0, prefer_reconstruct=auto,
                                      chunk=gram.auto_gram_chunk(A.shape) if auto else None)
            if res_g is not None and (mode == "gram" or (meets_width_target(res_g[0]) and not _auto_small(A.shape))):
                return res_g
    Ws, sexp, exact = power_of_two_scaling(A, inplace=owned)
    with working_precision():
        # Scaling down may round subnormal entries: |ΔWs| ≤ 2⁻¹⁰⁷⁵ entrywise, so
        # ‖ΔWs‖₂ ≤ ‖ΔWs‖_F ≤ √(mn)·2⁻¹⁰⁷⁵ (proofs/enclosure.md §5).
        extra = arb(0) if exact else arb(A.shape[0] * A.shape[1]).sqrt() * arb(2) ** -1075
    # A new scaling copy may be consumed by the fast-mode SVD (_certify_dense, issue 16).
    source = (A, sexp) if not owned and sexp != 0 and Ws is not A else None
    if isinstance(res_g, str):
        return _certify_dense(Ws, mode, extra, -sexp, source)
    if mode == "auto":
        return _certify_auto(Ws, extra, -sexp, res_g, source=source)
    return _certify_dense(Ws, "fast", extra, -sexp, source)  # Theorem G failed: the fast chain (gram mode's fallback)


@under_float_model
def enclose_singular_values(W: Any, mode: str = "fast", exact_rank: bool = False) -> SingularValueEnclosure:
    """Certified enclosures of every singular value of the stored matrix W.

    Parameters
    ----------
    W : array_like, 2-D
        Real matrix (float16, bfloat16, float32, float64 or small integers);
        it is converted to float64 exactly and *that* matrix is certified.
    mode : {"fast", "tight", "arb", "gram", "auto"}
        Which certificate, and how its residuals are bounded (module docstring).
    exact_rank : bool
        Also compute the exact rank over ℚ (:func:`certbound.enclose.rank.exact_rank`)
        and set σᵢ = 0 exactly for i > rank.

    Returns
    -------
    SingularValueEnclosure
        Balls that provably contain σ₁(W) ≥ … ≥ σ_min(m,n)(W).

    Raises
    ------
    ValueError
        On NaN/Inf entries, non-2-D or non-real input, or an unknown mode.

    Notes
    -----
    Soundness: Theorem R (proofs/enclosure.md §1) with α, β, e from
    proofs/enclosure.md §3 (fast), proofs/enclosure-tight.md (tight) or §4
    (arb); power-of-two scaling is exact or its perturbation is added to e
    (§5). Modes ``gram``/``auto`` certify W unscaled when its range allows
    (proofs/enclosure-gram.md §3). A Fortran-ordered W is certified as its
    transpose (no copy); W itself is never modified (§5).

    Examples
    --------
    >>> import numpy as np
    >>> W = np.diag([1.0, 1e-8, 0.0])
    >>> enc = enclose_singular_values(W, mode="arb")
    >>> bool(enc.lower[1] <= 1e-8 <= enc.upper[1]), enc.rank.lower
    (True, 2)
    >>> enclose_singular_values(W, exact_rank=True).rank
    RankBounds(lower=2, upper=2)
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    # A Fortran-ordered W is certified as its C-ordered transpose (no copy;
    # σ(Wᵀ) = σ(W)); a conversion copy is ours to scale in place (§5).
    # max|a| once (two SIMD reductions, which also decide finiteness, §5 "Input check"): the zero test here, the
    # unscaled test of modes gram/auto.
    op, amax = exact_float64_operand_amax(W)
    A = op.array
    shape = (int(A.shape[1]), int(A.shape[0])) if op.transposed else (int(A.shape[0]), int(A.shape[1]))
    k = min(shape)
    if k == 0 or amax == 0:
        return _zero_enclosure(shape)
    rank_upper = k
    if exact_rank:
        from certbound.enclose.rank import exact_rank as _exact_rank

        rank_upper = _exact_rank(A)  # rank(Wᵀ) = rank(W); before A may be scaled in place
    # BLAS threads chosen per matrix (certbound._blas): one unless it is large.
    # The Gram route (modes gram/auto) stays single-threaded up to large matrices (certbound._blas).
    with blas_threads(threads_for_gram(*shape) if mode in ("gram", "auto") else threads_for(*shape)):
        res = _certify_matrix(A, mode, op.owned, amax)
    if res is None:
        return trivial_enclosure(shape, "no SVD driver or mode produced a valid certificate", rank_upper)
    sigma, alpha, beta, e, used = res
    if op.transposed and used not in GRAM_CERTIFICATES:
        alpha, beta = beta, alpha  # Theorem R for Wᵀ: its X, Y are W's Y, X
    if exact_rank:
        sigma = list(sigma[:rank_upper]) + [arb(0)] * (k - rank_upper)
        enc = _build(shape, sigma, used, alpha, beta, e, rank_upper)
        # The exact rank is both bounds (σᵢ > 0 for i ≤ rank even where a lower end is 0).
        return dataclasses.replace(enc, rank=RankBounds(rank_upper, rank_upper))
    return _build(shape, sigma, used, alpha, beta, e, rank_upper)
