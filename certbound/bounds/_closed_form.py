"""Closed forms for exposition: Proposition A3 and Corollary B2 (never the reported bound).

``proofs/theory-covering.md`` §A3 and ``proofs/theory-theorems.md`` §B2
(spec §2.6, §3 with erratum §11.1). Both are valid upper bounds but looser than
the optimised Lemma A / Lemma R evaluation; certbound reports the latter.

Examples
--------
>>> from fractions import Fraction as F
>>> from certbound.bounds._covering import LinearMapClass
>>> cls = LinearMapClass(4, 4, 4, F(1), 1.85, 1, 3 * 10**6)
>>> round(float(proposition_a3(cls, 0.05).mid()))      # spec §7.3: 6 531
6531
"""

from __future__ import annotations

from flint import arb

from certbound.bounds._arbutil import prec, Number, as_arb
from certbound.bounds._covering import LinearMapClass
from certbound.bounds._network_cover import NetworkConfiguration, alloc_weights

__all__ = ["proposition_a3", "proposition_a3_threshold", "corollary_b2"]


def proposition_a3_threshold(cls: LinearMapClass, eps: Number) -> arb:
    """``τ_* = (s(a+b+1)ε²/(4 r̄ b))^{1/(p+2)}`` (spec §2.6)."""
    with prec():
        p = as_arb(cls.schatten_p)
        e = as_arb(eps)
        return (cls.s * (cls.n_in + cls.n_out + 1) * e * e / (4 * cls.rank_arch * cls.n_out)) ** (1 / (p + 2))


def _a3_constant(cls: LinearMapClass) -> arb:
    """``𝖢 = 2·4^{p/(p+2)}([s(a+b+1)]²(r̄ b)^p)^{1/(p+2)}``."""
    p = as_arb(cls.schatten_p)
    inner = (cls.s * (cls.n_in + cls.n_out + 1)) ** 2 * arb(cls.rank_arch * cls.n_out) ** p
    return 2 * arb(4) ** (p / (p + 2)) * inner ** (1 / (p + 2))


def _a3_log(cls: LinearMapClass, eps: arb) -> arb:
    """``Λ(ε) = max{ln(1 + 12c/ε), ln(2Mb + 1)}``."""
    return (1 + 12 * cls.c / eps).log().max(arb(2 * cls.n_rows * cls.n_out + 1).log())


def proposition_a3(cls: LinearMapClass, eps: Number) -> arb:
    """Proposition A3: ``H_A(ε) ≤ 2·4^{p/(p+2)}([s(a+b+1)]²(r̄b)^p/ε^{2p})^{1/(p+2)} Λ(ε)``, ``p ∈ (0, 2]``.

    Valid for ``ε ∈ (0, c)`` (and trivially for ``ε ≥ c``, where ``H_A = 0``).
    ``proofs/theory-covering.md`` §A3. Exposition only.
    """
    if cls.schatten_p == 0:
        raise ValueError("Proposition A3 is stated for p > 0 (use the exact rank-counting formula at p = 0)")
    with prec():
        e = as_arb(eps)
        p = as_arb(cls.schatten_p)
        return _a3_constant(cls) * e ** (-2 * p / (p + 2)) * _a3_log(cls, e)


def corollary_b2(net: NetworkConfiguration, cutoff: Number, *, loss_bound: Number = 1,
                 loss_lipschitz: Number = 1) -> arb:
    """Corollary B2: closed-form upper bound on ``4α + (12/√n)∫_α^{B_ℒ/4} √Ĥ_net(ε/L_ℒ) dε`` (uniform weights).

    ``4α + (6/√n) Σ_{p_j>0} (p_j+2)√(𝖢_jΛ_j)(J L_ℒ K_j)^{p_j/(p_j+2)}(B_ℒ/4)^{2/(p_j+2)}
    + (3B_ℒ/√n) Σ_{p_j=0} √(r₀(a_j+b_j+1) ln(1 + 6c_j J L_ℒ K_j/α))``, with ``Λ_j``
    at the smallest accuracy ``α/(J L_ℒ K_j)`` and ``K_j`` at the largest input
    radius (for ``M_out``: at ``ε = B_ℒ/4``). By spec §11 erratum 1 it bounds
    the *integral* (hence the Rademacher complexity), not necessarily a coarse
    Riemann sum 𝔇_n. ``proofs/theory-theorems.md`` §B2. Exposition only.
    """
    with prec():
        a = as_arb(cutoff)
        bl, ll = as_arb(loss_bound), as_arb(loss_lipschitz)
        top = bl / 4
        if not (bool(a > 0) and bool(a <= top)):
            raise ValueError("cutoff must lie in (0, B_L/4]")
        J = net.J
        w = alloc_weights(J)
        rootn = arb(net.n_samples).sqrt()
        total = 4 * a
        for j, cls in enumerate(net.classes):
            # K_j = K'_j ρ_j with ρ_j at the top node (largest ε_in, hence largest ρ)
            _, rho = net.matrix_accuracy(j, top / ll, w)
            K = net.k_prime[j] * rho
            JLK = J * ll * K
            if cls.schatten_p == 0:
                r0 = cls.rank_only_rank()
                if r0 == 0:
                    continue
                h = arb(r0 * (cls.n_in + cls.n_out + 1)) * (1 + 6 * cls.c * JLK / a).log()
                total += 3 * bl / rootn * h.sqrt()
            else:
                p = as_arb(cls.schatten_p)
                lam = _a3_log(cls, a / JLK)
                term = (p + 2) * (_a3_constant(cls) * lam).sqrt() * JLK ** (p / (p + 2)) * top ** (2 / (p + 2))
                total += 6 / rootn * term
        return total
