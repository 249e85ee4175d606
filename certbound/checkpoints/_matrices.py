"""The theory's matrices, per layer and head, from a checkpoint.

Row-vector convention (x ↦ xW), with W_Q (N × H·d_h), W_K, W_V (N × H_kv·d_h),
W_O (H·d_h × N) the row-vector projections of a layer, s_h = [h·d_h,
(h+1)·d_h) the columns of head h and g(h) = ⌊h·H_kv/H⌋ the key/value head
that query head h uses (grouped-/multi-query attention; g(h) = h without)
(the reference paper's slicing, ``proofs/architectures.md``):

* ``QK``  = W_Q[:, s_h] · W_K[:, s_g(h)]ᵀ   (N × N, rank ≤ d_h)
* ``VO``  = W_V[:, s_g(h)] · W_O[s_h, :]    (N × N, rank ≤ d_h)
* ``QK_cross``, ``VO_cross``: the same for a decoder's cross-attention
  (queries from the decoder stream, keys and values from the encoder output)
* ``M_in``  (N × d_ff) and ``M_out`` (d_ff × N), the FFN matrices; or, for a
  gated FFN φ(x M_gate) ⊙ (x M_up) M_down, the three ``M_gate``, ``M_up``
  (N × d_ff), ``M_down`` (d_ff × N) — per expert (``expert``) for mixtures of
  experts
* on request the raw per-layer ``W_Q``, ``W_K``, ``W_V``, ``W_O``.

Encoder-decoder models number layers globally, encoder first; each matrix
names its ``stack``. A shared layer (ALBERT) is yielded for each layer that
uses it, with ``same_as_layer`` naming the first such layer.

Rotary models (LLaMA, Mistral, Qwen, Gemma, Phi, GPT-NeoX, GPT-J, Falcon,
ModernBERT): the logit of query position t and key position s is
x_t W_Q[:, s_h] R_{s−t} W_K[:, s_g]ᵀ x_sᵀ with a position-dependent rotation
R; ``QK`` is the rotation-free bilinear form (R = I), which is the exact logit
form for s = t and of the projections before the rotation
(``proofs/architectures.md`` §3 says what a bound does and does not cover).

In PyTorch (out, in) storage this is exactly the paper's slicing:
QK = q_hᵀ k_h with q_h = W_query[s_h, :], and VO = v_hᵀ O_h with
O_h = W_outᵀ[s_h, :].

Per-head products are *never formed*: a :class:`TheoryMatrix` of type QK or
VO carries factors ``A``, ``B`` (N × d_h) with W = A Bᵀ, for
:func:`certbound.enclose.enclose_singular_values_of_product`. Other types carry
the dense row-vector matrix.

Logit scale (option ``scale_logits``): attention uses (x W_Q)(x W_K)ᵀ/√d with
d = :meth:`ModelLayout.logit_scale_d` (d_h for most architectures; Gemma 2/3:
``query_pre_attn_scalar``; GPT-2 with ``scale_attn_by_inverse_layer_idx``:
d_h·(layer+1)²; DeBERTa-v2: d_h times its scale factor), so the scaled QK is
QK/√d. If d is a power of 4, 1/√d = 2^-k is folded
into ``A`` by an exact power-of-two scaling (checked to lose no bits to
underflow). Otherwise the factor stays symbolic: ``logit_scale_d = d`` and
the consumer multiplies every singular value by the Arb ball 1/√d
(:meth:`TheoryMatrix.scale`) — it is never rounded into float weights.

Memory: tensors are read one at a time per layer and role; at most the four
attention projections of one layer (or one FFN matrix) are alive at once,
plus the small per-head factor copies being yielded.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import numpy as np

from certbound._errors import OptionError

from ._architectures import ModelLayout, Stack, load_mapping, resolve_layout
from ._sources import Checkpoint, load_checkpoint

__all__ = ["TheoryMatrix", "theory_matrices", "MATRIX_TYPES", "RAW_TYPES", "EXTRA_TYPES", "GATED_TYPES",
           "CROSS_TYPES", "open_checkpoint", "theory_types_for_layout"]

#: Matrix types the bounds use, in output order within a layer.
MATRIX_TYPES = ("QK", "VO", "M_in", "M_out")
#: Optional raw per-layer projections (``raw=True``).
RAW_TYPES = ("W_Q", "W_K", "W_V", "W_O")
#: Types only some architectures have (certbound-pi): variant P's FFN matrix, the learned readout.
EXTRA_TYPES = ("M", "readout")
#: A gated feed-forward's three matrices: φ(x M_gate) ⊙ (x M_up) M_down (SwiGLU/GeGLU).
GATED_TYPES = ("M_gate", "M_up", "M_down")
#: Cross-attention (a decoder stack's queries, the encoder output's keys and values).
CROSS_TYPES = ("QK_cross", "VO_cross")


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
    stack : str
        ``"encoder"``/``"decoder"`` for encoder-decoder models, else ``""``.
    expert : int or None
        The expert (mixture-of-experts FFN matrices), else ``None``.
    kv_head : int or None
        For QK/VO: the key/value head paired with query head ``head``
        (⌊head·H_kv/H⌋; equal to ``head`` without grouped-query attention).
    same_as_layer : int or None
        An earlier layer using the very same stored tensors (ALBERT's shared
        layer): the matrix is identical to that layer's, so its certificate can
        be reused; ``None`` otherwise.
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
    stack: str = ""
    expert: int | None = None
    kv_head: int | None = None
    same_as_layer: int | None = None

    @property
    def label(self) -> str:
        """Short human-readable identifier, e.g. ``"layer 3 head 5 QK"`` or ``"decoder layer 7 head 0 QK_cross"``."""
        h = "" if self.head is None else f" head {self.head}"
        e = "" if self.expert is None else f" expert {self.expert}"
        st = f"{self.stack} " if self.stack else ""
        return f"{st}layer {self.layer}{h}{e} {self.type}"

    @property
    def structural_rank_bound(self) -> int:
        """rank ≤ inner dimension of the factors (or min(m, n) when dense)."""
        if self.factors is not None:
            return min(self.factors[0].shape[1], *self.shape)
        return min(self.shape)

    def scale(self) -> Any:
        """The pending scale 1/√d as an Arb ball at the current precision (exact 1 if none).

        Returns
        -------
        flint.arb
            1/√d, or 1.

        Examples
        --------
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
        """The float64 matrix, *formed* (uncertified; references and tests only).

        Returns
        -------
        numpy.ndarray
            The formed (rounded) matrix, the pending scale applied in floats.
        """
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


def _rowvec(ck: Checkpoint, layout: ModelLayout, role: str, layer: int, expert: int | None = None) -> np.ndarray:
    """The row-vector matrix of a role (N × out), read and converted exactly."""
    t = ck.get(layout.tensor_name(role, layer, expert))
    # A transposed *view* (no copy): the loader's peak stays at one copy of
    # the tensor; consumers that need C order copy it themselves.
    return t if layout.layout in ("conv1d", "row-vector") else t.T


def open_checkpoint(path: str | os.PathLike[str], *, config: Any = None,
                    mapping: str | os.PathLike[str] | dict[str, Any] | None = None
                    ) -> tuple[Checkpoint, ModelLayout]:
    """Open a checkpoint file or directory and resolve its layout (metadata only, all shapes checked).

    The loader-level call beneath :func:`certbound.open_model` (which returns a
    :class:`certbound.Model` and also accepts packaged names, hub ids and
    in-memory models).

    Parameters
    ----------
    path : str or path
        A model directory or weights file (``.safetensors``, sharded index, ``.bin``, ``.onnx``).
    config : dict or path, optional
        The model config, instead of the ``config.json`` next to the weights.
    mapping : dict or path, optional
        A tensor-name mapping for an unsupported architecture (:data:`certbound.checkpoints.MAPPING_HELP`).

    Returns
    -------
    tuple
        ``(checkpoint, layout)``: the opened :class:`Checkpoint` (the caller closes it) and its
        :class:`ModelLayout`.

    Raises
    ------
    FileNotFoundError, ValueError
        With the file and tensor named.

    Examples
    --------
    >>> from certbound.models import demo_checkpoint_path
    >>> ck, layout = open_checkpoint(demo_checkpoint_path())
    >>> layout.architecture, layout.num_layers
    ('certbound-pi', 1)
    >>> ck.close()
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
                    types: Sequence[str] | None = None, raw: bool = False, scale_logits: bool = False,
                    layers: Sequence[int] | None = None, layout: ModelLayout | None = None,
                    mapping: str | os.PathLike[str] | dict[str, Any] | None = None) -> Iterator[TheoryMatrix]:
    """Yield the theory's matrices of a checkpoint, one at a time.

    Parameters
    ----------
    checkpoint : Checkpoint or path
        An opened checkpoint or a path for :func:`open_checkpoint`.
    types : sequence of str
        Which of ``QK``, ``VO``, ``M_in``, ``M_out`` (and raw types) to yield
        (default: ``layout.matrix_types``, every theory matrix of the layout);
        also ``QK_cross``, ``VO_cross``, the gated ``M_gate``, ``M_up``, ``M_down`` and certbound-pi's ``M`` (asking
        for both ``M_in`` and ``M_out`` yields a layout's FFN matrices, whatever
        they are) and ``readout``. ``layout.matrix_types`` are exactly the
        layout's per-layer theory matrices.
    raw : bool
        Also yield the raw per-layer ``W_Q``, ``W_K``, ``W_V``, ``W_O``.
    scale_logits : bool
        Fold the attention logit scale 1/√d into ``QK`` (see module doc).
        Refused (ValueError) for architectures without that scale (certbound-pi, T5).
    layers : sequence of int, optional
        Restrict to these layers.
    layout, mapping
        A resolved layout, or a mapping (file or dict) to resolve it with.

    Yields
    ------
    TheoryMatrix
        Per layer: QK heads, (raw W_Q, W_K), VO heads, (raw W_V, W_O), cross-attention QK and VO heads,
        then the FFN matrices (per expert).

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
        ck, lay = open_checkpoint(checkpoint, mapping=mapping)  # type: ignore[arg-type]
    else:
        ck = checkpoint  # type: ignore[assignment]
        lay = layout if layout is not None else resolve_layout(
            ck, load_mapping(mapping) if isinstance(mapping, (str, os.PathLike)) else mapping)
    if layout is not None:
        lay = layout
    want = set(lay.matrix_types if types is None else types) | (set(RAW_TYPES) if raw else set())
    try:
        want = theory_types_for_layout(want, lay, ck.path, scale_logits)
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


def theory_types_for_layout(want: set[str], lay: ModelLayout, where: str, scale_logits: bool) -> set[str]:
    """Check requested types (and ``scale_logits``) against a layout; map the FFN pair to the layout's FFN types.

    The pair ``M_in``, ``M_out`` (both, as in the default :data:`MATRIX_TYPES`)
    means "this layout's feed-forward matrices": ``M`` for certbound-pi variant
    P, ``M_gate``, ``M_up``, ``M_down`` for a gated FFN. A request for only one
    of the pair where the layout has neither is an error.

    Parameters
    ----------
    want : set of str
        Requested matrix types (:data:`MATRIX_TYPES`, :data:`RAW_TYPES`, …).
    lay : ModelLayout
        The checkpoint's layout.
    where : str
        The checkpoint's path, named in error messages.
    scale_logits : bool
        Whether the 1/sqrt(d_h) logit scale is to be folded into QK.

    Returns
    -------
    set of str
        The types this layout stores for the request.

    Raises
    ------
    ValueError
        For an unknown type, or one this layout does not have.
    certbound.OptionError
        For ``scale_logits`` on a layout without a logit scale.
    """
    known = set(MATRIX_TYPES) | set(RAW_TYPES) | set(EXTRA_TYPES) | set(GATED_TYPES) | set(CROSS_TYPES)
    unknown = want - known
    if unknown:
        raise ValueError(f"unknown matrix type(s) {sorted(unknown)}; known: "
                         f"{MATRIX_TYPES + RAW_TYPES + EXTRA_TYPES + GATED_TYPES + CROSS_TYPES}")
    if scale_logits and not lay.attention_logit_scale:
        raise OptionError(f"{where}: {lay.architecture} attention computes logits without 1/sqrt(d_h) "
                          "(A = W_Q W_K^T exactly), so there is no logit scale to fold in: drop `scale_logits`")
    if "readout" in want and not lay.has_readout:
        raise ValueError(f"{where}: {lay.architecture} checkpoints have no learned readout matrix (type 'readout')")
    have = set(lay.matrix_types)
    pair = want & {"M_in", "M_out"}
    if pair and not pair <= have:
        if len(pair) == 1 and lay.ffn_kind == "single":
            raise ValueError(f"{where}: this {lay.architecture} model is variant P: its one feed-forward matrix is "
                             f"type 'M' (there is no {pair.pop()})")
        if len(pair) == 1:
            alt = " (" + ", ".join(t for t in lay.matrix_types if t.startswith("M")) + ")"
            raise ValueError(f"{where}: this {lay.architecture} model has no {pair.pop()}; its feed-forward "
                             f"matrices are{alt}")
        want = (want - pair) | {t for t in lay.matrix_types if t == "M" or t in GATED_TYPES}
    if "M" in want and "M" not in have and lay.ffn_kind == "two":
        raise ValueError(f"{where}: this {lay.architecture} model has two feed-forward matrices (M_in, M_out), "
                         "not a single 'M'")
    for t in sorted(want & (set(GATED_TYPES) | set(CROSS_TYPES) | {"M"})):
        if t not in have:
            raise ValueError(f"{where}: this {lay.architecture} model has no {t} matrices "
                             f"(its types: {', '.join(lay.matrix_types)})")
    return want


def _split_fused_qkv(qkv: np.ndarray, s: Stack, qkv_layout: str | None, where: str) -> dict[str, np.ndarray]:
    """Row-vector W_Q (N × H·d_h), W_K, W_V (N × H_kv·d_h) from a fused N × (H + 2·H_kv)·d_h matrix.

    ``contiguous``: columns [Q | K | V]. ``per_head_interleaved``: per key/value
    head g, the r = H/H_kv query heads g·r … g·r + r − 1, then k_g, then v_g
    (``proofs/architectures.md`` §2). Any other value is refused, never guessed.
    """
    H, Hkv, dh = s.num_heads, s.num_kv_heads, s.head_dim
    if qkv_layout == "contiguous":
        q, k, v = np.split(qkv, [H * dh, (H + Hkv) * dh], axis=1)
    elif qkv_layout == "per_head_interleaved":
        r = H // Hkv
        g = qkv.reshape(qkv.shape[0], Hkv, r + 2, dh)
        q = g[:, :, :r, :].reshape(qkv.shape[0], H * dh)
        k = g[:, :, r, :].reshape(qkv.shape[0], Hkv * dh)
        v = g[:, :, r + 1, :].reshape(qkv.shape[0], Hkv * dh)
    else:
        raise ValueError(f"{where}: fused Q/K/V tensor without a declared layout ({qkv_layout!r})")
    return {"W_Q": np.ascontiguousarray(q), "W_K": np.ascontiguousarray(k), "W_V": np.ascontiguousarray(v)}


def _layer_matrices(ck: Checkpoint, lay: ModelLayout, layer: int, want: set[str],
                    scale_logits: bool) -> Iterator[TheoryMatrix]:
    st, _ = lay.stack_of(layer)
    N, H, dh = lay.hidden_size, st.num_heads, st.head_dim
    shared = lay.shared_source_layer(layer)
    common = dict(stack=st.name, same_as_layer=shared)
    for kind in ("self", "cross"):
        P = "W_" if kind == "self" else "X_"
        qk_t, vo_t = ("QK", "VO") if kind == "self" else ("QK_cross", "VO_cross")
        if P + "O" not in st.templates:
            continue
        raw_ok = kind == "self"
        names = {r: lay.tensor_name(r, layer) for r in st.templates if r.startswith(P)}
        fused: dict[str, np.ndarray] = {}
        if P + "QKV" in st.templates and (want & {qk_t, vo_t} or (raw_ok and want & {"W_Q", "W_K", "W_V"})):
            fused = _split_fused_qkv(_rowvec(ck, lay, P + "QKV", layer), st, lay.qkv_layout,
                                     ck.file_of(names[P + "QKV"]))

        def proj(role: str) -> tuple[np.ndarray, tuple[str, ...]]:
            r = P + role[2:]
            if fused and role in ("W_Q", "W_K", "W_V"):
                return fused[role], (names[P + "QKV"],)
            return _rowvec(ck, lay, r, layer), (names[r],)

        if want & {qk_t} or (raw_ok and want & {"W_Q", "W_K"}):
            wq, sq = proj("W_Q")
            wk, sk = proj("W_K")
            if qk_t in want:
                d = lay.logit_scale_d(layer)
                for h in range(H):
                    g = lay.kv_head_of(h, layer)
                    a, pending, folded = (np.ascontiguousarray(wq[:, h * dh:(h + 1) * dh]), 1, 1)
                    if scale_logits:
                        if d is None:
                            raise OptionError(f"{ck.path}: the {lay.architecture} logit scale "
                                              f"({lay.logit_scale!r}) is not 1/sqrt of an integer; drop `scale_logits`")
                        a, pending, folded = _fold_scale(a, d)
                    yield TheoryMatrix(layer, h, qk_t, (N, N),
                                       factors=(a, np.ascontiguousarray(wk[:, g * dh:(g + 1) * dh])),
                                       logit_scale_d=pending, logit_scale_folded=folded, sources=sq + sk,
                                       kv_head=g, **common)
            if raw_ok and "W_Q" in want:
                yield TheoryMatrix(layer, None, "W_Q", wq.shape, dense=wq, sources=sq, **common)
            if raw_ok and "W_K" in want:
                yield TheoryMatrix(layer, None, "W_K", wk.shape, dense=wk, sources=sk, **common)
            del wq, wk
        if want & {vo_t} or (raw_ok and want & {"W_V", "W_O"}):
            # only what is asked for: raw W_O alone must not read W_V (a fused model has no W_V
            # tensor, and its QKV tensor was not split above)
            wv, sv = proj("W_V") if vo_t in want or (raw_ok and "W_V" in want) else (None, ())
            wo, so = proj("W_O")
            if vo_t in want:
                for h in range(H):
                    g = lay.kv_head_of(h, layer)
                    # VO = W_V[:, s_g] W_O[s_h, :] = A Bᵀ with B = W_O[s_h, :]ᵀ (proofs/architectures.md §1).
                    yield TheoryMatrix(layer, h, vo_t, (N, N),
                                       factors=(np.ascontiguousarray(wv[:, g * dh:(g + 1) * dh]),
                                                np.ascontiguousarray(wo[h * dh:(h + 1) * dh, :].T)),
                                       sources=sv + so, kv_head=g, **common)
            if raw_ok and "W_V" in want:
                yield TheoryMatrix(layer, None, "W_V", wv.shape, dense=wv, sources=sv, **common)
            if raw_ok and "W_O" in want:
                yield TheoryMatrix(layer, None, "W_O", wo.shape, dense=wo, sources=so, **common)
            del wv, wo
        fused.clear()
    for e in (range(st.num_experts) if st.num_experts else [None]):
        yield from _ffn_matrices(ck, lay, st, layer, want, e, common)
    if "M" in want and "M" in st.templates:
        m = _rowvec(ck, lay, "M", layer)
        yield TheoryMatrix(layer, None, "M", m.shape, dense=m, sources=(lay.tensor_name("M", layer),), **common)


def _ffn_matrices(ck: Checkpoint, lay: ModelLayout, st: Stack, layer: int, want: set[str], expert: int | None,
                  common: dict[str, Any]) -> Iterator[TheoryMatrix]:
    t = st.templates
    exp = {} if expert is None else {"expert": expert}
    for role in ("M_in", "M_out"):
        if role in want and role in t:
            name = lay.tensor_name(role, layer, expert)
            m = _rowvec(ck, lay, role, layer, expert)
            yield TheoryMatrix(layer, None, role, m.shape, dense=m, sources=(name,), **exp, **common)
            del m
    if "M_gate_up" in t and want & {"M_gate", "M_up"}:
        name = lay.tensor_name("M_gate_up", layer, expert)
        gu = _rowvec(ck, lay, "M_gate_up", layer, expert)  # N × 2F: [activated half | linear half]
        F = st.intermediate_size
        for role, cols in (("M_gate", slice(0, F)), ("M_up", slice(F, 2 * F))):
            if role in want:
                m = np.ascontiguousarray(gu[:, cols])
                yield TheoryMatrix(layer, None, role, m.shape, dense=m, sources=(name,), **exp, **common)
        del gu
    for role in ("M_gate", "M_up", "M_down"):
        if role in want and role in t:
            name = lay.tensor_name(role, layer, expert)
            m = _rowvec(ck, lay, role, layer, expert)
            yield TheoryMatrix(layer, None, role, m.shape, dense=m, sources=(name,), **exp, **common)
            del m
