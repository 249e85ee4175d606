"""Legal worst-case BLAS products, computed exactly (Fractions; no certbound code).

proofs/enclosure.md §2 (Lemma 2.1) lets a BLAS return, for each entry of a product with inner
length k ≥ 2, *any* float within γ_k·(|A||B|)ᵢⱼ (+ kη) of the exact (AB)ᵢⱼ. :func:`hostile_product`
returns, entry by entry, the float nearest to a chosen point of the window
[p − cγ_k N − (k−1)η, p + cγ_k N + (k−1)η] (p = (AB)ᵢⱼ, N = (|A||B|)ᵢⱼ, c = (2k − 3)/(2k)): the clip
moves at most cγ_k N + (k−1)η and the final rounding at most u(1 + cγ_k)N + u(k−1)η + η/2 ≤ 1.5uN + η
≤ (1 − c)γ_k N + η, so every entry is within Lemma 2.1's γ_k N + kη. For k = 1 the correctly rounded
product is returned. (``eta=False`` leaves out the (k−1)η part of the window.) Here k counts the
*nonzero* products only: a zero product is exact and adding an exact zero is exact in any order (with
or without FMA), so a dot product with z zero terms is a (k − z)-term one — the model the kernel's
zero-padded stacks rely on (proofs/enclosure-reconstruct.md §5). A window from the padded length would
be wider than any real BLAS can err.

Strategies for the chosen point: ``"up"`` (p + cγ_kN: all errors one way), ``"down"``, ``"sign"``
(each entry's error pushed away from 0, i.e. |result| as large as allowed), ``"shrink"`` (toward 0),
``"random"`` (±cγ_kN at random) and a callable ``target(i, j) -> Fraction`` (the point of the window
nearest to it: e.g. snap a product toward what the certificate would like to see).

>>> import numpy as np
>>> A = np.array([[1.0, 2.0**-60]]); B = np.array([[1.0], [1.0]])
>>> float(hostile_product(A, B, "down")[0, 0]) == 1.0   # 1 + 2⁻⁶⁰ pushed down within γ₂·(1 + 2⁻⁶⁰)
True
"""

from __future__ import annotations

from fractions import Fraction

import math

import numpy as np

from tests.enclose.exact_rounding import rn

__all__ = ["U", "ETA", "gamma_fraction", "hostile_product", "HostileNumpy", "HostileFortranBlas"]

U = Fraction(1, 2**53)
ETA = Fraction(1, 2**1074)


def _mant_exp(x: float) -> tuple[int, int]:
    """x = m·2^e exactly with integer m (x finite)."""
    f, e = math.frexp(x)
    return int(f * 2**53), e - 53


def _exact_dot(pairs) -> tuple[Fraction, Fraction, int]:
    """(Σ xᵢyᵢ, Σ |xᵢyᵢ|, #nonzero products) exactly for finite floats, by integer arithmetic (any exponents)."""
    terms = []
    for x, y in pairs:
        if x and y:
            (mx, ex), (my, ey) = _mant_exp(x), _mant_exp(y)
            terms.append((mx * my, ex + ey))
    if not terms:
        return Fraction(0), Fraction(0), 0
    E = min(e for _, e in terms)
    P = sum(m << (e - E) for m, e in terms)
    N = sum(abs(m) << (e - E) for m, e in terms)
    sc = Fraction(2) ** E
    return P * sc, N * sc, len(terms)


def gamma_fraction(k: int) -> Fraction:
    return k * U / (1 - k * U)


def hostile_product(A, B, how="up", rng=None, eta: bool = True) -> np.ndarray:
    """A legal (Lemma 2.1) float value of A @ B for 2-D float arrays, every error steered by ``how``."""
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    m, k = A.shape
    k2, n = B.shape
    assert k == k2, (A.shape, B.shape)
    if k <= 1:
        return np.matmul(A, B)
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(B))):
        return np.matmul(A, B)  # non-finite data: the model says nothing; IEEE's own result
    Al, Bt = A.tolist(), B.T.tolist()
    out = np.empty((m, n))
    for i in range(m):
        for j in range(n):
            p, N, nz = _exact_dot(zip(Al[i], Bt[j]))
            t = (lambda: how(i, j)) if callable(how) else None
            out[i, j] = _window_pick(p, N, nz, "target" if t else how, rng, eta, t)
    return out


class HostileNumpy:
    """A stand-in for a module's ``np``: ``matmul``/``dot`` (float64, 2-D or stacked with any number of batch
    dimensions, broadcast as numpy does) are :func:`hostile_product` per slice.

    With ``sums=True`` also ``sum(a, axis=...)`` of a float64 array is adversarial: each output entry is a legal
    value of a sum of q terms (Lemma 2.1 with unit factors: the window of :func:`_window_pick` for the nonzero
    terms), pushed by ``how``. That is the model of Lemma 2.5's chunk sums (chunk products summed in any order:
    γ_c and then γ_{q−1} compose within γ_{c+q−1}) and of Lemma 2.2's sums. Everything else is numpy's.
    ``calls`` counts the products (and sums) that went through the adversary, so a test can assert that
    the code under test did use it.
    """

    def __init__(self, how="up", rng=None, max_work: int = 200_000, eta: bool = True, sums: bool = False):
        self.how, self.rng, self.max_work, self.eta, self.sums, self.calls = how, rng, max_work, eta, sums, 0

    def __getattr__(self, name):
        return getattr(np, name)

    def _product(self, a, b):
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype != np.float64 or b.dtype != np.float64 or a.ndim < 2 or b.ndim < 2:
            return np.matmul(a, b)
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        slices = int(np.prod(batch)) if batch else 1
        if slices == 0 or slices * a.shape[-2] * a.shape[-1] * b.shape[-1] > self.max_work:
            return np.matmul(a, b)
        if not batch:
            self.calls += 1
            return hostile_product(a, b, self.how, self.rng, self.eta)
        A = np.broadcast_to(a, batch + a.shape[-2:])
        B = np.broadcast_to(b, batch + b.shape[-2:])
        out = np.empty(batch + (a.shape[-2], b.shape[-1]))
        self.calls += 1
        for idx in np.ndindex(*batch):  # each slice one classical product
            out[idx] = hostile_product(A[idx], B[idx], self.how, self.rng, self.eta)
        return out

    def matmul(self, a, b, out=None, **kw):
        r = self._product(a, b)
        if out is None:
            return r
        out[...] = r
        return out

    def dot(self, a, b, out=None):
        return self.matmul(a, b, out=out)

    def sum(self, a, axis=None, dtype=None, out=None, keepdims=False, **kw):
        x = np.asarray(a)
        if (not self.sums or x.dtype != np.float64 or dtype is not None or kw or x.size > self.max_work
                or not np.all(np.isfinite(x))):
            return np.sum(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kw)
        axes = tuple(range(x.ndim)) if axis is None else tuple(np.atleast_1d(axis) % max(x.ndim, 1))
        keep = [i for i in range(x.ndim) if i not in axes]
        y = np.transpose(x, keep + list(axes))
        lead = y.shape[:len(keep)]
        flat = y.reshape(lead + (-1,))
        r = np.empty(lead)
        self.calls += 1
        for idx in np.ndindex(*lead):
            terms = flat[idx].tolist()
            p, N, nz = _exact_dot((t, 1.0) for t in terms)
            r[idx] = _window_pick(p, N, nz, self.how, self.rng, self.eta)
        if keepdims:
            r = np.expand_dims(r, axes)
        if out is None:
            return r if r.ndim else np.float64(r)
        out[...] = r
        return out


# ---------------------------------------------------------------- Fortran BLAS called through ctypes


def _arg(x, ctype):
    """The value of a Fortran scalar argument: a ``ctypes.byref`` object, a ctypes instance, or a raw address."""
    obj = getattr(x, "_obj", None)
    if obj is None and isinstance(x, int):
        obj = ctype.from_address(x)
    if obj is None:
        obj = x
    return getattr(obj, "value", obj)


def _val(x):
    """A char argument (b"N", b"T", b"L", …)."""
    import ctypes

    return _arg(x, ctypes.c_char)


def _int(x) -> int:
    import ctypes

    return int(_arg(x, ctypes.c_int))


def _dbl(x) -> float:
    import ctypes

    return float(_arg(x, ctypes.c_double))


def _view(addr: int, rows: int, cols: int, ld: int) -> np.ndarray:
    """A writable (rows, cols) float64 view of Fortran-ordered memory at ``addr`` with leading dimension ld."""
    import ctypes

    if rows == 0 or cols == 0:
        return np.zeros((rows, cols))
    count = ld * (cols - 1) + rows
    buf = (ctypes.c_double * count).from_address(int(addr))
    flat = np.ctypeslib.as_array(buf)
    return np.lib.stride_tricks.as_strided(flat, shape=(rows, cols), strides=(8, 8 * ld))


def _window_pick(p: Fraction, N: Fraction, terms: int, how, rng, eta: bool, target=None) -> float:
    """The float nearest to the point of Lemma 2.1's window (shrunk by c, see the module text) chosen by ``how``."""
    if terms <= 1:
        return rn(p)
    c = Fraction(2 * terms - 3, 2 * terms) * gamma_fraction(terms)
    w = c * N + ((terms - 1) * ETA if eta else 0)
    lo, hi = p - w, p + w
    if how == "target":
        x = min(max(Fraction(target()), lo), hi)
    elif how == "up":
        x = hi
    elif how == "down":
        x = lo
    elif how == "sign":
        x = hi if p >= 0 else lo
    elif how == "shrink":
        x = min(max(Fraction(0), lo), hi)
    elif how == "random":
        x = hi if rng.random() < 0.5 else lo
    else:
        raise ValueError(how)
    return rn(x)


class HostileFortranBlas:
    """``dgemm``/``dsymm``/``dsyr2k`` with the Fortran calling convention (ctypes ``byref`` scalars, raw
    pointers), each entry a legal worst-case value (:func:`_window_pick`): a stand-in for a module's
    dictionary of ctypes BLAS functions. ``syr2k_target(n, i, j)`` (a number or None) steers dsyr2k's
    entry (i, j) of an order-n update toward that value instead (e.g. toward Ĝ: the reconstruction then
    hides its own error from the computed residual). Supported: gemm and symm with β = 0, syr2k with β = 1 (the
    cases a certificate's a-priori bound models as one rounded sum per entry); anything else raises.
    ``calls`` counts the calls per routine.
    """

    def __init__(self, how="up", rng=None, eta: bool = True, syr2k_target=None):
        self.how, self.rng, self.eta, self.syr2k_target = how, rng, eta, syr2k_target
        self.calls = {"dgemm": 0, "dsymm": 0, "dsyr2k": 0}

    def functions(self) -> dict:
        return {"dgemm": self.dgemm, "dsymm": self.dsymm, "dsyr2k": self.dsyr2k}

    def dgemm(self, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
        self.calls["dgemm"] += 1
        ta, tb = _val(ta), _val(tb)
        m, n, k, lda, ldb, ldc = (_int(x) for x in (m, n, k, lda, ldb, ldc))
        alpha, beta = Fraction(_dbl(alpha)), Fraction(_dbl(beta))
        if beta != 0:
            raise NotImplementedError("hostile dgemm: beta != 0")
        A = _view(a, *((m, k) if ta in (b"N", b"n") else (k, m)), lda)
        B = _view(b, *((k, n) if tb in (b"N", b"n") else (n, k)), ldb)
        A = A if ta in (b"N", b"n") else A.T
        B = B if tb in (b"N", b"n") else B.T
        C = _view(c, m, n, ldc)
        Al, Bt = (float(alpha) * A).tolist(), B.T.tolist()  # α = ±1: exact
        out = np.empty((m, n))
        for i in range(m):
            for j in range(n):
                out[i, j] = self._pick(list(zip(Al[i], Bt[j])))
        C[...] = out

    def dsymm(self, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc):
        self.calls["dsymm"] += 1
        side, uplo = _val(side), _val(uplo)
        m, n, lda, ldb, ldc = (_int(x) for x in (m, n, lda, ldb, ldc))
        alpha, beta = Fraction(_dbl(alpha)), Fraction(_dbl(beta))
        if beta != 0 or side not in (b"L", b"l"):
            raise NotImplementedError("hostile dsymm: beta != 0 or side R")
        A = np.array(_view(a, m, m, lda))
        A = np.tril(A) + np.tril(A, -1).T if uplo in (b"L", b"l") else np.triu(A) + np.triu(A, 1).T
        B = _view(b, m, n, ldb)
        C = _view(c, m, n, ldc)
        Al, Bt = (float(alpha) * A).tolist(), np.asarray(B).T.tolist()
        out = np.empty((m, n))
        for i in range(m):
            for j in range(n):
                out[i, j] = self._pick(list(zip(Al[i], Bt[j])))
        C[...] = out

    def dsyr2k(self, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
        self.calls["dsyr2k"] += 1
        uplo, trans = _val(uplo), _val(trans)
        n, k, lda, ldb, ldc = (_int(x) for x in (n, k, lda, ldb, ldc))
        alpha, beta = Fraction(_dbl(alpha)), Fraction(_dbl(beta))
        if beta != 1 or trans not in (b"N", b"n"):
            raise NotImplementedError("hostile dsyr2k: beta != 1 or trans T")
        A, B = _view(a, n, k, lda), _view(b, n, k, ldb)
        C = _view(c, n, n, ldc)
        Al, Bl, Cl = (float(alpha) * np.asarray(A)).tolist(), (float(alpha) * np.asarray(B)).tolist(), np.array(C).tolist()
        Ar, Br = np.asarray(A).tolist(), np.asarray(B).tolist()
        lower = uplo in (b"L", b"l")
        for i in range(n):
            for j in range(i + 1) if lower else range(i, n):
                pairs = list(zip(Al[i], Br[j])) + list(zip(Bl[i], Ar[j])) + [(Cl[i][j], 1.0)]
                t = None if self.syr2k_target is None else self.syr2k_target(n, i, j)
                C[i, j] = self._pick(pairs, t)

    def _pick(self, pairs, target=None) -> float:
        if not all(math.isfinite(x) and math.isfinite(y) for x, y in pairs):
            return float(np.sum([x * y for x, y in pairs]))  # non-finite data: IEEE's own business
        p, N, nz = _exact_dot(pairs)
        if target is not None:
            return _window_pick(p, N, nz, "target", self.rng, self.eta, lambda: target)
        return _window_pick(p, N, nz, self.how, self.rng, self.eta)
