"""Lemma B (sequential network cover) with allocation weights (Corollary B1), in Arb.

``proofs/theory-network.md`` §B (Lemma B, pruning), §B1 (allocation); spec §3.

For a configuration κ (per-matrix constraint triples ``(p_j, s_j, c_j)`` and
the readout norm ``C_w``) and accuracy η,

    ln N(ℱ(κ)|_S, η, d^∞_S) ≤ Ĥ_net(η) = Σ_j H_A^{(j)}(w_j η / K_j),   K_j = K'_j ρ_j,

for any weights ``w_j > 0`` with ``Σ w_j ≤ 1`` (uniform ``1/J`` by default;
exact rationals). ``ρ_j`` of ``M_out`` depends on the node through
``ε_in = w_in η / K'_in`` (spec §11 erratum 2).

Examples
--------
Spec §7.3 network at η = 0.01 (Ĥ_net = 783.80, rank counting at p = 0 only):

>>> from fractions import Fraction as F
>>> from certbound.bounds._spec import TransformerSpec
>>> spec = TransformerSpec(2, 1, 4, 3, ffn_kind="single", qk_rank=2, activation="relu")
>>> kappa = {(0, 0, "QK"): MatrixConstraint(0, 2, 0.5), (0, 0, "VO"): MatrixConstraint(1, 1.85, 1),
...          (0, None, "M"): MatrixConstraint(2, 1.9, 1.2), (1, 0, "QK"): MatrixConstraint(0, 2, 0.4),
...          (1, 0, "VO"): MatrixConstraint(1, 1.5, 0.8), (1, None, "M"): MatrixConstraint(2, 1.3225, 1)}
>>> net = NetworkConfiguration(spec, kappa, readout_norm=1, n_samples=10**6)
>>> total, parts = net.log_cover_network(F(1, 100), allow_p0_tail=False)
>>> round(float(total.mid()), 2)
783.8
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping, Optional, Sequence

import numpy as np
from flint import arb

from certbound.ball import float_upper
from certbound.bounds._arbutil import prec, Number, as_arb
from certbound.bounds._covering import (
    CoverChoice,
    LinearMapClass,
    _choice_from_info,
    _float_log_cover,
    log_cover_linear_map,
)
from certbound.bounds._lipschitz import alpha, input_radius, scale
from certbound.bounds._spec import MatrixSlot, TransformerSpec

__all__ = ["MatrixConstraint", "NetworkConfiguration", "alloc_weights", "READOUT_KEY"]

#: Key of the learned readout in per-matrix tables.
READOUT_KEY = (None, None, "readout")


@dataclass(frozen=True)
class MatrixConstraint:
    """Constraint triple ``(p_j, s_j, c_j)`` of one matrix (spec §1.4).

    ``rank W ≤ r̄_j`` (architectural), ``‖W‖₂ ≤ spectral_radius``,
    ``S_p(W) ≤ schatten_radius`` (``p = 0``: ``rank W ≤ schatten_radius``).
    """

    schatten_p: Fraction
    schatten_radius: Number
    spectral_radius: Number

    def __post_init__(self) -> None:
        object.__setattr__(self, "schatten_p", Fraction(self.schatten_p))


def alloc_weights(n_matrices: int) -> list[Fraction]:
    """Uniform allocation ``w_j = 1/J`` (exact; ``Σ w_j = 1``), Corollary B1.

    >>> sum(alloc_weights(7)) == 1
    True
    """
    if n_matrices < 1:
        raise ValueError("need at least one matrix")
    return [Fraction(1, n_matrices)] * n_matrices


class NetworkConfiguration:
    """A configuration κ of spec §1.4 bound to an architecture and a sample size.

    Holds, in Arb, the constraint values, α^(l), the scales ``K'_j`` and one
    :class:`~certbound.bounds._covering.LinearMapClass` per matrix (``M_j = nT``
    rows; the learned readout is the class ``N×1``, ``p = 2``, ``s = C_w²``,
    ``r̄ = 1``, ``c = C_w`` with ``n`` rows, spec §11 erratum 4).
    """

    def __init__(
        self,
        spec: TransformerSpec,
        constraints: Mapping[tuple, MatrixConstraint],
        *,
        readout_norm: Number,
        n_samples: int,
    ) -> None:
        if not (isinstance(n_samples, (int, np.integer)) and n_samples >= 1):
            raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}")
        self.spec = spec
        self.n_samples = int(n_samples)
        self.slots: list[MatrixSlot] = spec.slots()
        with prec():
            self.readout_norm = as_arb(readout_norm)
            if not bool(self.readout_norm > 0):
                raise ValueError(f"readout_norm must be > 0, got {readout_norm!r}")
            self.constraints: dict = {}
            for slot in self.slots:
                key = slot.key
                if key not in constraints:
                    raise ValueError(
                        f"no constraint for matrix (layer={slot.layer}, head={slot.head}, type={slot.type!r})"
                    )
                self.constraints[key] = constraints[key]
            self.c = {k: as_arb(v.spectral_radius) for k, v in self.constraints.items()}
            self.alphas = alpha(spec, self.c)
            rows = self.n_samples * spec.seq_len
            self.classes: list[LinearMapClass] = []
            self.k_prime: list[arb] = []
            for slot in self.slots:
                k = self.constraints[slot.key]
                self.classes.append(
                    LinearMapClass(slot.n_in, slot.n_out, slot.rank_arch, k.schatten_p, k.schatten_radius,
                                   k.spectral_radius, rows)
                )
                self.k_prime.append(scale(spec, self.c, slot, self.readout_norm, alphas=self.alphas,
                                          with_radius=False))
            if spec.readout_learned:
                cw = self.readout_norm
                self.classes.append(LinearMapClass(spec.d_model, 1, 1, Fraction(2), cw * cw, cw, self.n_samples))
                self.k_prime.append(arb(1))
            # index of M_in feeding each M_out (for the node-dependent radius)
            self._feeder = {}
            for slot in self.slots:
                if slot.type == "M_out":
                    self._feeder[slot.index] = slot.index - 1
            # node-independent radii and rank-net coefficients r₀(a+b+1) (cached)
            self._rho_const = [
                None if (j < len(self.slots) and self.slots[j].type == "M_out")
                else (input_radius(spec, self.c, self.slots[j]) if j < len(self.slots) else arb(1))
                for j in range(len(self.classes))
            ]
            self._rank_coef = [
                arb(cls.rank_only_rank() * (cls.n_in + cls.n_out + 1)) if cls.rank_only_rank() > 0 else None
                for cls in self.classes
            ]
        self.J = len(self.classes)

    # ------------------------------------------------------------------ keys
    def keys(self) -> list[tuple]:
        """Matrix keys in data-flow order (readout last, as ``READOUT_KEY``)."""
        ks = [s.key for s in self.slots]
        if self.spec.readout_learned:
            ks.append(READOUT_KEY)
        return ks

    def _silent(self, j: int) -> bool:
        """``K'_j = 0`` proved: matrix ``j`` does not affect the output (Lemma B, edge case)."""
        return self.k_prime[j].upper() == 0

    def _k_prime_divisor(self, j: int) -> arb:
        # K'_j ≥ 0; dividing by its upper end gives a smaller, still valid ε_j (K'_j ε_j ≤ w_j η).
        k = self.k_prime[j]
        return k if k > 0 else k.upper()

    def _epsilon(self, j: int, eta: arb, weights: Sequence) -> arb:
        """``ε_j = w_j η / K'_j`` (Corollary B1); ``c_j ρ_j`` when ``K'_j = 0`` (its term ``K'_j ε_j`` is 0 and H_A = 0)."""
        if self._silent(j):
            return self.classes[j].c * self._rho(j, eta, weights)
        return as_arb(weights[j]) * eta / self._k_prime_divisor(j)

    def _rho(self, j: int, eta: arb, weights: Sequence) -> arb:
        if j >= len(self.slots):
            return arb(1)
        slot = self.slots[j]
        if slot.type == "M_out":
            i = self._feeder[j]
            return input_radius(self.spec, self.c, slot, self._epsilon(i, eta, weights))
        return input_radius(self.spec, self.c, slot)

    # ------------------------------------------------------------------ Arb
    def matrix_accuracy(self, j: int, eta: Number, weights: Sequence[Fraction]) -> tuple[arb, arb]:
        """``(ε_j, ρ_j)`` at node η: ``ε_j = w_j η / K'_j`` (Corollary B1) and the input radius.

        A matrix with ``K'_j = 0`` gets ``ε_j = c_j ρ_j`` (``proofs/theory-network.md`` §B, edge case).
        """
        with prec():
            e = as_arb(eta)
            return self._epsilon(j, e, weights), self._rho(j, e, weights)

    def log_cover_network(
        self,
        eta: Number,
        weights: Optional[Sequence[Fraction]] = None,
        choices: Optional[Sequence[Optional[CoverChoice]]] = None,
        *,
        allow_p0_tail: bool = True,
        _weights_checked: bool = False,
    ) -> tuple[arb, list[arb]]:
        """``Ĥ_net(η) = Σ_j H_A^{(j)}(ε_j/ρ_j)`` and its terms (Lemma B + Corollary B1).

        Sound for any weights with ``Σ w_j ≤ 1`` and any per-matrix choices;
        ``proofs/theory-network.md`` §B, §B1.
        """
        w = list(weights) if weights is not None else alloc_weights(self.J)
        if not _weights_checked:
            _check_weights(w, self.J)
        with prec():
            w = [as_arb(x) for x in w]
            e_arb = as_arb(eta)
            parts = []
            for j, cls in enumerate(self.classes):
                ch = choices[j] if choices is not None else None
                if self._silent(j):
                    # K'_j = 0: ε_j = c_j ρ_j gives H_A = 0 and contributes K'_j ε_j = 0 (Lemma B, edge case);
                    # never divide by K'_j.
                    parts.append(arb(0))
                    continue
                rho = self._rho_const[j]
                if rho is None:
                    rho = self._rho(j, e_arb, w)
                e = w[j] * e_arb / self._k_prime_divisor(j) / rho
                if ch is not None and ch.kind == "rank":
                    # inline Lemma A, rank branch (same as log_cover_linear_map → log_cover_rank_part)
                    if bool(e >= cls.c) or self._rank_coef[j] is None:
                        parts.append(arb(0))
                    elif not bool(e > 0):
                        parts.append(arb.pos_inf())
                    else:
                        parts.append(self._rank_coef[j] * (1 + 6 * cls.c / e).log())
                    continue
                parts.append(log_cover_linear_map(cls, e, ch, allow_p0_tail=allow_p0_tail))
            total = arb(0)
            for v in parts:
                total += v
            return total, parts

    # ------------------------------------------------------------------ floats
    def float_scales(self) -> np.ndarray:
        """Upper floats of ``K'_j`` (search only)."""
        return np.array([float_upper(k) for k in self.k_prime])

    def float_matrix_accuracies(self, etas: np.ndarray, weights: Sequence[Fraction]) -> np.ndarray:
        """Float ``ε_j/ρ_j`` at each η (shape ``(J, K)``), slightly low-biased; search only."""
        etas = np.asarray(etas, dtype=float)
        kp = self.float_scales()
        w = np.array([float(x) for x in weights])
        silent = kp == 0
        with np.errstate(divide="ignore", invalid="ignore"):
            eps = (w[:, None] * etas[None, :]) / np.where(silent, 1.0, kp)[:, None]
        # K'_j = 0: ε_j/ρ_j = c_j, where H_A = 0 (Lemma B, edge case); for an M_in that is also its ε (ρ = 1).
        for j in np.flatnonzero(silent):
            eps[j] = float_upper(self.classes[j].c)
        phi0, phi1 = float_upper(self.spec.phi0), float_upper(self.spec.phi1)
        for j, slot in enumerate(self.slots):
            if silent[j]:
                continue
            if slot.type == "M":
                eps[j] /= phi0 + phi1
            elif slot.type == "M_out":
                i = self._feeder[j]
                eps[j] /= phi0 + phi1 * (float_upper(self.c[self.slots[i].key]) + eps[i])
        return eps

    def choose_node_covers(
        self, etas: Sequence[Fraction], weights: Sequence[Fraction], *, allow_p0_tail: bool = True,
        quick: bool = False,
    ) -> tuple[list[list[CoverChoice]], np.ndarray]:
        """Float-optimised Lemma A parameters for every (node, matrix); returns choices[k][j] and floats (J, K)."""
        E = self.float_matrix_accuracies(np.array([float(e) for e in etas]), weights)
        K = len(etas)
        choices: list[list[CoverChoice]] = [[None] * self.J for _ in range(K)]  # type: ignore[list-item]
        vals = np.zeros((self.J, K))
        for j, cls in enumerate(self.classes):
            c = float_upper(cls.c)
            s = float_upper(cls.s)
            best, info = _float_log_cover(cls.n_in, cls.n_out, cls.rank_arch, cls.n_rows, c,
                                          np.array([float(cls.schatten_p)]), np.array([s]), E[j][None, :],
                                          allow_p0_tail, quick=quick)
            vals[j] = best[0]
            for k in range(K):
                choices[k][j] = _choice_from_info(info, 0, k)
        return choices, vals


def _check_weights(w: Sequence[Fraction], J: int) -> None:
    if len(w) != J:
        raise ValueError(f"need {J} allocation weights, got {len(w)}")
    tot = Fraction(0)
    for x in w:
        x = Fraction(x)
        if x <= 0:
            raise ValueError("allocation weights must be > 0")
        tot += x
    if tot > 1:
        raise ValueError(f"allocation weights must sum to ≤ 1, got {float(tot)}")
