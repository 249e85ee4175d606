"""The theory's matrices, per layer and head, from a checkpoint.

Row-vector convention (x ↦ xW), with W_Q, W_K, W_V, W_O the N × N row-vector
projection matrices of a layer and s_h = [h·d_h, (h+1)·d_h) the columns of
head h (``/work/shared/theory/paper-known.md`` §6, ``proofs/`` notation):

* ``QK``  = W_Q[:, s_h] · W_K[:, s_h]ᵀ   (N × N, rank ≤ d_h)
* ``VO``  = W_V[:, s_h] · W_O[s_h, :]    (N × N, rank ≤ d_h)
* ``M_in``  (N × d_ff) and ``M_out`` (d_ff × N), the FFN matrices
* on request the raw per-layer ``W_Q``, ``W_K``, ``W_V``, ``W_O`` (N × N).

certbound-pi checkpoints (``model_type`` ``certbound-pi``,
:mod:`certbound.checkpoints._pi`): the head width d_h comes from the config
(W_Q, W_K, W_V are N × H·d_h, W_O is H·d_h × N); variant P has one FFN
matrix ``M`` (N × N) instead of ``M_in``/``M_out`` — a request for the FFN
pair (both ``M_in`` and ``M_out``, as in the default :data:`MATRIX_TYPES`)
yields ``M``, a request for only one of them is an error; the learned readout
is type ``readout`` (N × 1, the vector as a column, so σ₁ = ‖w‖₂; only on
request, after the last layer). Their logits carry no 1/√d_h, so
``scale_logits`` is refused.

In PyTorch (out, in) storage this is exactly the paper's slicing:
QK = q_hᵀ k_h with q_h = W_query[s_h, :], and VO = v_hᵀ O_h with
O_h = W_outᵀ[s_h, :].

Per-head products are *never formed*: a :class:`TheoryMatrix` of type QK or
VO carries factors ``A``, ``B`` (N × d_h) with W = A Bᵀ, for
:func:`certbound.enclose.enclose_singular_values_of_product`. Other types carry
the dense row-vector matrix.

Logit scale (option ``scale_logits``): attention uses (x W_Q)(x W_K)ᵀ/√d_h,
so the scaled QK is QK/√d_h. If d_h is a power of 4, 1/√d_h = 2^-k is folded
into ``A`` by an exact power-of-two scaling (checked to lose no bits to
underflow). Otherwise the factor stays symbolic: ``logit_scale_d = d_h`` and
the consumer multiplies every singular value by the Arb ball 1/√d_h
(:meth:`TheoryMatrix.scale`) — it is never rounded into float weights.

Memory: tensors are read one at a time per layer and role; at most the four
N × N attention matrices of one layer (or one FFN matrix) are alive at once,
plus the small per-head factor copies being yielded.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import numpy as np

from ._architectures import ModelLayout, load_mapping, resolve_layout
from ._sources import Checkpoint, load_checkpoint

__all__ = ["TheoryMatrix", "theory_matrices", "MATRIX_TYPES", "RAW_TYPES", "EXTRA_TYPES", "open_model"]

#: Matrix types the bounds use, in output order within a layer.
MATRIX_TYPES = ("QK", "VO", "M_in", "M_out")
#: Optional raw per-layer projections (``raw=True``).
RAW_TYPES = ("W_Q", "W_K", "W_V", "W_O")
#: Types only some architectures have (certbound-pi): variant P's FFN matrix, the learned readout.
EXTRA_TYPES = ("M", "readout")


@dataclass(frozen=True, eq=False)
class TheoryMatrix:
    """One matrix of the theory, either dense or as a product ``A @ B.T``.

    Attributes
    ----------
    layer : int
        0-based layer index.
    head : int or None
        0-based head index (``None`` for per-layer matrices).
    type : str
        ``"QK"``, ``"VO"``, ``"M_in"``, ``"M_out"``, ``"W_Q"``, ``"W_K"``,
        ``"W_V"`` or ``"W_O"``; for certbound-pi models also ``"M"`` and
        ``"readout"``.
    shape : (int, int)
        Shape of the (row-vector) matrix.
    dense : ndarray or None
        The float64 matrix (exactly the stored weights, possibly transposed).
    factors : (ndarray, ndarray) or None
        ``(A, B)`` with the matrix equal to ``A @ B.T`` (times the scale).
    logit_scale_d : int
        The matrix is ``(1/sqrt(logit_scale_d)) * A @ B.T``; 1 means no
        pending scale (none requested, or folded exactly into ``A``).
    logit_scale_folded : int
        If > 1, ``1/sqrt(logit_scale_folded)`` (a power of two) was already
        folded exactly into ``A``.
    sources : tuple of str
        The stored tensor names the matrix is built from.
    """

    layer: int
    head: int | None
    type: str
    shape: tuple[int, int]
    dense: np.ndarray | None = None
    factors: tuple[np.ndarray, np.ndarray] | None = None
    logit_scale_d: int = 1
    logit_scale_folded: int = 1
    sources: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """Short human-readable identifier, e.g. ``"layer 3 head 5 QK"``."""
        h = "" if self.head is None else f" head {self.head}"
        return f"layer {self.layer}{h} {self.type}"

    @property
    def structural_rank_bound(self) -> int:
        """rank ≤ inner dimension of the factors (or min(m, n) when dense)."""
        if self.factors is not None:
            return min(self.factors[0].shape[1], *self.shape)
        return min(self.shape)

    def scale(self) -> Any:
        """The pending scale 1/√d as an Arb ball at the current precision (exact 1 if none).

        >>> from certbound.ball import working_precision
        >>> m = TheoryMatrix(0, 0, "QK", (2, 2), factors=(np.eye(2), np.eye(2)), logit_scale_d=32)
        >>> with working_precision(128):
        ...     s = m.scale()
        >>> from flint import arb
        >>> bool((s * s).contains(arb(1) / 32)), bool(s.rad() < 1e-30)
        (True, True)
        """
        from flint import arb

        if self.logit_scale_d == 1:
            return arb(1)
        return 1 / arb(self.logit_scale_d).sqrt()

    def to_dense(self) -> np.ndarray:
        """The float64 matrix, *formed* (uncertified; references and tests only)."""
        if self.dense is not None:
            base = self.dense
        else:
            assert self.factors is not None
            base = self.factors[0] @ self.factors[1].T
        return base / np.sqrt(self.logit_scale_d) if self.logit_scale_d != 1 else base


def _power_of_four_exponent(d: int) -> int | None:
    """k with d == 4**k, or None."""
    if d < 1 or d & (d - 1):
        return None
    e = d.bit_length() - 1
    return e // 2 if e % 2 == 0 else None


def _fold_scale(a: np.ndarray, d: int) -> tuple[np.ndarray, int, int]:
    """Scale factor ``a`` by 1/√d if that is exact; returns (a', pending d, folded d)."""
    k = _power_of_four_exponent(d)
    if k is None or k == 0:
        return a, d, 1
    scaled = np.ldexp(a, -k)
    # Multiplying by 2^-k is exact unless a value underflows into the
    # subnormal range and loses bits; undoing the scaling detects that.
    if np.array_equal(np.ldexp(scaled, k), a):
        return scaled, 1, d
    return a, d, 1


def _rowvec(ck: Checkpoint, layout: ModelLayout, role: str, layer: int) -> np.ndarray:
    """The row-vector matrix of a role (N × out), read and converted exactly."""
    t = ck.get(layout.tensor_name(role, layer))
    # A transposed *view* (no copy): the loader's peak stays at one copy of
    # the tensor; consumers that need C order copy it themselves.
    return t if layout.layout in ("conv1d", "row-vector") else t.T


def open_model(path: str | os.PathLike[str], *, config: Any = None,
               mapping: str | os.PathLike[str] | dict[str, Any] | None = None) -> tuple[Checkpoint, ModelLayout]:
    """Open a checkpoint and resolve its layout (metadata only, all shapes checked).

    Raises ``FileNotFoundError``/``ValueError`` with the file and tensor named.
    """
    ck = load_checkpoint(path, config=config)
    try:
        m = load_mapping(mapping) if isinstance(mapping, (str, os.PathLike)) else mapping
        layout = resolve_layout(ck, m)
    except BaseException:
        ck.close()
        raise
    return ck, layout


def theory_matrices(checkpoint: Checkpoint | str | os.PathLike[str], *,
                    types: Sequence[str] = MATRIX_TYPES, raw: bool = False, scale_logits: bool = False,
                    layers: Sequence[int] | None = None, layout: ModelLayout | None = None,
                    mapping: str | os.PathLike[str] | dict[str, Any] | None = None) -> Iterator[TheoryMatrix]:
    """Yield the theory's matrices of a checkpoint, one at a time.

    Parameters
    ----------
    checkpoint : Checkpoint or path
        An opened checkpoint or a path for :func:`open_model`.
    types : sequence of str
        Which of ``QK``, ``VO``, ``M_in``, ``M_out`` (and raw types) to yield;
        certbound-pi models: also ``M`` (variant P; asking for both ``M_in``
        and ``M_out`` yields it) and ``readout``. ``layout.matrix_types`` are
        exactly the layout's per-layer theory matrices.
    raw : bool
        Also yield the raw per-layer ``W_Q``, ``W_K``, ``W_V``, ``W_O``.
    scale_logits : bool
        Fold the attention logit scale 1/√d_h into ``QK`` (see module doc).
        Refused (ValueError) for architectures without that scale (certbound-pi).
    layers : sequence of int, optional
        Restrict to these layers.
    layout, mapping
        A resolved layout, or a mapping (file or dict) to resolve it with.

    Yields
    ------
    TheoryMatrix
        Per layer: QK heads, (raw W_Q, W_K), VO heads, (raw W_V, W_O), M_in, M_out.

    Examples
    --------
    >>> import os, tempfile, json
    >>> from safetensors.numpy import save_file
    >>> rng = np.random.default_rng(0)
    >>> d = tempfile.mkdtemp()
    >>> n, ff = 8, 16
    >>> w = {f"encoder.layer.0.{k}.weight": rng.standard_normal(s).astype(np.float32) for k, s in [
    ...     ("attention.self.query", (n, n)), ("attention.self.key", (n, n)),
    ...     ("attention.self.value", (n, n)), ("attention.output.dense", (n, n)),
    ...     ("intermediate.dense", (ff, n)), ("output.dense", (n, ff))]}
    >>> save_file(w, os.path.join(d, "model.safetensors"))
    >>> cfg = {"model_type": "bert", "hidden_size": n, "num_attention_heads": 2,
    ...        "num_hidden_layers": 1, "intermediate_size": ff}
    >>> json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
    >>> [(m.type, m.head, m.shape) for m in theory_matrices(d)][::2]
    [('QK', 0, (8, 8)), ('VO', 0, (8, 8)), ('M_in', None, (8, 16))]
    """
    own = not isinstance(checkpoint, Checkpoint)
    if own:
        ck, lay = open_model(checkpoint, mapping=mapping)  # type: ignore[arg-type]
    else:
        ck = checkpoint  # type: ignore[assignment]
        lay = layout if layout is not None else resolve_layout(
            ck, load_mapping(mapping) if isinstance(mapping, (str, os.PathLike)) else mapping)
    if layout is not None:
        lay = layout
    want = set(types) | (set(RAW_TYPES) if raw else set())
    try:
        want = _types_for_layout(want, lay, ck.path, scale_logits)
        layer_list = range(lay.num_layers) if layers is None else list(layers)
        for layer in layer_list:
            if not 0 <= layer < lay.num_layers:
                raise ValueError(f"layer {layer} out of range (model has {lay.num_layers} layers)")
        for layer in layer_list:
            yield from _layer_matrices(ck, lay, layer, want, scale_logits)
        if "readout" in want and lay.num_layers - 1 in layer_list:
            name = lay.tensor_name("readout", 0)
            w = ck.get(name)
            yield TheoryMatrix(lay.num_layers - 1, None, "readout", (w.shape[0], 1), dense=w.reshape(-1, 1),
                               sources=(name,))
    finally:
        if own:
            ck.close()


def _types_for_layout(want: set[str], lay: ModelLayout, where: str, scale_logits: bool) -> set[str]:
    """Check requested types (and ``scale_logits``) against a layout; map the FFN pair to ``M`` (variant P)."""
    unknown = want - set(MATRIX_TYPES) - set(RAW_TYPES) - set(EXTRA_TYPES)
    if unknown:
        raise ValueError(f"unknown matrix type(s) {sorted(unknown)}; known: {MATRIX_TYPES + RAW_TYPES + EXTRA_TYPES}")
    if scale_logits and not lay.attention_logit_scale:
        raise ValueError(f"{where}: {lay.architecture} attention computes logits without 1/sqrt(d_h) "
                         "(A = W_Q W_K^T exactly), so the logit-scale option does not apply: drop --scale-logits "
                         "(`certbound bound`: pass --no-logit-scale)")
    if "readout" in want and not lay.has_readout:
        raise ValueError(f"{where}: {lay.architecture} checkpoints have no learned readout matrix (type 'readout')")
    if lay.ffn_kind == "single":
        pair = want & {"M_in", "M_out"}
        if len(pair) == 1:
            raise ValueError(f"{where}: this {lay.architecture} model is variant P: its one feed-forward matrix is "
                             f"type 'M' (there is no {pair.pop()})")
        if pair:  # the FFN pair (e.g. the default MATRIX_TYPES) means this layout's FFN matrix
            want = (want - pair) | {"M"}
    elif "M" in want:
        raise ValueError(f"{where}: this {lay.architecture} model has two feed-forward matrices (M_in, M_out), "
                         "not a single 'M'")
    return want


def _layer_matrices(ck: Checkpoint, lay: ModelLayout, layer: int, want: set[str],
                    scale_logits: bool) -> Iterator[TheoryMatrix]:
    N, H, dh = lay.hidden_size, lay.num_heads, lay.head_dim
    names = {r: lay.tensor_name(r, layer) for r in lay.templates}
    qkv = None
    if lay.fused_qkv and want & {"QK", "VO", "W_Q", "W_K", "W_V"}:
        qkv = _rowvec(ck, lay, "W_QKV", layer)  # N × 3N: [Q | K | V]

    def proj(role: str) -> tuple[np.ndarray, tuple[str, ...]]:
        if qkv is not None and role in ("W_Q", "W_K", "W_V"):
            j = ("W_Q", "W_K", "W_V").index(role)
            return np.ascontiguousarray(qkv[:, j * N:(j + 1) * N]), (names["W_QKV"],)
        return _rowvec(ck, lay, role, layer), (names[role],)

    if want & {"QK", "W_Q", "W_K"}:
        wq, sq = proj("W_Q")
        wk, sk = proj("W_K")
        if "QK" in want:
            for h in range(H):
                s = slice(h * dh, (h + 1) * dh)
                a, pending, folded = (np.ascontiguousarray(wq[:, s]), 1, 1)
                if scale_logits:
                    a, pending, folded = _fold_scale(a, dh)
                yield TheoryMatrix(layer, h, "QK", (N, N), factors=(a, np.ascontiguousarray(wk[:, s])),
                                   logit_scale_d=pending, logit_scale_folded=folded, sources=sq + sk)
        if "W_Q" in want:
            yield TheoryMatrix(layer, None, "W_Q", wq.shape, dense=wq, sources=sq)
        if "W_K" in want:
            yield TheoryMatrix(layer, None, "W_K", wk.shape, dense=wk, sources=sk)
        del wq, wk
    if want & {"VO", "W_V", "W_O"}:
        wv, sv = proj("W_V")
        wo, so = proj("W_O")
        if "VO" in want:
            for h in range(H):
                s = slice(h * dh, (h + 1) * dh)
                # VO = W_V[:, s] W_O[s, :] = A Bᵀ with B = W_O[s, :]ᵀ.
                yield TheoryMatrix(layer, h, "VO", (N, N),
                                   factors=(np.ascontiguousarray(wv[:, s]), np.ascontiguousarray(wo[s, :].T)),
                                   sources=sv + so)
        if "W_V" in want:
            yield TheoryMatrix(layer, None, "W_V", wv.shape, dense=wv, sources=sv)
        if "W_O" in want:
            yield TheoryMatrix(layer, None, "W_O", wo.shape, dense=wo, sources=so)
        del wv, wo
    del qkv
    if "M_in" in want:
        m = _rowvec(ck, lay, "M_in", layer)
        yield TheoryMatrix(layer, None, "M_in", m.shape, dense=m, sources=(names["M_in"],))
        del m
    if "M_out" in want:
        m = _rowvec(ck, lay, "M_out", layer)
        yield TheoryMatrix(layer, None, "M_out", m.shape, dense=m, sources=(names["M_out"],))
        del m
    if "M" in want:
        m = _rowvec(ck, lay, "M", layer)
        yield TheoryMatrix(layer, None, "M", m.shape, dense=m, sources=(names["M"],))
