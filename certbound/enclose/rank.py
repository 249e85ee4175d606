"""Exact rank over ℚ of a float matrix.

Every float64 is a dyadic rational, so ``W = 2^e · M`` with M an integer
matrix and ``rank_ℚ(W) = rank_ℤ(M)``. Reducing M modulo a prime p can only
lower the rank (a nonzero minor may vanish mod p, a zero minor cannot become
nonzero), so ``rank_{𝔽_p}(M) ≤ rank_ℚ(W)``: a cheap certified lower bound
(``nmod_mat``). The exact rank comes from fraction-free elimination over ℤ
(``fmpz_mat.rank``). Proof: proofs/enclosure.md §7.

>>> import numpy as np
>>> W = np.array([[1.0, 2.0], [0.5, 1.0]])
>>> rank_lower_bound_modp(W), exact_rank(W)
(1, 1)
"""

from __future__ import annotations

import numpy as np
from flint import fmpz, fmpz_mat, nmod_mat

from certbound.ball import under_float_model
from certbound.enclose._input import as_exact_float64_matrix

__all__ = ["integer_matrix", "rank_lower_bound_modp", "exact_rank"]

#: Large primes below 2⁶² for the mod-p rank.
_PRIMES = (4611686018427387847, 4611686018427387817)


def _mantissas(W: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Integer mantissas (int64, |m| < 2⁵³), exponents, and the common exponent."""
    frac, exp = np.frexp(W)  # W = frac·2^exp, frac ∈ ±[1/2, 1) or 0
    man = np.ldexp(frac, 53).astype(np.int64)  # exact: frac has ≤ 53 bits
    exp = exp.astype(np.int64) - 53
    # Strip trailing zero bits so the common exponent (and M's size) is minimal.
    a = np.abs(man)
    low = np.where(a != 0, a & -a, 1)
    tz = np.frexp(low.astype(np.float64))[1].astype(np.int64) - 1  # exact: low is 2^tz
    man = np.where(man < 0, -(a >> tz), a >> tz)
    exp = exp + tz
    nz = man != 0
    emin = int(exp[nz].min()) if np.any(nz) else 0
    return man, exp, emin


@under_float_model
def integer_matrix(W: np.ndarray) -> tuple[list[list[int]], int]:
    """``(M, e)`` with M an integer matrix (nested lists) and ``W = 2^e·M``.

    Parameters
    ----------
    W : array_like, 2-D
        A finite float matrix (float16/bfloat16/float32 widen to float64 exactly).

    Returns
    -------
    tuple
        ``(M, e)``: the rows of M as lists of Python ints and the common exponent e
        (the smallest of the entries' exponents), so that ``W = 2^e·M`` exactly.

    Examples
    --------
    >>> integer_matrix(np.array([[0.75, 2.0]]))
    ([[3, 8]], -2)
    """
    W = as_exact_float64_matrix(W)
    man, exp, emin = _mantissas(W)
    rows = []
    for i in range(W.shape[0]):
        rows.append([int(a) << int(b - emin) if a else 0 for a, b in zip(man[i], exp[i])])
    return rows, emin


@under_float_model
def rank_lower_bound_modp(W: np.ndarray, prime: int = _PRIMES[0]) -> int:
    """A certified lower bound on rank_ℚ(W): the rank of ``M mod p``.

    ``prime`` must be a prime below 2⁶⁴ (FLINT's ``nmod_mat`` word-size
    modulus; its rank routine assumes a field — a composite modulus can abort
    the process), else ``ValueError``.

    Parameters
    ----------
    W : array_like, 2-D
        A finite float matrix (exact data).
    prime : int
        The modulus p, a prime with ``2 ≤ p < 2⁶⁴``.

    Returns
    -------
    int
        ``rank(M mod p) ≤ rank_ℚ(W)`` for ``W = 2^e·M`` (an integer matrix).

    Examples
    --------
    >>> rank_lower_bound_modp(np.eye(3), prime=7)
    3
    >>> rank_lower_bound_modp(np.eye(3), prime=9)
    Traceback (most recent call last):
    ...
    ValueError: prime: 9 is not a prime (the mod-p rank needs a prime modulus 2 <= p < 2**64)
    """
    _check_prime(prime)
    W = as_exact_float64_matrix(W)
    m, n = W.shape
    if m == 0 or n == 0:
        return 0
    man, exp, emin = _mantissas(W)
    shift = (exp - emin).ravel()
    # M_ij mod p = man_ij · 2^shift_ij mod p, with pow(2, ·, p) per distinct shift.
    pw = {int(s): pow(2, int(s), prime) for s in np.unique(shift)}
    entries = [(int(a) % prime) * pw[int(s)] % prime for a, s in zip(man.ravel(), shift)]
    return int(nmod_mat(m, n, entries, prime).rank())


@under_float_model
def _check_prime(p: object) -> None:
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
        raise ValueError(f"prime: expected an integer, got {p!r}")
    p = int(p)
    if not 2 <= p < 2**64:
        raise ValueError(f"prime: {p} is out of range (the mod-p rank needs a prime modulus 2 <= p < 2**64)")
    if not fmpz(p).is_prime():
        raise ValueError(f"prime: {p} is not a prime (the mod-p rank needs a prime modulus 2 <= p < 2**64)")


def exact_rank(W: np.ndarray) -> int:
    """The exact rank over ℚ of the stored matrix (fraction-free elimination).

    Cost grows with size and entry bit-length; intended for matrices up to a
    few hundred rows or for a caller that asks for an exact rank.

    Parameters
    ----------
    W : array_like, 2-D
        A finite float matrix (exact data).

    Returns
    -------
    int
        rank_ℚ(W) (a full-rank mod-p certificate short-cuts the elimination).

    Examples
    --------
    >>> exact_rank(np.array([[1.0, 2.0], [0.5, 1.0]])), exact_rank(np.eye(3))
    (1, 3)
    """
    W = as_exact_float64_matrix(W)
    if W.size == 0:
        return 0
    lo = rank_lower_bound_modp(W)
    if lo == min(W.shape):
        return lo  # full rank already certified by the mod-p lower bound
    rows, _ = integer_matrix(W)
    return int(fmpz_mat(rows).rank())
