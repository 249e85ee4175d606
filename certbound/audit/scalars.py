"""Certified scalar functions that generalization-bound papers evaluate in floating point.

Every function returns an Arb ball that *contains* the exact mathematical
value for every input in the input balls, so its upper end is a certified
upper bound and its lower end a certified lower bound; the ``safe_*``
helpers return the end point on the safe side as an exact dyadic
:class:`~fractions.Fraction`. Inputs may be ``arb`` balls, ``int``,
:class:`~fractions.Fraction`, exact decimal strings or floats (a float is
taken as the exact binary64 number it is). Work happens at the ambient Arb
precision (wrap calls in :func:`certbound.ball.working_precision`).
Derivations: ``proofs/audit.md`` §4.

* :func:`kl_bernoulli`, :func:`kl_inverse_upper`, :func:`kl_inverse_lower` —
  PAC-Bayes-kl: kl(q‖p) = q ln(q/p) + (1−q) ln((1−q)/(1−p)); the upper
  inverse sup{p ∈ [q, 1] : kl(q‖p) ≤ c}, the lower inverse
  inf{p ∈ [0, q] : kl(q‖p) ≤ c}, by certified bisection.
* :func:`log_sum_exp`.
* :func:`union_bound_delta` and the peeling weights
  :func:`peeling_weight` (δ_j summing to δ over j = 1, 2, …).
* :func:`binomial_cdf` (exact over ℚ for rational p, or Arb's regularised
  incomplete beta), :func:`binomial_tail_inverse_upper`,
  :func:`binomial_tail_inverse_lower` (Langford's test-set bound /
  Clopper–Pearson limits), certified by bisection.

>>> from certbound.ball import working_precision
>>> with working_precision(128):
...     p = kl_inverse_upper("0.1", "0.05")
...     kl_bernoulli("0.1", p.upper()) >= arb("0.05")
True
"""

from __future__ import annotations

import decimal
from fractions import Fraction
from typing import Iterable, Union

from flint import arb, ctx, fmpq, fmpz

from certbound.audit._errors import DomainError, Indeterminate
from certbound.audit._exact import arb_from_fraction, parse_decimal
from certbound.ball import arb_from_float, lower_fraction, upper_fraction, working_precision

__all__ = [
    "as_ball",
    "kl_bernoulli",
    "kl_inverse_upper",
    "kl_inverse_lower",
    "safe_kl_inverse_upper",
    "safe_kl_inverse_lower",
    "log_sum_exp",
    "union_bound_delta",
    "peeling_weight",
    "binomial_cdf",
    "binomial_tail_inverse_upper",
    "binomial_tail_inverse_lower",
]

Real = Union[arb, int, Fraction, float, str, decimal.Decimal]


def as_ball(x: Real) -> arb:
    """A ball containing ``x`` at the current precision (exact for ints, floats, dyadics).

    Strings and Decimals are parsed as exact decimals (``"0.1"`` is 1/10,
    not the float 0.1).

    >>> as_ball("0.1").contains(fmpq(1, 10)), as_ball(0.1).contains(fmpq(1, 10))
    (True, False)
    """
    if isinstance(x, arb):
        return x
    if isinstance(x, bool):
        raise TypeError("a boolean is not a number")
    if isinstance(x, (int, Fraction)):
        return arb_from_fraction(Fraction(x))
    if isinstance(x, float):
        return arb_from_float(x)
    if isinstance(x, (str, decimal.Decimal)):
        return arb_from_fraction(parse_decimal(x).value)
    if isinstance(x, fmpq):
        return arb(x)
    if isinstance(x, fmpz):
        return arb(x)
    raise TypeError(f"cannot make a ball from {type(x).__name__}")


def _exact_dyadic(q: Fraction) -> arb:
    """An exact ball for a dyadic rational (the precision is raised so nothing is rounded)."""
    den = q.denominator
    assert den & (den - 1) == 0
    # Enough bits that the mantissa is stored without rounding; the ball keeps
    # its exact value after the precision is restored.
    with working_precision(max(ctx.prec, abs(q.numerator).bit_length() + 8)):
        return arb(q.numerator) * arb(2) ** -(den.bit_length() - 1)


def _certainly_zero(x: arb) -> bool:
    return x.is_exact() and x == 0


def _certainly_one(x: arb) -> bool:
    return x.is_exact() and x == 1


def _check_probability(x: arb, name: str) -> None:
    if not x.is_finite():
        raise Indeterminate(f"{name} is not finite: {x}")
    if x < 0 or x > 1:
        raise DomainError(f"{name} must lie in [0, 1], got {x}")
    if not (x >= 0 and x <= 1):
        raise Indeterminate(f"{name} = {x} is not certainly in [0, 1]")


def _q_log_q_over_p(q: arb, p: arb) -> arb:
    """``q·ln(q/p)`` with the convention 0·ln(0/p) = 0 (p ≥ 0)."""
    if _certainly_zero(q):
        return arb(0)
    if not q > 0:
        raise Indeterminate(f"q·ln(q/p) with q = {q} touching 0")
    if _certainly_zero(p):
        return arb.pos_inf()
    if not p > 0:
        raise Indeterminate(f"q·ln(q/p) with p = {p} touching 0")
    return q * (q / p).log()


def kl_bernoulli(q: Real, p: Real) -> arb:
    """Ball containing kl(q‖p) = q ln(q/p) + (1−q) ln((1−q)/(1−p)), for q, p ∈ [0, 1].

    Uses 0·ln(0/x) = 0; kl(q‖p) = +∞ when p ∈ {0, 1} and q ≠ p. Sound because
    every operation is an Arb ball operation (``proofs/audit.md`` §4.1).

    >>> kl_bernoulli(0, "0.5").contains(arb(2).log())
    True
    >>> kl_bernoulli("0.3", "0.3").contains(0)
    True
    """
    q, p = as_ball(q), as_ball(p)
    _check_probability(q, "q")
    _check_probability(p, "p")
    return _q_log_q_over_p(q, p) + _q_log_q_over_p(1 - q, 1 - p)


def _bisect(lo: Fraction, hi: Fraction, classify, max_steps: int) -> tuple[Fraction, Fraction]:
    """Shrink a bracket ``[lo, hi]`` of a point t by certified comparisons.

    ``classify(m)`` (m an exact dyadic in (lo, hi)) returns ``(side, g)``:
    side = +1 certifies m ≤ t, −1 certifies m ≥ t, 0 means undecided at this
    precision; ``g`` is an uncertified estimate of a function that changes
    sign at t (or ``None``). The bracket is only ever updated on a certified
    side, so it always contains t; ``g`` only *chooses* where to test
    (regula falsi, then t ± a small width), which makes the number of
    evaluations grow like the number of correct bits / 15 instead of one
    per bit. When nothing can be decided the bracket is returned as it is
    (still valid).
    """
    grid = ctx.prec + 8  # test points are multiples of 2^-grid
    target_width = Fraction(1, 2 ** (ctx.prec - 4))
    g_at: dict[Fraction, Fraction] = {}

    def test(m: Fraction) -> int:
        nonlocal lo, hi
        side, g = classify(m)
        if g is not None:
            g_at[m] = g
        if side > 0:
            lo = max(lo, m)
        elif side < 0:
            hi = min(hi, m)
        return side

    for _ in range(max_steps):
        width = hi - lo
        if width <= target_width * max(abs(hi), Fraction(1, 2**64)):
            break
        g_lo, g_hi = g_at.get(lo), g_at.get(hi)
        if width < Fraction(1, 2**10) and g_lo is not None and g_hi is not None and g_lo != g_hi:
            r = lo - g_lo * width / (g_hi - g_lo)
            r = Fraction(int(r * 2**grid), 2**grid)
            w = Fraction(1, 2 ** (grid - max(width.numerator.bit_length() - width.denominator.bit_length() + grid - 16, 0)))
            if lo < r - w and r + w < hi:
                test(r - w)
                test(r + w)
                if hi - lo <= width / 2:
                    continue
        m = (lo + hi) / 2
        if lo < m < hi and test(m) == 0:
            break
    return lo, hi


def _ball_between(lo: Fraction, hi: Fraction) -> arb:
    return _exact_dyadic(lo).union(_exact_dyadic(hi))


def kl_inverse_upper(q: Real, c: Real) -> arb:
    """Ball containing the PAC-Bayes-kl upper inverse sup{p ∈ [q, 1] : kl(q‖p) ≤ c}.

    Certified bisection (``proofs/audit.md`` §4.2): on [q, 1) the map
    p ↦ kl(q‖p) is continuous and strictly increasing, so at an exact dyadic
    midpoint m: kl(q‖m) < c (certainly, for all q, c in their balls) ⇒
    m ≤ p*; m ≥ every q and kl(q‖m) > c ⇒ m ≥ p*. The bracket [lo, hi]
    therefore always contains p*; its upper end is the safe value of a bound.

    >>> from certbound.ball import working_precision
    >>> with working_precision(128):
    ...     p = kl_inverse_upper(0, "0.5")            # closed form 1 − e^(−c)
    ...     p.overlaps(1 - arb("0.5").neg().exp()), p.rad() < 1e-30
    (True, True)
    """
    q, c = as_ball(q), as_ball(c)
    _check_probability(q, "q")
    if not c.is_finite():
        raise Indeterminate(f"c is not finite: {c}")
    if c < 0:
        raise DomainError(f"kl_inv_upper: c must be ≥ 0, got {c}")
    if not c >= 0:
        raise Indeterminate(f"c = {c} is not certainly ≥ 0")
    if _certainly_one(q):
        return arb(1)
    if _certainly_zero(c):
        return q  # kl(q‖p) = 0 only at p = q
    q_lo, q_hi = lower_fraction(q), upper_fraction(q)
    assert q_lo is not None and q_hi is not None
    lo, hi = max(q_lo, Fraction(0)), Fraction(1)

    def kl_at(m: Fraction) -> arb:
        return _q_log_q_over_p(q, _exact_dyadic(m)) + _q_log_q_over_p(1 - q, 1 - _exact_dyadic(m))

    def classify(m: Fraction) -> tuple[int, Fraction | None]:
        if m <= q_lo:
            return 1, None  # p* ≥ q ≥ q_lo ≥ m
        try:
            g = kl_at(m) - c
        except Indeterminate:
            return 0, None
        estimate = lower_fraction(g.mid()) if g.is_finite() else None
        if g < 0:
            return 1, estimate  # m is in the set, so m ≤ p*
        if m >= q_hi and g > 0:
            return -1, estimate  # (kl(q‖m) > c with m < q would say nothing)
        return 0, estimate

    lo, hi = _bisect(lo, hi, classify, ctx.prec + 16)
    return _ball_between(lo, hi)


def kl_inverse_lower(q: Real, c: Real) -> arb:
    """Ball containing the lower inverse inf{p ∈ [0, q] : kl(q‖p) ≤ c}.

    By the symmetry kl(q‖p) = kl(1−q‖1−p) it equals 1 − kl_inverse_upper(1−q, c)
    (``proofs/audit.md`` §4.2); the subtraction is a ball operation.

    >>> kl_inverse_lower(1, "0.5").overlaps(arb("0.5").neg().exp())   # closed form e^(−c)
    True
    """
    q = as_ball(q)
    return 1 - kl_inverse_upper(1 - q, c)


def safe_kl_inverse_upper(q: Real, c: Real) -> Fraction:
    """An exact dyadic number ≥ sup{p : kl(q‖p) ≤ c} (the safe value of an upper bound).

    >>> safe_kl_inverse_upper(0, 0)
    Fraction(0, 1)
    """
    u = upper_fraction(kl_inverse_upper(q, c))
    assert u is not None
    return min(u, Fraction(1))


def safe_kl_inverse_lower(q: Real, c: Real) -> Fraction:
    """An exact dyadic number ≤ inf{p : kl(q‖p) ≤ c} (the safe value of a lower bound).

    >>> safe_kl_inverse_lower(1, 0)
    Fraction(1, 1)
    """
    lo = lower_fraction(kl_inverse_lower(q, c))
    assert lo is not None
    return max(lo, Fraction(0))


def log_sum_exp(values: Iterable[Real]) -> arb:
    """Ball containing ln Σᵢ exp(xᵢ), shifted by a max midpoint for accuracy.

    ln Σ exp(xᵢ) = s + ln Σ exp(xᵢ − s) holds for every real s, so choosing s
    exactly (a midpoint, radius 0) loses nothing; each step is a ball
    operation (``proofs/audit.md`` §4.3).

    >>> log_sum_exp([0, 0]).contains(arb(2).log())
    True
    """
    xs = [as_ball(v) for v in values]
    if not xs:
        raise DomainError("log_sum_exp of no values (ln 0)")
    if not all(x.is_finite() for x in xs):
        raise Indeterminate("log_sum_exp of a non-finite ball")
    s = max((x.mid() for x in xs), key=lambda m: lower_fraction(m))
    total = arb(0)
    for x in xs:
        total += (x - s).exp()
    return s + total.log()


def union_bound_delta(delta: Real, count: Real) -> arb:
    """δ / K: the per-event confidence for a union bound over K events (Σ = δ).

    >>> union_bound_delta("0.01", 4).contains(fmpq(1, 400))
    True
    """
    delta, count = as_ball(delta), as_ball(count)
    if not count > 0:
        raise DomainError(f"union bound over {count} events")
    return delta / count


def peeling_weight(j: int, delta: Real, kind: str = "harmonic") -> arb:
    """The confidence δ_j given to scale j = 1, 2, … of a peeling / stratification argument.

    All three families sum to exactly δ over j ≥ 1 (``proofs/audit.md`` §4.4):

    * ``"harmonic"``: δ_j = δ / (j (j+1))      (telescoping: Σ 1/j − 1/(j+1) = 1)
    * ``"zeta"``:     δ_j = 6 δ / (π² j²)       (Σ 1/j² = π²/6)
    * ``"geometric"``: δ_j = δ · 2^(−j)

    >>> peeling_weight(1, 1)
    0.500000000000000
    >>> peeling_weight(3, 1, "geometric")
    0.125000000000000
    """
    if isinstance(j, bool) or int(j) != j or j < 1:
        raise DomainError(f"peeling index j must be an integer ≥ 1, got {j}")
    j = int(j)
    delta = as_ball(delta)
    if kind == "harmonic":
        return delta / (arb(j) * (j + 1))
    if kind == "zeta":
        return 6 * delta / (arb.pi() ** 2 * arb(j) ** 2)
    if kind == "geometric":
        return delta * arb(2) ** (-j)
    raise DomainError(f"unknown peeling kind {kind!r} (harmonic, zeta, geometric)")


def _check_counts(k: int, n: int) -> tuple[int, int]:
    for name, v in (("k", k), ("n", n)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise DomainError(f"{name} must be an exact integer, got {v!r}")
    if n < 0:
        raise DomainError(f"n must be ≥ 0, got {n}")
    return k, n


def _binomial_cdf_exact(k: int, n: int, p: Fraction) -> Fraction:
    """Σ_{i ≤ k} C(n, i) pⁱ (1−p)^(n−i) exactly over ℚ."""
    if k < 0:
        return Fraction(0)
    if k >= n:
        return Fraction(1)
    a, b = fmpq(p.numerator, p.denominator), 1 - fmpq(p.numerator, p.denominator)
    total = fmpq(0)
    term = b**n  # i = 0
    for i in range(0, k + 1):
        total += term
        if b == 0:
            break
        term = term * (n - i) * a / ((i + 1) * b)
    return Fraction(int(total.p), int(total.q))


def binomial_cdf(k: int, n: int, p: Real, exact: bool = False) -> arb:
    """Ball containing P[Bin(n, p) ≤ k] = Σ_{i=0}^{k} C(n, i) pⁱ (1−p)^(n−i).

    ``exact=True`` (rational p only) sums over ℚ and returns the exact value
    rounded to a ball; otherwise uses the identity P[X ≤ k] = I_{1−p}(n−k, k+1)
    (regularised incomplete beta, evaluated rigorously by Arb's
    ``beta_lower``) for 0 ≤ k < n (``proofs/audit.md`` §4.5).

    >>> binomial_cdf(3, 10, "0.25").contains(fmpq(203391, 262144))
    True
    """
    k, n = _check_counts(k, n)
    if exact:
        if isinstance(p, arb):
            if not p.is_exact():
                raise DomainError("exact binomial_cdf needs a rational p")
            pq = lower_fraction(p)
        else:
            pq = Fraction(p) if isinstance(p, (int, Fraction)) else parse_decimal(p).value if isinstance(p, (str, decimal.Decimal)) else Fraction(p)
        if not 0 <= pq <= 1:
            raise DomainError(f"p must lie in [0, 1], got {pq}")
        return arb_from_fraction(_binomial_cdf_exact(k, n, pq))
    p = as_ball(p)
    _check_probability(p, "p")
    if k < 0:
        return arb(0)
    if k >= n:
        return arb(1)
    if _certainly_zero(p):
        return arb(1)
    if _certainly_one(p):
        return arb(0)
    out = (1 - p).beta_lower(n - k, k + 1, 1)
    # The value is a probability: intersecting with [0, 1] is sound.
    if not out.is_finite():
        raise Indeterminate(f"binomial_cdf({k}, {n}, {p}) did not converge at {ctx.prec} bits")
    return out


def binomial_tail_inverse_upper(k: int, n: int, delta: Real, exact: bool = False) -> arb:
    """Ball containing sup{p ∈ [0, 1] : P[Bin(n, p) ≤ k] ≥ δ} (Langford's test-set bound).

    With k errors out of n test points, the true error rate is below this
    value with probability ≥ 1 − δ (the one-sided Clopper–Pearson limit).
    For k < n the cdf is continuous and strictly decreasing in p, from 1 at
    p = 0 to 0 at p = 1, so bisection with certified comparisons brackets the
    sup (``proofs/audit.md`` §4.5). ``exact=True`` compares exact rational
    cdf values (small n only).

    >>> binomial_tail_inverse_upper(0, 10, "0.5").overlaps(1 - arb("0.5") ** (arb(1) / 10))
    True
    """
    k, n = _check_counts(k, n)
    delta_b = as_ball(delta)
    if not (delta_b > 0 and delta_b <= 1):
        raise DomainError(f"delta must lie in (0, 1], got {delta_b}")
    if k >= n:
        return arb(1)
    if k < 0:
        raise DomainError(f"k must be ≥ 0, got {k}")
    if exact:
        if isinstance(delta, arb):
            raise DomainError("exact binomial tail inversion needs a rational delta")
        # a float is the exact binary64 number it is (as in as_ball); strings/Decimals are exact decimals
        dq = Fraction(delta) if isinstance(delta, (int, Fraction, float)) else parse_decimal(delta).value

        def classify(m: Fraction) -> tuple[int, Fraction | None]:
            g = _binomial_cdf_exact(k, n, m) - dq
            return (1 if g >= 0 else -1), g  # decided exactly over Q

    else:

        def classify(m: Fraction) -> tuple[int, Fraction | None]:
            try:
                g = binomial_cdf(k, n, _exact_dyadic(m)) - delta_b
            except Indeterminate:
                return 0, None
            estimate = lower_fraction(g.mid()) if g.is_finite() else None
            # The cdf is decreasing in p: cdf(m) ≥ δ ⇔ m ≤ p*.
            return (1 if g >= 0 else -1 if g < 0 else 0), estimate

    lo, hi = _bisect(Fraction(0), Fraction(1), classify, ctx.prec + 16)
    return _ball_between(lo, hi)


def binomial_tail_inverse_lower(k: int, n: int, delta: Real, exact: bool = False) -> arb:
    """Ball containing inf{p ∈ [0, 1] : P[Bin(n, p) ≥ k] ≥ δ} (the lower Clopper–Pearson limit).

    n − X ~ Bin(n, 1−p), so P[X ≥ k] = P[n − X ≤ n − k] and the infimum is
    1 − binomial_tail_inverse_upper(n − k, n, δ) (``proofs/audit.md`` §4.5).

    >>> binomial_tail_inverse_lower(10, 10, "0.5").overlaps(arb("0.5") ** (arb(1) / 10))
    True
    """
    k, n = _check_counts(k, n)
    if k <= 0:
        return arb(0)
    if k > n:
        raise DomainError(f"k = {k} exceeds n = {n}")
    return 1 - binomial_tail_inverse_upper(n - k, n, delta, exact=exact)
