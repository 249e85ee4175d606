"""Theorem G-R: the Gram certificate from Householder reflectors, without forming Q̂.

Theorem G-T (proofs/enclosure-gram.md §1a) holds for *any* real Q̂. Mode
``gram`` takes LAPACK's ``dorgqr`` output and pays for it three times: the
``dorgqr`` itself, α = ‖Q̂ᵀQ̂ − I‖₂ (a SYRK-like pass) and the residual
‖Ĝ − Q̂TQ̂ᵀ‖₂ (half a GEMM and |·| passes). Theorem G-R
(proofs/enclosure-reconstruct.md) takes instead the *exact* real matrix

    Q := Q₁⋯Q_K,    Q_j := I − V_j Ũ_jᵀ,    Ũ_j := fl(V_j T_jᵀ),

defined by the float reflectors V_j of ``dsytrd`` (blocks of
:data:`RECONSTRUCT_BLOCK`), float upper-triangular T_j of our own and the
float Ũ_j; Q is never formed. α comes from b×b quantities per block (Lemmas
R.1, R.1′, R.2), and e
from one floating-point reconstruction Â₀ ≈ QTQᵀ (the blocks applied to T in
reverse, BLAS-3: ``dsymm`` + ``dsyr2k``) with an a-priori bound on its
rounding (Lemmas R.3, R.4) plus the computed ‖Ĝ − Â₀‖₂. The a-priori bound
is about 10²–10³ times mode ``gram``'s (Lemma 3.4-T), so the σ's are wider
(proofs/enclosure-reconstruct.md §6–§7): mode ``auto`` uses it only where it
meets its width target; mode ``gram`` keeps Theorem G-T.

Nothing about LAPACK is assumed: any floats give valid (possibly wide)
bounds, or None.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> W = rng.standard_normal((40, 160))
>>> G = W @ W.T
>>> G = np.triu(G) + np.triu(G, 1).T          # exactly symmetric, as rounded_gram's Ĝ
>>> ref = householder_reflectors(G)
>>> alpha, e = reconstruction_bounds(G, *ref, block=8)
>>> bool(0 <= alpha < 1e-10), bool(0 <= e < 1e-9 * np.linalg.norm(G, 2))
(True, True)
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable, NamedTuple

import numpy as np
import scipy.linalg.cython_blas as _cython_blas
import scipy.linalg.lapack as _lapack
from flint import arb

from certbound.enclose import gram as _gram
from certbound.enclose import tridiagonal
from certbound.enclose.fperror import ETA, UNIT_ROUNDOFF, _inflate
from certbound.ball import float_upper, working_precision

__all__ = [
    "RECONSTRUCT_BLOCK",
    "RECONSTRUCT_CHUNK",
    "RECONSTRUCT_SYMM_CHUNK",
    "RECONSTRUCT_MIN_ORDER",
    "NORM_SQUARINGS",
    "householder_reflectors",
    "reconstruction_bounds",
    "certify_reconstructed",
]

#: Reflectors per block b (ours to choose; need not match dsytrd's). The a-priori error grows with
#: ‖|U_j|‖ ~ √b per block but the number of blocks K = k/b falls; measured on all-MiniLM-L6-v2's FFN
#: matrices (proofs/enclosure-reconstruct.md §7).
RECONSTRUCT_BLOCK = 32
#: Row-chunk length of the n-long inner products S̃ = VᵀV and M = ŨᵀY (Lemma 2.5: γ_{c+q−1} instead of γ_n).
RECONSTRUCT_CHUNK = 32
#: Inner chunk length of the dsymm Y = X̃U (Lemma 2.5 over X̃'s columns: three BLAS calls per chunk) when n > 2·this.
RECONSTRUCT_SYMM_CHUNK = 128
#: Smallest order at which Theorem G-R is worth trying in mode auto (the caller's gate; enclosure.md §12: where it
#: costs measurably less than Theorem G-T, at equal cost width decides). Measured (one thread, loaded machine,
#: proofs/enclosure-reconstruct.md §7): at 384 (all-MiniLM-L6-v2's FFN matrices) G-R costs 0.91× G-T alone but
#: 0.98–0.995× through auto's hook (within noise) for 7× wider σ, so G-T keeps 384; at 768×3072 G-R saves
#: 0.33–0.39× the peer (≈ 25 ms of ≈ 92).
RECONSTRUCT_MIN_ORDER = 512
#: Gram squarings of Lemma T6 for ‖T_j‖₂ and ‖S̃_j‖₂ (overestimate ≤ b^{1/2^{L+1}}: ≤ 1.12 at b = 32).
NORM_SQUARINGS = 4

_U = UNIT_ROUNDOFF
_INF = np.inf


# --------------------------------------------------------------------------- BLAS with leading dimensions

_BLAS: dict[str, Any] | None = None
#: Diagnostics: if set to a dict, :func:`_bounds` stores its per-block terms there (bench/bench_reconstruct.py).
_BREAKDOWN: dict | None = None


def _fortran_blas() -> dict[str, Any] | None:
    """scipy's Fortran BLAS ``dgemm``, ``dsymm``, ``dsyr2k`` as ctypes functions (in-place, with lda); None if unavailable.

    scipy exports its BLAS through the Cython API of ``scipy.linalg.cython_blas``
    (PyCapsules); the f2py wrappers of ``scipy.linalg.blas`` would copy every
    trailing sub-block. Any failure to bind makes the certificate unavailable
    (the caller falls back to Theorem G-T), never a wrong call.
    """
    global _BLAS
    if _BLAS is None:
        try:
            get = ctypes.pythonapi.PyCapsule_GetPointer
            get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
            name = ctypes.pythonapi.PyCapsule_GetName
            name.restype, name.argtypes = ctypes.c_char_p, [ctypes.py_object]
            fns = {}
            for f, nargs in (("dgemm", 13), ("dsymm", 12), ("dsyr2k", 12)):
                cap = _cython_blas.__pyx_capi__[f]
                fns[f] = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * nargs))(get(cap, name(cap)))
            _BLAS = fns
        except Exception:  # noqa: BLE001 — any binding problem: the certificate is simply not offered
            _BLAS = {}
    return _BLAS or None


# Constant Fortran arguments (addresses of module-level ctypes objects, read only by BLAS).
_CHARS = {ch: ctypes.c_char(ch) for ch in (b"N", b"T", b"L")}
_CH = {ch: ctypes.addressof(v) for ch, v in _CHARS.items()}
_DOUBLES = {v: ctypes.c_double(v) for v in (1.0, 0.0, -1.0)}
_DB = {v: ctypes.addressof(x) for v, x in _DOUBLES.items()}
_Ints6 = ctypes.c_int * 6


def _fortran_operand(A: np.ndarray) -> tuple[bytes, int]:
    """(op, ld) for a 2-D float64 view: F-ordered with a leading dimension → "N", C-ordered → "T" (its transpose is F)."""
    r, c = A.strides
    if A.dtype == np.float64 and A.ndim == 2:
        if r == 8 and c % 8 == 0 and (c >> 3 >= A.shape[0] or A.shape[1] == 1):
            return b"N", max(c >> 3, A.shape[0], 1)
        if c == 8 and r % 8 == 0 and (r >> 3 >= A.shape[1] or A.shape[0] == 1):
            return b"T", max(r >> 3, A.shape[1], 1)
    raise ValueError(f"BLAS operand with strides {A.strides} is not a strided float64 matrix")


def _fortran_output(C: np.ndarray) -> int:
    op, ld = _fortran_operand(C)
    if op != b"N" or not C.flags.writeable:
        raise ValueError("BLAS output must be a writeable F-ordered view")
    return ld


def _gemm(A: np.ndarray, B: np.ndarray, C: np.ndarray) -> None:
    """``C[...] = fl(A @ B)`` by BLAS ``dgemm`` on strided views (C F-ordered): a classical product, inner A.shape[1].

    The checked reference form of the raw-address call in :func:`_reconstruct`'s loop (same BLAS routine and
    arguments; tested on exact integer views).
    """
    (ta, lda), (tb, ldb), ldc = _fortran_operand(A), _fortran_operand(B), _fortran_output(C)
    m, kk = A.shape
    n = B.shape[1]
    if B.shape[0] != kk or C.shape != (m, n):
        raise ValueError(f"_gemm: shapes {A.shape} {B.shape} {C.shape}")
    a = _Ints6(m, n, kk, lda, ldb, ldc)
    p = ctypes.addressof(a)
    _fortran_blas()["dgemm"](_CH[ta], _CH[tb], p, p + 4, p + 8, _DB[1.0], A.ctypes.data, p + 12, B.ctypes.data,
                              p + 16, _DB[0.0], C.ctypes.data, p + 20)


def _symm_lower(A: np.ndarray, B: np.ndarray, C: np.ndarray) -> None:
    """``C[...] = fl(Â @ B)`` by ``dsymm`` where Â is the symmetric matrix of A's lower triangle (A F-ordered).

    The checked reference form of the raw-address call in :func:`_reconstruct`'s loop (same BLAS routine and
    arguments; tested on exact integer views).
    """
    (ta, lda), (tb, ldb), ldc = _fortran_operand(A), _fortran_operand(B), _fortran_output(C)
    m, n = B.shape
    if ta != b"N" or tb != b"N" or A.shape != (m, m) or C.shape != (m, n):
        raise ValueError(f"_symm_lower: shapes {A.shape} {B.shape} {C.shape}")
    a = _Ints6(m, n, lda, ldb, ldc, 0)
    p = ctypes.addressof(a)
    _fortran_blas()["dsymm"](_CH[b"L"], _CH[b"L"], p, p + 4, _DB[1.0], A.ctypes.data, p + 8, B.ctypes.data, p + 12,
                              _DB[0.0], C.ctypes.data, p + 16)


def _syr2k_lower_minus(A: np.ndarray, B: np.ndarray, C: np.ndarray) -> None:
    """Lower triangle of C ← fl(C − A Bᵀ − B Aᵀ) by ``dsyr2k`` (α = −1, β = 1; A, B, C F-ordered views).

    The checked reference form of the raw-address call in :func:`_reconstruct`'s loop (same BLAS routine and
    arguments; tested on exact integer views).
    """
    (ta, lda), (tb, ldb), ldc = _fortran_operand(A), _fortran_operand(B), _fortran_output(C)
    n, kk = A.shape
    if ta != b"N" or tb != b"N" or B.shape != (n, kk) or C.shape != (n, n):
        raise ValueError(f"_syr2k_lower_minus: shapes {A.shape} {B.shape} {C.shape}")
    a = _Ints6(n, kk, lda, ldb, ldc, 0)
    p = ctypes.addressof(a)
    _fortran_blas()["dsyr2k"](_CH[b"L"], _CH[b"N"], p, p + 4, _DB[-1.0], A.ctypes.data, p + 8, B.ctypes.data,
                               p + 12, _DB[1.0], C.ctypes.data, p + 16)


# --------------------------------------------------------------------------- LAPACK


def householder_reflectors(G: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """LAPACK ``dsytrd`` (lower, optimal blocked workspace) of a symmetric G: ``(c, d, e, tau)`` or None.

    Reflector i (0 ≤ i ≤ k − 2) is ``v_i = (0, …, 0, 1, c[i+2:, i])`` with its 1 at
    index i + 1; T = tridiag(e, d, e). Theorem G-R uses these floats as data
    only (proofs/enclosure-reconstruct.md §1): τ only marks the reflectors
    LAPACK skipped (τ = 0, H = I).

    Parameters
    ----------
    G : (k, k) float64 array
        Symmetric (only its lower triangle is read); not modified.

    Returns
    -------
    tuple of numpy.ndarray or None
        ``(c, d, e, tau)``: c (k, k) Fortran-ordered, d (k,), e (k−1,), tau (k−1,);
        None when LAPACK reports an error or d, e are not finite.

    Raises
    ------
    ValueError
        If G is not a square matrix.

    Examples
    --------
    >>> c, d, e, tau = householder_reflectors(np.array([[2.0, 1.0, 1.0], [1.0, 2.0, 0.0], [1.0, 0.0, 2.0]]))
    >>> d.shape, e.shape, float(tau[-1])       # the last reflector acts on one entry: τ = 0
    ((3,), (2,), 0.0)
    """
    if np.ndim(G) != 2 or np.shape(G)[0] != np.shape(G)[1]:
        raise ValueError(f"householder_reflectors: G must be a square matrix, got shape {np.shape(G)}")
    if G.shape[0] < 2:
        return None
    return tridiagonal.dsytrd_lower(G)   # the optimal-lwork call shared with Theorem G-T


# --------------------------------------------------------------------------- outward float helpers


def _up(x: Any) -> Any:
    """One step toward +∞ (Lemma 10.1 of proofs/enclosure.md: succ(fl(z)) ≥ z for a finite rounded z)."""
    return np.nextafter(x, _INF)


def _gamma_up(m: Any) -> Any:
    """Floats ≥ γ_m = m·u/(1 − m·u) (m·u and 1 − m·u are exact for m ≤ 2⁵²; one rounded division)."""
    mu = np.asarray(m, dtype=np.float64) * _U
    return _up(mu / (1.0 - mu))


def _sqrt_up(x: Any) -> Any:
    return _up(np.sqrt(x))


def _chunked_length(n: Any, chunk: int, always: bool = False) -> Any:
    """Lemma 2.5's γ index: chunk + ⌈n/chunk⌉ − 1 where the sum is chunked (n > 2·chunk, or ``always``), capped by
    Lemma 2.1's n (a chunked sum is also an n-term sum in some order); n for an unchunked product."""
    n = np.asarray(n)
    chunked = np.minimum(chunk + -(-n // chunk) - 1, n)
    return chunked if always else np.where(n > 2 * chunk, chunked, n)


def _abs_norm_sq_upper(aA: np.ndarray, rows: int) -> np.ndarray:
    """Per block, a float ≥ ‖|A_j|‖₂² = ρ(|A_j|ᵀ|A_j|) for a stack ``aA[j] = |A_j|ᵀ`` (b × rows, entries ≥ 0).

    Lemma G.2 (Collatz–Wielandt) on the symmetric nonnegative N = |A|ᵀ|A| with x = 𝟙 and one power step
    x = z₁, each product an upward-bounded chain (Lemma 2.2 with monotonicity); zero padding adds exact zeros.
    """
    b = aA.shape[1]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        y1 = _inflate(aA.sum(axis=1), b)                              # ≥ |A|𝟙   (K, rows)
        z1 = _inflate(np.matmul(aA, y1[:, :, None])[:, :, 0], rows)   # ≥ N𝟙     (K, b), ≥ 2(rows+2)η > 0
        r1 = z1.max(axis=1)
        y2 = _inflate(np.matmul(z1[:, None, :], aA)[:, 0, :], b)      # ≥ |A|z₁
        z2 = _inflate(np.matmul(aA, y2[:, :, None])[:, :, 0], rows)   # ≥ Nz₁
        q = np.max(z2 / z1, axis=1)                                   # fl(z₂ᵢ/z₁ᵢ): true quotient ≤ (fl + η/2)/(1 − u)
        r2 = _up(_up(q + ETA) / (1.0 - _U))
        r = np.fmin(r1, np.where(np.isfinite(r2), r2, _INF))
    return np.where(np.isnan(r), _INF, r)


def _stack_matvec(F: np.ndarray, v: np.ndarray) -> np.ndarray:
    """fl(F_j v_j) for a stack F (K, p, q) and v (K, q); through F's contiguous orientation (a transposed view
    is multiplied from the left): each entry one dot product of length q either way (Lemma 2.2, any order)."""
    Ft = F.transpose(0, 2, 1)
    if not F.flags.c_contiguous and Ft.flags.c_contiguous:
        return np.matmul(v[:, None, :], Ft)[:, 0, :]
    return np.matmul(F, v[:, :, None])[:, :, 0]


def _chain_norm_sq_upper(factors: list[np.ndarray]) -> np.ndarray:
    """Per block, a float ≥ ‖N_j‖₂² for N_j = F₁F₂⋯F_m with nonnegative stacked factors ``F_i`` (K, p_i, q_i).

    ‖N‖₂² = ρ(NᵀN) ≤ max_i (NᵀN𝟙)_i (Lemma G.2 with x = 𝟙), NᵀN𝟙 evaluated as a chain of
    upward-bounded nonnegative matrix–vector products (Lemma 2.2, monotonicity).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        K, q = factors[-1].shape[0], factors[-1].shape[2]
        v = np.ones((K, q))
        for F in reversed(factors):
            v = _inflate(_stack_matvec(F, v), F.shape[2])
        for F in factors:
            v = _inflate(_stack_matvec(F.transpose(0, 2, 1), v), F.shape[1])
        r = v.max(axis=1)
    return np.where(np.isnan(r), _INF, r)


def _frobenius_sq_upper(A: np.ndarray) -> np.ndarray:
    """Per block, a float ≥ ‖A_j‖_F² for a stack A (K, p, q): Lemma 2.2 on the squares (any order)."""
    f = np.ascontiguousarray(A).reshape(A.shape[0], 1, -1)
    with np.errstate(over="ignore", invalid="ignore"):
        s = np.matmul(f, f.transpose(0, 2, 1))[:, 0, 0]            # one dot product per slice (any order)
        return _inflate(s, A.shape[1] * A.shape[2])


def _spectral_norm_upper_stack(A: np.ndarray, levels: int = NORM_SQUARINGS) -> np.ndarray:
    """Per block, a float ≥ ‖A_j‖₂ for a stack of b×b float matrices: Lemma T6 (Gram squaring), in floats.

    G₀ = A_j, G₁ = fl(G₀G₀ᵀ), G_{i+1} = fl(G_iᵀG_i) (inner dimension b):
    ‖G_i‖₂² ≤ ‖G_{i+1}‖₂ + γ_b‖G_i‖_F² + 2b·b·η and ‖G_i‖₂ ≤ ‖G_i‖_F
    (proofs/enclosure-tight.md, Lemma T6), evaluated downward with one step up per rounding.
    """
    b = A.shape[1]
    gb = float(_gamma_up(b))
    with np.errstate(over="ignore", invalid="ignore"):
        Gs = [A]
        for i in range(levels):
            Gi = Gs[-1]
            Git = np.ascontiguousarray(Gi.transpose(0, 2, 1))   # contiguous operands: numpy's fast stacked path
            Gs.append(np.matmul(Gi, Git) if i == 0 else np.matmul(Git, Gi))
        fro2 = [_frobenius_sq_upper(Gi) for Gi in Gs]
        B = _sqrt_up(fro2[-1])
        for i in range(levels - 1, -1, -1):
            chain = _sqrt_up(_up(_up(B + _up(gb * fro2[i])) + 2.0 * b * b * ETA))
            B = np.fmin(_sqrt_up(fro2[i]), np.where(np.isnan(chain), _INF, chain))
    return np.where(np.isnan(B), _INF, B)


# --------------------------------------------------------------------------- Theorem G-R


def reconstruction_bounds(
    G: np.ndarray, c: np.ndarray, d: np.ndarray, e: np.ndarray, tau: np.ndarray,
    block: int = RECONSTRUCT_BLOCK, chunk: int = RECONSTRUCT_CHUNK, symm_chunk: int = RECONSTRUCT_SYMM_CHUNK,
    predict: Callable[[float], bool] | None = None,
) -> tuple[float, float] | None:
    """Floats ``(α, ē)`` with ‖QᵀQ − I‖₂ ≤ α < 1 and ‖G − QTQᵀ‖₂ ≤ ē for the exact Q of Theorem G-R; or None.

    Q := Q₁⋯Q_K with Q_j = I − V_jŨ_jᵀ: V_j the reflectors of ``c`` in block j
    (``block`` consecutive indices, τ = 0 ones left out), T_j = fl((striu S̃_j + ½diag S̃_j)⁻¹)
    with S̃_j = fl(V_jᵀV_j) (``dtrtri`` per block; any float T_j would do) and the float Ũ_j = fl(V_jT_jᵀ).
    α by Lemmas R.1, R.1′, R.2 (b×b
    quantities), ē = ‖G − Â₀‖₂ (computed, rigorous) + the a-priori bound of Lemmas R.3–R.4 on
    the rounding of the reconstruction Â₀ = fl(QTQᵀ) (proofs/enclosure-reconstruct.md §2–§4).

    Parameters
    ----------
    G : (k, k) float64 array
        The caller's Ĝ (any float matrix: ``dsytrd`` reads its lower triangle, the residual all of it).
    c, d, e, tau : numpy.ndarray
        :func:`householder_reflectors`' output (any floats: they are data).
    block : int
        Reflectors per block b ≥ 1.
    chunk : int
        Row-chunk length of Lemma 2.5 for S̃_j and M_j.
    symm_chunk : int
        Inner chunk length of Y = X̃U (Lemma 2.5) when n > 2·symm_chunk.
    predict : callable, optional
        As in :func:`certify_reconstructed`.

    Returns
    -------
    tuple of float or None
        ``(alpha, e_bound)``; None when a bound is not finite, some ε_j ≥ 1,
        α ≥ 1, the a-priori cap of Lemma R.4 is exceeded, or BLAS is unavailable.

    Raises
    ------
    ValueError
        On inconsistent shapes, or block/chunk < 1.

    Examples
    --------
    >>> G = np.diag([4.0, 3.0, 2.0, 1.0]); G[0, 3] = G[3, 0] = 0.5
    >>> a, eb = reconstruction_bounds(G, *householder_reflectors(G), block=2)
    >>> bool(a < 1e-14), bool(eb < 1e-13)
    (True, True)
    """
    k = G.shape[0]
    if G.shape != (k, k) or c.shape != (k, k) or d.shape != (k,) or e.shape != (k - 1,) or tau.shape != (k - 1,):
        raise ValueError(f"reconstruction_bounds: shapes G {G.shape}, c {c.shape}, d {d.shape}, e {e.shape}, "
                         f"tau {tau.shape}")
    if block < 1 or chunk < 1 or symm_chunk < 1:
        raise ValueError(f"reconstruction_bounds: block={block}, chunk={chunk}, symm_chunk={symm_chunk} must be >= 1")
    if _fortran_blas() is None or k < 3:
        return None
    rec = _reconstruct(G, c, d, e, tau, block, chunk, symm_chunk, predict=predict)
    if rec is None:
        return None
    out = _bounds(G, d, e, rec, chunk, symm_chunk)
    if out is None:
        return None
    alpha, residual, a_priori = out
    return alpha, float(_up(residual + a_priori))


class _Reconstruction(NamedTuple):
    """The floats of one reconstruction (block j: V_j = Vs[j, :bs[j], :ns[j]].T, T_j = small[0, j, :bs[j], :bs[j]])."""

    X: np.ndarray          # lower triangle: Â₀ (strict upper: untouched zeros)
    Vs: np.ndarray         # (K, b, kp)
    Us: np.ndarray         # (K, b, kp)
    small: np.ndarray      # (4, K, b, b): T, S̃, R̃, M
    yw: np.ndarray         # (2, K): fl(‖Y_j‖_F²), fl(‖W_j‖_F²)
    ns: np.ndarray         # n_j = k − s_j (0: block unused)
    bs: np.ndarray         # b_j (reflectors used)
    starts: list[int]      # s_j
    static: dict           # the bounds that depend on V, T, S̃, R̃, U only (_static_bounds)


def _prepare(c: np.ndarray, tau: np.ndarray, k: int, block: int, chunk: int, chunk_u: int
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[int], int] | None:
    """V_j, S̃_j, R̃_j, T_j, Ũ_j for all blocks at once (they depend on c only; proof §1).

    Returns ``(Vs, Us, small, ns, bs, starts, kp)`` (see :class:`_Reconstruction`), or None when the stacked
    inversion fails.
    """
    b = block
    nref = k - 2                        # reflector k−2 acts on one entry (τ = 0 in LAPACK): never used
    starts = list(range(0, nref, b))
    K = len(starts)
    kp = -(-k // chunk) * chunk         # rows padded to whole chunks (zeros: exact)
    # Stacks: slab j holds V_jᵀ (U_jᵀ) as a C-ordered b×kp array, i.e. V_j F-ordered with leading dimension kp.
    # Slot i of block j is reflector s_j + i: Vs[j, i, r] = c[s_j + r, s_j + i], gathered for all blocks by one
    # strided copy from a zero-padded copy of cᵀ (local rows ≥ n_j read the padding: zero); then the entries at
    # and above each reflector's 1 are written (0, 1), so c is read only strictly below its subdiagonal (§1).
    ld = k + kp
    P = np.zeros((k + b, ld))
    P[:k, :k] = c.T
    Vs = np.lib.stride_tricks.as_strided(P, shape=(K, b, kp), strides=(8 * b * (ld + 1), 8 * ld, 8)).copy()
    del P
    w = min(b + 1, kp)
    head = Vs[:, :, :w]
    head[:, np.arange(w)[None, :] <= np.arange(b)[:, None]] = 0.0
    ii = np.arange(min(b, kp - 1))
    head[:, ii, ii + 1] = 1.0
    # Used slots: reflector s_j + i exists (≤ k − 3) and τ ≠ 0 (τ = 0: H = I, left out).
    up = np.zeros(K * b, dtype=bool)
    up[:nref] = tau[:nref] != 0
    used = up.reshape(K, b)
    bs = used.sum(axis=1).astype(np.int64)
    Vs[~used] = 0.0
    # A block's used reflectors come first (§1): compact the (rare) blocks with a τ = 0 slot before a used one.
    for j in np.flatnonzero(np.any(used[:, 1:] & ~used[:, :-1], axis=1)).tolist():
        loc = np.flatnonzero(used[j])
        Vs[j, :loc.size] = Vs[j, loc]
        Vs[j, loc.size:] = 0.0
    ns = np.where(bs > 0, k - np.asarray(starts, dtype=np.int64), 0)
    live = np.arange(b)[None, :] < bs[:, None]                      # (K, b): the used slots
    small = np.zeros((4, K, b, b))      # T, S̃, R̃, M
    Ts, Ss, Rs = small[0], small[1], small[2]
    with np.errstate(over="ignore", invalid="ignore", under="ignore", divide="ignore"):
        # S̃_j = fl(V_jᵀV_j) as the sum of its row-chunk products (Lemma 2.5; all-zero chunks add exact zeros).
        Vc = Vs.reshape(K, b, kp // chunk, chunk).transpose(0, 2, 1, 3)           # (K, q, b, c)
        np.sum(np.matmul(Vc, Vc.transpose(0, 1, 3, 2)), axis=1, out=Ss)
        # R̃ = striu(S̃) + diag(S̃)/2 (halving exact: S̃_ll ≥ 1), and S̃ := R̃ + R̃ᵀ, the symmetric matrix of its upper
        # triangle (exact), whose entries satisfy the same entrywise bound (proof §1–§2).
        Rs[:] = np.triu(Ss, 1)
        diag = np.arange(b)
        Rs[:, diag, diag] = 0.5 * Ss[:, diag, diag]
        np.add(Rs, Rs.transpose(0, 2, 1), out=Ss)
        # T_j = triu(fl(R̃_j⁻¹)) on the used slots (unused slots: identity for the inversion, then 0), by LAPACK
        # dtrtri on R̃_jᵀ (lower; its C-ordered slab is F-ordered): any float upper-triangular T_j is valid (§1).
        Rinv = Rs + (~live)[:, :, None] * np.eye(b)
        for j in range(K):
            inv_t, info = _lapack.dtrtri(Rinv[j].T, lower=1)
            if info != 0:
                return None
            Ts[j] = inv_t.T
        Ts[:] = np.where(live[:, :, None] & live[:, None, :], np.triu(Ts), 0.0)
        # Ũ_j = fl(V_j T_jᵀ), i.e. slab Ũ_jᵀ = T_j V_jᵀ: one stacked product (inner b) by default — its rounding
        # only enters α (Lemma R.1′), where γ_b costs ≈ 1e-13 per block; optionally the inner b in chunks of
        # chunk_u, a running sum U ← fl(U + fl(T[:, C] V[C])) (Lemma 2.5, one rounding per chunk).
        Us = np.matmul(Ts[:, :, :chunk_u], Vs[:, :chunk_u])
        if b > chunk_u:
            part = np.empty_like(Us)
            for c0 in range(chunk_u, b, chunk_u):
                np.matmul(Ts[:, :, c0:c0 + chunk_u], Vs[:, c0:c0 + chunk_u], out=part)
                np.add(Us, part, out=Us)
        Us[:, :, 0] = 0.0                # local row 0 (index s_j): V's is zero, so is Ũ's (written: Q_j's support)
    return Vs, Us, small, ns, bs, starts, kp


def _static_bounds(d: np.ndarray, e: np.ndarray, Vs: np.ndarray, Us: np.ndarray, small: np.ndarray,
                   ns: np.ndarray, bs: np.ndarray, starts: list[int], chunk: int, symm_chunk: int,
                   chunk_u: int) -> dict | None:
    """The bounds of Lemmas R.1, R.1′, R.2 and R.3 that need only V, T, S̃, R̃, Ũ, with Lemma R.4's φ_j, C (proof §5).

    None when a block is refused (diagonal of fl(R̃T) outside [1/2, 2], ε_j ≥ 1, ∏(1 + ε_j) ≥ 2).
    """
    k = d.size
    act = bs > 0
    if not np.any(act):
        return None
    if not np.all(act):
        Vs, Us, small = Vs[act], Us[act], small[:, act]
    Ts, Ss, Rs = small[0], small[1], small[2]
    kp, b = Vs.shape[2], Vs.shape[1]
    nb = ns[act].astype(np.float64)
    bb = bs[act].astype(np.float64)
    out: dict[str, Any] = {"act": act, "nb": nb, "bb": bb}
    with np.errstate(over="ignore", invalid="ignore", under="ignore", divide="ignore"):
        out["g_n"] = _gamma_up(_chunked_length(ns[act], symm_chunk))   # Y = X̃Ũ: inner n, chunked (Lemma 2.5)
        g_s = _gamma_up(_chunked_length(ns[act], chunk, always=True))   # S̃: row chunks always (Lemma 2.5 / 2.1)
        out["g_c"] = _gamma_up(_chunked_length(ns[act], chunk))         # M = ŨᵀY: row chunks when n > 2·chunk
        g_u = _gamma_up(_chunked_length(bs[act], chunk_u, always=True)) # Ũ: inner b in chunks
        g_b = _gamma_up(bs[act])                                        # inner b: H, fl(R̃T)
        out["g_b"] = g_b
        out["g_5"] = _gamma_up(2 * bs[act] + 1)                         # dsyr2k: x − Σ of 2b products
        nK = Vs.shape[0]
        absVU = np.empty((2 * nK, b, kp))                    # |V_j|ᵀ and |U_j|ᵀ in one stack (exact)
        absV = np.abs(Vs, out=absVU[:nK])
        np.abs(Us, out=absVU[nK:])
        aVU = _sqrt_up(_abs_norm_sq_upper(absVU, kp))        # ≥ ‖|V_j|‖₂, ‖|U_j|‖₂ (Collatz–Wielandt)
        aV, aU = aVU[:nK], aVU[nK:]
        ts2 = _spectral_norm_upper_stack(np.concatenate((Ts, Ss)))   # ≥ ‖T_j‖₂, ‖S̃_j‖₂ (Lemma T6)
        t2, s2 = ts2[:nK], ts2[nK:]
        aT = np.abs(Ts)
        # Lemma R.1: F = R̃T − I; fl(R̃T) − I is exact when its diagonal lies in [1/2, 2] (Sterbenz).
        P = np.matmul(Rs, Ts)
        diag = np.einsum("kii->ki", P)
        live = np.arange(b)[None, :] < bs[act][:, None]
        if not np.all(np.where(live, (diag >= 0.5) & (diag <= 2.0), True)):
            return None
        P[:, np.arange(b), np.arange(b)] -= live
        rt = _sqrt_up(_chain_norm_sq_upper([np.abs(Rs), aT]))                   # ≥ ‖|R̃||T|‖₂
        F = _up(_up(_sqrt_up(_frobenius_sq_upper(P)) + _up(g_b * rt)) + 2.0 * bb * bb * ETA)
        eS = _up(_up(g_s * _up(aV * aV)) + 4.0 * kp * bb * ETA)             # ≥ ‖S − S̃‖₂
        nu = _sqrt_up(_up(s2 + eS))                                          # ≥ ‖V‖₂
        K_ = _up(_up(2.0 * _up(t2 * F)) + _up(_up(t2 * t2) * eS))           # ≥ ‖K_j‖₂
        eps0 = _up(K_ * _up(s2 + eS))                                         # Lemma R.1: ≥ ‖Q⁰ᵀQ⁰ − I‖₂
        rtn = _sqrt_up(nb * bb)
        vt = _sqrt_up(_chain_norm_sq_upper([absV.transpose(0, 2, 1), aT.transpose(0, 2, 1)]))   # ≥ ‖|V||T|ᵀ‖₂
        eU = _up(_up(g_u * vt) + _up(4.0 * bb * ETA * rtn))                       # ≥ ‖Ũ − VTᵀ‖₂
        nue = _up(nu * eU)
        eps = _up(_up(eps0 + _up(2.0 * _up(_sqrt_up(_up(1.0 + eps0)) * nue))) + _up(nue * nue))   # Lemma R.1′
        if not np.all(eps < 1.0):
            return None
        Pr = 1.0
        for x in (1.0 + eps).tolist():                        # 1 + ε rounded: step up
            Pr = float(_up(Pr * float(_up(x))))
        if not Pr < 2.0:
            return None
        # Norms of the partial reconstructions (Lemma R.4): ‖T[s:, s:]‖_F from reverse cumulative sums.
        d2 = _inflate(np.cumsum((d * d)[::-1])[::-1], k)
        e2 = np.append(_inflate(np.cumsum((e * e)[::-1])[::-1], k), 0.0)
        st = np.asarray(starts)[act]
        fT = _sqrt_up(_up(d2[st] + _up(2.0 * e2[st])))
        cap = float(_up(2.0**-26 * _up(fT[0] + 2.0**-1000)))
        phi = _up(_up(fT * Pr) + _up(_sqrt_up(nb) * cap))    # ≥ ‖X̃[s:, s:]‖_F ≥ ‖|X̃[s:, s:]|‖₂
        eY = _up(_up(out["g_n"] * _up(phi * aU)) + _up(4.0 * nb * ETA * rtn))    # Y = fl(X̃Ũ): ≥ ‖E_Y‖₂
        hq = _up(0.5 * _up(1.0 + _sqrt_up(_up(1.0 + eps))))
        out.update(aV=aV, aU=aU, absV=absV, t2=t2, s2=s2, F=F, eS=eS, nu=nu, eps0=eps0, eps=eps, Pr=Pr, cap=cap,
                   phi=phi, rtn=rtn, vt=vt, eU=eU, eY=eY, hq=hq, kp=kp, b=b)
    return out


#: :func:`_estimate_e`'s factor on the dominant term (measured, §7; a decision only).
_ESTIMATE_FACTOR = 1.35


def _estimate_e(st: dict) -> float:
    """A float estimate of the final a-priori E (not a bound): Lemma R.3's dominant term 2νh·e_Y, × _ESTIMATE_FACTOR.

    The other terms (e_M, e_H, e_5) need the loop's Y, W; measured (proofs/enclosure-reconstruct.md §7) they add
    a fairly constant share.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        dom = 2.0 * st["nu"] * st["hq"] * st["eY"]
        return float(_ESTIMATE_FACTOR * st["Pr"] * np.sum(dom))


#: :func:`_estimate_e_prior`'s factor: ν·‖|Ũ_j|‖₂ measured 8.2–8.7 ≈ 1.5√b at b = 32 (§7), so this is ≈ 0.8× the
#: post-:func:`_prepare` estimate — a lower estimate, so that the early refusal only drops what the later one would.
_PRIOR_FACTOR = 2.0 * _ESTIMATE_FACTOR * 0.8 * 1.45


def _estimate_e_prior(d: np.ndarray, e: np.ndarray, k: int, block: int, symm_chunk: int) -> float:
    """A cheaper estimate than :func:`_estimate_e` (not a bound), from d, e only: Σ_j γ_{n_Y,j}‖T[s_j:, s_j:]‖_F·√b.

    It lets the caller's ``predict`` refuse before :func:`_prepare` (≈ 2.5 ms at k = 384): a refusal then costs
    microseconds.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        st = np.arange(0, k - 2, block)
        f2 = np.cumsum((d * d)[::-1])[::-1][st] + 2.0 * np.append(np.cumsum((e * e)[::-1])[::-1], 0.0)[st]
        g = _gamma_up(_chunked_length(k - st, symm_chunk))
        return float(_PRIOR_FACTOR * np.sqrt(block) * np.sum(g * np.sqrt(f2)))


def _reconstruct(G: np.ndarray, c: np.ndarray, d: np.ndarray, e: np.ndarray, tau: np.ndarray, block: int,
                 chunk: int, symm_chunk: int, chunk_u: int | None = None,
                 predict: Callable[[float], bool] | None = None) -> _Reconstruction | None:
    """Â₀ = fl(QTQᵀ): the blocks applied to T in reverse, and the floats the bounds need.

    proofs/enclosure-reconstruct.md §1 (the data V_j, T_j) and §3 (Lemma R.3's table names the
    function of each bounded product). V_j, S̃_j, T_j and U_j depend on c only, so they are formed
    for all blocks at once (stacked products, the same entrywise model per block) with the bounds
    that need only them; ``predict(estimate of ē)`` may then stop before the loop (returns None).
    The loop does the X̃-dependent products Y, M, H, W and the update.
    """
    k = G.shape[0]
    if chunk_u is None:
        chunk_u = block                 # Ũ unchunked (its rounding only enters α)
    if predict is not None and not predict(_estimate_e_prior(d, e, k, block, symm_chunk)):
        return None
    prep = _prepare(c, tau, k, block, chunk, chunk_u)
    if prep is None:
        return None
    Vs, Us, small, ns, bs, starts, kp = prep
    st = _static_bounds(d, e, Vs, Us, small, ns, bs, starts, chunk, symm_chunk, chunk_u)
    if st is None:
        return None
    if predict is not None and not predict(_estimate_e(st)):
        return None
    b = block
    K = len(starts)
    Ms = small[3]
    Yb = np.zeros((b, kp))              # Y and W of the current block (transposed), and a chunk buffer
    Wb = np.zeros((b, kp))
    Cb = np.zeros((b, kp))
    yw = np.zeros((2, K))               # fl(‖Y_j‖_F²), fl(‖W_j‖_F²) (bounded in _bounds)
    # Â: the lower triangle holds T, then the reconstruction (dsymm/dsyr2k read/write 'L' only).
    X = np.zeros((k, k), order="F")
    X[np.arange(k), np.arange(k)] = d
    X[np.arange(1, k), np.arange(k - 1)] = e
    # The BLAS calls of Lemma R.3's table on raw addresses (the operands are the F-ordered views named in the
    # comments: X[r:, c:] with leading dimension k, V_j, U_j, Y, W, the chunk buffer with leading dimension kp).
    blas = _fortran_blas()
    gemm, symm, syr2k = blas["dgemm"], blas["dsymm"], blas["dsyr2k"]
    iv = _Ints6()
    ip = ctypes.addressof(iv)
    i1p, i2p, i3p, i4p, i5p, i6p = ip, ip + 4, ip + 8, ip + 12, ip + 16, ip + 20
    N_, T_, L_ = _CH[b"N"], _CH[b"T"], _CH[b"L"]
    one, zero, mone = _DB[1.0], _DB[0.0], _DB[-1.0]
    x0, y0, w0, cb0 = X.ctypes.data, Yb.ctypes.data, Wb.ctypes.data, Cb.ctypes.data
    slab = 8 * b * kp

    def xa(r: int, col: int) -> int:
        return x0 + 8 * (r + col * k)

    with np.errstate(over="ignore", invalid="ignore", under="ignore", divide="ignore"):
        for j in range(K - 1, -1, -1):
            bj, n, s = int(bs[j]), int(ns[j]), starts[j]
            if bj == 0:
                continue
            v0, u0 = Vs.ctypes.data + j * slab, Us.ctypes.data + j * slab   # V_j, U_j: n × bj, ld kp
            # Lemma R.3: Y = fl(X̃[s:, s:] Ũ), M = fl(ŨᵀY), H = fl(V M), W = fl(Y − fl(H/2)), X̃ − VWᵀ − WVᵀ.
            if n > 2 * symm_chunk:
                # Y = Σ_C X̃[:, C] U[C] (Lemma 2.5): per chunk C = [i0, i1) of the local index, the diagonal
                # block by dsymm, the rows below by dgemm, the rows above from the stored X̃[C, :i0] (transposed);
                # the first chunk writes Y, later ones the buffer that is added (one rounding per chunk).
                for i0 in range(0, n, symm_chunk):
                    i1 = min(i0 + symm_chunk, n)
                    dst = y0 if i0 == 0 else cb0
                    uc = u0 + 8 * i0
                    iv[0], iv[1], iv[2], iv[3], iv[4] = i1 - i0, bj, k, kp, kp   # dsymm: X[C, C]·U[C] → dst[C]
                    symm(L_, L_, i1p, i2p, one, xa(s + i0, s + i0), i3p, uc, i4p, zero, dst + 8 * i0, i5p)
                    if i1 < n:                                  # dgemm: X[s+i1:, C]·U[C] → dst[i1:]
                        iv[0], iv[1], iv[2], iv[3], iv[4], iv[5] = n - i1, bj, i1 - i0, k, kp, kp
                        gemm(N_, N_, i1p, i2p, i3p, one, xa(s + i1, s + i0), i4p, uc, i5p, zero, dst + 8 * i1, i6p)
                    if i0 > 0:                                  # dgemm: X[C, s:s+i0]ᵀ·U[C] → dst[:i0]
                        iv[0], iv[1], iv[2], iv[3], iv[4], iv[5] = i0, bj, i1 - i0, k, kp, kp
                        gemm(T_, N_, i1p, i2p, i3p, one, xa(s + i0, s), i4p, uc, i5p, zero, dst, i6p)
                        np.add(Yb[:bj, :n], Cb[:bj, :n], out=Yb[:bj, :n])
            else:
                iv[0], iv[1], iv[2], iv[3], iv[4] = n, bj, k, kp, kp
                symm(L_, L_, i1p, i2p, one, xa(s, s), i3p, u0, i4p, zero, y0, i5p)
            Yt = Yb[:bj, :n]
            M = Ms[j, :bj, :bj]
            if n > 2 * chunk:
                qn = -(-n // chunk)
                Yc = Yb[:bj, :qn * chunk].reshape(bj, qn, chunk).transpose(1, 0, 2)   # Yb's padding stays 0
                Uc = Us[j, :bj, :qn * chunk].reshape(bj, qn, chunk).transpose(1, 0, 2)
                np.sum(np.matmul(Uc, Yc.transpose(0, 2, 1)), axis=0, out=M)   # M = ŨᵀY by row chunks
            else:
                np.matmul(Us[j, :bj, :n], Yt.T, out=M)
            Wt = Wb[:bj, :n]
            np.matmul(M.T, Vs[j, :bj, :n], out=Wt)                 # Hᵀ = fl(MᵀVᵀ), i.e. H = fl(V M)
            np.multiply(Wt, 0.5, out=Wt)                             # fl(H/2)
            np.subtract(Yt, Wt, out=Wt)                              # W = fl(Y − fl(H/2))
            # ‖Y‖_F², ‖W‖_F² as one dot product each over the contiguous rows (the padding beyond n is zero:
            # Yb/Wb columns ≥ n were never written, the blocks run with n increasing).
            fy, fw = Yb[:bj].reshape(1, -1), Wb[:bj].reshape(1, -1)
            yw[0, j] = np.matmul(fy, fy.T)[0, 0]
            yw[1, j] = np.matmul(fw, fw.T)[0, 0]
            iv[0], iv[1], iv[2], iv[3], iv[4] = n, bj, kp, kp, k      # dsyr2k: X[s:, s:] − V Wᵀ − W Vᵀ (lower)
            syr2k(L_, N_, i1p, i2p, mone, v0, i3p, w0, i4p, one, xa(s, s), i5p)
    return _Reconstruction(X, Vs, Us, small, yw, ns, bs, starts, st)


def _residual_sq_upper(G: np.ndarray, X: np.ndarray) -> float:
    """A float ≥ ‖G − Â₀‖_F², Â₀ the symmetric matrix of X's lower triangle, for ANY float G (proof §4).

    With X₀ := X − diag(X) (X's strict upper triangle is zero; the diagonal is set aside and restored):
    D = fl(G − X₀ᵀ), its diagonal replaced by fl(g_ii − x_ii), then D ← fl(D − X₀). Entry (i, j), i < j, is
    fl(fl(g − x_ji) − 0), i > j: fl(fl(g − 0) − x_ij) — subtracting 0 is exact — so every entry of D is ONE
    rounded subtraction g_ij − â_ij (|g − a| ≤ |fl(g − a)|/(1 − u) is applied by the caller). The sum of
    squares is one dot product (Lemma 2.2, any order). G need not be symmetric: every entry is summed.
    """
    k = G.shape[0]
    idx = np.arange(k)
    dg = X[idx, idx].copy()
    with np.errstate(over="ignore", invalid="ignore"):
        X[idx, idx] = 0.0
        try:
            D = np.subtract(G, X.T)                # X.T: C-ordered, X₀'s strict lower triangle mirrored above
            np.subtract(D, X, out=D)               # below the diagonal fl(g − x_ij); elsewhere − 0 (exact)
        finally:
            X[idx, idx] = dg
        D[idx, idx] = G[idx, idx] - dg             # the diagonal: fl(g_ii − x_ii)
        f = D.reshape(1, -1) if D.flags.c_contiguous else D.T.reshape(1, -1)
        tot = float(_inflate(np.matmul(f, f.T)[0, 0], k * k))
    return tot if np.isfinite(tot) else _INF


def _bounds(G: np.ndarray, d: np.ndarray, e: np.ndarray, rec: _Reconstruction, chunk: int,
            symm_chunk: int) -> tuple[float, float, float] | None:
    """``(α, r, E)``: Lemmas R.1–R.2's α, r ≥ ‖G − Â₀‖₂ and Lemma R.4's E ≥ ‖Â₀ − QTQᵀ‖₂; or None.

    proofs/enclosure-reconstruct.md §2–§5 (every operation on a bound is followed by one step up);
    the parts that need only V, T, S̃, R̃, U come from :func:`_static_bounds`.
    """
    st = rec.static
    act, nb, bb, kp, b = st["act"], st["nb"], st["bb"], st["kp"], st["b"]
    small, yw = rec.small, rec.yw
    if not np.all(act):
        small, yw = small[:, act], yw[:, act]
    Ms = small[3]
    aV, aU, nu, phi, rtn, g_b = st["aV"], st["aU"], st["nu"], st["phi"], st["rtn"], st["g_b"]
    with np.errstate(over="ignore", invalid="ignore", under="ignore", divide="ignore"):
        yF = _sqrt_up(_inflate(yw[0], kp * b))                # ≥ ‖Y‖_F ≥ ‖|Y|‖₂
        wF = _sqrt_up(_inflate(yw[1], kp * b))                # ≥ ‖W‖_F ≥ ‖|W|‖₂
        vm = _sqrt_up(_chain_norm_sq_upper([st["absV"].transpose(0, 2, 1), np.abs(Ms)]))   # ≥ ‖|V||M|‖₂
        eM = _up(_up(st["g_c"] * _up(aU * yF)) + 4.0 * kp * ETA * bb)        # M = fl(ŨᵀY)
        eH = _up(_up(g_b * vm) + _up(2.0 * bb * ETA * rtn))                        # H = fl(VM)
        eW = _up(_up(2.0 * _U * wF) + _up(ETA * rtn))
        e5 = _up(_up(st["g_5"] * _up(phi + _up(2.0 * _up(aV * wF)))) + (4.0 * bb + 2.0) * ETA * nb)
        hq = st["hq"]
        inner = _up(_up(_up(hq * st["eY"]) + _up(0.5 * _up(nu * eM))) + _up(_up(0.5 * eH) + eW))
        delta = _up(e5 + _up(2.0 * _up(nu * inner)))       # Lemma R.3
        if _BREAKDOWN is not None:   # diagnostics (bench, referee tests): the weighted terms, the raw ones, Δ_j
            _BREAKDOWN.update(st, e5=e5, eY=2 * nu * hq * st["eY"], eM=nu * nu * eM, eH=nu * eH, eW=2 * nu * eW,
                              e5_raw=e5, eM_raw=eM, eH_raw=eH, eW_raw=eW, delta=delta,
                              wF=wF, yF=yF, vm=vm, estimate=_estimate_e(st))
        if not np.all(np.isfinite(delta)):
            return None
        tot = 0.0
        for x in delta.tolist():
            tot = float(_up(tot + x))
        acc = float(_up(st["Pr"] * tot))
        if _BREAKDOWN is not None:
            _BREAKDOWN["acc"] = acc
        if not acc <= st["cap"]:
            return None
        # ‖G − Â₀‖₂ ≤ ‖G − Â₀‖_F ≤ √(Σ fl(g − a)²)/(1 − u) over ALL entries (G need not be symmetric).
        r = float(_up(_up(_sqrt_up(_residual_sq_upper(G, rec.X))) / (1.0 - _U)))
    if not np.isfinite(r):
        return None
    return st["Pr"] - 1.0, r, acc                              # Pr − 1 exact (Sterbenz: Pr ∈ [1, 2))


def certify_reconstructed(
    G: np.ndarray, beta: arb, scale_exponent: int, block: int = RECONSTRUCT_BLOCK,
    reflectors: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None,
    predict: Callable[[float], bool] | None = None,
) -> tuple[list[arb], arb, arb, str] | None:
    """Theorem G-R on Ĝ: ``(sigma, alpha, e, "gram-rec")`` or None.

    Ĝ may be any float matrix (in practice ``rounded_gram``'s exactly symmetric one): the residual
    ‖Ĝ − Â₀‖ is summed over all its entries.

    ``dsytrd``'s reflectors and d, e (:func:`householder_reflectors`), α and e
    by :func:`reconstruction_bounds`, λᵢ(T) ∈ [aᵢ, bᵢ] by Sturm counts (Lemma S),
    then Theorem G-T's float evaluation (``gram.tridiagonal_theorem_g_float_bounds``)
    with Q̂ := Q (proofs/enclosure-reconstruct.md, Theorem G-R).

    Parameters
    ----------
    G : (k, k) float64 array
        ``rounded_gram``'s Ĝ (any float matrix: the residual covers all its entries; β must bound ‖Ĝ − WWᵀ‖₂).
    beta : arb
        Upper end bounds ‖Ĝ − WWᵀ‖₂.
    scale_exponent : int
        The σ's are multiplied by ``2**scale_exponent``.
    block : int
        Reflectors per block.
    reflectors : tuple, optional
        ``(c, d, e, tau)`` of :func:`householder_reflectors` on this G, if the caller has them (one ``dsytrd``
        shared with Theorem G-T's fallback); read only.
    predict : callable, optional
        ``predict(e_estimate) -> bool``, called up to twice with an estimate of the final ē (Ĝ's units; not a
        bound): first from d, e only, before any other work (0.78–0.97× the final value), then before the
        reconstruction loop (0.84–1.09×; proofs/enclosure-reconstruct.md §6–§7). False stops the certificate
        there (returns None). For the caller's cheap width-target decision.

    Returns
    -------
    tuple or None
        As ``gram._certify_tridiagonal``, mode ``"gram-rec"``; None on any failure (the caller falls back).

    Examples
    --------
    >>> from certbound.enclose.gram import rounded_gram
    >>> W = np.random.default_rng(1).standard_normal((30, 90))
    >>> G, beta = rounded_gram(W)
    >>> sig, alpha, e, mode = certify_reconstructed(G, beta, 0, block=8)
    >>> s = np.linalg.svd(W, compute_uv=False)
    >>> mode, all(float(x.lower()) <= v <= float(x.upper()) for x, v in zip(sig, s))
    ('gram-rec', True)
    """
    ref = householder_reflectors(G) if reflectors is None else reflectors
    if ref is None:
        return None
    c, d, e, tau = ref
    bounds = reconstruction_bounds(G, c, d, e, tau, block=block, predict=predict)
    if bounds is None:
        return None
    alpha_f, e_f = bounds
    alpha, e_res = arb(alpha_f), arb(e_f)
    with working_precision():
        spread = float_upper((beta + e_res) * _gram.SHIFT_SPREAD)
    lo, hi = tridiagonal.tridiagonal_eigenvalue_bounds(d, e, spread=spread if np.isfinite(spread) else 0.0)
    sig = _gram.tridiagonal_theorem_g_float_bounds(lo, hi, alpha, beta, e_res, scale_exponent)
    if sig is None:
        return None
    return sig, alpha, e_res, "gram-rec"
