"""Certified enclosures of a one-block Π-Transformer's outputs on the demo task's inputs.

The 0-1 error bound of ``certbound demo`` reads P(error) ≤ R̂_γ + gap, where
R̂_γ = (1/n) Σ ramp_γ(y_i f(X_i)) is the empirical ramp risk of the *exact*
network on the n training inputs. A float forward pass only estimates it;
this module encloses every output f(X_i) in an interval [lo_i, hi_i] that is
proved to contain it (``proofs/demo-task.md`` §2), fast enough for n = 10⁶:

1. **Per-(position, symbol) table in Arb.** Every input row of the task is one
   of 2(T − 1) + 1 float vectors (the [CLS] row, or the row of symbol s at
   position t), so Π of it, its query/key logits against the [CLS] query, the
   exponentials and the value vectors are computed once, in Arb (python-flint,
   rigorous ``exp``), for each (t, s). Softmax is invariant under a common
   shift of the logits, so the exponentials are of ℓ − c for one constant c.
2. **Sums as one product with an a-priori error bound.** Each table entry is
   rounded outward to floats [lo, hi]. For a sample with symbols s_t, the
   softmax numerator Σ_t e^{ℓ_{t,s_t}−c} u_{t,s_t} (u = x̄ W_V, so the value
   vector is u W_O) and denominator Σ_t e^{ℓ_{t,s_t}−c} are sums of the table
   rows selected by the nonnegative 0/1 matrix [1, 1 − S, S]; selecting the
   lo (hi) rows bounds them from below (above). These are BLAS products,
   padded by the inner-product error bound γ_k·Σ|·| + kη (external-facts §FP3).
3. **The rest in outward-rounded interval arithmetic.** Row 0 only (L = 1: the
   readout reads nothing else): quotient, ·W_O, Π, ReLU, the feed-forward
   matrices, Π, readout — every IEEE operation (+, −, ×, ÷, √, correctly
   rounded to nearest) is followed by an outward step past the neighbouring
   float, and every matrix product by the §FP3 pad, so the exact real result
   stays inside.

Only one-block models (L = 1) are handled; for deeper ones the enclosure of
the hidden rows would have to be propagated for every row (not implemented:
:func:`enclose_outputs` raises ``NotImplementedError``).

Examples
--------
>>> from certbound.models import PiTransformer, PiTransformerConfig, SparseMajorityTask
>>> task = SparseMajorityTask(seq_len=6, seed=1)
>>> cfg = PiTransformerConfig(d_model=task.d_model, n_layers=1, n_heads=2, d_head=2, seq_len=6,
...                           ffn_kind="two", d_ff=3)
>>> net = PiTransformer.random(cfg, seed=2)
>>> symbols, y = task.symbols_and_labels(5, stream=1)
>>> enc = enclose_outputs(net, task, symbols)
>>> f = net.forward(task.embed(symbols))
>>> bool(np.all(enc.lower <= f) and np.all(f <= enc.upper)), float(np.max(enc.upper - enc.lower)) < 1e-9
(True, True)
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from flint import arb, ctx

from certbound.ball import check_float_environment
from certbound.models.network import PiTransformer
from certbound.models.task import SparseMajorityTask

__all__ = ["OutputEnclosure", "AttentionTables", "attention_tables", "enclose_outputs",
           "check_round_to_nearest"]

_PREC = 128  # bits for the Arb table (its balls are then rounded outward to float64)


def check_round_to_nearest() -> None:
    """Raise if numpy float64 arithmetic does not round to nearest (every enclosure below assumes it).

    :func:`enclose_outputs` calls :func:`certbound.ball.check_float_environment`, which also
    checks gradual underflow (no FTZ/DAZ); this probe is kept for the tests of the outward steps.

    >>> check_round_to_nearest()
    """
    one, half_ulp = np.float64(1.0), np.float64(2.0**-53)
    # 1 + 1.5·2^-53 rounds up to 1 + 2^-52 only under round-to-nearest (or upward);
    # −(1 + 1.5·2^-53) rounds to −(1 + 2^-52) only under round-to-nearest (or downward).
    up = np.add(one, half_ulp * 1.5)
    down = np.add(-one, -half_ulp * 1.5)
    tie = np.add(one, half_ulp)  # a tie: to even, i.e. stays 1
    if not (up == 1 + 2.0**-52 and down == -(1 + 2.0**-52) and tie == 1.0):
        raise RuntimeError("floating-point rounding is not round-to-nearest-even; the certified forward pass "
                           "relies on it (proofs/demo-task.md §2)")


# -- outward-rounded interval operations on float64 arrays (proofs/demo-task.md §2, step 3) ---------

_U2 = 2.0**-52   # 2u, u = 2^-53 the unit roundoff of binary64
_ETA = 2.0**-1074  # the smallest subnormal


def _dn(x: np.ndarray) -> np.ndarray:
    """A float ≤ pred(x) for finite x (so ≤ the exact value a round-to-nearest result x came from)."""
    return (x - np.abs(x) * _U2) - _ETA


def _up(x: np.ndarray) -> np.ndarray:
    """A float ≥ succ(x) for finite x."""
    return (x + np.abs(x) * _U2) + _ETA


def _add(alo, ahi, blo, bhi):
    return _dn(alo + blo), _up(ahi + bhi)


def _div_pos(alo, ahi, blo, bhi):
    """[alo, ahi] / [blo, bhi] for 0 < blo ≤ bhi (the extreme quotients, each rounded outward)."""
    return (_dn(np.where(alo >= 0, alo / bhi, alo / blo)),
            _up(np.where(ahi >= 0, ahi / blo, ahi / bhi)))


def _matvec(lo, hi, W):
    """{x W : lo ≤ x ≤ hi} ⊆ [L, U] for rows (B, n) and an exact float matrix W (n, m).

    With W = W⁺ − W⁻ (exact split by sign), the extreme values are the float
    dot products lo W⁺ − hi W⁻ and hi W⁺ − lo W⁻, i.e. [lo, hi]·[W⁺; −W⁻] and
    [hi, lo]·[W⁺; −W⁻] (inner dimension 2n). Their rounding error is at most
    γ_{2n}·(max(|lo|,|hi|)·|W|) + 2nη (external-facts §FP3), padded here from the
    computed float product R̃ of the nonnegative factors.
    """
    n = W.shape[0]
    Wp, Wm = np.maximum(W, 0.0), np.maximum(-W, 0.0)
    G = np.concatenate([Wp, -Wm], axis=0)
    L = np.concatenate([lo, hi], axis=1) @ G
    U = np.concatenate([hi, lo], axis=1) @ G
    R = np.maximum(np.abs(lo), np.abs(hi)) @ np.abs(W)
    c = (2 * n + 2) * 2.0**-53
    pad = _up(_up(R * c) + 4 * n * _ETA)
    return _dn(L - pad), _up(U + pad)


def _sum_nonneg(lo, hi):
    """Σ_i over the last axis of nonnegative intervals, outward (γ_{n−1} bound, external-facts §FP2)."""
    n = lo.shape[-1]
    c = (n + 1) * 2.0**-52
    slo, shi = np.sum(lo, axis=-1), np.sum(hi, axis=-1)
    return _dn(slo - _up(slo * c)), _up(shi + _up(shi * c))


def _project(lo, hi):
    """Π(z) = z / max(1, ‖z‖₂) for every z in the box [lo, hi] (B, N); result clipped to [−1, 1]."""
    a2, b2 = lo * lo, hi * hi
    sq_hi = _up(np.maximum(a2, b2))
    sq_lo = np.maximum(np.where(lo > 0, _dn(a2), np.where(hi < 0, _dn(b2), 0.0)), 0.0)
    s_lo, s_hi = _sum_nonneg(sq_lo, sq_hi)
    n_lo = _dn(np.sqrt(np.maximum(s_lo, 0.0)))
    n_hi = _up(np.sqrt(s_hi))
    d_lo = np.maximum(1.0, n_lo)[:, None]
    d_hi = np.maximum(1.0, n_hi)[:, None]
    qlo, qhi = _div_pos(lo, hi, d_lo, d_hi)
    return np.maximum(qlo, -1.0), np.minimum(qhi, 1.0)


# -- step 1 and 2: the Arb table and its fixed-point form -----------------------------------------

def _arb_row(row: np.ndarray) -> list:
    """Π(row) in Arb for an exact float row (sparse: most entries are 0)."""
    z = [arb(float(v)) for v in row]
    ss = arb(0)
    for v in z:
        ss += v * v
    if bool(ss <= 1):
        return z
    if bool(ss > 1):
        nrm = ss.sqrt()
        return [v / nrm for v in z]
    raise ArithmeticError("could not decide whether an input row lies in the unit ball")


def _row_times(z: list, W: np.ndarray) -> list:
    """z·W in Arb (z a list of balls, W an exact float matrix), skipping exact zeros of z."""
    out = [arb(0)] * W.shape[1]
    for i, v in enumerate(z):
        if v == 0:
            continue
        for j in range(W.shape[1]):
            out[j] = out[j] + v * arb(float(W[i, j]))
    return out


@dataclass
class AttentionTables:
    """Outward-rounded float tables of one head's softmax terms.

    Row 0 is the [CLS] row, rows 1 … T−1 the positions with symbol 0, rows
    T … 2T−2 the positions with symbol 1; columns are [e^{ℓ−c}, e^{ℓ−c}·u (d_h)]
    with u = x̄ W_V (the value vector is u W_O).
    For every row, ``lower ≤`` the exact value ``≤ upper``.
    """

    lower: np.ndarray
    upper: np.ndarray


def attention_tables(net: PiTransformer, task: SparseMajorityTask, head: int) -> AttentionTables:
    """The softmax numerator/denominator terms of ``head`` for every (position, symbol) (proofs/demo-task.md §2)."""
    from certbound.ball import float_lower, float_upper

    cfg = net.config
    T = task.seq_len
    rows0 = task.embed(np.zeros((1, T - 1), dtype=np.int8))[0]
    rows1 = task.embed(np.ones((1, T - 1), dtype=np.int8))[0]
    wq, wk, wv, wo = net.head_factors(0, head)
    old = ctx.prec
    ctx.prec = _PREC
    try:
        z0 = _arb_row(rows0[0])
        q = _row_times(z0, wq)
        ordered = [rows0[0]] + [rows0[t] for t in range(1, T)] + [rows1[t] for t in range(1, T)]
        entries = []
        for row in ordered:
            z = _arb_row(row)
            k = _row_times(z, wk)
            logit = arb(0)
            for a, b in zip(q, k):
                logit += a * b
            entries.append((logit, _row_times(z, wv)))  # u = x̄ W_V (d_h); the value is u W_O
        shift = arb(max(float(e[0].mid()) for e in entries))  # any constant: softmax is shift-invariant
        lower = np.empty((len(entries), 1 + cfg.d_head))
        upper = np.empty_like(lower)
        for i, (logit, v) in enumerate(entries):
            e = (logit - shift).exp()
            vals = [e] + [e * x for x in v]
            lower[i] = [float_lower(x) for x in vals]
            upper[i] = [float_upper(x) for x in vals]
    finally:
        ctx.prec = old
    if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
        raise ArithmeticError("attention table entry is not finite")
    return AttentionTables(lower, upper)


def _select_sum(S: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """[L, U] ∋ S·x for every x with lo ≤ x ≤ hi, for an exact nonnegative S (B, k): S lo and S hi, padded."""
    k = S.shape[1]
    L, U = S @ lo, S @ hi
    R = S @ np.maximum(np.abs(lo), np.abs(hi))
    pad = _up(_up(R * ((k + 1) * 2.0**-53)) + 2 * k * _ETA)
    return _dn(L - pad), _up(U + pad)


@dataclass
class OutputEnclosure:
    """Proved enclosures lower ≤ f(X_i) ≤ upper of the exact network outputs (one per input)."""

    lower: np.ndarray
    upper: np.ndarray

    def margin_lower(self, y: np.ndarray) -> np.ndarray:
        """Proved lower bounds on the margins y_i f(X_i) (labels y in {−1, +1})."""
        y = np.asarray(y)
        return np.where(y > 0, self.lower, -self.upper)


def enclose_outputs(net: PiTransformer, task: SparseMajorityTask, symbols: np.ndarray,
                    tables: list[AttentionTables] | None = None) -> OutputEnclosure:
    """Certified [lower, upper] ∋ f(X) for the inputs X = task.embed(symbols) (L = 1 models only).

    ``tables`` (from :func:`attention_tables`, one per head) may be passed to
    reuse them across chunks. ``proofs/demo-task.md`` §2.
    """
    cfg = net.config
    if cfg.n_layers != 1:
        raise NotImplementedError("certified output enclosures are implemented for one-block models (L = 1)")
    if cfg.d_model != task.d_model or cfg.seq_len != task.seq_len:
        raise ValueError(f"model (N={cfg.d_model}, T={cfg.seq_len}) does not match the task "
                         f"(N={task.d_model}, T={task.seq_len})")
    symbols = np.asarray(symbols)
    if symbols.ndim != 2 or symbols.shape[1] != task.seq_len - 1:
        raise ValueError(f"symbols must have shape (n, {task.seq_len - 1}), got {symbols.shape}")
    if symbols.size and not np.all((symbols == 0) | (symbols == 1)):
        raise ValueError("symbols must be 0 or 1")
    # round to nearest AND gradual underflow (the outward steps _dn/_up and the η terms need both; an MXCSR
    # FTZ/DAZ mode would make _dn(0) = 0 while a tiny negative exact value was flushed to 0)
    check_float_environment()
    with np.errstate(all="ignore"):  # overflow/NaN are detected below; a caller's seterr must not abort midway
        return _enclose(net, task, symbols, tables)


def _enclose(net: PiTransformer, task: SparseMajorityTask, symbols: np.ndarray,
             tables: list[AttentionTables] | None) -> OutputEnclosure:
    cfg = net.config
    if tables is None:
        tables = [attention_tables(net, task, h) for h in range(cfg.n_heads)]
    N = cfg.d_model
    p = net.params
    B = symbols.shape[0]
    ones = symbols.astype(np.float64)
    S = np.concatenate([np.ones((B, 1)), 1.0 - ones, ones], axis=1)  # selects each input's T table rows
    q_lo, q_hi = [], []
    failed = np.zeros(B, dtype=bool)  # inputs whose softmax denominator enclosure reached 0 (all terms underflowed)
    for tab in tables:
        s_lo, s_hi = _select_sum(S, tab.lower, tab.upper)
        den_lo, den_hi = s_lo[:, 0:1], s_hi[:, 0:1]
        bad = ~(den_lo[:, 0] > 0)
        if np.any(bad):  # computed on a placeholder denominator, then replaced by the trivial enclosure below
            failed |= bad
            den_lo = np.where(bad[:, None], 1.0, den_lo)
            den_hi = np.where(bad[:, None], 1.0, den_hi)
        lo_h, hi_h = _div_pos(s_lo[:, 1:], s_hi[:, 1:], den_lo, den_hi)
        q_lo.append(lo_h)
        q_hi.append(hi_h)
    # a = Σ_h Q_h W_O^h = Q W_O with Q = [Q_1, …, Q_H] (the heads' rows of W_O, in order)
    att_lo, att_hi = _matvec(np.concatenate(q_lo, axis=1), np.concatenate(q_hi, axis=1), p["blocks.0.attn.W_O"])
    x0 = task.embed(np.zeros((1, task.seq_len - 1), dtype=np.int8))[0, 0]
    if cfg.residual:
        x0_lo, x0_hi = _project(x0[None, :], x0[None, :])
        att_lo, att_hi = _add(att_lo, att_hi, x0_lo, x0_hi)
    y_lo, y_hi = _project(att_lo, att_hi)
    if cfg.ffn_kind == "single":
        f_lo, f_hi = _matvec(np.maximum(y_lo, 0.0), np.maximum(y_hi, 0.0), p["blocks.0.ffn.M"])
    else:
        h_lo, h_hi = _matvec(y_lo, y_hi, p["blocks.0.ffn.M_in"])
        f_lo, f_hi = _matvec(np.maximum(h_lo, 0.0), np.maximum(h_hi, 0.0), p["blocks.0.ffn.M_out"])
    if cfg.residual:
        f_lo, f_hi = _add(f_lo, f_hi, y_lo, y_hi)
    x_lo, x_hi = _project(f_lo, f_hi)
    o_lo, o_hi = _matvec(x_lo, x_hi, p["readout.w"].reshape(N, 1))
    o_lo, o_hi = o_lo[:, 0], o_hi[:, 0]
    failed |= ~(np.isfinite(o_lo) & np.isfinite(o_hi))
    if np.any(failed):
        # a failed certificate gives the valid trivial enclosure |f(X)| ≤ ‖w‖₂ (the last Π lands in the unit
        # ball), never a crash halfway through a report (demo-task §2, "Failures")
        w_up = _readout_norm_upper(p["readout.w"])
        warnings.warn(f"certified forward pass: {int(failed.sum())} of {B} inputs got the trivial enclosure "
                      f"|f(X)| <= ||w||_2 <= {w_up:.6g} (softmax denominator underflow or overflow)", stacklevel=3)
        o_lo = np.where(failed, -w_up, o_lo)
        o_hi = np.where(failed, w_up, o_hi)
    return OutputEnclosure(o_lo, o_hi)


def _readout_norm_upper(w: np.ndarray) -> float:
    """A float ≥ ‖w‖₂ (Arb sum of the exact squares, square root, outward conversion)."""
    from certbound.ball import float_upper

    old = ctx.prec
    ctx.prec = _PREC
    try:
        ss = arb(0)
        for v in np.asarray(w, dtype=np.float64).ravel():
            ss += arb(float(v)) ** 2
        return float_upper(ss.sqrt())
    finally:
        ctx.prec = old
