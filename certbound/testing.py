"""Hypothesis strategies and exact reference models for property-testing the theory.

Public so that users can property-test their own lemmas against certbound:

* :func:`dyadic_orthogonal` / :func:`orthogonal_matrices` — orthogonal matrices
  whose entries are exact dyadic numbers (signed permutations of block
  diagonals of normalised Hadamard blocks ``H₄/2``, ``H₁₆/4``), so
  ``U diag(σ) Vᵀ`` is computed **exactly** in float64;
* :func:`singular_value_lists` and :func:`matrices_with_singular_values` —
  matrices with *prescribed* singular values (exactly: the float matrix is
  verified against the rational product);
* :func:`small_pi_transformers` — small Π-Transformers of the spec's model
  class (variants P/B, with or without residual) with random weights and
  inputs, and :func:`pi_transformer_output`, a high-precision (mpmath)
  reference forward pass used to *measure* output changes rigorously enough
  (200-bit arithmetic, errors far below any bound compared against);
* :func:`constraint_configurations` — configurations κ (per-matrix ``p``, ``s``,
  ``c``) for a :class:`~certbound.bounds.TransformerSpec`.

``hypothesis`` is imported lazily: importing this module without it works, but
calling a strategy function then raises ``ImportError``.

Examples
--------
>>> import numpy as np
>>> U = dyadic_orthogonal(6, seed=1)
>>> bool(np.array_equal(U.T @ U, np.eye(6)))       # exact, not approximate
True
>>> W = matrix_from_svd([3.0, 1.5, 0.25], 3, 5, seed=2)
>>> np.round(np.linalg.svd(W, compute_uv=False), 12).tolist()
[3.0, 1.5, 0.25]
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

import numpy as np

__all__ = [
    "dyadic_orthogonal",
    "matrix_from_svd",
    "orthogonal_matrices",
    "singular_value_lists",
    "matrices_with_singular_values",
    "SmallNetwork",
    "small_pi_transformers",
    "pi_transformer_output",
    "constraint_configurations",
]

_H4 = np.array([[1, 1, 1, 1], [1, -1, 1, -1], [1, 1, -1, -1], [1, -1, -1, 1]], dtype=np.float64) / 2
_H16 = np.kron(_H4 * 2, _H4 * 2) / 4


def dyadic_orthogonal(n: int, seed: int | None = None, *, rng: np.random.Generator | None = None) -> np.ndarray:
    """An ``n × n`` orthogonal matrix with exact dyadic entries (``QᵀQ = I`` exactly in float64).

    Random block diagonal of ``1×1`` (±1), ``H₄/2`` and ``H₁₆/4`` blocks, then a
    random signed permutation of rows and columns.
    """
    if n < 1:
        raise ValueError("n must be ≥ 1")
    rng = rng if rng is not None else np.random.default_rng(seed)
    Q = np.zeros((n, n))
    i = 0
    while i < n:
        left = n - i
        choices = [1] + ([4] if left >= 4 else []) + ([16] if left >= 16 else [])
        k = int(rng.choice(choices))
        Q[i:i + k, i:i + k] = {1: np.ones((1, 1)), 4: _H4, 16: _H16}[k]
        i += k
    Q = Q[rng.permutation(n)][:, rng.permutation(n)]
    Q = Q * rng.choice([-1.0, 1.0], size=n)[:, None]
    return Q


def matrix_from_svd(sigmas: Any, m: int, n: int, seed: int | None = None, *,
                    rng: np.random.Generator | None = None) -> np.ndarray:
    """``U diag(σ) Vᵀ`` (``m × n``) with dyadic orthogonal ``U, V``, computed and **verified** exactly.

    ``sigmas`` (≤ min(m, n) values, floats) become the singular values exactly
    provided the float product is exact; this is checked with Fractions and a
    ``ValueError`` is raised otherwise (use values with ≤ ~30 significant bits).
    """
    rng = rng if rng is not None else np.random.default_rng(seed)
    s = [float(x) for x in sigmas]
    k = len(s)
    if k > min(m, n):
        raise ValueError("more singular values than min(m, n)")
    U = dyadic_orthogonal(m, rng=rng)[:, :k]
    V = dyadic_orthogonal(n, rng=rng)[:, :k]
    W = (U * np.array(s)) @ V.T if k else np.zeros((m, n))
    # exactness check in rational arithmetic
    for i in range(m):
        for j in range(n):
            exact = sum((Fraction(U[i, t]) * Fraction(s[t]) * Fraction(V[j, t]) for t in range(k)), Fraction(0))
            if Fraction(W[i, j]) != exact:
                raise ValueError("the float product is not exact; use singular values with fewer significant bits")
    return W


def _st() -> Any:
    try:
        from hypothesis import strategies as st
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("certbound.testing strategies need the 'hypothesis' package (pip install hypothesis)") from exc
    return st


def _dyadic_floats(st: Any, lo_exp: int = -6, hi_exp: int = 3, bits: int = 20) -> Any:
    """Nonnegative dyadic floats ``k·2^e`` with ``k < 2^bits``."""
    return st.builds(lambda k, e: float(Fraction(k) * Fraction(2) ** e),
                     st.integers(0, 2**bits - 1), st.integers(lo_exp - bits, hi_exp - bits))


def orthogonal_matrices(n: int) -> Any:
    """Strategy: exact dyadic orthogonal ``n × n`` matrices (see :func:`dyadic_orthogonal`)."""
    st = _st()
    return st.integers(0, 2**32 - 1).map(lambda seed: dyadic_orthogonal(n, seed))


def singular_value_lists(max_count: int = 6, *, min_count: int = 0, allow_zero: bool = True) -> Any:
    """Strategy: descending lists of nonnegative dyadic floats (exactly representable singular values)."""
    st = _st()
    vals = _dyadic_floats(st)
    if not allow_zero:
        vals = vals.filter(lambda x: x > 0)
    return st.lists(vals, min_size=min_count, max_size=max_count).map(lambda v: sorted(v, reverse=True))


def matrices_with_singular_values(m: int, n: int, *, min_rank: int = 0) -> Any:
    """Strategy: pairs ``(W, σ)`` with ``W`` an ``m × n`` float matrix whose singular values are *exactly* ``σ``
    (padded with zeros to ``min(m, n)``)."""
    st = _st()
    k = min(m, n)

    @st.composite
    def build(draw: Any) -> tuple[np.ndarray, list[float]]:
        s = draw(singular_value_lists(k, min_count=min_rank))
        seed = draw(st.integers(0, 2**32 - 1))
        W = matrix_from_svd(s, m, n, seed)
        return W, s + [0.0] * (k - len(s))

    return build()


# ---------------------------------------------------------------------------
# small Π-Transformers


@dataclass
class SmallNetwork:
    """A small network of the spec's model class: ``spec``, weights by key, readout ``w``, one input ``X``."""

    spec: Any
    weights: dict
    readout: np.ndarray
    X: np.ndarray


def _mp() -> Any:
    import mpmath

    return mpmath


def _mat(A: Any, mp: Any) -> list:
    return [[mp.mpf(float(x)) for x in row] for row in np.atleast_2d(A)]


def _mm(A: list, B: list, mp: Any) -> list:
    Bt = list(zip(*B))
    return [[mp.fsum(a * b for a, b in zip(row, col)) for col in Bt] for row in A]


def _add(A: list, B: list) -> list:
    return [[a + b for a, b in zip(r, s)] for r, s in zip(A, B)]


def _pi_rows(Z: list, mp: Any) -> list:
    out = []
    for row in Z:
        nrm = mp.sqrt(mp.fsum(x * x for x in row))
        d = max(mp.mpf(1), nrm)
        out.append([x / d for x in row])
    return out


def _softmax_rows(Z: list, mp: Any) -> list:
    out = []
    for row in Z:
        mx = max(row)
        e = [mp.exp(x - mx) for x in row]
        s = mp.fsum(e)
        out.append([x / s for x in e])
    return out


def _act(Z: list, name: str, mp: Any) -> list:
    if name == "relu":
        return [[x if x > 0 else mp.mpf(0) for x in row] for row in Z]
    if name == "gelu":
        return [[x * (1 + mp.erf(x / mp.sqrt(2))) / 2 for x in row] for row in Z]
    if name == "identity":
        return Z
    raise ValueError(f"unknown activation {name!r}")


def pi_transformer_output(net: SmallNetwork, weights: Optional[dict] = None, readout: Optional[np.ndarray] = None,
                          X: Optional[np.ndarray] = None, *, dps: int = 60, return_inputs: bool = False) -> Any:
    """``f_θ(X) = ⟨w, X^{(L)}_{1,:}⟩`` of spec §1.3, evaluated in mpmath at ``dps`` digits (an mpf).

    Weights are exact floats; the rounding error of this evaluation is of
    order ``10^{-dps}``, negligible next to any bound it is compared with.
    With ``return_inputs`` also returns the input rows fed to every matrix
    (as lists of mpf rows), keyed like the weights.
    """
    mp = _mp()
    spec = net.spec
    W = weights if weights is not None else net.weights
    w = readout if readout is not None else net.readout
    X0 = X if X is not None else net.X
    inputs: dict = {}
    with mp.workdps(dps):
        Z = _pi_rows(_mat(X0, mp), mp)  # (A1): rows in the unit ball
        for layer in range(spec.n_layers):
            att = None
            for h in range(spec.n_heads):
                A = _mat(W[(layer, h, "QK")], mp)
                V = _mat(W[(layer, h, "VO")], mp)
                inputs[(layer, h, "QK")] = Z
                inputs[(layer, h, "VO")] = Z
                logits = _mm(_mm(Z, A, mp), [list(r) for r in zip(*Z)], mp)
                P = _softmax_rows(logits, mp)
                head = _mm(_mm(P, Z, mp), V, mp)
                att = head if att is None else _add(att, head)
            Y = _pi_rows(_add(Z, att) if spec.residual else att, mp)
            if spec.ffn_kind == "single":
                phiY = _act(Y, spec.activation, mp)
                inputs[(layer, None, "M")] = phiY
                ff = _mm(phiY, _mat(W[(layer, None, "M")], mp), mp)
            else:
                inputs[(layer, None, "M_in")] = Y
                hid = _act(_mm(Y, _mat(W[(layer, None, "M_in")], mp), mp), spec.activation, mp)
                inputs[(layer, None, "M_out")] = hid
                ff = _mm(hid, _mat(W[(layer, None, "M_out")], mp), mp)
            Z = _pi_rows(_add(Y, ff) if spec.residual else ff, mp)
        inputs["readout"] = [Z[0]]
        out = mp.fsum(mp.mpf(float(a)) * b for a, b in zip(np.ravel(w), Z[0]))
    return (out, inputs) if return_inputs else out


def small_pi_transformers(*, max_layers: int = 2, max_heads: int = 2, d_model: int = 3, seq_len: int = 3,
                          variants: tuple = ("single", "two"), activations: tuple = ("relu", "gelu")) -> Any:
    """Strategy: :class:`SmallNetwork` instances of both variants, with/without residual, random weights and input.

    Weights are floats with ≤ 20 significant bits (exact inputs), scaled to
    moderate norms; the input rows are arbitrary (projected onto the unit ball
    by the model, assumption (A1)).
    """
    st = _st()
    from certbound.bounds import TransformerSpec

    @st.composite
    def build(draw: Any) -> SmallNetwork:
        L = draw(st.integers(1, max_layers))
        H = draw(st.integers(1, max_heads))
        kind = draw(st.sampled_from(variants))
        residual = draw(st.booleans())
        act = draw(st.sampled_from(activations))
        d_ff = draw(st.integers(1, 2 * d_model)) if kind == "two" else None
        spec = TransformerSpec(L, H, d_model, seq_len, ffn_kind=kind, d_ff=d_ff, residual=residual, activation=act)
        seed = draw(st.integers(0, 2**32 - 1))
        scale = draw(st.sampled_from([0.25, 0.5, 1.0, 2.0]))
        rng = np.random.default_rng(seed)

        def q(a: np.ndarray) -> np.ndarray:  # 20-bit floats
            return np.round(a * 2**16) / 2**16

        weights = {}
        for s in spec.slots():
            weights[s.key] = q(rng.standard_normal((s.n_in, s.n_out)) * scale / np.sqrt(s.n_in))
        w = q(rng.standard_normal(d_model))
        X = q(rng.standard_normal((seq_len, d_model)) * draw(st.sampled_from([0.3, 1.0, 3.0])))
        return SmallNetwork(spec, weights, w, X)

    return build()


def constraint_configurations(spec: Any, *, p_grid_m: int = 4) -> Any:
    """Strategy: configurations κ for ``spec`` — ``{key: MatrixConstraint(p, s, c)}`` with ``p`` on ``𝒫_m``."""
    st = _st()
    from certbound.bounds import MatrixConstraint

    @st.composite
    def build(draw: Any) -> dict:
        out = {}
        for s in spec.slots():
            p = Fraction(draw(st.integers(0, 2 * p_grid_m)), p_grid_m)
            c = draw(st.sampled_from([0.25, 0.5, 1.0, 1.5, 2.0, 4.0]))
            if p == 0:
                sv: Any = draw(st.integers(0, s.rank_arch))
            else:
                sv = draw(st.sampled_from([0.125, 0.5, 1.0, 2.0, 8.0, 32.0]))
            out[s.key] = MatrixConstraint(p, sv, c)
        return out

    return build()
