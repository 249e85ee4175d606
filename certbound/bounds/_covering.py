"""Lemma A (explicit Theorem 4.1): covering a constrained linear map, in Arb.

``proofs/theory-covering.md`` (Lemmas A0, A1, Z, A2a–c, A; spec §2).

The class is ``𝒲(a, b, r̄, p, s, c) = {W ∈ ℝ^{a×b}: rank W ≤ r̄, ‖W‖₂ ≤ c, S_p(W) ≤ s}``
measured by ``d_U(W, W') = max_{u∈U} ‖u(W − W')‖₂`` over at most ``M`` rows of
norm ≤ 1. Every function here returns an Arb ball whose **upper endpoint** is
an upper bound on ``ln N(𝒲, ε, d_U)`` (or on the stated piece).

Soundness of the float search: Lemma A holds for *every* threshold τ, split
``ε₁ + ε₂ = ε`` and sphere-net δ (spec §2.5, "equivalently, for every single
τ"; for ``p = 0`` the only split is τ ≥ c). A float optimiser
(:func:`choose_cover`) picks them; they are converted to exact dyadic numbers
(:class:`CoverChoice`) and the bound is then evaluated in Arb at that choice
(:func:`log_cover_linear_map`). A bad choice gives a larger, still valid,
number. Branches (``ε ≥ c ⇒ 0``, ``τ ≥ c ⇒ r_τ = 0``, ``η ≥ min(τ̄, R_τ) ⇒
H_tail = 0``) are taken only when *proved* in Arb (spec §11 erratum 5);
integer parts use the upper endpoint.

Examples
--------
Spec §7.3, one 4×4 matrix, ``p = 1``, ``s = 1.85``, ``c = 1``, ``M = 3·10⁶``:

>>> from fractions import Fraction as F
>>> cls = LinearMapClass(4, 4, 4, F(1), 1.85, 1, 3 * 10**6)
>>> v = log_cover_linear_map(cls, 0.05)             # optimised: parameter counting
>>> round(float(v.mid()), 3)                        # 16 ln 41
59.417
>>> split = CoverChoice("split", tau=F(1, 2), rank_share=F(1, 2), tail="volume")
>>> round(float(log_cover_linear_map(cls, 0.05, split).mid()), 2)   # 148.09 + 59.417
207.51
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional

import numpy as np
from flint import arb

from certbound.ball import float_lower, float_upper, under_float_model
from certbound.bounds._arbutil import prec, Number, as_arb, ceil_upper, floor_upper, is_proved_ge

__all__ = [
    "LinearMapClass",
    "CoverChoice",
    "TAIL_KINDS",
    "log_cover_rank_part",
    "log_cover_tail_coord",
    "log_cover_tail_vector",
    "log_cover_tail_volume",
    "split_rank",
    "tail_radii",
    "log_cover_tail",
    "log_cover_linear_map",
    "choose_cover",
]

TAIL_KINDS = ("coord", "vector", "volume")

# Relative margin added to float-chosen thresholds so that the intended branch
# (r_τ = r, τ ≥ c) is provable in Arb after the exact conversion.
_MARGIN = 2.0**-30


def _pos_inf() -> arb:
    return arb.pos_inf()


@dataclass(frozen=True)
class LinearMapClass:
    """The constraint set 𝒲 of spec §2.1 plus the number of rows ``M``.

    Parameters
    ----------
    n_in, n_out : int
        Shape ``a × b`` (row-vector convention ``x ↦ xW``).
    rank_arch : int
        Architectural rank bound ``r̄ ≤ min(a, b)``.
    schatten_p : Fraction or int
        ``p ∈ [0, 2]`` (grid values are rationals ``k/m``).
    schatten_radius : number
        ``s``: bound on ``S_p(W) = Σ σᵢ^p`` (``p = 0``: on the rank).
    spectral_radius : number
        ``c > 0``: bound on ``‖W‖₂``.
    n_rows : int
        ``M``: number of rows of ``U`` (``nT`` for the Transformer's matrices).
    """

    n_in: int
    n_out: int
    rank_arch: int
    schatten_p: Fraction
    schatten_radius: Number
    spectral_radius: Number
    n_rows: int

    def __post_init__(self) -> None:
        a, b, r = self.n_in, self.n_out, self.rank_arch
        if not all(isinstance(v, (int, np.integer)) and v >= 1 for v in (a, b, self.n_rows)):
            raise ValueError(f"n_in, n_out, n_rows must be positive integers, got {a}, {b}, {self.n_rows}")
        if not (isinstance(r, (int, np.integer)) and 1 <= r <= min(a, b)):
            raise ValueError(f"rank_arch must be in [1, min(n_in, n_out)] = [1, {min(a, b)}], got {r}")
        p = Fraction(self.schatten_p)
        if not (0 <= p <= 2):
            raise ValueError(f"schatten_p must lie in [0, 2], got {p}")
        object.__setattr__(self, "schatten_p", p)
        with prec():
            s, c = as_arb(self.schatten_radius), as_arb(self.spectral_radius)
        if not bool(s >= 0):
            raise ValueError(f"schatten_radius must be ≥ 0, got {s}")
        if not bool(c > 0):
            raise ValueError(f"spectral_radius must be > 0, got {c}")
        object.__setattr__(self, "_s", s)
        object.__setattr__(self, "_c", c)
        # cached balls used at every node
        with prec():
            object.__setattr__(self, "_p_arb", as_arb(p))
            object.__setattr__(self, "_two_minus_p", as_arb(2 - p))
            object.__setattr__(self, "_sqrt_rbar", arb(int(r)).sqrt())
        object.__setattr__(self, "_r0", int(min(floor_upper(s), r)) if p == 0 else int(r))

    @property
    def s(self) -> arb:
        """``s`` as a ball."""
        return self._s  # type: ignore[attr-defined]

    @property
    def c(self) -> arb:
        """``c`` as a ball."""
        return self._c  # type: ignore[attr-defined]

    def rank_only_rank(self) -> int:
        """``r₀ = min(⌊s⌋, r̄)`` for ``p = 0``, ``r̄`` for ``p > 0`` (spec §2.5)."""
        return self._r0  # type: ignore[attr-defined]


@dataclass(frozen=True)
class CoverChoice:
    """Analysis parameters of Lemma A at one ε, as exact rationals.

    ``kind``: ``"rank"`` (Lemma A1 alone, rank ``r₀``) or ``"split"`` (Lemma A0
    at threshold ``tau``; ``rank_share`` = ε₁/ε ∈ [0, 1); ``tail`` one of
    ``"coord"`` (A2a), ``"vector"`` (A2b, with ``sphere_delta`` ∈ (0, √2)),
    ``"volume"`` (A2c)). Numbers are exact: Fractions or floats (a float is
    an exact dyadic). Any values give a valid bound.
    """

    kind: str
    tau: Optional[Fraction | float] = None
    rank_share: Fraction | float = 0.0
    tail: str = "volume"
    sphere_delta: Optional[Fraction | float] = None

    def __post_init__(self) -> None:
        # Floats are kept as they are: a finite float *is* an exact dyadic
        # rational and converts to Arb without error (spec §11 erratum 5).
        if self.kind not in ("rank", "split"):
            raise ValueError(f"CoverChoice.kind must be 'rank' or 'split', got {self.kind!r}")
        if self.kind == "split":
            if self.tau is None or not (self.tau > 0) or not math.isfinite(self.tau):
                raise ValueError("a split needs a finite tau > 0")
            if not (0 <= self.rank_share < 1):
                raise ValueError(f"rank_share must lie in [0, 1), got {self.rank_share}")
            if self.tail not in TAIL_KINDS:
                raise ValueError(f"tail must be one of {TAIL_KINDS}, got {self.tail!r}")
            if self.tail == "vector":
                d = self.sphere_delta
                if d is None or not (0 < d and d * d < 2):
                    raise ValueError(f"the vector tail needs sphere_delta in (0, √2), got {d}")

    def describe(self) -> str:
        """Short human-readable form."""
        if self.kind == "rank":
            return "rank net (Lemma A1)"
        t = f"{self.tail}" + (f", delta={float(self.sphere_delta):.3g}" if self.tail == "vector" else "")
        return f"split tau={float(self.tau):.4g}, eps1/eps={float(self.rank_share):.3g}, tail={t}"


# ---------------------------------------------------------------------------
# The pieces (Arb). ε arguments are balls; all results are ≥ 0 balls.
# ---------------------------------------------------------------------------


def log_cover_rank_part(n_in: int, n_out: int, rank: int, spectral_radius: Number, eps: Number) -> arb:
    """``H_rank(r, η) = r(a+b+1) ln(1 + 6c/η)``; 0 if ``r = 0`` or ``η ≥ c`` (proved).

    Lemma A1 (``proofs/theory-covering.md`` §A1): the rank-≤r, ‖·‖₂ ≤ c matrices
    have an operator-norm η-net of size ``(1 + 6c/η)^{r(a+b+1)}`` inside the set.
    ``η = 0`` with ``r ≥ 1`` gives +∞.

    >>> round(float(log_cover_rank_part(4, 4, 3, 1, 0.025).mid()), 2)
    148.09
    """
    with prec():
        c, e = as_arb(spectral_radius), as_arb(eps)
        if rank <= 0 or is_proved_ge(e, c):
            return arb(0)
        if not bool(e > 0):
            return _pos_inf()
        return arb(int(rank) * (n_in + n_out + 1)) * (1 + 6 * c / e).log()


def _steps(x: arb) -> int | float:
    """``⌈x⌉ − 1`` at the upper endpoint, floored at 0 (number of perceptron updates)."""
    t = ceil_upper(x)
    return max(t - 1, 0) if t != math.inf else math.inf


def log_cover_tail_coord(n_out: int, n_rows: int, frob_radius: Number, eps: Number) -> arb:
    """``H_coord(R, η) = (⌈R²b/η²⌉ − 1) ln(2Mb + 1)`` (Lemma A2a).

    Lemma Z applied to the ``Mb`` points ``uᵀe_jᵀ`` at accuracy ``η/√b``
    (``proofs/theory-covering.md`` §A2a); ``⌈·⌉`` at the upper endpoint.

    >>> round(float(log_cover_tail_coord(4, 3 * 10**6, arb(0.925).sqrt(), 0.025).mid()))
    100585
    """
    with prec():
        R, e = as_arb(frob_radius), as_arb(eps)
        if not bool(e > 0):
            return _pos_inf()
        t = _steps(R * R * n_out / (e * e))
        if t == math.inf:
            return _pos_inf()
        return arb(int(t)) * arb(2 * n_rows * n_out + 1).log()


def log_cover_tail_vector(n_out: int, n_rows: int, frob_radius: Number, eps: Number, sphere_delta: Number) -> arb:
    """``H_vec(R, η; δ) = (⌈R²/(η²κ_δ²)⌉ − 1)[ln(M+1) + b ln(1 + 2/δ)]``, ``κ_δ = 1 − δ²/2`` (Lemma A2b).

    ``proofs/theory-covering.md`` §A2b; δ ∈ (0, √2).

    >>> round(float(log_cover_tail_vector(4, 3 * 10**6, arb(0.925).sqrt(), 0.025, 0.45).mid()))
    39741
    """
    with prec():
        R, e, d = as_arb(frob_radius), as_arb(eps), as_arb(sphere_delta)
        if not (bool(d > 0) and bool(d * d < 2)):
            raise ValueError(f"sphere_delta must lie in (0, √2), got {d}")
        if not bool(e > 0):
            return _pos_inf()
        kappa = 1 - d * d / 2
        t = _steps(R * R / (e * e * kappa * kappa))
        if t == math.inf:
            return _pos_inf()
        return arb(int(t)) * (arb(n_rows + 1).log() + n_out * (1 + 2 / d).log())


def log_cover_tail_volume(n_in: int, n_out: int, op_radius: Number, eps: Number) -> arb:
    """``H_vol(t, η) = ab ln(1 + 2t/η)`` (Lemma A2c: volumetric net of the ‖·‖₂ ≤ t ball; ``d_U ≤ ‖·‖₂``).

    ``proofs/theory-covering.md`` §A2c.

    >>> round(float(log_cover_tail_volume(4, 4, 0.5, 0.025).mid()), 3)
    59.417
    """
    with prec():
        t, e = as_arb(op_radius), as_arb(eps)
        if not bool(e > 0):
            return _pos_inf()
        return arb(n_in * n_out) * (1 + 2 * t / e).log()


def split_rank(cls: LinearMapClass, tau: Number) -> int:
    """``r_τ`` of Lemma A0(1): 0 if ``τ ≥ c`` (proved), else ``min(⌈sτ^{-p}⌉ − 1, r̄)`` (``p > 0``).

    Uses the sharper ``⌈·⌉ − 1`` (spec §11 (e)) at the upper endpoint. For
    ``p = 0``: ``r₀`` unless ``τ ≥ c``. ``proofs/theory-covering.md`` §A0.

    >>> from fractions import Fraction as F
    >>> split_rank(LinearMapClass(4, 4, 4, F(1), 1.85, 1, 10), 0.5)
    3
    """
    with prec():
        t = as_arb(tau)
        if is_proved_ge(t, cls.c):
            return 0
        if cls.schatten_p == 0:
            return cls.rank_only_rank()
        p = cls._p_arb  # type: ignore[attr-defined]
        k = _steps(cls.s / t**p) if bool(t > 0) else math.inf
        return int(min(k, cls.rank_arch))


def tail_radii(cls: LinearMapClass, tau: Number) -> tuple[arb, arb]:
    """``(τ̄, R_τ)`` of Lemma A0(2, 3): ``τ̄ = min(τ, c)`` bounds ‖W₂‖₂ and
    ``R_τ = min(τ̄√r̄, (s τ̄^{2−p})^{1/2})`` bounds ‖W₂‖_F (``p > 0``).

    For ``p = 0`` (only used with τ ≥ c, spec §11 (c)): ``R = τ̄√r₀``.
    ``proofs/theory-covering.md`` §A0.
    """
    with prec():
        t = as_arb(tau)
        tbar = t.min(cls.c)  # min is monotone, so the ball encloses min(τ, c)
        if cls.schatten_p == 0:
            return tbar, tbar * arb(cls.rank_only_rank()).sqrt()
        r1 = tbar * cls._sqrt_rbar  # type: ignore[attr-defined]
        two_minus_p = cls._two_minus_p  # type: ignore[attr-defined]
        r2 = (cls.s * tbar**two_minus_p).sqrt() if cls.schatten_p != 2 else cls.s.sqrt()
        return tbar, r1.min(r2)


def log_cover_tail(
    cls: LinearMapClass, tau: Number, eps: Number, tail: str = "volume", sphere_delta: Number | None = None
) -> arb:
    """``H_tail(τ, η)`` of spec §2.4 with the chosen tail cover.

    0 if ``η ≥ min(τ̄, R_τ)`` is proved (then {0} is a cover); else the chosen
    one of A2a/A2b/A2c. ``proofs/theory-covering.md`` §Tail.
    """
    with prec():
        e = as_arb(eps)
        tbar, R = tail_radii(cls, tau)
        if is_proved_ge(e, tbar.min(R)):
            return arb(0)
        if tail == "volume":
            return log_cover_tail_volume(cls.n_in, cls.n_out, tbar, e)
        if tail == "coord" or (tail == "vector" and cls.n_out == 1):
            return log_cover_tail_coord(cls.n_out, cls.n_rows, R, e)
        if tail == "vector":
            if sphere_delta is None:
                raise ValueError("the vector tail needs sphere_delta")
            return log_cover_tail_vector(cls.n_out, cls.n_rows, R, e, sphere_delta)
        raise ValueError(f"unknown tail kind {tail!r}")


@under_float_model
def log_cover_linear_map(
    cls: LinearMapClass,
    eps: Number,
    choice: CoverChoice | None = None,
    *,
    rho: Number = 1,
    allow_p0_tail: bool = True,
) -> arb:
    """Lemma A: a ball whose upper end bounds ``ln N(𝒲, ε, d_U)`` for rows of norm ≤ ρ.

    Evaluates ``H_A(ε/ρ)`` (spec §2.5; input radius §2.1) at the analysis
    parameters ``choice`` (float-optimised by :func:`choose_cover` if omitted).
    Returns 0 when ``ε/ρ ≥ c`` is proved. Sound for every choice
    (``proofs/theory-covering.md`` §A). ``allow_p0_tail`` permits, at
    ``p = 0``, the τ ≥ c tail of spec §11 (c) during the search.
    """
    with prec():
        e = as_arb(eps) / as_arb(rho)
        if is_proved_ge(e, cls.c):
            return arb(0)
        if choice is None:
            choice = choose_cover(cls, float_lower(e), allow_p0_tail=allow_p0_tail)[1]
        if choice.kind == "rank":
            return log_cover_rank_part(cls.n_in, cls.n_out, cls.rank_only_rank(), cls.c, e)
        tau = as_arb(choice.tau)
        r = split_rank(cls, tau)
        if r == 0:
            e1, e2 = arb(0), e
        else:
            f = as_arb(choice.rank_share)
            e1, e2 = e * f, e * (1 - f)
        part = log_cover_rank_part(cls.n_in, cls.n_out, r, cls.c, e1) if r > 0 else arb(0)
        return part + log_cover_tail(cls, tau, e2, choice.tail, choice.sphere_delta)


# ---------------------------------------------------------------------------
# Float search (chooses analysis parameters only; never the reported value)
# ---------------------------------------------------------------------------

_DELTAS = (0.15, 0.35, 0.6, 0.9)
_TAIL_CODES = ("volume", "coord") + tuple(f"vector:{d}" for d in _DELTAS)
_TAIL_CODES_QUICK = ("volume", "coord", "vector:0.6")


def _r_candidates(rbar: int, count: int = 14) -> np.ndarray:
    if rbar <= 1:
        return np.array([0])
    g = np.unique(np.round(np.geomspace(1, max(rbar - 1, 1), count)).astype(np.int64))
    return np.concatenate([[0], g])


def _balanced_share(A: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """Approximate minimiser f of A ln(1/f) + Q/(1−f)² (rank part vs Frobenius tail).

    Root of φ(f) = A(1−f)³ − 2Qf, convex and decreasing on [0, 1]: Newton from
    f = 0 increases monotonically towards the root (no overshoot).
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        f = np.zeros(np.broadcast(A, Q).shape)
        for _ in range(5):
            g = 1 - f
            g2 = g * g
            f = f + (A * g2 * g - 2 * Q * f) / (3 * A * g2 + 2 * Q)
        f = np.where(np.isfinite(f), f, 0.0)
    return np.clip(f, 0.0, 1 - 2.0**-20)


def _float_log_cover(
    a: int,
    b: int,
    rbar: int,
    M: int,
    c: float,
    p: np.ndarray,
    s: np.ndarray,
    E: np.ndarray,
    allow_p0_tail: bool = True,
    *,
    quick: bool = False,
) -> tuple[np.ndarray, dict]:
    """Vectorised float estimate of H_A at many (p, s, ε).

    ``p, s``: shape (P,); ``E``: shape (P, K) (ε/ρ, floats). Returns the best
    value (P, K) and arrays describing the argmin (to rebuild a CoverChoice).
    ``quick``: fewer candidate ranks and one sphere-net δ (for searches).
    """
    codes = _TAIL_CODES_QUICK if quick else _TAIL_CODES
    p = np.asarray(p, dtype=float)[:, None, None]  # (P,1,1)
    s = np.asarray(s, dtype=float)[:, None, None]
    E = np.asarray(E, dtype=float)[:, None, :]  # (P,1,K)
    P, K = p.shape[0], E.shape[2]
    ab1 = a + b + 1
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        r0 = np.where(p == 0, np.minimum(np.floor(s), rbar), rbar)  # (P,1,1)
        rank_only = np.where(r0 > 0, r0 * ab1 * np.log1p(6 * c / E), 0.0)  # (P,1,K)
        rank_only = np.where(E >= c, 0.0, rank_only)[:, 0, :]
        rc = _r_candidates(rbar, 6 if quick else 14)[None, :, None].astype(float)  # (1,R,1)
        cm = c * (1 + _MARGIN)
        pos = p > 0
        ps = np.where(pos, p, 1.0)
        tau_r = np.where(pos, (s / (rc + 1)) ** (1 / ps) * (1 + _MARGIN), cm)
        tau_r = np.where(tau_r <= 0, cm, tau_r)
        tau = np.minimum(tau_r, cm)  # (P,R,1)
        r_eff = np.where(tau >= c, 0.0, np.minimum(rc, rbar))
        valid = pos | (rc == 0)
        if not allow_p0_tail:
            valid = valid & pos
        tbar = np.minimum(tau, c)
        R = np.where(
            pos,
            np.minimum(tbar * math.sqrt(rbar), np.sqrt(s * tbar ** (2 - ps))),
            tbar * np.sqrt(np.maximum(r0, 0)),
        )
        A = r_eff * ab1
        thr = np.minimum(tbar, R)
        vals, shares = [], []
        for code in codes:
            if code == "volume":
                f = np.where(A > 0, A / (A + a * b), 0.0) * np.ones_like(E)
            else:
                if code == "coord":
                    Q = R**2 * b * math.log(2 * M * b + 1) / E**2
                else:
                    d = float(code.split(":")[1])
                    kap = 1 - d * d / 2
                    Q = R**2 * (math.log(M + 1) + b * math.log1p(2 / d)) / (E**2 * kap**2)
                f = np.where(A > 0, _balanced_share(A, Q), 0.0)
            e1, e2 = f * E, (1 - f) * E
            rk = np.where((A > 0) & (e1 < c), A * np.log1p(6 * c / e1), 0.0)
            rk = np.where((A > 0) & (e1 <= 0), np.inf, rk)
            if code == "volume":
                tl = a * b * np.log1p(2 * tbar / e2)
            elif code == "coord" or b == 1:
                tl = np.maximum(np.ceil(R**2 * b / e2**2) - 1, 0) * math.log(2 * M * b + 1)
            else:
                d = float(code.split(":")[1])
                kap = 1 - d * d / 2
                tl = np.maximum(np.ceil(R**2 / (e2**2 * kap**2)) - 1, 0) * (
                    math.log(M + 1) + b * math.log1p(2 / d)
                )
            tl = np.where(e2 >= thr, 0.0, tl)
            v = np.where(valid, rk + tl, np.inf)
            v = np.where(np.isnan(v), np.inf, v)
            vals.append(v)
            shares.append(f * np.ones_like(v))
        V = np.stack(vals, axis=0)  # (T,P,R,K)
        S = np.stack(shares, axis=0)
    T, R_ = V.shape[0], V.shape[2]
    flat = V.transpose(1, 3, 0, 2).reshape(P, K, T * R_)
    idx = np.argmin(flat, axis=2)
    best_split = np.take_along_axis(flat, idx[..., None], axis=2)[..., 0]
    use_rank = rank_only <= best_split
    best = np.where(use_rank, rank_only, best_split)
    best = np.where(E[:, 0, :] >= c, 0.0, best)
    tail_i, r_i = np.divmod(idx, R_)
    Sflat = S.transpose(1, 3, 0, 2).reshape(P, K, T * R_)
    share = np.take_along_axis(Sflat, idx[..., None], axis=2)[..., 0]
    tau_full = np.broadcast_to(tau, (P, R_, 1))[:, :, 0]  # (P,R)
    tau_sel = np.take_along_axis(tau_full, r_i, axis=1)
    # Proposition A3's own choice (τ*, ε/2, coordinate tail) as one more candidate, so the
    # optimised value is never above the closed form (spec §9 item 8).
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        p2, s2, E2 = p[:, :, 0], s[:, :, 0], E[:, 0, :]
        ta = (s2 * ab1 * E2**2 / (4 * rbar * b)) ** (1 / (np.where(p2 > 0, p2, 1.0) + 2)) * (1 + _MARGIN)
        ta = np.where(ta > 0, ta, cm)
        ra = np.where(ta >= c, 0.0, np.minimum(np.maximum(np.ceil(s2 / ta ** np.where(p2 > 0, p2, 1.0)) - 1, 0), rbar))
        tba = np.minimum(ta, c)
        Ra2 = np.minimum(tba**2 * rbar, s2 * tba ** (2 - np.where(p2 > 0, p2, 1.0)))
        e1, e2 = E2 / 2, E2 / 2
        rk = np.where((ra > 0) & (e1 < c), ra * ab1 * np.log1p(6 * c / e1), 0.0)
        tl = np.where(e2 >= np.minimum(tba, np.sqrt(Ra2)), 0.0,
                      np.maximum(np.ceil(Ra2 * b / e2**2) - 1, 0) * math.log(2 * M * b + 1))
        a3 = np.where((p2 > 0) & (E2 < c), rk + tl, np.inf)
        a3 = np.where(np.isnan(a3), np.inf, a3)
    use_a3 = a3 < best
    best = np.where(use_a3, a3, best)
    info = {"use_rank": use_rank & ~use_a3, "tail_index": tail_i, "tau": tau_sel, "share": share, "codes": codes,
            "use_a3": use_a3, "tau_a3": ta}
    return best, info


_RANK_CHOICE = None


def _choice_from_info(info: dict, i: int, k: int) -> CoverChoice:
    global _RANK_CHOICE
    if bool(info["use_rank"][i, k]):
        if _RANK_CHOICE is None:
            _RANK_CHOICE = CoverChoice("rank")
        return _RANK_CHOICE
    if bool(info["use_a3"][i, k]):
        return CoverChoice("split", tau=float(info["tau_a3"][i, k]), rank_share=0.5, tail="coord")
    code = info["codes"][int(info["tail_index"][i, k])]
    tau = float(info["tau"][i, k])
    share = float(info["share"][i, k])
    if code.startswith("vector"):
        return CoverChoice("split", tau=tau, rank_share=share, tail="vector",
                           sphere_delta=float(code.split(":")[1]))
    return CoverChoice("split", tau=tau, rank_share=share, tail=code)


def _float_params(cls: LinearMapClass) -> tuple[float, float]:
    return float_upper(cls.c), float_upper(cls.s)


def choose_cover(cls: LinearMapClass, eps: float, *, allow_p0_tail: bool = True) -> tuple[float, CoverChoice]:
    """Float search for Lemma A's analysis parameters at one accuracy ``eps`` (= ε/ρ).

    Tries the rank net and, for a set of thresholds τ (one per candidate rank
    ``r_τ``), the three tail covers with a balanced split (and four sphere-net
    δ's). Returns ``(float estimate, CoverChoice)``. The estimate is *not*
    certified; evaluate the choice with :func:`log_cover_linear_map`.
    """
    c, s = _float_params(cls)
    best, info = _float_log_cover(
        cls.n_in, cls.n_out, cls.rank_arch, cls.n_rows, c,
        np.array([float(cls.schatten_p)]), np.array([s]), np.array([[float(eps)]]), allow_p0_tail,
    )
    return float(best[0, 0]), _choice_from_info(info, 0, 0)
