"""The one place that knows Arb: exact conversions, outward rounding, JSON form.

Every certified number in certbound is an ``flint.arb`` ball. This module
turns floats into balls *exactly* (every binary64 value is a dyadic rational
that Arb represents without error), turns balls back into floats and decimal
strings rounded *outward* (lower ends down, upper ends up), and gives the JSON
form ``{"lower", "upper", "mid", "exact"}`` used by every report.

Rounding arguments (see ``proofs/enclosure.md`` §5):

* ``arb(float)`` is exact (``arb_set_d``); a numpy array goes entry by entry.
* An endpoint of a ball is an exact dyadic ``m·2^e`` (``arb.lower()`` and
  ``arb.upper()`` return exact balls, with radius 0, that lie outside the
  ball's interval or on its boundary).
* Decimal strings and floats are produced from that exact dyadic with integer
  arithmetic and explicit directed rounding, never through ``float()`` on an
  inexact value.

Examples
--------
>>> from flint import arb
>>> x = arb(1) / 3
>>> decimal_lower(x, 5), decimal_upper(x, 5)
('0.33333', '0.33334')
>>> float_lower(x) <= 1 / 3 <= float_upper(x)
True
>>> arb_from_float(0.1).is_exact()
True
"""

from __future__ import annotations

import contextlib
import contextvars
import decimal
import functools
import math
import operator
import sys
from fractions import Fraction
from typing import Any, Callable, Iterator, TypeVar

import numpy as np
from flint import arb, ctx

__all__ = [
    "DEFAULT_PREC",
    "FloatEnvironmentError",
    "check_float_environment",
    "float_model_scope",
    "in_float_model_scope",
    "under_float_model",
    "under_callers_float_model",
    "working_precision",
    "arb_from_float",
    "arbs_from_array",
    "exact_fraction",
    "lower_fraction",
    "upper_fraction",
    "ENDPOINT_BITS",
    "bounded_endpoints",
    "float_lower",
    "float_upper",
    "decimal_lower",
    "decimal_upper",
    "ball_to_json",
    "float_interval_to_json",
    "ball_from_json",
    "nonnegative_interval",
    "trivial_nonnegative",
    "arb_max",
    "arb_sum",
]

#: Working precision (bits) for scalar Arb work. Any precision is *sound* (Arb
#: balls are rigorous at every precision); this one keeps widths far below the
#: float64 inputs' own resolution.
DEFAULT_PREC = 128


class FloatEnvironmentError(RuntimeError):
    """The process's floating-point environment is not the one certificates assume.

    Raised (never a number returned) when float64 arithmetic does not round to
    nearest or does not underflow gradually — e.g. after ``fesetround`` or
    after a library built with ``-ffast-math`` set the x86 MXCSR
    flush-to-zero / denormals-are-zero bits when it was loaded.
    """


def _f64(bits: list[int]) -> np.ndarray:
    # Built from bit patterns: no float operation (which the environment being
    # checked could perturb) is involved in making the probes or their answers.
    return np.array(bits, dtype=np.uint64).view(np.float64)


# Probes (proofs/enclosure.md §2, "Checking the model"): a + b, then c · d.
#   1 + 2⁻⁵⁴     = 1          (round up gives 1 + 2⁻⁵²)
#   −1 − 2⁻⁵⁴    = −1         (round down gives −1 − 2⁻⁵²)
#   1 + 3·2⁻⁵⁴   = 1 + 2⁻⁵²   (round down / toward zero give 1)
#   2⁻¹⁰²² · ½   = 2⁻¹⁰²³     (flush-to-zero gives 0: a subnormal result)
#   2⁻¹⁰⁷⁴ · 2⁵² = 2⁻¹⁰²²     (denormals-are-zero gives 0: a subnormal operand)
_ONE, _MONE, _ONE_UP = 0x3FF0000000000000, 0xBFF0000000000000, 0x3FF0000000000001
_PROBE_A = _f64([_ONE, _MONE, _ONE])
_PROBE_B = _f64([0x3C90000000000000, 0xBC90000000000000, 0x3CA8000000000000])
_PROBE_SUM = _f64([_ONE, _MONE, _ONE_UP]).view(np.uint64)
_PROBE_C = _f64([0x0010000000000000, 0x0000000000000001])
_PROBE_D = _f64([0x3FE0000000000000, 0x4330000000000000])
_PROBE_PRODUCT = _f64([0x0008000000000000, 0x0010000000000000]).view(np.uint64)
_PROBE_TINY_EYE = _f64([0x0000000000000001, 0, 0, 0x0000000000000001]).reshape(2, 2)  # 2⁻¹⁰⁷⁴·I
_PROBE_SCALE_EYE = _f64([0x4330000000000000, 0, 0, 0x4330000000000000]).reshape(2, 2)  # 2⁵²·I
# The same for binary32 BLAS (tight mode's Lemma T6′ levels): 2⁻¹⁴⁹·I · 2²³·I = 2⁻¹²⁶·I.
_PROBE_TINY_EYE32 = np.array([1, 0, 0, 1], dtype=np.uint32).view(np.float32).reshape(2, 2)
_PROBE_SCALE_EYE32 = np.array([0x4B000000, 0, 0, 0x4B000000], dtype=np.uint32).view(np.float32).reshape(2, 2)
_PROBE_PRODUCT32 = 0x00800000


def _float_environment_problems() -> list[str]:
    with np.errstate(all="ignore"):
        s = (_PROBE_A + _PROBE_B).view(np.uint64)
        p = (_PROBE_C * _PROBE_D).view(np.uint64)
        # A BLAS product of subnormals (dgemm runs its own kernels): 2⁻¹⁰⁷⁴·I · 2⁵²·I.
        g = (_PROBE_TINY_EYE @ _PROBE_SCALE_EYE).view(np.uint64)
        g32 = (_PROBE_TINY_EYE32 @ _PROBE_SCALE_EYE32).view(np.uint32)
    # Python's own float arithmetic (math.fsum, nextafter paths) in the same thread.
    x, y = _PROBE_A.tolist()[0], _PROBE_B.tolist()[2]
    problems = []
    if s[0] != _PROBE_SUM[0]:
        problems.append("the rounding mode is upward (toward +inf)")
    elif s[1] != _PROBE_SUM[1]:
        problems.append("the rounding mode is downward (toward -inf)")
    elif s[2] != _PROBE_SUM[2] or (x + y) != 1.0000000000000002:
        problems.append("the rounding mode is toward zero")
    if p[0] != _PROBE_PRODUCT[0]:
        problems.append("subnormal results are flushed to zero (FTZ)")
    if p[1] != _PROBE_PRODUCT[1]:
        problems.append("subnormal operands are treated as zero (DAZ)")
    if not problems and not (g[0, 0] == g[1, 1] == _PROBE_PRODUCT[1] and g[0, 1] == g[1, 0] == 0):
        problems.append("the BLAS matrix product does not underflow gradually")
    if not problems and not (g32[0, 0] == g32[1, 1] == _PROBE_PRODUCT32 and g32[0, 1] == g32[1, 0] == 0):
        problems.append("the binary32 BLAS matrix product does not underflow gradually")
    return problems


def check_float_environment() -> None:
    """Refuse to certify unless float64 arithmetic rounds to nearest and underflows gradually.

    Every float → bound argument (``proofs/enclosure.md`` §2) assumes IEEE 754
    binary64 with round to nearest and gradual underflow. Five probe
    operations (and two 2×2 BLAS products, binary64 and binary32) detect the
    other rounding modes and the x86 MXCSR flush-to-zero (FTZ) /
    denormals-are-zero (DAZ) modes; the
    cost is a few microseconds. Runs at the start of every certificate
    (:func:`under_float_model`).

    Raises
    ------
    FloatEnvironmentError
        Naming what is wrong and how to restore the default environment.

    >>> check_float_environment()  # the default environment passes
    """
    problems = _float_environment_problems()
    if problems:
        raise FloatEnvironmentError(
            "certbound refuses to certify: the floating-point environment is not IEEE 754 round-to-nearest "
            f"with gradual underflow ({'; '.join(problems)}). Some code in this process changed it (fesetround, "
            "_mm_setcsr, or a shared library built with -ffast-math that was loaded); restore the default "
            "(fesetround(FE_TONEAREST), MXCSR FTZ/DAZ bits cleared) before certifying"
        )


#: How many :func:`float_model_scope` blocks enclose the running code (per thread and asyncio task).
_SCOPE_DEPTH: contextvars.ContextVar[int] = contextvars.ContextVar("certbound_float_model_scope_depth", default=0)


@contextlib.contextmanager
def float_model_scope() -> Iterator[None]:
    """Check the floating-point environment, and make numpy's error handling local.

    Inside, ``np.errstate(all="ignore")``: the kernel's own error-bound
    arithmetic detects overflow and NaN itself, so a caller's
    ``np.seterr(all="raise")`` must not turn them into exceptions halfway
    through a certificate (the caller's setting is restored on exit).

    Yields
    ------
    None
        The block runs with the environment checked (:func:`check_float_environment`)
        and :func:`in_float_model_scope` true.

    Raises
    ------
    FloatEnvironmentError
        If the environment is not round-to-nearest with gradual underflow.

    Examples
    --------
    >>> import numpy as np
    >>> with np.errstate(all="raise"):
    ...     with float_model_scope():
    ...         float(np.float64(1e308) * 10)
    inf
    """
    check_float_environment()
    token = _SCOPE_DEPTH.set(_SCOPE_DEPTH.get() + 1)
    try:
        with np.errstate(all="ignore"):
            yield
    finally:
        _SCOPE_DEPTH.reset(token)


def in_float_model_scope() -> bool:
    """Whether the running code is inside a :func:`float_model_scope` block (its check has run).

    Returns
    -------
    bool
        True inside a block (in this thread or asyncio task), else False.

    Examples
    --------
    >>> in_float_model_scope()
    False
    >>> with float_model_scope():
    ...     in_float_model_scope()
    True
    """
    return _SCOPE_DEPTH.get() > 0


_F = TypeVar("_F", bound=Callable[..., Any])


def under_float_model(func: _F) -> _F:
    """Decorator: run ``func`` inside :func:`float_model_scope` (a kernel entry point).

    Parameters
    ----------
    func : callable
        A function whose float evaluations assume the model of
        ``proofs/enclosure.md`` §2.

    Returns
    -------
    callable
        ``func`` wrapped: each call checks the environment first (a few
        microseconds) and runs with numpy's errors ignored.

    Examples
    --------
    >>> import numpy as np
    >>> @under_float_model
    ... def overflow():
    ...     return float(np.float64(1e308) * 10)
    >>> with np.errstate(all="raise"):
    ...     overflow()
    inf
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with float_model_scope():
            return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def under_callers_float_model(func: _F) -> _F:
    """Decorator: :func:`under_float_model`, except that inside a caller's :func:`float_model_scope` the check is not repeated.

    For a kernel function that a pipeline calls once per matrix of a model,
    all inside one scope of its own: the environment was checked when that
    scope was entered, so the calls add no check each. numpy's errors are
    ignored in either case. Outside every scope it is :func:`under_float_model`.

    Parameters
    ----------
    func : callable
        A function whose float evaluations assume the model of
        ``proofs/enclosure.md`` §2.

    Returns
    -------
    callable
        ``func`` wrapped.

    Examples
    --------
    >>> import numpy as np
    >>> @under_callers_float_model
    ... def overflow():
    ...     return float(np.float64(1e308) * 10)
    >>> with np.errstate(all="raise"):
    ...     overflow()
    inf
    >>> with float_model_scope(), np.errstate(all="raise"):
    ...     overflow()
    inf
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _SCOPE_DEPTH.get() > 0:
            with np.errstate(all="ignore"):
                return func(*args, **kwargs)
        with float_model_scope():
            return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


class working_precision:
    """Temporarily set Arb's working precision (restored on exit).

    A context manager (``with working_precision(bits) as p:``); the previous
    precision is restored however the block ends. A small class rather than a
    generator-based one: it is entered about a thousand times per model
    (records and kernel finishes), and a generator context costs about
    twice as much per entry. An instance holds one saved precision: it may be
    entered again after it exited, not while it is active (each ``with``
    statement makes its own).

    Parameters
    ----------
    bits : int
        Arb's working precision inside the block (at least 2).

    Yields
    ------
    int
        The precision in force.

    Examples
    --------
    >>> with working_precision(200) as p:
    ...     p
    200
    >>> from flint import ctx
    >>> old = ctx.prec
    >>> with working_precision(300):
    ...     with working_precision(64):
    ...         inner = ctx.prec
    ...     outer = ctx.prec
    >>> (inner, outer, ctx.prec == old)
    (64, 300, True)
    """

    __slots__ = ("_bits", "_saved")

    def __init__(self, bits: int = DEFAULT_PREC) -> None:
        self._bits = max(int(bits), 2)
        self._saved = 0

    def __enter__(self) -> int:
        self._saved = ctx.prec
        ctx.prec = bits = self._bits
        return bits

    def __exit__(self, *exc: Any) -> None:
        ctx.prec = self._saved


def arb_from_float(x: float) -> arb:
    """The float ``x`` as an exact Arb ball (radius 0); infinities become the exact infinite arb.

    Parameters
    ----------
    x : float
        Any binary64 value (converted with ``float``).

    Returns
    -------
    arb
        The exact ball ``[x, x]`` (every binary64 value is a dyadic rational).

    Raises
    ------
    ValueError
        For NaN.

    Examples
    --------
    >>> arb_from_float(0.5)
    0.500000000000000
    """
    x = float(x)
    if math.isnan(x):
        raise ValueError("NaN cannot be converted to a certified ball")
    if math.isinf(x):
        return arb.pos_inf() if x > 0 else arb.neg_inf()
    return arb(x)


def arbs_from_array(a: Any) -> list[arb]:
    """Exact Arb balls for every entry of a float array (flattened, C order).

    Parameters
    ----------
    a : array_like
        Values convertible to float64.

    Returns
    -------
    list of arb
        One exact ball per entry.

    Raises
    ------
    ValueError
        If an entry is NaN.

    Examples
    --------
    >>> arbs_from_array([[0.5, 2.0]])
    [0.500000000000000, 2.00000000000000]
    """
    return [arb_from_float(v) for v in np.asarray(a, dtype=np.float64).ravel()]


def _dyadic(x: arb) -> Fraction:
    """Exact value of an exact (radius-0) finite ball as a Fraction."""
    man, exp = x.man_exp()
    man, exp = int(man), int(exp)
    return Fraction(man * 2**exp) if exp >= 0 else Fraction(man, 2 ** (-exp))


def exact_fraction(x: arb) -> Fraction:
    """The exact rational value of a radius-0 finite ball.

    Parameters
    ----------
    x : arb
        A finite ball of radius 0.

    Returns
    -------
    Fraction
        Its value.

    Raises
    ------
    ValueError
        If ``x`` is not exact or not finite.

    Examples
    --------
    >>> exact_fraction(arb_from_float(0.375))
    Fraction(3, 8)
    """
    if not x.is_finite() or not x.is_exact():
        raise ValueError(f"not an exact finite ball: {x}")
    return _dyadic(x)


def _mid_rad(x: arb) -> tuple[Fraction, Fraction] | None:
    # mid() and rad() are exact (a midpoint arf and a radius mag); computing the
    # endpoints from them in Fractions avoids arb.lower()/upper() rounding the
    # endpoint outward to the working precision.
    if not x.is_finite():
        return None
    return _dyadic(x.mid()), _dyadic(x.rad())


def lower_fraction(x: arb) -> Fraction | None:
    """Exact lower endpoint (mid − rad) as a Fraction, ``None`` for −∞ (or NaN).

    Parameters
    ----------
    x : arb
        Any ball.

    Returns
    -------
    Fraction or None
        The exact ``mid − rad``; ``None`` if ``x`` is not finite.

    Examples
    --------
    >>> lower_fraction(arb(0.75)), lower_fraction(arb.pos_inf()) is None
    (Fraction(3, 4), True)
    >>> lower_fraction(arb(1, 0.5)) <= Fraction(1, 2)  # Arb stores radii rounded up
    True
    """
    mr = _mid_rad(x)
    return None if mr is None else mr[0] - mr[1]


def upper_fraction(x: arb) -> Fraction | None:
    """Exact upper endpoint (mid + rad) as a Fraction, ``None`` for +∞ (or NaN).

    Parameters
    ----------
    x : arb
        Any ball.

    Returns
    -------
    Fraction or None
        The exact ``mid + rad``; ``None`` if ``x`` is not finite.

    Examples
    --------
    >>> upper_fraction(arb(0.75)), upper_fraction(arb(1, 0.5)) >= Fraction(3, 2)
    (Fraction(3, 4), True)
    """
    mr = _mid_rad(x)
    return None if mr is None else mr[0] + mr[1]


#: Scale of :func:`bounded_endpoints`: endpoints are exact while their binary
#: exponents stay within ±ENDPOINT_BITS, else rounded outward to the grid
#: 2^-ENDPOINT_BITS·ℤ and capped at ±2^ENDPOINT_BITS. Used wherever an end point is printed
#: or compared, so that a ball such as 10^(10^10) costs microseconds, not hours.
ENDPOINT_BITS = 1 << 17


def _floor_scaled(man: int, exp: int, bits: int) -> int | None:
    """floor(man·2^(exp+bits)), or None if its magnitude would exceed 2^(2·bits)."""
    shift = exp + bits
    if shift >= 0:
        if abs(man).bit_length() + shift > 2 * bits:
            return None
        return man << shift
    return man >> -shift  # Python's >> floors, also for negative man (and huge shifts are O(1))


def bounded_endpoints(x: arb, bits: int = ENDPOINT_BITS) -> tuple[Fraction | None, Fraction | None]:
    """Rational ``(lo, hi)`` with ``lo ≤ every point of x ≤ hi``, in bounded time and memory.

    The exact end points ``mid ∓ rad`` of a ball such as ``10^(10^10)`` are
    rationals of billions of bits; this returns them exactly when their binary
    exponents lie within ``±bits`` and otherwise rounds them outward to
    multiples of ``2^-bits`` and caps them at ``±2^bits`` (``None`` standing for
    −∞ / +∞), which is still a valid enclosure. Non-finite balls give
    ``(None, None)``.

    Parameters
    ----------
    x : arb
        Any ball.
    bits : int
        The exponent range kept exact (:data:`ENDPOINT_BITS`).

    Returns
    -------
    (Fraction or None, Fraction or None)
        A lower and an upper bound of the ball; ``None`` for −∞ / +∞.

    Examples
    --------
    >>> from flint import arb
    >>> bounded_endpoints(arb(3) / 4)
    (Fraction(3, 4), Fraction(3, 4))
    >>> lo, hi = bounded_endpoints(arb(10) ** (10**10))
    >>> lo == 2 ** ENDPOINT_BITS and hi is None
    True
    >>> lo, hi = bounded_endpoints(arb(2) ** -(10**10))
    >>> lo == 0 and hi == Fraction(1, 2 ** ENDPOINT_BITS)
    True
    """
    if not x.is_finite():
        return None, None
    m_man, m_exp = (int(v) for v in x.mid().man_exp())
    r_man, r_exp = (int(v) for v in x.rad().man_exp())
    if abs(m_exp) <= bits and abs(r_exp) <= bits:  # small exact rationals: the exact end points
        m = Fraction(m_man) * Fraction(2) ** m_exp
        r = Fraction(r_man) * Fraction(2) ** r_exp
        return m - r, m + r
    cap = arb(2) ** bits  # exact in Arb
    scale = Fraction(1, 2**bits)
    m_lo, r_hi = _floor_scaled(m_man, m_exp, bits), _floor_scaled(-r_man, r_exp, bits)
    m_hi = _floor_scaled(-m_man, m_exp, bits)
    # lo: capped at +2^bits when x lies above it; −∞ when x may reach below −2^bits.
    if x > cap:
        lo: Fraction | None = Fraction(2**bits)
    elif not x >= -cap or m_lo is None or r_hi is None:
        lo = None
    else:
        lo = (m_lo + r_hi) * scale  # floor(m·2^b) − ceil(r·2^b), over 2^b
    if x < -cap:
        hi: Fraction | None = -Fraction(2**bits)
    elif not x <= cap or m_hi is None or r_hi is None:
        hi = None
    else:
        hi = (-m_hi - r_hi) * scale  # ceil(m·2^b) + ceil(r·2^b), over 2^b
    return lo, hi


def _float_down(q: Fraction) -> float:
    """Largest binary64 value ≤ q (−inf if q is below the finite range)."""
    try:
        f = float(q)  # correctly rounded to nearest
    except OverflowError:
        # |q| rounds beyond the finite range: below it lies DBL_MAX (q > 0) or
        # nothing finite (q < 0). +inf would NOT be a lower bound of a finite q.
        return sys.float_info.max if q > 0 else -math.inf
    if Fraction(f) > q if math.isfinite(f) else f > 0:
        f = math.nextafter(f, -math.inf)
    return f


def _float_up(q: Fraction) -> float:
    """Smallest binary64 value ≥ q (+inf if q is above the finite range)."""
    return -_float_down(-q) + 0.0  # + 0.0 turns −0.0 into +0.0


def _float_endpoint(x: arb, upper: bool) -> float:
    """Outward-rounded float endpoint; fast path through a 53-bit Arb endpoint."""
    if x.is_zero():
        return 0.0
    if not x.is_finite():
        return math.inf if upper else -math.inf
    # arb.lower()/upper() at 53 bits round the endpoint outward to a 53-bit
    # dyadic; ldexp of its mantissa is then exact unless the exponent leaves
    # the normal range, where we take the exact Fraction path instead. A
    # result of exactly ±2^-1022 may come from rounding a value below the
    # normal range (e.g. 2^-1022 − 2^-1075 rounds up to it, ties to even), so
    # only results strictly above it in magnitude are known to be exact.
    old = ctx.prec  # (no context manager: this runs once per σᵢ on hot paths)
    ctx.prec = 53
    try:
        end = x.upper() if upper else x.lower()
    finally:
        ctx.prec = old
    man, exp = (int(v) for v in end.man_exp())
    try:
        f = math.ldexp(man, exp)
        exact = man == 0 or abs(f) > 2.0**-1022
    except OverflowError:
        if (man > 0) == upper:  # outward is toward the infinity of the same sign
            return math.inf if upper else -math.inf
        exact = False
    if not exact:
        q = upper_fraction(x) if upper else lower_fraction(x)
        return _float_up(q) if upper else _float_down(q)
    return f + 0.0


def float_lower(x: arb) -> float:
    """A float ≤ every point of the ball (outward rounding).

    Parameters
    ----------
    x : arb
        Any ball.

    Returns
    -------
    float
        The largest float ≤ the ball's lower end (that end itself when it is a
        float); ``-inf`` if unbounded below.

    Examples
    --------
    >>> float_lower(arb(1) / 3) < 1 / 3
    True
    """
    return _float_endpoint(x, upper=False)


def float_upper(x: arb) -> float:
    """A float ≥ every point of the ball (outward rounding).

    Parameters
    ----------
    x : arb
        Any ball.

    Returns
    -------
    float
        The smallest float ≥ the ball's upper end (that end itself when it is a
        float); ``inf`` if unbounded above.

    Examples
    --------
    >>> float_upper(arb(2).sqrt()) >= math.sqrt(2)
    True
    """
    return _float_endpoint(x, upper=True)


_EXACT_DECIMAL = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)


def _decimal_round(q: Fraction, digits: int, rounding: str) -> str:
    if q == 0:
        return "0"
    # Exact decimal of the dyadic q: numerator/denominator with denominator 2^k.
    num, den = q.numerator, q.denominator
    k = den.bit_length() - 1
    assert den == 1 << k
    return _decimal_round_dyadic(num, k, digits, rounding)


def _decimal_round_dyadic(num: int, k: int, digits: int, rounding: str) -> str:
    """:func:`_decimal_round` of the dyadic ``num / 2^k`` in lowest terms (num odd or k = 0), num ≠ 0."""
    # num·5^k / 10^k = q exactly; the context can hold any Decimal, so scaleb
    # never rounds (a finite precision such as 10⁶ digits would round to
    # nearest for very small exponents and break the directed rounding below).
    exact = decimal.Decimal(num * 5**k).scaleb(-k, _EXACT_DECIMAL)
    return _decimal_string(_rounding_context(digits, rounding).plus(exact))


def _decimal_string(out: decimal.Decimal) -> str:
    """The printed form of a rounded decimal: ``g`` notation, ``e`` beyond 16 orders, lower-case exponent."""
    s = format(out, "g") if abs(out.adjusted()) < 16 else format(out, "e")
    # Make exponents readable: 1.2E+5 -> 1.2e+5.
    return s.replace("E", "e")


def _decimal_round_float(x: float, digits: int, rounding: str) -> str:
    """:func:`_decimal_round_dyadic` of a finite nonzero float ``x`` = num/2^k (lowest terms), the same string.

    ``decimal.Decimal(x)`` is the exact value of x with coefficient num·5^k and
    exponent −k (k = 0 for an integer x: coefficient x): the Decimal that
    :func:`_decimal_round_dyadic` forms with Python integers, formed in C
    (proofs/enclosure.md §8, "JSON forms"; tests/test_ball_decimal_float.py
    compares the two Decimals' tuples and the strings); it is rounded by
    the same context and printed the same way, so Outward.v's statement
    about :func:`_decimal_round_dyadic` holds for this function too.

    >>> _decimal_round_float(0.1, 3, decimal.ROUND_FLOOR), _decimal_round_float(0.1, 3, decimal.ROUND_CEILING)
    ('0.100', '0.101')
    """
    return _decimal_string(_rounding_context(digits, rounding).plus(decimal.Decimal(x)))


def _checked_digits(digits: Any, where: str) -> int:
    """``digits`` as an int ≥ 1: the significant digits of a decimal end; ValueError naming ``where`` otherwise.

    The one rule of the four entry points that print decimals (:func:`decimal_lower`,
    :func:`decimal_upper`, :func:`ball_to_json`, :func:`float_interval_to_json`): an
    integer (``operator.index``, so numpy integers too; not a bool) of at least 1. Outward.v's
    statement assumes ``0 < digits``; no count is clamped or truncated silently.

    >>> _checked_digits(3, "f"), _checked_digits(np.int64(2), "f")
    (3, 2)
    >>> _checked_digits(0, "decimal_upper")
    Traceback (most recent call last):
    ...
    ValueError: decimal_upper: digits must be an integer >= 1 (significant digits), got 0
    """
    if type(digits) is int and digits >= 1:  # the common case, first (this runs once per printed quantity)
        return digits
    try:
        d = None if isinstance(digits, bool) else operator.index(digits)
    except TypeError:
        d = None
    if d is None or d < 1:
        raise ValueError(f"{where}: digits must be an integer >= 1 (significant digits), got {digits!r}")
    return d


@functools.lru_cache(maxsize=64)
def _rounding_context(digits: int, rounding: str) -> decimal.Context:
    # No traps can fire here (exponent range ±10⁹); the flags it collects are never read.
    return decimal.Context(prec=digits, rounding=rounding, Emax=10**9, Emin=-(10**9))


def decimal_lower(x: arb, digits: int = 17) -> str:
    """Decimal string ≤ the ball's lower end, ``digits`` significant digits.

    Rounded toward −∞, so it never lies inside the true value's range from
    below. ``"-inf"`` if the ball is unbounded below.

    Parameters
    ----------
    x : arb
        Any ball.
    digits : int
        Significant digits (at least 1).

    Returns
    -------
    str
        The decimal, e.g. ``'0.833'`` or ``'1.2e+20'``.

    Raises
    ------
    ValueError
        If ``digits`` is not an integer ≥ 1.

    Examples
    --------
    >>> decimal_lower(arb_from_float(2.5) / 3, 3)
    '0.833'
    """
    digits = _checked_digits(digits, "decimal_lower")
    return _decimal_lower_of(bounded_endpoints(x)[0], digits)


def _decimal_lower_of(q: Fraction | None, digits: int) -> str:
    return "-inf" if q is None else _decimal_round(q, digits, decimal.ROUND_FLOOR)


def _decimal_upper_of(q: Fraction | None, digits: int) -> str:
    return "inf" if q is None else _decimal_round(q, digits, decimal.ROUND_CEILING)


def decimal_upper(x: arb, digits: int = 17) -> str:
    """Decimal string ≥ the ball's upper end, ``digits`` significant digits.

    Rounded toward +∞; ``"inf"`` if the ball is unbounded above.

    Parameters
    ----------
    x : arb
        Any ball.
    digits : int
        Significant digits (at least 1).

    Returns
    -------
    str
        The decimal, e.g. ``'0.834'``.

    Raises
    ------
    ValueError
        If ``digits`` is not an integer ≥ 1.

    Examples
    --------
    >>> decimal_upper(arb_from_float(2.5) / 3, 3)
    '0.834'
    """
    digits = _checked_digits(digits, "decimal_upper")
    return _decimal_upper_of(bounded_endpoints(x)[1], digits)


#: Integers up to this many bits are written out in the ``exact`` strings; larger
#: ones go through :mod:`decimal` (Python's int → str refuses more than 4300
#: digits, ≈ 14 284 bits, and a report must not crash on a huge but finite ball).
_INT_STR_BITS = 12_000


def _int_str(n: int) -> str:
    """Exact decimal digits of the integer n, also beyond Python's int → str digit limit."""
    if n.bit_length() <= _INT_STR_BITS:
        return str(n)
    return format(decimal.Decimal(n), "f")  # Decimal(int) is exact; "f" prints every digit


def _dyadic_str(q: Fraction | None, inf: str) -> str:
    if q is None:
        return inf
    den = q.denominator
    k = den.bit_length() - 1
    return f"{_int_str(q.numerator)}*2^{-k}" if k else _dyadic_json(_lowest_dyadic(q.numerator, 0))


def ball_to_json(x: arb, digits: int = 17) -> dict[str, Any]:
    """The certified-quantity JSON form used by every report.

    ``lower``/``upper`` are decimal strings rounded outward; ``mid`` is a float
    for convenience (not certified) that always satisfies ``lower ≤ mid ≤
    upper`` for the printed strings: it is the float nearest the ball's
    midpoint, which lies in the exact interval whenever any float does; for a
    ball narrower than the float spacing that contains no float, the printed
    ``lower``/``upper`` are widened to that neighbouring float (still valid
    outward bounds). ``exact`` gives both endpoints exactly as ``"m*2^e"``
    (or ``"m"``) strings, ``"-inf"``/``"inf"`` when unbounded.

    Parameters
    ----------
    x : arb
        Any ball (finite or not).
    digits : int
        Significant digits of the decimal ``lower``/``upper`` strings (an integer ≥ 1).

    Returns
    -------
    dict
        ``{"lower", "upper", "mid", "exact": {"lower", "upper"}}`` (``mid`` None for an unbounded ball).

    Raises
    ------
    ValueError
        If ``digits`` is not an integer ≥ 1.

    >>> ball_to_json(arb_from_float(0.25))["exact"]
    {'lower': '1*2^-2', 'upper': '1*2^-2'}
    >>> d = ball_to_json(arb(1) / 3)   # no float lies within 1/3 ± 2^-53·ulp
    >>> Fraction(d["lower"]) <= Fraction(d["mid"]) <= Fraction(d["upper"])
    True
    """
    digits = _checked_digits(digits, "ball_to_json")
    fast = _ball_to_json_exact_ends(x, digits)
    return fast if fast is not None else _ball_to_json_fractions(x, digits)


def _ball_to_json_fractions(x: arb, digits: int) -> dict[str, Any]:
    """:func:`ball_to_json` through :func:`bounded_endpoints` (any ball; the reference for the fast path)."""
    lo, hi = bounded_endpoints(x)  # both endpoints from one exact (mid, rad) read
    return _json_of_ends(lo, hi, float(x.mid()) if x.is_finite() else math.nan, digits)


def _json_of_ends(lo: Fraction | None, hi: Fraction | None, mid: float, digits: int) -> dict[str, Any]:
    """The JSON form of the interval [lo, hi] (None: unbounded) whose nearest float to the midpoint is ``mid``."""
    plo, phi = lo, hi
    if math.isfinite(mid):
        # Nearest float to the midpoint: if it is outside [lo, hi], no float is inside
        # (any inside would be nearer); widen the printed ends to it.
        fm = Fraction(mid)
        if plo is not None and fm < plo:
            plo = fm
        if phi is not None and fm > phi:
            phi = fm
    return {
        "lower": _decimal_lower_of(plo, digits),
        "upper": _decimal_upper_of(phi, digits),
        "mid": mid if math.isfinite(mid) else None,
        "exact": {
            "lower": _dyadic_str(lo, "-inf"),
            "upper": _dyadic_str(hi, "inf"),
        },
    }


def _lowest_dyadic(num: int, e: int) -> tuple[int, int]:
    """``(n, f)`` with n·2^f = num·2^e and n odd (or ``(0, 0)``): the lowest terms Fraction would give."""
    if num == 0:
        return 0, 0
    t = (num & -num).bit_length() - 1
    return num >> t, e + t


def _dyadic_less(a: tuple[int, int], b: tuple[int, int]) -> bool:
    e = min(a[1], b[1])
    return (a[0] << (a[1] - e)) < (b[0] << (b[1] - e))


def _dyadic_json(q: tuple[int, int]) -> str:
    """:func:`_dyadic_str` of the dyadic n·2^f in lowest terms."""
    n, f = q
    if f < 0:
        return f"{_int_str(n)}*2^{f}"
    if n.bit_length() + f > _INT_STR_BITS:
        return f"{_int_str(n)}*2^{f}"  # a huge integer: kept as odd·2^f (ball_from_json reads both forms)
    return str(n << f)


def _dyadic_decimal(q: tuple[int, int], digits: int, rounding: str) -> str:
    """:func:`_decimal_round` of the dyadic n·2^f in lowest terms."""
    n, f = q
    if n == 0:
        return "0"
    return _decimal_round_quotient(n, -f, digits, rounding) if f < 0 else _decimal_round_dyadic(n << f, 0, digits,
                                                                                              rounding)


def _decimal_round_quotient(num: int, k: int, digits: int, rounding: str) -> str:
    """:func:`_decimal_round_dyadic` of num/2^k (num odd, k ≥ 1), the same string, by one correctly rounded division.

    ``Context.divide`` rounds the exact quotient once in the context's
    direction, as ``plus`` of the exact Decimal does, and both results are the
    same Decimal: an exact quotient num·5^k·10^-k has exponent −k (the one
    closest to the ideal 0 for which the coefficient is an integer, num·5^k being
    odd), as the exact Decimal has; an inexact one has exactly ``digits``
    coefficient digits, which with the value fixes the exponent
    (proofs/enclosure.md §8, "JSON forms"; tests/test_ball_decimal_float.py
    compares the Decimals' tuples and the strings). So Outward.v's statement
    about :func:`_decimal_round_dyadic` holds for this function too.

    >>> _decimal_round_quotient(1, 2, 17, decimal.ROUND_FLOOR), _decimal_round_quotient(1, 3, 2, decimal.ROUND_CEILING)
    ('0.25', '0.13')
    """
    return _decimal_string(_rounding_context(digits, rounding).divide(decimal.Decimal(num),
                                                                                  decimal.Decimal(1 << k)))


def _ball_to_json_exact_ends(x: arb, digits: int) -> dict[str, Any] | None:
    """:func:`ball_to_json` in integer arithmetic for a finite ball with exact ends; None otherwise.

    When the binary exponents of mid and radius lie within ±ENDPOINT_BITS,
    :func:`bounded_endpoints` returns the exact ends mid ∓ rad; here they are
    formed as integers ``n·2^f`` in lowest terms (what ``Fraction`` would
    hold) instead of Fractions, and printed by the same routines — the same
    strings, at a fraction of the cost (tested against the Fraction path).
    """
    if not x.is_finite():
        return None
    xm = x.mid()
    mm, me = xm.man_exp()
    rm, re_ = x.rad().man_exp()
    mm, me, rm, re_ = int(mm), int(me), int(rm), int(re_)
    if abs(me) > ENDPOINT_BITS or abs(re_) > ENDPOINT_BITS:
        return None
    e = min(me, re_)
    a, b = mm << (me - e), rm << (re_ - e)
    lo, hi = _lowest_dyadic(a - b, e), _lowest_dyadic(a + b, e)
    mid = float(xm)
    plo, phi = lo, hi
    # The nearest float to the midpoint is within half its spacing, ≤ 2^(E−54) for a normal mid in
    # [2^(E−1), 2^E) (E from fl(mid), which can only be one binade higher): a radius ≥ 2^(re+bits−1) ≥ that
    # keeps it inside [lo, hi], and the comparisons are not needed (proofs/enclosure.md §8, "JSON forms").
    if math.isfinite(mid) and not (rm and abs(mid) >= _NORMAL_MID
                                   and re_ + rm.bit_length() - 1 >= math.frexp(mid)[1] - 54):
        n, d = mid.as_integer_ratio()
        fm = _lowest_dyadic(n, -(d.bit_length() - 1))
        if _dyadic_less(fm, plo):
            plo = fm
        if _dyadic_less(phi, fm):
            phi = fm
    return {
        "lower": _dyadic_decimal(plo, digits, decimal.ROUND_FLOOR),
        "upper": _dyadic_decimal(phi, digits, decimal.ROUND_CEILING),
        "mid": mid if math.isfinite(mid) else None,
        "exact": {"lower": _dyadic_json(lo), "upper": _dyadic_json(hi)},
    }


#: Midpoints at least this large are normal floats whose half spacing is at most 2^(E−54) (E = frexp exponent).
_NORMAL_MID = 2.0**-1021


def float_interval_to_json(lo: float, hi: float, digits: int = 17) -> dict[str, Any]:
    """:func:`ball_to_json` of the interval ``[lo, hi]`` with float ends, straight from the floats.

    The dict :func:`ball_to_json` gives for a ball whose exact ends are
    ``lo`` and ``hi``: ``exact`` holds the two floats as dyadics (from
    ``float.as_integer_ratio``, already in lowest terms), ``lower``/``upper``
    their outward decimal roundings (:func:`_float_end_decimal`: the strings of
    :func:`_decimal_round_float`), ``mid`` the float nearest to (lo + hi)/2 —
    which lies in [lo, hi], so the printed ends are never widened
    (proofs/enclosure.md §8, "JSON forms"). Used for the
    quantities evaluated from float ends (Lemmas 8.2, 8.3): no Arb ball is formed.

    Parameters
    ----------
    lo, hi : float
        Finite floats, ``lo ≤ hi``.
    digits : int
        Significant digits of the decimal strings (an integer ≥ 1).

    Returns
    -------
    dict
        ``{"lower", "upper", "mid", "exact": {"lower", "upper"}}``.

    Raises
    ------
    ValueError
        If an end is not finite or ``lo > hi``, or ``digits`` is not an integer ≥ 1.

    >>> float_interval_to_json(0.25, 0.75)
    {'lower': '0.25', 'upper': '0.75', 'mid': 0.5, 'exact': {'lower': '1*2^-2', 'upper': '3*2^-2'}}
    >>> float_interval_to_json(0.1, 0.1) == ball_to_json(arb(0.1))
    True
    """
    digits = _checked_digits(digits, "float_interval_to_json")
    lo, hi = float(lo) + 0.0, float(hi) + 0.0  # + 0.0: −0.0 is 0
    if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
        raise ValueError(f"float_interval_to_json: [{lo!r}, {hi!r}] is not an interval with finite ends")
    nl, dl = lo.as_integer_ratio()
    nh, dh = hi.as_integer_ratio()
    kl, kh = dl.bit_length() - 1, dh.bit_length() - 1
    m = lo + hi
    # fl(lo + hi)/2 is the float nearest to (lo + hi)/2 whenever fl(lo + hi) is finite: one rounding either way
    # (proofs/enclosure.md §8, "JSON forms"). After an overflow: the exact midpoint, rounded once.
    mid = m * 0.5 if math.isfinite(m) else float((Fraction(nl, dl) + Fraction(nh, dh)) / 2)
    return {
        "lower": _float_end_decimal(lo, nl, dl, digits, decimal.ROUND_FLOOR),
        "upper": _float_end_decimal(hi, nh, dh, digits, decimal.ROUND_CEILING),
        "mid": mid,
        "exact": {"lower": f"{nl}*2^-{kl}" if kl else str(nl), "upper": f"{nh}*2^-{kh}" if kh else str(nh)},
    }


def _float_end_decimal(x: float, num: int, den: int, digits: int, rounding: str) -> str:
    """The decimal string of the float end ``x = num/den`` (``x.as_integer_ratio()``) rounded in this direction.

    ``_decimal_round_float(x)`` (for x ≠ 0), the same string: for ``den = 2^k > 1``
    (num odd) it is formed from the ratio already at hand by one
    ``Context.divide`` (:func:`_decimal_round_quotient`'s operation; both are
    proved equal to :func:`_decimal_round_dyadic` of num/2^k, proofs/enclosure.md §8,
    "JSON forms"), which is cheaper than the exact conversion ``Decimal(x)``.
    """
    if not num:
        return "0"
    if den == 1:
        return _decimal_round_float(x, digits, rounding)
    return _decimal_string(_rounding_context(digits, rounding).divide(decimal.Decimal(num),
                                                                                  decimal.Decimal(den)))


def _parse_dyadic(s: Any) -> arb:
    if s in ("inf", "-inf"):
        return arb.pos_inf() if s == "inf" else arb.neg_inf()
    try:
        if not isinstance(s, str):
            raise ValueError
        if "*2^" in s:
            m, e = s.split("*2^")
            return arb(int(m)) * arb(2) ** int(e)  # exact: powers of two scale exactly
        return arb(int(s))
    except ValueError:
        raise ValueError(f"not an exact dyadic end {s!r} (the JSON form's \"exact\" ends are 'm', 'm*2^e', "
                         "'inf' or '-inf', m and e integers)") from None


def ball_from_json(d: dict[str, Any]) -> arb:
    """Rebuild a ball containing the interval of a :func:`ball_to_json` dict.

    Parameters
    ----------
    d : dict
        The JSON form (its ``"exact"`` dyadic strings are read).

    Returns
    -------
    arb
        A ball containing ``[exact lower, exact upper]``.

    Raises
    ------
    KeyError
        If ``d`` has no ``"exact"`` lower/upper strings.
    ValueError
        If an ``"exact"`` end is not such a string (``'m'``, ``'m*2^e'``, ``'inf'``, ``'-inf'``).

    Examples
    --------
    >>> x = arb(1) / 7
    >>> y = ball_from_json(ball_to_json(x))
    >>> y.contains(x)
    True
    """
    with working_precision(max(ctx.prec, 4096)):
        lo = _parse_dyadic(d["exact"]["lower"])
        hi = _parse_dyadic(d["exact"]["upper"])
        return lo.union(hi)


def nonnegative_interval(lo: arb, hi: arb) -> arb:
    """A ball containing [max(lo, 0), hi] whose lower end is *exactly* max(lo's lower end, 0).

    ``lo.union(hi)`` would round the radius up and so put the lower end below
    a lower end of 0 (e.g. ``[0, 1]`` becomes ``[−2⁻³⁰, 1 + 2⁻³⁰]``): a
    nonnegative quantity would get a negative lower end. Here the radius R is
    fixed first (any ball radius is a 30-bit value ≥ (h − l)/2) and the
    midpoint l + R is added exactly, so the ball is [l, l + 2R] ⊇ [l, h].
    Unbounded ``hi`` gives Arb's ``[0 ± ∞]``-style ball (lower end −∞ is
    unavoidable there).

    Parameters
    ----------
    lo : arb
        A ball whose lower end bounds the quantity below.
    hi : arb
        A ball whose upper end bounds it above.

    Returns
    -------
    arb
        A ball ⊇ [max(lo's lower end, 0), hi's upper end] with that exact lower end.

    Examples
    --------
    >>> x = nonnegative_interval(arb(-1), arb(1))
    >>> lower_fraction(x), upper_fraction(x) >= 1
    (Fraction(0, 1), True)
    """
    # The ends as integers n·2^e (no Fraction normalisation): the same exact values, the same Arb calls below.
    lp = _end_pair(lo, -1)
    ln, le = lp if lp is not None and lp[0] > 0 else (0, 0)
    hp = _end_pair(hi, 1)
    if hp is None:
        return _fraction_ball(_pair_fraction(ln, le)).union(arb.pos_inf())
    hn, he = hp
    e = min(le, he)
    ln, hn = ln << (le - e), hn << (he - e)  # both on the grid 2^e
    if hn <= ln:
        return _exact_pair_ball(ln, e)
    with working_precision(DEFAULT_PREC):
        z = arb(0, _exact_pair_ball(hn - ln, e - 1).upper())  # radius rounded up: R ≥ (h − l)/2
    rn, re_ = (int(t) for t in z.rad().man_exp())
    f = min(e, re_)
    mid = (ln << (e - f)) + (rn << (re_ - f))  # l + R on the grid 2^f
    bits = max(mid.bit_length(), DEFAULT_PREC) + 64
    with working_precision(bits):
        return _exact_pair_ball(mid, f) + z  # exact midpoint sum, radius R: [l, l + 2R]


def _end_pair(x: arb, side: int) -> tuple[int, int] | None:
    """The exact lower (``side`` −1) or upper (+1) end ``mid ∓ rad`` of a finite ball as ``(n, e)``, n·2^e; None if
    not finite (the pair :func:`lower_fraction` / :func:`upper_fraction` give as a Fraction)."""
    if not x.is_finite():
        return None
    mm, me = (int(t) for t in x.mid().man_exp())
    rm, re_ = (int(t) for t in x.rad().man_exp())
    if not rm:
        return mm, me
    e = min(me, re_)
    return (mm << (me - e)) + side * (rm << (re_ - e)), e


def _pair_fraction(n: int, e: int) -> Fraction:
    return Fraction(n << e) if e >= 0 else Fraction(n, 1 << -e)


def _exact_pair_ball(n: int, e: int) -> arb:
    """n·2^e as an exact ball (:func:`_exact_ball`'s value, precision raised to hold it)."""
    with working_precision(max(ctx.prec, max(abs(n).bit_length(), DEFAULT_PREC) + 8)):
        return arb(n) * arb(2) ** e


def _exact_ball(q: Fraction) -> arb:
    """The dyadic rational q as an exact ball (precision raised to hold it)."""
    bits = max(abs(q.numerator).bit_length(), DEFAULT_PREC) + 8
    with working_precision(max(ctx.prec, bits)):
        return _fraction_ball(q)


def trivial_nonnegative() -> arb:
    """The trivial valid enclosure [0, +∞] of a nonnegative quantity.

    Returns
    -------
    arb
        ``[0, +∞]``, what a failed certificate reports for a norm.

    Examples
    --------
    >>> x = trivial_nonnegative()
    >>> x.contains(0), x.is_finite()
    (True, False)
    """
    return arb(0).union(arb.pos_inf())


def arb_max(values: list[arb]) -> arb:
    """A ball containing the maximum of the values (``arb(0)`` if empty).

    Built from exact endpoints: max lies in [max of lower ends, max of upper
    ends] (``arb.max`` itself can be much wider).

    Parameters
    ----------
    values : iterable of arb
        The balls.

    Returns
    -------
    arb
        A ball containing the maximum of any choice of one point from each ball.

    Examples
    --------
    >>> arb_max([arb(2).union(arb(3)), arb(1)]).upper() <= 3.0001
    True
    """
    vals = list(values)
    if not vals:
        return arb(0)
    if not all(v.is_finite() for v in vals):
        out = vals[0]  # unbounded inputs: Arb's own (sound, looser) max
        for v in vals[1:]:
            out = out.max(v)
        return out
    lo = max(lower_fraction(v) for v in vals)
    hi = max(upper_fraction(v) for v in vals)
    with working_precision(max(ctx.prec, DEFAULT_PREC)):
        return _fraction_ball(lo).union(_fraction_ball(hi))


def _fraction_ball(q: Fraction) -> arb:
    # q is dyadic (an endpoint): exact as m·2^-k.
    k = q.denominator.bit_length() - 1
    return arb(q.numerator) * arb(2) ** (-k)


def arb_sum(values: Any) -> arb:
    """Ball sum (each addition is rigorous in Arb).

    Parameters
    ----------
    values : iterable of arb
        The balls.

    Returns
    -------
    arb
        A ball containing the sum (``arb(0)`` if empty), at the current working precision.

    Examples
    --------
    >>> arb_sum([arb(1) / 3, arb(2) / 3]).contains(1)
    True
    """
    s = arb(0)
    for v in values:
        s = s + v
    return s
