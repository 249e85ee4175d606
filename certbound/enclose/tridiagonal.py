"""Householder tridiagonalisation and rigorous Sturm counts (Theorem G-T's ingredients).

Theorem G-T (proofs/enclosure-gram.md §1a) certifies σ(W) from *any* float
matrix Q̂ and symmetric tridiagonal T = tridiag(e, d, e) with Ĝ ≈ Q̂TQ̂ᵀ and
enclosures [aⱼ, bⱼ] of the eigenvalues of T. This module provides both:

* :func:`householder_tridiagonal`: LAPACK ``dsytrd`` (Householder, blocked)
  and ``dorgqr`` for Q̂ = [[1, 0], [0, Q₁]]. Nothing about LAPACK's accuracy
  is assumed: Q̂, d, e are data, and the certificate bounds ‖Q̂ᵀQ̂ − I‖₂ and
  ‖Ĝ − Q̂TQ̂ᵀ‖₂ afterwards (:mod:`.fperror`).
* :func:`sturm_counts`: the float Sturm recurrence, vectorised over shifts,
  with its run-time guards; a count that passes them is the exact number of
  eigenvalues below μ of a matrix T̄(μ) with ‖T̄(μ) − T‖₂ ≤ ρ
  (:func:`sturm_perturbation`; Lemma S of proofs/enclosure-gram.md §1a).
* :func:`tridiagonal_eigenvalue_bounds`: floats aⱼ ≤ λⱼ(T) ≤ bⱼ for all j
  from two shifts per eigenvalue around LAPACK ``dsterf``'s approximations.

>>> import numpy as np
>>> d, e = np.array([2.0, 2.0, 2.0]), np.array([-1.0, -1.0])   # eigenvalues 2 − √2, 2, 2 + √2
>>> lo, hi = tridiagonal_eigenvalue_bounds(d, e)
>>> bool(np.all(lo <= np.array([2 + 2**0.5, 2, 2 - 2**0.5])) and np.all(np.array([2 + 2**0.5, 2, 2 - 2**0.5]) <= hi))
True
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.linalg.lapack as _lapack
from flint import arb

from certbound.ball import float_upper, working_precision

__all__ = [
    "householder_tridiagonal",
    "dsytrd_lower",
    "tridiagonal_from_reflectors",
    "sturm_counts",
    "sturm_perturbation",
    "gershgorin_bounds",
    "tridiagonal_eigenvalue_bounds",
    "MIN_NORMAL",
    "SHIFT_BATCH_ENTRIES",
    "SCALAR_SHIFTS",
]

#: Smallest positive normal binary64 number (the guards of Lemma S).
MIN_NORMAL = 2.0**-1022
_ETA = 2.0**-1074
_U = 2.0**-53

#: The Sturm recurrence keeps k × (shifts) signs (and, on the guarded path, pivots and quotients)
#: for the vectorised checks; shifts are processed in batches of at most this many entries.
SHIFT_BATCH_ENTRIES = 1 << 21


def householder_tridiagonal(G: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Float Q̂, d, e with ``G ≈ Q̂ tridiag(e, d, e) Q̂ᵀ`` (LAPACK ``dsytrd`` + ``dorgqr``); None on failure.

    ``dsytrd`` (lower triangle, optimal blocked workspace) reduces G to T =
    QᵀGQ with Q = H₁⋯H_{k−1} stored as reflectors below the subdiagonal;
    ``dorgqr`` forms Q̂ = [[1, 0], [0, Q₁]] from them (shifted one column
    right, behind an identity reflector), in one k×k array.
    Only G's lower triangle is read. The certificate assumes nothing about
    these floats (Theorem G-T, proofs/enclosure-gram.md §1a).

    Parameters
    ----------
    G : (k, k) float64 array
        Symmetric; not modified.

    Returns
    -------
    tuple of numpy.ndarray or None
        ``(Q, d, e)``: Q (k, k) Fortran-ordered, d (k,), e (k−1,); None when
        LAPACK reports an error or returns a non-finite d or e.

    Raises
    ------
    ValueError
        If G is not a square matrix.

    Examples
    --------
    >>> G = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 1.0]])
    >>> Q, d, e = householder_tridiagonal(G)
    >>> T = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    >>> bool(np.abs(Q @ T @ Q.T - G).max() < 1e-14)
    True
    """
    if np.ndim(G) != 2 or np.shape(G)[0] != np.shape(G)[1]:
        raise ValueError(f"householder_tridiagonal: G must be a square matrix, got shape {np.shape(G)}")
    k = G.shape[0]
    if k == 0:
        return np.zeros((0, 0), order="F"), np.zeros(0), np.zeros(0)
    if k == 1:
        d = np.array([float(G[0, 0])])
        return (np.ones((1, 1), order="F"), d, np.zeros(0)) if np.isfinite(d[0]) else None
    ref = dsytrd_lower(G)
    return None if ref is None else tridiagonal_from_reflectors(*ref)


def dsytrd_lower(G: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """LAPACK ``dsytrd`` (lower triangle) with its optimal blocked workspace: ``(c, d, e, tau)`` or None.

    scipy's wrapper defaults to a minimal workspace (the unblocked code: 4.7 vs 3.1 ms at order 384, measured);
    the optimal one comes from ``dsytrd_lwork``. ``_lapack.dsytrd`` is looked up at call time, so a patched
    ``scipy.linalg.lapack.dsytrd`` (the referee's lying LAPACK) is what runs. Nothing about the output is
    assumed by the certificates (data only, proofs/enclosure-gram.md §1a).

    Parameters
    ----------
    G : (k, k) float64 array, k ≥ 2
        Symmetric (only its lower triangle is read); not modified.

    Returns
    -------
    tuple of numpy.ndarray or None
        ``(c, d, e, tau)``: c (k, k) Fortran-ordered (reflectors below the subdiagonal), d (k,), e (k−1,),
        tau (k−1,); None when LAPACK reports an error or d, e are not finite.

    Examples
    --------
    >>> c, d, e, tau = dsytrd_lower(np.array([[2.0, 1.0, 1.0], [1.0, 2.0, 0.0], [1.0, 0.0, 2.0]]))
    >>> d.shape, e.shape, c.flags.f_contiguous
    ((3,), (2,), True)
    """
    k = G.shape[0]
    try:
        lw, info = _lapack.dsytrd_lwork(k, lower=1)
        if info != 0:
            return None
        c, d, e, tau, info = _lapack.dsytrd(G, lower=1, lwork=max(int(lw), 1))
    except (ValueError, np.linalg.LinAlgError):
        return None
    if info != 0 or not (np.all(np.isfinite(d)) and np.all(np.isfinite(e))):
        return None
    return np.asfortranarray(c), np.ascontiguousarray(d), np.ascontiguousarray(e), np.ascontiguousarray(tau)


def tridiagonal_from_reflectors(c: np.ndarray, d: np.ndarray, e: np.ndarray, tau: np.ndarray
                                ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`householder_tridiagonal`'s second step: Q̂ from ``dsytrd``'s reflectors (LAPACK ``dorgqr``).

    ``(c, d, e, tau)`` as ``dsytrd`` (lower) returns them, e.g. from
    :func:`certbound.enclose.reconstruct.householder_reflectors` (the same call), so that
    Theorem G-T and Theorem G-R share one ``dsytrd``; not modified.

    Parameters
    ----------
    c : (k, k) float64 array
        ``dsytrd``'s output matrix (reflectors below the subdiagonal), k ≥ 2.
    d, e, tau : float64 arrays
        Diagonal (k,), off-diagonal (k−1,) and reflector factors (k−1,).

    Returns
    -------
    tuple of numpy.ndarray or None
        ``(Q, d, e)`` as :func:`householder_tridiagonal`; None when LAPACK
        reports an error or d, e are not finite.

    Examples
    --------
    >>> G = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 1.0]])
    >>> c, d, e, tau, _ = _lapack.dsytrd(G, lower=1)
    >>> Q, d, e = tridiagonal_from_reflectors(c, d, e, tau)
    >>> bool(np.abs(Q @ (np.diag(d) + np.diag(e, 1) + np.diag(e, -1)) @ Q.T - G).max() < 1e-14)
    True
    """
    k = c.shape[0]
    try:
        # Reflector i (v(i+1) = 1, v(i+2:) below c's subdiagonal) becomes column i+1 of a k×k array whose
        # column 0 is the identity reflector (τ = 0): dorgqr then returns Q̂ = H₀H₁⋯ = [[1, 0], [0, Q₁]] in place.
        Q = np.zeros((k, k), order="F")
        Q[1:, 1:] = c[1:, :-1]
        t = np.zeros(k)
        t[1:] = tau[: k - 1]
        # dorgqr's blocked code needs k·nb workspace; 64 ≥ LAPACK's block size for dorgqr.
        Q, _work, info = _lapack.dorgqr(Q, t, lwork=max(64 * k, 1), overwrite_a=1)
        if info != 0:
            return None
    except (ValueError, np.linalg.LinAlgError):
        return None
    # A non-finite Q̂ makes the residual and α bounds infinite (checked there); d, e are checked here.
    if not (np.all(np.isfinite(d)) and np.all(np.isfinite(e))):
        return None
    return Q, np.ascontiguousarray(d), np.ascontiguousarray(e)


def sturm_counts(d: np.ndarray, e: np.ndarray, shifts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Float Sturm counts of T = tridiag(e, d, e) at every shift, with Lemma S's guards.

    EXACTLY this recurrence (proofs/enclosure-gram.md §1a, Lemma S; the order of
    operations is the one machine-checked in proofs/coq/SturmFloat.v):
    ``s = fl(e·e)`` once; ``q₁ = fl(d₁ − μ)``; ``qᵢ = fl(fl(dᵢ − μ) − fl(sᵢ₋₁/qᵢ₋₁))``;
    the count is #{i : qᵢ < 0}. It is *valid* when every ``fl(eᵢ·eᵢ)`` is
    > 2⁻¹⁰²² or eᵢ = 0 (else no count is valid: zero such eᵢ first, as
    :func:`tridiagonal_eigenvalue_bounds` does), every ``|fl(sᵢ/qᵢ)|`` is
    > 2⁻¹⁰²² or sᵢ = 0, and every qᵢ is finite and nonzero. Then the count is
    the number of eigenvalues below μ of some T̄(μ) with T's diagonal and
    ‖T̄(μ) − T‖₂ ≤ :func:`sturm_perturbation` (e).

    When |dᵢ| < 2, |eᵢ| < 2, eᵢ = 0 or |eᵢ| ≥ 2⁻³⁰⁰ and |μ| ≤ 8 (T normalised,
    as :func:`tridiagonal_eigenvalue_bounds` makes it) the guards are checked
    through the single sufficient condition minᵢ |qᵢ| ≥ 2⁻⁴⁰⁰ (Lemma S,
    *normalised guard*), accumulated over blocks of pivot rows (Python
    scalars for ≤ :data:`SCALAR_SHIFTS` shifts); otherwise each guard is
    checked as stated.

    Parameters
    ----------
    d : (k,) float64 array
        Diagonal of T.
    e : (k−1,) float64 array
        Off-diagonal of T.
    shifts : (s,) float64 array
        The shifts μ.

    Returns
    -------
    counts : (s,) int64 array
        #{i : qᵢ < 0} per shift (meaningful only where ``valid``).
    valid : (s,) bool array
        Whether the guards held for that shift.

    Raises
    ------
    ValueError
        If e does not have one entry fewer than d.

    Examples
    --------
    >>> c, v = sturm_counts(np.array([1.0, 3.0]), np.array([1.0]), np.array([0.0, 2.0, 5.0]))
    >>> c.tolist(), v.tolist()      # eigenvalues 2 ± √2
    ([0, 1, 2], [True, True, True])
    """
    d = np.asarray(d, dtype=np.float64).reshape(-1)
    e = np.asarray(e, dtype=np.float64).reshape(-1)
    mu = np.asarray(shifts, dtype=np.float64).reshape(-1)
    k = d.size
    if e.size != max(k - 1, 0):
        raise ValueError(f"sturm_counts: d has {k} entries, e has {e.size} (expected {max(k - 1, 0)})")
    ns = mu.size
    if ns == 0 or k == 0:
        return np.zeros(ns, dtype=np.int64), np.full(ns, k == 0)
    with np.errstate(all="ignore"):
        s = e * e  # fl(eᵢ·eᵢ), once
        if not (bool(np.all((e == 0) | (s > MIN_NORMAL))) and bool(np.all(np.isfinite(s)))):
            return np.zeros(ns, dtype=np.int64), np.zeros(ns, dtype=bool)  # a square outside the normal range
        ae = np.abs(e)
        normalised = (bool(np.all(np.abs(d) < 2)) and bool(np.all(ae < 2)) and bool(np.all((e == 0) | (ae >= _TINY)))
                      and bool(np.all(np.abs(mu) <= 8)))
        run = _sturm_normalised if normalised else _sturm_guarded
        counts = np.empty(ns, dtype=np.int64)
        valid = np.empty(ns, dtype=bool)
        batch = max(1, SHIFT_BATCH_ENTRIES // k)
        for b0 in range(0, ns, batch):
            b1 = min(b0 + batch, ns)
            counts[b0:b1], valid[b0:b1] = run(d, s, mu[b0:b1])
    return counts, valid


#: Normalised Sturm counts (|d|, |e| < 2, |μ| ≤ 8): off-diagonals below this are zeroed first, and
#: a count is valid when every pivot has |qᵢ| ≥ _TAU (Lemma S, normalised guard).
_TINY = 2.0**-300
_TAU = 2.0**-400
#: Pivot rows per block of the vectorised normalised recurrence (the block stays in cache).
_PIVOT_BLOCK = 64
#: Up to this many shifts the normalised recurrence runs in Python scalars. Measured (one thread): the vectorised
#: loop costs ≈ 0.4 ms (k = 384) / 0.8 ms (k = 768) for any few shifts, the scalar one ≈ 0.045 / 0.09 ms per shift.
SCALAR_SHIFTS = 8


def _sturm_normalised(d: np.ndarray, s: np.ndarray, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The recurrence with the normalised guard min |qᵢ| ≥ 2⁻⁴⁰⁰ (Lemma S, *normalised guard*).

    Rows of pivots in blocks of :data:`_PIVOT_BLOCK`: ``fl(dᵢ − μ)`` for a whole
    block in one operation, then per row ``fl(sᵢ₋₁/qᵢ₋₁)`` and the subtraction in
    place (two array operations per i); signs and min |qᵢ| are taken per block.
    The floats are the recurrence's, in its order. Few shifts (the retry) take
    :func:`_sturm_normalised_scalar`, the same floats in Python scalars.
    """
    k, w = d.size, mu.size
    if w <= SCALAR_SHIFTS:
        return _sturm_normalised_scalar(d, s, mu)
    counts = np.zeros(w, dtype=np.uint64)
    low = np.full(w, np.inf)  # running min |qᵢ| (NaN propagates, and fails the test)
    r = np.empty(w)
    nb = min(k, _PIVOT_BLOCK)
    Qbuf, Abuf, prev = np.empty((nb, w)), np.empty((nb, w)), np.empty(w)  # prev: q of the row before the block
    Sbuf = Abuf.view(np.uint64)
    rows = list(Qbuf)  # the row views, made once (the loop is per-call overhead bound)
    sl = s.tolist()  # Python floats: the same binary64 values
    divide, subtract, shift, absolute = np.divide, np.subtract, np.right_shift, np.abs
    minimum, add = np.minimum.reduce, np.add.reduce
    with np.errstate(all="ignore"):
        for i0 in range(0, k, nb):
            i1 = min(i0 + nb, k)
            Q = Qbuf[: i1 - i0]
            subtract.outer(d[i0:i1], mu, out=Q)  # fl(dᵢ − μ), every row of the block
            first = 0 if i0 else 1  # q₁ = fl(d₁ − μ)
            p = prev if i0 else rows[0]
            for row, s_prev in zip(rows[first: i1 - i0], sl[i0 + first - 1: i1 - 1]):
                divide(s_prev, p, r)  # fl(sᵢ₋₁/qᵢ₋₁)
                subtract(row, r, row)  # fl(fl(dᵢ − μ) − fl(sᵢ₋₁/qᵢ₋₁))
                p = row
            # #{qᵢ < 0} as the sum of sign bits: equal wherever the guard holds (every qᵢ finite, nonzero).
            S = Sbuf[: i1 - i0]
            counts += add(shift(Q.view(np.uint64), 63, out=S), axis=0)
            np.minimum(low, minimum(absolute(Q, out=Abuf[: i1 - i0]), axis=0), out=low)
            np.copyto(prev, Q[-1])
    return counts.astype(np.int64), low >= _TAU


def _sturm_normalised_scalar(d: np.ndarray, s: np.ndarray, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_sturm_normalised` for few shifts, in Python floats (binary64, round to nearest: the same floats).

    A shift stops at its first |qᵢ| < 2⁻⁴⁰⁰ (or NaN): the normalised guard has
    failed and its count is not used. Before that, |qᵢ₋₁| ≥ 2⁻⁴⁰⁰ and sᵢ₋₁ < 4,
    so no division by zero and no overflow occurs.
    """
    dl, sl = d.tolist(), s.tolist()
    k = len(dl)
    counts = np.zeros(mu.size, dtype=np.int64)
    valid = np.zeros(mu.size, dtype=bool)
    for t, m_ in enumerate(mu.tolist()):
        q = dl[0] - m_
        if not abs(q) >= _TAU:
            continue
        c = q < 0
        i = 1
        while i < k:
            q = (dl[i] - m_) - sl[i - 1] / q
            if not abs(q) >= _TAU:
                break
            c += q < 0
            i += 1
        if i == k:
            counts[t], valid[t] = c, True
    return counts, valid


def _sturm_guarded(d: np.ndarray, s: np.ndarray, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The recurrence with each guard of Lemma S checked as stated (any float data)."""
    k, w = d.size, mu.size
    Q = np.empty((k, w))
    R = np.empty((max(k - 1, 1), w))
    with np.errstate(all="ignore"):
        np.subtract(d[0], mu, out=Q[0])
        for i in range(1, k):
            np.divide(s[i - 1], Q[i - 1], out=R[i - 1])  # fl(sᵢ₋₁/qᵢ₋₁)
            np.subtract(d[i], mu, out=Q[i])  # fl(dᵢ − μ)
            np.subtract(Q[i], R[i - 1], out=Q[i])  # fl(fl(dᵢ − μ) − fl(sᵢ₋₁/qᵢ₋₁))
        ok = np.all(np.isfinite(Q) & (Q != 0), axis=0)
        if k > 1:
            ok &= np.all((np.abs(R[: k - 1]) > MIN_NORMAL) | (s == 0)[:, None], axis=0)
    return np.count_nonzero(Q < 0, axis=0), ok


def sturm_perturbation(e: np.ndarray) -> float:
    """Float ρ ≥ 2·max|eᵢ|·(√((1+u)²/(1−u)³) − 1) ≥ ‖T̄(μ) − T‖₂ for every valid shift (Lemma S).

    ``succ(fl(K·max|eᵢ|))`` with a float K ≥ 2(√((1+u)²/(1−u)³) − 1) from Arb, rounded up once
    (:func:`_rho_factor`; Lemma 10.1): ≈ 5u·max|eᵢ|, without an Arb evaluation per call (8.0 → 5.7 µs, measured).

    Parameters
    ----------
    e : (k−1,) float64 array
        Off-diagonal of T (as :func:`sturm_counts` receives it).

    Returns
    -------
    float
        ρ (0.0 when e is empty or zero; ``inf`` for a non-finite e).

    Examples
    --------
    >>> sturm_perturbation(np.array([1.0, -2.0])) / 2.0**-53 < 10.001
    True
    """
    e = np.asarray(e, dtype=np.float64).reshape(-1)
    if e.size == 0:
        return 0.0
    emax = float(np.max(np.abs(e)))
    if emax == 0:
        return 0.0
    if not np.isfinite(emax):
        return float("inf")  # (NaN included)
    # succ(fl(K·emax)) ≥ K·emax ≥ 2·emax·(√(…) − 1) (Lemma 10.1; K from Arb once); +∞ for a non-finite emax.
    with np.errstate(over="ignore", invalid="ignore"):
        return float(np.nextafter(_rho_factor() * emax, np.inf))


@functools.lru_cache(maxsize=1)
def _rho_factor() -> float:
    """A float K ≥ 2(√((1+u)²/(1−u)³) − 1) (Lemma S's ρ per unit of max|eᵢ|), evaluated in Arb and rounded up once."""
    with working_precision():
        u = arb(2) ** -53
        return float_upper(2 * (((1 + u) ** 2 / (1 - u) ** 3).sqrt() - 1))


def gershgorin_bounds(d: np.ndarray, e: np.ndarray) -> tuple[float, float]:
    """Floats ``lo ≤ λ_min(T)``, ``λ_max(T) ≤ hi`` for T = tridiag(e, d, e) (Gershgorin, outward).

    Each of the two roundings per row is followed by one step outward
    (Lemma 10.1 of proofs/enclosure.md); ±∞ on overflow.

    Parameters
    ----------
    d : (k,) float64 array
        Diagonal of T, k ≥ 1.
    e : (k−1,) float64 array
        Off-diagonal of T.

    Returns
    -------
    lo, hi : float
        ``lo ≤ λ_min(T)`` and ``λ_max(T) ≤ hi``.

    Raises
    ------
    ValueError
        If d is empty or e does not have one entry fewer than d.

    Examples
    --------
    >>> gershgorin_bounds(np.array([2.0, 2.0]), np.array([1.0]))
    (0.9999999999999999, 3.0000000000000004)
    """
    d = np.asarray(d, dtype=np.float64).reshape(-1)
    e = np.asarray(e, dtype=np.float64).reshape(-1)
    if d.size == 0 or e.size != d.size - 1:
        raise ValueError(f"gershgorin_bounds: d has {d.size} entries, e has {e.size} (expected d nonempty, "
                         f"e one shorter)")
    a = np.zeros(d.size)
    if d.size > 1:
        ae = np.abs(e)
        a[:-1] = ae
        with np.errstate(over="ignore"):
            # ≥ |eᵢ₋₁| + |eᵢ|: one rounding (one step up) where both are present
            a[1:] = np.where(a[1:] == 0, ae, np.nextafter(a[1:] + ae, np.inf))
    with np.errstate(over="ignore", invalid="ignore"):
        lo = np.where(a == 0, d, np.nextafter(d - a, -np.inf))  # d ∓ 0 is exact
        hi = np.where(a == 0, d, np.nextafter(d + a, np.inf))
    return float(np.min(lo)), float(np.max(hi))


def _normalising_exponent(t_max: float) -> int:
    """t with 2^t·t_max ∈ [1, 2) (0 for t_max = 0)."""
    if t_max == 0:
        return 0
    return 1 - int(np.frexp(t_max)[1])


def tridiagonal_eigenvalue_bounds(
    d: np.ndarray, e: np.ndarray, approx: np.ndarray | None = None, spread: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Floats ``lo[j] ≤ λⱼ(T) ≤ hi[j]`` (descending j) for T = tridiag(e, d, e), by rigorous Sturm counts.

    Proof: proofs/enclosure-gram.md §1a, Lemma S and its Corollary. Steps:

    1. T is scaled by a power of two to max|T| ∈ [1, 2) (exact unless an
       entry falls below 2⁻¹⁰²²: then ‖fl(2^t T) − 2^t T‖₂ ≤ 3η is added).
    2. Off-diagonals below 2⁻³⁰⁰ are set to 0 (Weyl: 2·max of them is added), so
       :func:`sturm_counts` runs normalised (its cheap guard).
    3. Shifts μ = λ̂ⱼ ∓ δⱼ around the approximations λ̂ (``approx``, default
       LAPACK ``dsterf``), δⱼ = ``spread`` + 2ρ + 8·ulp(λ̂ⱼ); every shift whose
       guards held gives: count(μ) ≤ j − 1 ⇒ λⱼ ≥ μ − ρ and count(μ) ≥ j ⇒
       λⱼ < μ + ρ (ascending j). Each eigenvalue takes the best such bound,
       and Gershgorin's interval where no shift qualifies. Eigenvalues whose
       bracket misses its own two shifts are retried once with 64× δ.
    4. All ends are evaluated outward (one step per rounding) and scaled back.

    Parameters
    ----------
    d : (k,) float64 array
        Diagonal of T.
    e : (k−1,) float64 array
        Off-diagonal of T.
    approx : (k,) float64 array, optional
        Approximate eigenvalues (any order); LAPACK ``dsterf`` when None.
    spread : float
        Extra half-width δ of the shift pairs (in T's units), e.g. a small
        fraction of the certificate's other error terms.

    Returns
    -------
    lo, hi : (k,) float64 arrays
        Descending: ``lo[0] ≤ λ_max(T) ≤ hi[0]``, …; ±∞ where nothing finite
        is certified (e.g. T's entries overflow).

    Raises
    ------
    ValueError
        If e does not have one entry fewer than d, or ``approx`` not k entries.

    Examples
    --------
    >>> lo, hi = tridiagonal_eigenvalue_bounds(np.array([1.0]), np.zeros(0))
    >>> lo.tolist(), hi.tolist()
    ([1.0], [1.0])
    """
    d = np.asarray(d, dtype=np.float64).reshape(-1)
    e = np.asarray(e, dtype=np.float64).reshape(-1)
    k = d.size
    if e.size != max(k - 1, 0):
        raise ValueError(f"tridiagonal_eigenvalue_bounds: d has {k} entries, e has {e.size} (expected {max(k - 1, 0)})")
    if approx is not None and np.size(approx) != k:
        raise ValueError(f"tridiagonal_eigenvalue_bounds: {np.size(approx)} approximate eigenvalues for order {k}")
    inf = np.full(k, np.inf)
    if k == 0:
        return np.zeros(0), np.zeros(0)
    if not (np.all(np.isfinite(d)) and np.all(np.isfinite(e))):
        return -inf, inf
    t_max = max(float(np.max(np.abs(d))), float(np.max(np.abs(e))) if e.size else 0.0)
    t = _normalising_exponent(t_max)
    extra = 0.0  # ≥ ‖T_s − 2^t T‖₂ + (Weyl term of the zeroed off-diagonals), in scaled units
    if t:
        ds, es = np.ldexp(d, t), np.ldexp(e, t)
        if t < 0 and not (np.array_equal(np.ldexp(ds, -t), d) and np.array_equal(np.ldexp(es, -t), e)):
            extra = 3 * _ETA  # each entry rounded by ≤ η/2 (subnormal results): ‖Δ‖₂ ≤ ‖Δ‖_∞ ≤ 3η/2
        spread_s = float(np.ldexp(spread, t))
    else:
        ds, es, spread_s = d, e, spread
    with np.errstate(all="ignore"):
        tiny = (es != 0) & ~(np.abs(es) >= _TINY)
        if np.any(tiny):
            extra_tiny = float(np.nextafter(2 * float(np.max(np.abs(es[tiny]))), np.inf))
            extra = float(np.nextafter(extra + extra_tiny, np.inf)) if extra else extra_tiny
            es = np.where(tiny, 0.0, es)
    rho = sturm_perturbation(es)
    glo, ghi = gershgorin_bounds(ds, es)
    if approx is None:
        lam = _dsterf(ds, es)
        if lam is None:
            lam = np.linspace(glo, ghi, k) if np.isfinite(glo) and np.isfinite(ghi) else np.zeros(k)
    else:
        lam = np.ldexp(np.asarray(approx, dtype=np.float64).reshape(-1), t) if t else np.asarray(approx, dtype=np.float64)
        lam = np.sort(lam.reshape(-1))
    with np.errstate(all="ignore"):
        base = spread_s + 2 * rho
        delta = base + 8 * np.spacing(np.abs(lam))
        mus, counts = _valid_counts(ds, es, np.concatenate([lam - delta, lam + delta]), glo, ghi)
        lower_mu, upper_mu = _best_shifts(mus, counts, k, glo, ghi)
        # Retry once, wider, where an eigenvalue's bracket missed its own two shifts
        # (LAPACK's λ̂ off by more than δ, or a guard fired there).
        miss = (lower_mu < lam - delta) | (upper_mu > lam + delta)
        if np.any(miss):
            wide = 64 * delta[miss]
            mus2, counts2 = _valid_counts(ds, es, np.concatenate([lam[miss] - wide, lam[miss] + wide]), glo, ghi)
            lower_mu, upper_mu = _best_shifts(np.concatenate([mus, mus2]), np.concatenate([counts, counts2]),
                                              k, glo, ghi)
        # λⱼ ≥ μ_L − ρ and λⱼ < μ_U + ρ (for T' — T_s with tiny off-diagonals zeroed), outward; Gershgorin needs no ρ.
        lo = np.nextafter(lower_mu - rho, -np.inf) if rho else lower_mu.copy()
        hi = np.nextafter(upper_mu + rho, np.inf) if rho else upper_mu.copy()
        lo = np.where(lower_mu == glo, glo, lo)
        hi = np.where(upper_mu == ghi, ghi, hi)
        if extra:
            lo = np.nextafter(lo - extra, -np.inf)
            hi = np.nextafter(hi + extra, np.inf)
        if t:
            lo2, hi2 = np.ldexp(lo, -t), np.ldexp(hi, -t)
            # ldexp is one correctly rounded multiplication: step outward where it was inexact.
            lo = np.where(np.ldexp(lo2, t) == lo, lo2, np.nextafter(lo2, -np.inf))
            hi = np.where(np.ldexp(hi2, t) == hi, hi2, np.nextafter(hi2, np.inf))
    lo = np.where(np.isnan(lo), -np.inf, lo)
    hi = np.where(np.isnan(hi), np.inf, hi)
    return lo[::-1].copy(), hi[::-1].copy()


def _dsterf(d: np.ndarray, e: np.ndarray) -> np.ndarray | None:
    """Ascending approximate eigenvalues of tridiag(e, d, e) (LAPACK ``dsterf``); None on failure."""
    if d.size == 1:
        return d.copy()
    try:
        lam, info = _lapack.dsterf(d.copy(), e.copy())
    except (ValueError, np.linalg.LinAlgError):
        return None
    if info != 0 or not np.all(np.isfinite(lam)):
        return None
    return np.sort(lam)


def _valid_counts(d: np.ndarray, e: np.ndarray, mus: np.ndarray, glo: float, ghi: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The shifts strictly inside Gershgorin's interval whose Sturm guards held, and their counts."""
    with np.errstate(all="ignore"):
        mus = mus[np.isfinite(mus) & (mus > glo) & (mus < ghi)]
    counts, valid = sturm_counts(d, e, mus)
    return mus[valid], counts[valid]


def _best_shifts(mus: np.ndarray, counts: np.ndarray, k: int, glo: float, ghi: float
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Per eigenvalue j (ascending, 0-based) the largest μ with count ≤ j and the least μ with count ≥ j + 1.

    Gershgorin's ends ``glo``/``ghi`` (rigorous for T itself) are the defaults;
    the shifts lie strictly inside them, so the caller tells them apart by equality.
    """
    best_at = np.full(k + 1, -np.inf)  # max μ with count exactly c
    np.maximum.at(best_at, counts, mus)
    least_at = np.full(k + 1, np.inf)  # min μ with count exactly c
    np.minimum.at(least_at, counts, mus)
    mu_l = np.maximum(np.maximum.accumulate(best_at)[:k], glo)  # counts ≤ j
    mu_u = np.minimum(np.minimum.accumulate(least_at[::-1])[::-1][1:], ghi)  # counts ≥ j + 1
    return mu_l, mu_u
