"""Input checking and exact power-of-two scaling for the kernel.

The certified object is the matrix *as stored*: every supported dtype
(float16, bfloat16, float32, float64, integers up to 2⁵³) converts to float64
exactly, and scaling by a power of two is exact unless it pushes entries into
the subnormal range, in which case the perturbation is bounded explicitly
(proofs/enclosure.md §5).
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import NamedTuple

import numpy as np

__all__ = ["as_exact_float64_matrix", "ExactOperand", "exact_float64_operand", "exact_float64_operand_amax",
           "power_of_two_scaling", "any_tiny_nonzero"]

#: Entries per block of the blockwise passes below (2 MiB of float64): a
#: pass over a big matrix never allocates a full-size temporary.
BLOCK_ENTRIES = 1 << 18


def as_exact_float64_matrix(W: object, name: str = "W") -> np.ndarray:
    """Return ``W`` as a C-contiguous float64 2-D array equal to it entry by entry.

    Parameters
    ----------
    W : array_like
        The matrix as stored (float16/bfloat16/float32/float64, ints, bools, or
        exactly representable objects such as Fractions).
    name : str
        The matrix's name in error messages.

    Returns
    -------
    numpy.ndarray
        C-contiguous float64, equal to W entry by entry (W itself when it already is one).

    Raises
    ------
    ValueError
        For non-2-D input, masked arrays, complex or non-numeric dtypes, NaN or
        Inf entries, and entries that float64 cannot hold exactly.

    Examples
    --------
    >>> as_exact_float64_matrix([[1, 2], [3, 4]]).dtype
    dtype('float64')
    >>> as_exact_float64_matrix([[float("nan")]])
    Traceback (most recent call last):
    ...
    ValueError: W: matrix has 1 NaN/Inf entries (first at (0, 0)); certbound only certifies finite matrices
    """
    if type(W) is np.ndarray and W.dtype == np.float64 and W.ndim == 2 and W.flags.c_contiguous:
        # Already what is returned (the per-head factors of a layer, 288 calls per MiniLM model): only
        # the finiteness check below, without the general path's conversions.
        if W.size and not _all_finite(W):
            _raise_non_finite(W, name)
        return W
    if isinstance(W, np.ma.MaskedArray):
        # np.asarray would silently certify the data hidden under the mask.
        raise ValueError(
            f"{name}: numpy.ma.MaskedArray input is refused (the masked entries would be certified as "
            "they are stored); pass W.filled(value) or an explicit plain array"
        )
    a = np.asarray(W)
    if a.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D matrix, got an array of shape {a.shape}")
    if np.iscomplexobj(a):
        raise ValueError(f"{name}: complex matrices are not supported")
    kind = a.dtype.kind
    if kind == "b":
        a = a.astype(np.float64)
    elif kind in "iu":
        f = a.astype(np.float64)
        if not np.array_equal(f.astype(a.dtype), a) or (a.size and np.max(np.abs(f)) > 2.0**53):
            raise ValueError(f"{name}: integer entries too large to be represented exactly in float64")
        a = f
    elif kind == "f" and a.dtype.itemsize <= 8 or a.dtype.name == "bfloat16":
        # float16/32/64 (and ml_dtypes' bfloat16) widen to float64 exactly;
        # float64 input is used as is (no copy).
        a = np.asarray(a, dtype=np.float64)
    elif kind in "fO" or (kind == "V" and a.dtype.names is None):
        # longdouble/float128, Python objects (ints beyond 2⁶³, Fractions,
        # Decimals) and other numeric extension dtypes: converting rounds
        # in general, so accept only data that float64 holds exactly.
        try:
            f = a.astype(np.float64)
        except (TypeError, ValueError, OverflowError) as exc:
            raise ValueError(f"{name}: unsupported dtype {a.dtype}") from exc
        if kind == "O":
            # Python's == between a number and a float compares exact values.
            same = all(
                isinstance(x, (int, float, np.number, Fraction, Decimal)) and (x == y or y != y)
                for x, y in zip(a.ravel().tolist(), f.ravel().tolist())
            )
        else:
            same = bool(np.array_equal(f.astype(a.dtype), a, equal_nan=True))
        if not same:
            raise ValueError(f"{name}: entries not exactly representable in float64 (dtype {a.dtype})")
        a = f
    else:
        raise ValueError(f"{name}: unsupported dtype {a.dtype} (expected a real numeric matrix)")
    if a.size and not _all_finite(a):
        _raise_non_finite(a, name)
    return np.ascontiguousarray(a)


def _all_finite(a: np.ndarray) -> bool:
    """Whether every entry of the float64 array ``a`` is finite (one pass, no temporary array).

    IEEE addition propagates NaN and ±∞ (NaN + x = NaN, ∞ + finite = ∞, ∞ − ∞ = NaN), so the sum of
    the entries, in any order, is finite only if every entry is; a non-finite sum (a NaN/Inf entry,
    or an overflow of finite entries) is decided by the entrywise test.

    Parameters
    ----------
    a : ndarray of float64

    Returns
    -------
    bool

    Examples
    --------
    >>> _all_finite(np.array([[1e308, 1e308]])), _all_finite(np.array([[1.0, np.nan]]))
    (True, False)
    """
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(np.add.reduce(a, axis=None)):
            return True
    return bool(np.isfinite(a).all())


def _raise_non_finite(a: np.ndarray, name: str) -> None:
    """Raise the ValueError for an array with NaN/Inf entries (no-op if it has none)."""
    bad = np.argwhere(~np.isfinite(a))
    if len(bad):
        raise ValueError(
            f"{name}: matrix has {len(bad)} NaN/Inf entries (first at {tuple(int(i) for i in bad[0])}); "
            "certbound only certifies finite matrices"
        )


class ExactOperand(NamedTuple):
    """What :func:`exact_float64_operand` returns.

    ``array`` is C-contiguous float64 and equals W (``transposed`` False) or
    Wᵀ (``transposed`` True); ``owned`` is True when ``array`` is a copy made
    by the conversion, sharing no memory with W, so the caller may overwrite it.
    """

    array: np.ndarray
    transposed: bool
    owned: bool


def exact_float64_operand(W: object, name: str = "W", *, allow_transpose: bool = True) -> ExactOperand:
    """W as an exact C-contiguous float64 matrix, or Wᵀ when that needs no copy.

    With ``allow_transpose`` (default), for a Fortran-ordered W (e.g. the
    transposed view ``t.T`` of a stored tensor) ``Wᵀ`` is C-contiguous, so it
    is returned (``transposed=True``) instead of a C-ordered copy of W:
    singular values and ranks are the same for W and Wᵀ (proofs/enclosure.md
    §5, "Exact inputs"). Checks and errors as :func:`as_exact_float64_matrix`.

    Parameters
    ----------
    W : array_like
        The matrix as stored.
    name : str
        The matrix's name in error messages.
    allow_transpose : bool
        Return Wᵀ (C-contiguous without a copy) for a Fortran-ordered W.

    Returns
    -------
    ExactOperand
        ``(array, transposed, owned)``: the exact float64 matrix, whether it is Wᵀ,
        and whether it is a fresh copy the caller may overwrite.

    Examples
    --------
    >>> t = np.arange(6.0).reshape(2, 3)
    >>> op = exact_float64_operand(t.T)       # a 3×2 Fortran-ordered view
    >>> op.transposed, op.owned, op.array is t or bool(np.shares_memory(op.array, t))
    (True, False, True)
    >>> exact_float64_operand(t.astype(np.float32)).owned   # converted: a new array
    True
    """
    a = W if isinstance(W, np.ndarray) and not isinstance(W, np.ma.MaskedArray) else None
    transposed = (allow_transpose and a is not None and a.ndim == 2 and a.flags.f_contiguous
                  and not a.flags.c_contiguous)
    source = a.T if transposed else W
    out = as_exact_float64_matrix(source, name)
    base = np.asarray(source) if not isinstance(source, np.ma.MaskedArray) else source
    owned = isinstance(W, np.ndarray) and not np.may_share_memory(out, base)
    return ExactOperand(out, bool(transposed), bool(owned))


def exact_float64_operand_amax(W: object, name: str = "W", *, allow_transpose: bool = True
                               ) -> tuple[ExactOperand, float]:
    """:func:`exact_float64_operand` and ``max|w|``, the finiteness check made by the max and the min themselves.

    For a float64 W that needs no conversion (C-contiguous, or Fortran-contiguous and transposed) the
    separate finiteness pass is not made: NaN propagates through ``max`` and ``min`` and an infinite
    entry is the maximum or the minimum, so both are finite exactly when every entry is
    (proofs/enclosure.md §5, *Input check*); otherwise the same error as :func:`as_exact_float64_matrix`
    is raised. Converted inputs take :func:`exact_float64_operand` and then the max and min.

    Parameters
    ----------
    W, name, allow_transpose : as for :func:`exact_float64_operand`.

    Returns
    -------
    op : ExactOperand
        As :func:`exact_float64_operand` returns it.
    amax : float
        ``max |w|`` over the entries (0.0 for an empty W), exactly.

    Raises
    ------
    ValueError
        As :func:`as_exact_float64_matrix`.

    Examples
    --------
    >>> op, amax = exact_float64_operand_amax(np.array([[1.0, -3.0], [2.0, 0.5]]))
    >>> amax, op.transposed
    (3.0, False)
    >>> exact_float64_operand_amax(np.array([[1.0, np.inf]]))
    Traceback (most recent call last):
    ...
    ValueError: W: matrix has 1 NaN/Inf entries (first at (0, 1)); certbound only certifies finite matrices
    """
    a = W if isinstance(W, np.ndarray) and not isinstance(W, np.ma.MaskedArray) else None
    transposed = (allow_transpose and a is not None and a.ndim == 2 and a.flags.f_contiguous
                  and not a.flags.c_contiguous)
    source = a.T if transposed else W
    if type(source) is np.ndarray and source.dtype == np.float64 and source.ndim == 2 and source.flags.c_contiguous:
        owned = not np.may_share_memory(source, source)  # (as exact_float64_operand decides it: True only if empty)
        if not source.size:
            return ExactOperand(source, bool(transposed), bool(owned)), 0.0
        mx, mn = float(source.max()), float(source.min())
        if not (math.isfinite(mx) and math.isfinite(mn)):
            _raise_non_finite(source, name)
        return ExactOperand(source, bool(transposed), bool(owned)), max(mx, -mn)
    op = exact_float64_operand(W, name, allow_transpose=allow_transpose)
    A = op.array
    return op, (max(float(A.max()), -float(A.min())) if A.size else 0.0)


def any_tiny_nonzero(W: np.ndarray, threshold: float) -> bool:
    """Whether some entry satisfies ``0 < |w| < threshold`` (blockwise: no |W| copy).

    Parameters
    ----------
    W : numpy.ndarray
        A float matrix (any layout; a non-contiguous one is flattened by a copy).
    threshold : float
        The magnitude below which a nonzero entry counts as tiny.

    Returns
    -------
    bool
        True if some entry is nonzero with magnitude below ``threshold``.

    Examples
    --------
    >>> any_tiny_nonzero(np.array([[1.0, -1e-300]]), 1e-200), any_tiny_nonzero(np.zeros((2, 2)), 1.0)
    (True, False)
    """
    flat = W.reshape(-1) if W.flags.c_contiguous or W.flags.f_contiguous else None
    if flat is None:
        flat = np.ravel(W)
    buf = np.empty(min(BLOCK_ENTRIES, flat.size))
    for i in range(0, flat.size, BLOCK_ENTRIES):
        block = flat[i:i + BLOCK_ENTRIES]
        b = np.abs(block, out=buf[:block.size])
        # One reduction decides almost every block: no |w| below the threshold, no tiny nonzero (0.16 against
        # 0.29 ms for a 384×1536 matrix); only a block with some |w| < threshold (a zero, say) is tested entry
        # by entry. (A NaN makes min() NaN, which is not < threshold: as before, NaN is not a tiny nonzero.)
        if b.min() < threshold and np.any((b > 0) & (b < threshold)):
            return True
    return False


def power_of_two_scaling(W: np.ndarray, *, inplace: bool = False, amax: float | None = None,
                         out: np.ndarray | None = None) -> tuple[np.ndarray, int, bool]:
    """Scale W by 2^k so that ``max|W·2^k| ∈ [1, 2)``.

    Returns ``(Ws, k, exact)``; ``exact`` is False when scaling down rounded
    some tiny entries (each then moved by at most 2⁻¹⁰⁷⁵ in scaled units).
    A zero matrix returns ``k = 0``. With ``inplace=True`` (for an array the
    caller owns, e.g. a conversion copy) W itself is multiplied and returned:
    the same values as the out-of-place product, without a second matrix.

    Parameters
    ----------
    W : numpy.ndarray
        A finite float64 matrix.
    inplace : bool
        Multiply W itself (only for an array the caller owns).
    amax : float, optional
        ``max(W.max(), -W.min())`` if the caller has already read it (else read here); for W a block of a
        larger matrix, that matrix's value, so that every block gets the same k (then ``max|W·2^k| < 2``).
    out : numpy.ndarray, optional
        Where to write the scaled matrix when it is not made in place (float64, W's shape).

    Returns
    -------
    tuple
        ``(Ws, k, exact)``: ``Ws = fl(W·2^k)``, the exponent k, and whether no entry rounded.

    Examples
    --------
    >>> Ws, k, exact = power_of_two_scaling(np.array([[3.0e200, 1.0]]))
    >>> bool(1 <= abs(Ws).max() < 2), exact
    (True, True)
    >>> W = np.array([[0.25, -3.0]]); Ws, k, _ = power_of_two_scaling(W, inplace=True)
    >>> Ws is W, k, W.tolist()
    (True, -1, [[0.125, -1.5]])
    """
    if W.size == 0:
        return W, 0, True
    if amax is None:
        amax = max(float(W.max()), -float(W.min()))  # no |W| copy on the hot path
    if amax == 0.0:
        return W, 0, True
    k = -(math.frexp(amax)[1] - 1)  # frexp: amax = f·2^e with f ∈ [1/2, 1)
    if k == 0:
        return W, 0, True
    # Multiplying by a power of two is exact unless the result leaves the
    # normal range; upward (k > 0) it cannot (max becomes < 2), downward only
    # entries that become subnormal can round.
    # 2^k itself must be a normal float for the fast multiplication (k ≤ 1023:
    # a matrix of subnormals needs k up to 1074; ldexp is exact there too).
    # Exactness is decided on the unscaled values (before an in-place product).
    exact = k > 0 or not any_tiny_nonzero(W, float(np.ldexp(1.0, -1022 - k)))
    inplace = inplace and W.flags.writeable
    target = W if inplace else out
    if -1022 <= k <= 1023:
        Ws = np.multiply(W, np.ldexp(1.0, k), out=target)
    else:
        Ws = np.ldexp(W, k, out=target)
    return Ws, k, exact
