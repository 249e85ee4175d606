"""The Π-Transformer of spec §1 as a numpy forward pass (evaluation; no torch).

This is the model class of ``proofs/theory-lipschitz.md`` §1.3
(``proofs/theory-lipschitz.md``), written out literally in float64:

* X ← Π(X) (rows projected onto the closed unit ball, so (A1) holds for any input);
* for l = 1..L:  Att_l(X) = Σ_h SM(X A_{l,h} Xᵀ) X V_{l,h};
  Y = Π(Att_l(X)) (residual: Π(X + Att_l(X)));
  variant P: X = Π(φ(Y) M_l); variant B: X = Π(φ(Y M_in) M_out)
  (residual: Π(Y + FF_l(Y)));
* f(X) = ⟨w, X_{0,:}⟩ (row 0 is [CLS]).

No biases, no LayerNorm, no logit scale (any scale is part of A). Here
A_{l,h} = W_Q^h (W_K^h)ᵀ and V_{l,h} = W_V^h W_O^h are kept as factors, so
rank A, rank V ≤ d_h holds by construction.

Examples
--------
>>> from certbound.models.config import PiTransformerConfig
>>> cfg = PiTransformerConfig(d_model=6, n_layers=2, n_heads=2, d_head=2, seq_len=4)
>>> net = PiTransformer.random(cfg, seed=1)
>>> X = np.random.default_rng(0).normal(size=(3, 4, 6))
>>> out, inter = net.forward(X, return_intermediates=True)
>>> out.shape
(3,)
>>> bool(np.all(np.abs(out) <= cfg.readout_norm + 1e-12))
True
>>> max(float(np.linalg.norm(Z, axis=-1).max()) for Z in inter.projected) <= 1 + 1e-12
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

from certbound.models.config import PiTransformerConfig
from certbound.models.task import raw_uniform_bits

__all__ = [
    "project_rows",
    "softmax_rows",
    "project_readout",
    "relu",
    "loss_values",
    "TheoryFactor",
    "Intermediates",
    "PiTransformer",
]


def project_rows(Z: np.ndarray) -> np.ndarray:
    """Π applied to every row (last axis): z / max(1, ‖z‖₂) (spec §1.2).

    >>> project_rows(np.array([[3.0, 4.0], [0.3, 0.4]])).tolist()
    [[0.6, 0.8], [0.3, 0.4]]
    """
    # einsum: one pass over Z, about twice as fast as np.linalg.norm on (B, T, N) stacks
    norms = np.sqrt(np.einsum("...i,...i->...", Z, Z))[..., None]
    return Z / np.maximum(1.0, norms)


def project_readout(w: np.ndarray, bound: float) -> np.ndarray:
    """w scaled into the ball ‖w‖₂ ≤ bound, checked on the computed float norm.

    >>> bool(np.linalg.norm(project_readout(np.array([3.0, 4.0]), 0.1)) <= 0.1)
    True
    """
    w = np.asarray(w, dtype=np.float64)
    norm = float(np.linalg.norm(w))
    if norm > bound:
        w = w * (bound / norm)
        while float(np.linalg.norm(w)) > bound:  # rounding may leave it one ulp outside
            w = w * (1.0 - 2.0**-50)
    return w


def softmax_rows(U: np.ndarray) -> np.ndarray:
    """Row-wise softmax over the last axis (shifted by the row maximum for stability)."""
    E = np.exp(U - U.max(axis=-1, keepdims=True))
    return E / E.sum(axis=-1, keepdims=True)


def _rows_times(Z: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Z @ W for a stack of row matrices, as one 2-D product (much faster than a batched matmul)."""
    lead = Z.shape[:-1]
    return (Z.reshape(-1, Z.shape[-1]) @ W).reshape(lead + (W.shape[1],))


def relu(Z: np.ndarray) -> np.ndarray:
    """φ = ReLU, coordinatewise (L_φ = 1, φ₀ = 0, φ₁ = 1)."""
    return np.maximum(Z, 0.0)


def loss_values(outputs: np.ndarray, y: np.ndarray, config: PiTransformerConfig) -> np.ndarray:
    """Per-example loss ℓ(f(X), y) of ``config.loss`` (values in [0, B_ℒ]).

    >>> from certbound.models.config import PiTransformerConfig
    >>> cfg = PiTransformerConfig(d_model=2, n_layers=1, n_heads=1, d_head=1, seq_len=1)
    >>> v = loss_values(np.array([-9.0, 4.0, 0.0]), np.array([1.0, 1.0, -1.0]), cfg)
    >>> bool(abs(v[0] - 4.0) < 1e-12 and abs(v[1]) < 1e-15)   # clipped: range exactly [0, C]
    True
    """
    spec = config.loss
    margin = np.asarray(y, dtype=np.float64) * np.asarray(outputs, dtype=np.float64)
    if spec.kind == "clipped-logistic":
        c = spec.clip
        m = np.clip(margin, -c, c)
        return np.logaddexp(0.0, -m) - np.logaddexp(0.0, -c)
    return np.clip(1.0 - margin / spec.margin, 0.0, 1.0)


@dataclass(frozen=True)
class TheoryFactor:
    """One matrix of the theory, in data-flow order (spec §1.4).

    ``kind`` is "QK", "VO", "M" (variant P), "M_in", "M_out" (variant B) or
    "readout". Per-head matrices are given by factors: W = ``left @ right.T``
    (never formed by the certifying code); the others by ``dense``.
    ``head`` is None for non-attention matrices.
    """

    layer: int
    head: int | None
    kind: str
    rank_arch: int
    left: np.ndarray | None = None
    right: np.ndarray | None = None
    dense: np.ndarray | None = None

    @property
    def shape(self) -> tuple[int, int]:
        if self.dense is not None:
            return (int(self.dense.shape[0]), int(self.dense.shape[1]))
        assert self.left is not None and self.right is not None
        return (int(self.left.shape[0]), int(self.right.shape[0]))

    def matrix(self) -> np.ndarray:
        """The matrix itself (formed in float64; for tests and small models only)."""
        if self.dense is not None:
            return self.dense
        assert self.left is not None and self.right is not None
        return self.left @ self.right.T


@dataclass
class Intermediates:
    """Activations recorded by :meth:`PiTransformer.forward` (one entry per block).

    ``inputs[l]``: the block input X^{(l)} (already Π-projected);
    ``attention[l]``: Att_l (pre-Π); ``after_attention[l]``: Y = Π(·);
    ``ffn_hidden[l]``: φ(Y) (P) or φ(Y M_in) (B); ``projected``: every Π output
    (input projection included), used to check row norms ≤ 1.
    """

    inputs: list[np.ndarray] = field(default_factory=list)
    attention: list[np.ndarray] = field(default_factory=list)
    after_attention: list[np.ndarray] = field(default_factory=list)
    ffn_hidden: list[np.ndarray] = field(default_factory=list)
    projected: list[np.ndarray] = field(default_factory=list)
    final: np.ndarray | None = None


class PiTransformer:
    """A Π-normalised Transformer with float64 numpy weights (spec §1.3).

    Parameters
    ----------
    config : PiTransformerConfig
    params : dict[str, numpy.ndarray]
        Tensor name → array, names and shapes as ``config.tensor_shapes()``.
    """

    def __init__(self, config: PiTransformerConfig, params: dict[str, np.ndarray]):
        shapes = config.tensor_shapes()
        missing = sorted(set(shapes) - set(params))
        extra = sorted(set(params) - set(shapes))
        if missing:
            raise ValueError(f"model lacks tensors {missing}")
        if extra:
            raise ValueError(f"model has unexpected tensors {extra}")
        clean: dict[str, np.ndarray] = {}
        for name, shape in shapes.items():
            a = np.asarray(params[name])
            if a.shape != shape:
                raise ValueError(f"tensor {name} has shape {a.shape}, config implies {shape}")
            if not np.issubdtype(a.dtype, np.floating):
                raise ValueError(f"tensor {name} has non-float dtype {a.dtype}")
            a = a.astype(np.float64)
            if not np.all(np.isfinite(a)):
                raise ValueError(f"tensor {name} contains NaN or Inf")
            clean[name] = a
        self.config = config
        self.params = clean

    # -- construction ---------------------------------------------------------
    @classmethod
    def random(cls, config: PiTransformerConfig, seed: int, scale: float = 1.0) -> "PiTransformer":
        """Uniform random weights from the version-stable raw PCG64 stream.

        Entries are uniform on [−s, s] with s = scale·√(3/fan_in) (unit variance
        per output coordinate for unit inputs); the readout is projected onto
        ‖w‖ ≤ C_w. Deterministic in (config, seed) across numpy versions.
        """
        params: dict[str, np.ndarray] = {}
        for i, (name, shape) in enumerate(sorted(config.tensor_shapes().items())):
            count = int(np.prod(shape))
            bits = raw_uniform_bits(seed, 1000 + i, count)
            u = (bits >> np.uint64(11)).astype(np.float64) * 2.0**-53  # in [0, 1)
            fan_in = shape[0]
            s = scale * np.sqrt(3.0 / fan_in)
            params[name] = ((2.0 * u - 1.0) * s).reshape(shape)
        params["readout.w"] = project_readout(params["readout.w"], config.readout_norm)
        return cls(config, params)

    # -- theory matrices -------------------------------------------------------
    def head_factors(self, layer: int, head: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(W_Q^h, W_K^h, W_V^h, W_O^h) of one head: A = W_Q W_Kᵀ, V = W_V W_O."""
        dh = self.config.d_head
        s = slice(head * dh, (head + 1) * dh)
        p = f"blocks.{layer}.attn"
        P = self.params
        return P[f"{p}.W_Q"][:, s], P[f"{p}.W_K"][:, s], P[f"{p}.W_V"][:, s], P[f"{p}.W_O"][s, :]

    def theory_matrices(self) -> Iterator[TheoryFactor]:
        """Every matrix of spec §1.4 in data-flow order: per layer A_h, V_h (h = 1..H), FF; readout last."""
        cfg = self.config
        n = cfg.d_model
        for layer in range(cfg.n_layers):
            for head in range(cfg.n_heads):
                wq, wk, wv, wo = self.head_factors(layer, head)
                yield TheoryFactor(layer, head, "QK", min(cfg.d_head, n), left=wq, right=wk)
                yield TheoryFactor(layer, head, "VO", min(cfg.d_head, n), left=wv, right=wo.T)
            p = f"blocks.{layer}.ffn"
            if cfg.ffn_kind == "single":
                yield TheoryFactor(layer, None, "M", n, dense=self.params[f"{p}.M"])
            else:
                assert cfg.d_ff is not None
                r = min(n, cfg.d_ff)
                yield TheoryFactor(layer, None, "M_in", r, dense=self.params[f"{p}.M_in"])
                yield TheoryFactor(layer, None, "M_out", r, dense=self.params[f"{p}.M_out"])
        yield TheoryFactor(cfg.n_layers, None, "readout", 1, dense=self.params["readout.w"].reshape(n, 1))

    # -- forward ---------------------------------------------------------------
    def attention(self, layer: int, X: np.ndarray, rows: slice | None = None) -> np.ndarray:
        """Att_l(X) = Σ_h SM(X A_h Xᵀ) X V_h for a batch X of shape (B, T, N).

        ``rows`` (e.g. ``slice(0, 1)``) computes only those rows of the result:
        row i of Att depends on all rows of X but on the query of row i alone.
        """
        Xq = X if rows is None else X[:, rows, :]
        out = np.zeros_like(Xq)
        for head in range(self.config.n_heads):
            wq, wk, wv, wo = self.head_factors(layer, head)
            logits = _rows_times(Xq, wq) @ np.swapaxes(_rows_times(X, wk), -1, -2)  # X A Xᵀ, A = W_Q W_Kᵀ
            out += softmax_rows(logits) @ _rows_times(_rows_times(X, wv), wo)    # SM(·) X V, V = W_V W_O
        return out

    def feed_forward(self, layer: int, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(FF_l(Y), hidden) with FF = φ(Y) M (P) or φ(Y M_in) M_out (B); hidden = the φ output."""
        p = f"blocks.{layer}.ffn"
        if self.config.ffn_kind == "single":
            hidden = relu(Y)
            return _rows_times(hidden, self.params[f"{p}.M"]), hidden
        hidden = relu(_rows_times(Y, self.params[f"{p}.M_in"]))
        return _rows_times(hidden, self.params[f"{p}.M_out"]), hidden

    def forward(self, X: np.ndarray, return_intermediates: bool = False):
        """Outputs f(X) (shape (B,)) for inputs X of shape (B, T, N) or (T, N).

        With ``return_intermediates=True`` also returns an :class:`Intermediates`.
        """
        X = np.asarray(X, dtype=np.float64)
        single = X.ndim == 2
        if single:
            X = X[None]
        if X.ndim != 3 or X.shape[-1] != self.config.d_model:
            raise ValueError(f"inputs must have shape (batch, T, {self.config.d_model}), got {X.shape}")
        if not return_intermediates:
            out = self._forward_cls(X)
            return out[0] if single else out
        rec = Intermediates()
        X = project_rows(X)
        rec.projected.append(X)
        for layer in range(self.config.n_layers):
            rec.inputs.append(X)
            att = self.attention(layer, X)
            rec.attention.append(att)
            Y = project_rows(X + att if self.config.residual else att)
            rec.after_attention.append(Y)
            rec.projected.append(Y)
            ff, hidden = self.feed_forward(layer, Y)
            rec.ffn_hidden.append(hidden)
            X = project_rows(Y + ff if self.config.residual else ff)
            rec.projected.append(X)
        rec.final = X
        out = X[:, 0, :] @ self.params["readout.w"]
        if single:
            out = out[0]
        return out, rec

    def _forward_cls(self, X: np.ndarray) -> np.ndarray:
        """f(X) computing only row 0 in the last block (the only row the readout reads).

        Every operation after the last block's attention acts row by row, so
        row 0 of the final X is the same function of row 0 of that attention;
        this saves a factor T of the last block's work (all of it when L = 1).
        """
        X = project_rows(X)
        last = self.config.n_layers - 1
        for layer in range(self.config.n_layers):
            rows = slice(0, 1) if layer == last else None
            Xq = X if rows is None else X[:, rows, :]
            att = self.attention(layer, X, rows)
            Y = project_rows(Xq + att if self.config.residual else att)
            ff, _ = self.feed_forward(layer, Y)
            X = project_rows(Y + ff if self.config.residual else ff)
        return X[:, 0, :] @ self.params["readout.w"]

    __call__ = forward

    def mean_loss(self, X: np.ndarray, y: np.ndarray, batch: int = 4096) -> float:
        """Empirical risk (1/n) Σ ℓ(f(X_i), y_i) of the configured loss (float64, batched)."""
        total = 0.0
        for i in range(0, len(y), batch):
            total += float(loss_values(self.forward(X[i:i + batch]), y[i:i + batch], self.config).sum())
        return total / len(y)

    def error_rate(self, X: np.ndarray, y: np.ndarray, batch: int = 4096) -> float:
        """0-1 error of sign(f) (ties count as errors)."""
        wrong = 0
        for i in range(0, len(y), batch):
            wrong += int(np.sum(self.forward(X[i:i + batch]) * y[i:i + batch] <= 0))
        return wrong / len(y)
