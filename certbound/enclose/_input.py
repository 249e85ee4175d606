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

import numpy as np

__all__ = ["as_exact_float64_matrix", "power_of_two_scaling"]


def as_exact_float64_matrix(W: object, name: str = "W") -> np.ndarray:
    """Return ``W`` as a C-contiguous float64 2-D array equal to it entry by entry.

    Raises ``ValueError`` for non-2-D input, complex or non-numeric dtypes,
    NaN or Inf entries, and integers that float64 cannot hold exactly.

    >>> as_exact_float64_matrix([[1, 2], [3, 4]]).dtype
    dtype('float64')
    >>> as_exact_float64_matrix([[float("nan")]])
    Traceback (most recent call last):
    ...
    ValueError: W: matrix has 1 NaN/Inf entries (first at (0, 0)); certbound only certifies finite matrices
    """
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
    if a.size and not np.isfinite(a).all():
        bad = np.argwhere(~np.isfinite(a))
        raise ValueError(
            f"{name}: matrix has {len(bad)} NaN/Inf entries (first at {tuple(int(i) for i in bad[0])}); "
            "certbound only certifies finite matrices"
        )
    return np.ascontiguousarray(a)


def power_of_two_scaling(W: np.ndarray) -> tuple[np.ndarray, int, bool]:
    """Scale W by 2^k so that ``max|W·2^k| ∈ [1, 2)``.

    Returns ``(Ws, k, exact)``; ``exact`` is False when scaling down rounded
    some tiny entries (each then moved by at most 2⁻¹⁰⁷⁵ in scaled units).
    A zero matrix returns ``k = 0``.

    >>> Ws, k, exact = power_of_two_scaling(np.array([[3.0e200, 1.0]]))
    >>> bool(1 <= abs(Ws).max() < 2), exact
    (True, True)
    """
    if W.size == 0:
        return W, 0, True
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
    Ws = W * np.ldexp(1.0, k) if -1022 <= k <= 1023 else np.ldexp(W, k)
    if k > 0:
        return Ws, k, True
    A = np.abs(W)
    exact = not bool(np.any((A > 0) & (A < np.ldexp(1.0, -1022 - k))))
    return Ws, k, exact
