"""Checking and evaluating expression trees in Arb, with a registry of whitelisted functions.

Values during evaluation are exact :class:`~fractions.Fraction` as long as
only rational operations on literals happen (so ``1e6``, ``p = 0.5`` and
layer indices stay exact), and Arb balls otherwise; a Fraction becomes a
ball containing it at the working precision when it meets a ball or a
transcendental function. Every operation is a ball operation, so the final
ball contains the exact value of the expression (``proofs/audit.md`` §3).

Functions are looked up in :data:`FUNCTIONS`; nothing else can be called.
Model quantities are registered with :func:`register_quantity` (the built-in
ones: ``sigma``, ``spectral_norm``, ``frobenius``, ``nuclear``,
``schatten``, ``rank``, ``stable_rank``, ``norm21``, ``norm11``,
``num_layers``/``num_heads``/``hidden_size``/``head_dim``/``d_ff``, the
proxies ``B_ours``/``B_edelman``, and the certified generalization bound
``bound``/``dudley``/``confidence_term``/``log_inv_prior`` of
:mod:`certbound.audit._bound_quantities`); plug-ins add more the same way.

>>> from certbound.audit._expr import parse_expression
>>> from certbound.ball import working_precision
>>> ctx = EvalContext()
>>> with working_precision(128):
...     v = evaluate(parse_expression("sqrt(2)^2 - 2"), ctx)
>>> v.contains(0), v.rad() < 1e-35
(True, True)
>>> evaluate(parse_expression("(1/3 + 2/3) * 1e6"), ctx)
Fraction(1000000, 1)
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Iterator

from flint import arb

from certbound import enclose
from certbound.audit import scalars
from certbound.audit._errors import DomainError, Indeterminate
from certbound.audit._exact import arb_from_fraction, parse_exact_number
from certbound.audit._expr import Binary, Call, ExpressionError, Name, Node, Num, Str, Unary
from certbound.ball import bounded_endpoints
from certbound.bounds import proxies
from certbound.checkpoints import theory_matrices
from certbound.enclose import certified_rank, schatten_quantity


__all__ = [
    "Value",
    "FunctionSpec",
    "FUNCTIONS",
    "CONSTANTS",
    "EvalContext",
    "register_function",
    "register_quantity",
    "check_expression",
    "evaluate",
    "to_ball",
    "uses_models",
]

Value = Any  # Fraction | arb | str

#: Built-in named constants (balls at the working precision when used).
CONSTANTS: dict[str, Callable[[], arb]] = {"pi": arb.pi, "e": lambda: arb(1).exp()}

_STRING_KEYWORDS = {"type", "model", "tensor", "kind", "variant"}
_MAX_EXACT_EXPONENT = 4096
_MAX_EXACT_BITS = 1 << 16


@dataclass
class FunctionSpec:
    """A whitelisted function.

    ``kind`` is ``"scalar"`` (numbers in, number out), ``"quantity"`` (needs a
    model; ``impl(ctx, model, kwargs)``), ``"model"`` (model metadata, same
    signature) or ``"aggregate"`` (``sum``/``prod``/``min``/``max``, also with
    ``for`` clauses).
    """

    name: str
    kind: str
    impl: Callable[..., Value]
    min_args: int = 0
    max_args: int | None = 0
    keywords: frozenset[str] = frozenset()
    required: frozenset[str] = frozenset()
    doc: str = ""
    #: keywords of this function that take a string (beyond type/model/tensor/kind/variant)
    string_keywords: frozenset[str] = frozenset()
    #: keywords that take a number *or* an exact decimal string such as "1e6" (read exactly, never as a float)
    decimal_keywords: frozenset[str] = frozenset()


FUNCTIONS: dict[str, FunctionSpec] = {}


def register_function(spec: FunctionSpec) -> FunctionSpec:
    """Add (or replace) a whitelisted function."""
    FUNCTIONS[spec.name] = spec
    return spec


def register_quantity(name: str, impl: Callable[..., Value], keywords: set[str], required: set[str] = frozenset(),
                      doc: str = "", kind: str = "quantity", *, string_keywords: set[str] = frozenset(),
                      decimal_keywords: set[str] = frozenset()) -> FunctionSpec:
    """Register a model quantity ``name(key=value, ...)``; ``model`` is always accepted.

    ``impl(ctx, model, kwargs)`` must return a ball containing the quantity
    (or an exact Fraction), where ``model`` is a
    :class:`certbound.audit._models.ModelHandle` and ``ctx.mode`` the
    certificate mode to use. ``string_keywords`` take a string;
    ``decimal_keywords`` a number or a decimal string (checked to parse
    exactly when the claims file is read; the impl receives the Fraction or
    the string as written).
    """
    return register_function(FunctionSpec(name, kind, impl, 0, 0, frozenset(keywords) | {"model"},
                                          frozenset(required), doc, frozenset(string_keywords),
                                          frozenset(decimal_keywords)))


@dataclass
class EvalContext:
    """What an evaluation may use: constants, models, the certificate mode."""

    constants: dict[str, Value] = field(default_factory=dict)
    models: dict[str, Any] = field(default_factory=dict)
    default_model: Any = None
    mode: str = "fast"
    level: int = 0


# ---------------------------------------------------------------- conversions


def to_ball(v: Value) -> arb:
    """A ball containing the value (a Fraction is enclosed at the working precision)."""
    if isinstance(v, arb):
        return v
    if isinstance(v, Fraction):
        return arb_from_fraction(v)
    if isinstance(v, int):
        return arb(v)
    raise DomainError(f"expected a number, got the string {v!r}")


def _exact_integer(v: Value, what: str) -> int:
    """An exact integer argument (layer, head, i, n, k, ...)."""
    if isinstance(v, Fraction) and v.denominator == 1:
        return int(v)
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, arb):
        lo, hi = bounded_endpoints(v)
        if lo is not None and lo == hi and lo.denominator == 1:
            return int(lo)
        if lo is not None and hi is not None and math.floor(lo) == math.floor(hi) and lo.denominator != 1:
            # [lo, hi] lies strictly between two consecutive integers.
            raise DomainError(f"{what} must be an integer, got {v}")
        raise Indeterminate(f"{what} = {v} is not yet an exact integer")
    raise DomainError(f"{what} must be an integer, got {v!r}")


def _string(v: Value, what: str) -> str:
    if not isinstance(v, str):
        raise DomainError(f"{what} must be a string such as \"QK\"")
    return v


# ------------------------------------------------------------- scalar helpers


def _sqrt(x: Value) -> Value:
    if isinstance(x, Fraction):
        if x < 0:
            raise DomainError(f"sqrt of a negative number {x}")
        n, d = math.isqrt(x.numerator), math.isqrt(x.denominator)
        if n * n == x.numerator and d * d == x.denominator:
            return Fraction(n, d)
    b = to_ball(x)
    if b < 0:
        raise DomainError(f"sqrt of a negative number {b}")
    if not b >= 0:
        # A ball touching 0 from a nonnegative quantity: sqrt is monotone, so
        # [0, sqrt(upper)] encloses sqrt of every nonnegative point in it.
        hi = b.upper()
        if not hi >= 0:
            raise Indeterminate(f"sqrt of {b}")
        return arb(0).union(hi.sqrt())
    return b.sqrt()


def _log(x: Value) -> arb:
    if isinstance(x, Fraction) and x == 1:
        return arb(0)
    b = to_ball(x)
    if b <= 0:
        raise DomainError(f"log of a non-positive number {b}")
    if not b > 0:
        raise Indeterminate(f"log of {b}, which is not certainly positive")
    return b.log()


def _pow(x: Value, y: Value) -> Value:
    if isinstance(y, Fraction) and y.denominator == 1:
        k = int(y)
        if isinstance(x, Fraction):
            if x == 0 and k < 0:
                raise DomainError("0 to a negative power")
            if abs(k) <= _MAX_EXACT_EXPONENT and abs(k) * max(x.numerator.bit_length(), x.denominator.bit_length()) <= _MAX_EXACT_BITS:
                return x**k
        b = to_ball(x)
        if k < 0 and not (b > 0 or b < 0):
            if b == 0:
                raise DomainError("0 to a negative power")
            raise Indeterminate(f"{b} to a negative power")
        return b**k
    b, e = to_ball(x), to_ball(y)
    if b < 0:
        raise DomainError(f"{b} to the non-integer power {e}")
    if b > 0:
        return (e * b.log()).exp()
    if b == 0 and b.is_exact():
        if e > 0:
            return arb(0)
        raise DomainError("0 to a non-positive power")
    if b >= 0 and e > 0:
        # x^e is increasing in x ≥ 0 for e > 0: [0, upper^e] contains it.
        hi = b.upper()
        return arb(0).union((e * hi.log()).exp()) if hi > 0 else arb(0)
    raise Indeterminate(f"{b}^{e}: base not certainly positive")


def _floor_ceil(x: Value, up: bool) -> Fraction:
    if isinstance(x, Fraction):
        return Fraction(math.ceil(x) if up else math.floor(x))
    lo, hi = bounded_endpoints(x)
    if lo is None or hi is None:
        raise Indeterminate(f"{'ceil' if up else 'floor'} of an unbounded ball")
    f = math.ceil if up else math.floor
    if f(lo) != f(hi):
        raise Indeterminate(f"{'ceil' if up else 'floor'}({x}): the ball straddles an integer")
    return Fraction(f(lo))


def _abs(x: Value) -> Value:
    return abs(x) if isinstance(x, Fraction) else to_ball(x).__abs__()


def _min_max(values: list[Value], is_max: bool) -> Value:
    if not values:
        raise DomainError(f"{'max' if is_max else 'min'} of no values")
    if all(isinstance(v, Fraction) for v in values):
        return max(values) if is_max else min(values)
    out = to_ball(values[0])
    for v in values[1:]:
        out = out.max(to_ball(v)) if is_max else out.min(to_ball(v))
    return out


def _add(a: Value, b: Value) -> Value:
    return a + b if isinstance(a, Fraction) and isinstance(b, Fraction) else to_ball(a) + to_ball(b)


def _mul(a: Value, b: Value) -> Value:
    return a * b if isinstance(a, Fraction) and isinstance(b, Fraction) else to_ball(a) * to_ball(b)


def _div(a: Value, b: Value) -> Value:
    if isinstance(b, Fraction) and b == 0:
        raise DomainError("division by zero")
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a / b
    bb = to_ball(b)
    if not (bb > 0 or bb < 0):
        if bb == 0:
            raise DomainError("division by zero")
        raise Indeterminate(f"division by {bb}, which contains 0")
    return to_ball(a) / bb


def _scalar(name: str, impl: Callable[..., Value], lo: int, hi: int | None, doc: str, keywords: set[str] = frozenset()) -> None:
    register_function(FunctionSpec(name, "scalar", impl, lo, hi, frozenset(keywords), frozenset(), doc))


_scalar("sqrt", lambda x: _sqrt(x), 1, 1, "square root")
_scalar("log", lambda x: _log(x), 1, 1, "natural logarithm")
_scalar("ln", lambda x: _log(x), 1, 1, "natural logarithm")
_scalar("log2", lambda x: _log(x) / arb(2).log(), 1, 1, "base-2 logarithm")
_scalar("log10", lambda x: _log(x) / arb(10).log(), 1, 1, "base-10 logarithm")
_scalar("exp", lambda x: Fraction(1) if x == Fraction(0) else to_ball(x).exp(), 1, 1, "exponential")
_scalar("abs", _abs, 1, 1, "absolute value")
_scalar("floor", lambda x: _floor_ceil(x, False), 1, 1, "floor (exact integer, or undecided if the ball straddles one)")
_scalar("ceil", lambda x: _floor_ceil(x, True), 1, 1, "ceiling (exact integer, or undecided if the ball straddles one)")
_scalar("comb", lambda n, k: Fraction(math.comb(_exact_integer(n, "n"), _exact_integer(k, "k"))), 2, 2, "binomial coefficient C(n, k), exact")
_scalar("kl", lambda q, p: scalars.kl_bernoulli(to_ball(q), to_ball(p)), 2, 2, "Bernoulli KL divergence kl(q‖p)")
_scalar("kl_inv_upper", lambda q, c: scalars.kl_inverse_upper(to_ball(q), to_ball(c)), 2, 2,
        "sup{p : kl(q‖p) ≤ c} (PAC-Bayes-kl upper inverse)")
_scalar("kl_inv_lower", lambda q, c: scalars.kl_inverse_lower(to_ball(q), to_ball(c)), 2, 2,
        "inf{p : kl(q‖p) ≤ c} (PAC-Bayes-kl lower inverse)")
_scalar("logsumexp", lambda *xs: scalars.log_sum_exp([to_ball(x) for x in xs]), 1, None, "ln Σ exp(x_i)")
_scalar("binom_cdf", lambda k, n, p: scalars.binomial_cdf(_exact_integer(k, "k"), _exact_integer(n, "n"), to_ball(p)), 3, 3,
        "P[Bin(n, p) ≤ k]")
_scalar("binom_tail_inv_upper",
        lambda k, n, d: scalars.binomial_tail_inverse_upper(_exact_integer(k, "k"), _exact_integer(n, "n"), to_ball(d)), 3, 3,
        "sup{p : P[Bin(n, p) ≤ k] ≥ δ} (test-set bound)")
_scalar("binom_tail_inv_lower",
        lambda k, n, d: scalars.binomial_tail_inverse_lower(_exact_integer(k, "k"), _exact_integer(n, "n"), to_ball(d)), 3, 3,
        "inf{p : P[Bin(n, p) ≥ k] ≥ δ}")
_scalar("union_delta", lambda d, k: scalars.union_bound_delta(to_ball(d), to_ball(k)), 2, 2, "δ / K")
_scalar("peeling_weight", lambda j, d, kind="harmonic": scalars.peeling_weight(_exact_integer(j, "j"), to_ball(d), _string(kind, "kind")),
        2, 2, "δ_j of a peeling argument (kind = harmonic | zeta | geometric)", {"kind"})

for _agg in ("sum", "prod", "min", "max"):
    register_function(FunctionSpec(_agg, "aggregate", lambda *a: None, 1, None, frozenset(), frozenset(),
                                   f"{_agg} of its arguments, or of EXPR for VAR in layers|heads|range(a, b)"))


# ------------------------------------------------------------ model quantities

_MATRIX_KEYWORDS = {"layer", "head", "type", "tensor", "scale_logits", "expert"}


def _matrix_key(kw: dict[str, Value]) -> tuple:
    if "tensor" in kw:
        extra = set(kw) & {"layer", "head", "type", "scale_logits", "expert"}
        if extra:
            raise DomainError(f"give either tensor=... or layer/head/type, not both ({', '.join(sorted(extra))})")
        return ("tensor", _string(kw["tensor"], "tensor"))
    if "layer" not in kw or "type" not in kw:
        raise DomainError("a matrix is addressed by layer=..., type=\"QK\"|\"VO\"|\"M_in\"|\"M_out\"|\"W_Q\"|... "
                          "(and head=... for QK/VO), or by tensor=\"stored name\"")
    head = kw.get("head")
    scale = _exact_integer(kw.get("scale_logits", Fraction(0)), "scale_logits")
    if scale not in (0, 1):
        raise DomainError("scale_logits must be 0 or 1")
    key = (_exact_integer(kw["layer"], "layer"), None if head is None else _exact_integer(head, "head"),
           _string(kw["type"], "type"), bool(scale))
    # expert=... addresses one expert's FFN matrix (mixtures of experts); appended only when given
    return key + (_exact_integer(kw["expert"], "expert"),) if "expert" in kw else key


def _scaled(model: Any, key: tuple, value: arb, power: Any = 1) -> arb:
    s = model.scale(key)
    if s == 1 and s.is_exact():
        return value
    return value * (s if power == 1 else s**power)


def _enc(ctx: EvalContext, model: Any, kw: dict[str, Value]) -> tuple[tuple, Any]:
    key = _matrix_key(kw)
    return key, model.enclosure(key, ctx.mode)


def _q_sigma(ctx: EvalContext, model: Any, kw: dict[str, Value]) -> arb:
    key, enc = _enc(ctx, model, kw)
    i = _exact_integer(kw["i"], "i")
    if not 1 <= i <= len(enc.sigma):
        raise DomainError(f"i = {i} out of range: the matrix has {len(enc.sigma)} singular values (i is 1-based)")
    return _scaled(model, key, enc.sigma[i - 1])


def _q_kernel(fn_name: str) -> Callable[..., arb]:
    def impl(ctx: EvalContext, model: Any, kw: dict[str, Value]) -> arb:
        key, enc = _enc(ctx, model, kw)
        value = getattr(enclose, fn_name)(enc)
        return value if fn_name == "stable_rank" else _scaled(model, key, value)

    return impl


def _q_schatten(ctx: EvalContext, model: Any, kw: dict[str, Value]) -> arb:
    key, enc = _enc(ctx, model, kw)
    p = kw["p"]
    if not isinstance(p, Fraction):
        raise DomainError("schatten: p must be an exact number such as 0.5 or 1/3")
    if not 0 <= p <= 2:
        raise DomainError(f"schatten: p = {p} must lie in [0, 2]")
    value = schatten_quantity(enc, p)
    return value if p == 0 else _scaled(model, key, value, arb_from_fraction(p))


def _q_rank(ctx: EvalContext, model: Any, kw: dict[str, Value]) -> Value:
    key, enc = _enc(ctx, model, kw)
    lo, hi = enc.rank.lower, enc.rank.upper
    if lo != hi and ctx.level >= 1:
        # Escalation: the exact rank over Q of the stored dense matrix.
        dense = model.tensor(key[1]) if key[0] == "tensor" else model.matrix(*key).dense
        if dense is not None:
            r = certified_rank(dense, exact=True)
            lo, hi = max(lo, r.lower), min(hi, r.upper)
    return Fraction(lo) if lo == hi else arb(lo).union(arb(hi))


def _q_norm(which: str) -> Callable[..., arb]:
    def impl(ctx: EvalContext, model: Any, kw: dict[str, Value]) -> arb:
        key = _matrix_key(kw)
        if key[0] == "tensor":
            return getattr(enclose, f"norm_{which}")(model.tensor(key[1]))
        m = model.matrix(*key)
        if m.factors is not None:
            value = getattr(enclose, f"norm_{which}_of_product")(*m.factors)
        else:
            value = getattr(enclose, f"norm_{which}")(m.dense)
        return _scaled(model, key, value)

    return impl


def _q_proxy(field_name: str) -> Callable[..., arb]:
    def impl(ctx: EvalContext, model: Any, kw: dict[str, Value]) -> arb:
        variant = _string(kw.get("variant", "paper"), "variant")

        def compute() -> Any:
            qs = [proxies.quantities_of_theory_matrix(m, mode=ctx.mode)
                  for m in theory_matrices(model._ck, layout=model.layout)]
            for s in {s for m in theory_matrices(model._ck, layout=model.layout, types=("M_in",)) for s in m.sources}:
                model.dtypes.add(model._ck.dtype(s))
            return proxies.paper_proxies(qs, variant=variant)

        model.open()
        result = model.cached(("proxies", variant, ctx.mode), compute)
        return getattr(result, field_name)

    return impl


_SEL = ("matrix: layer=, type= (QK, VO, M_in, M_out, W_Q, W_K, W_V, W_O; QK_cross, VO_cross; gated FFNs: "
        "M_gate, M_up, M_down, with expert= for mixtures of experts; certbound-pi: M, readout), "
        "head= for QK/VO, or tensor=\"name\"")
register_quantity("sigma", _q_sigma, _MATRIX_KEYWORDS | {"i"}, {"i"}, f"i-th largest singular value (i ≥ 1); {_SEL}")
register_quantity("spectral_norm", _q_kernel("spectral_norm"), _MATRIX_KEYWORDS, doc=f"σ₁; {_SEL}")
register_quantity("frobenius", _q_kernel("frobenius_norm"), _MATRIX_KEYWORDS, doc=f"Frobenius norm; {_SEL}")
register_quantity("nuclear", _q_kernel("nuclear_norm"), _MATRIX_KEYWORDS, doc=f"nuclear norm Σσᵢ; {_SEL}")
register_quantity("stable_rank", _q_kernel("stable_rank"), _MATRIX_KEYWORDS, doc=f"‖W‖_F² / ‖W‖₂²; {_SEL}")
register_quantity("schatten", _q_schatten, _MATRIX_KEYWORDS | {"p"}, {"p"},
                  f"S_p = Σ σᵢ^p for p in [0, 2] (p = 0: the rank); {_SEL}")
register_quantity("rank", _q_rank, _MATRIX_KEYWORDS, doc=f"rank (certified interval; exact when decided); {_SEL}")
register_quantity("norm21", _q_norm("21"), _MATRIX_KEYWORDS, doc=f"Σ_j ‖W_:,j‖₂ (row-vector orientation); {_SEL}")
register_quantity("norm11", _q_norm("11"), _MATRIX_KEYWORDS, doc=f"Σ |w_ij|; {_SEL}")
register_quantity("B_ours", _q_proxy("B_ours"), {"variant"},
                  doc="the paper's proxy B_ours (variant = \"paper\" | \"corrected\"), certbound.bounds.proxies")
register_quantity("B_edelman", _q_proxy("B_edelman"), {"variant"},
                  doc="the Edelman-style proxy B_Edelman (variant = \"paper\" | \"corrected\")")
for _name, _get in {
    "num_layers": lambda m: m.num_layers,
    "num_heads": lambda m: m.num_heads,
    "hidden_size": lambda m: m.dimension("hidden_size"),
    "head_dim": lambda m: m.dimension("head_dim"),
    "d_ff": lambda m: m.dimension("intermediate_size"),
}.items():
    register_quantity(_name, (lambda g: lambda ctx, model, kw: Fraction(g(model)))(_get), set(),
                      doc=f"the model's {_name} (exact integer)", kind="model")


# ------------------------------------------------------------------- checking


def _suggest(name: str, pool: Any) -> str:
    close = difflib.get_close_matches(name, list(pool), n=3)
    return f"; did you mean {', '.join(map(repr, close))}?" if close else ""


def uses_models(node: Node) -> bool:
    """Whether the expression refers to any model quantity (or ``layers``/``heads``)."""
    if isinstance(node, Call):
        spec = FUNCTIONS.get(node.func)
        if spec is not None and spec.kind in ("quantity", "model"):
            return True
        return any(uses_models(a) for a in node.args) or any(uses_models(k.value) for k in node.keywords) or any(
            uses_models(g.iterable) for g in node.generators)
    if isinstance(node, Name):
        return node.id in ("layers", "heads")
    if isinstance(node, Unary):
        return uses_models(node.operand)
    if isinstance(node, Binary):
        return uses_models(node.left) or uses_models(node.right)
    return False


def check_expression(node: Node, text: str, *, constants: set[str] = frozenset(), models: set[str] = frozenset(),
                     has_default_model: bool = False, loop_vars: frozenset[str] = frozenset()) -> None:
    """Reject unknown names and functions, wrong arguments and misplaced strings, with positions.

    Raises
    ------
    ExpressionError
        Naming the problem and where it is.
    """

    def err(msg: str, n: Node) -> ExpressionError:
        return ExpressionError(msg, text, n.start, n.end)

    def numeric(n: Node, scope: frozenset[str]) -> None:
        if isinstance(n, Str):
            raise err("a string is only allowed as a keyword argument such as type=\"QK\"", n)
        walk(n, scope)

    def walk(n: Node, scope: frozenset[str]) -> None:
        if isinstance(n, (Num, Str)):
            return
        if isinstance(n, Name):
            if n.id in scope or n.id in constants or n.id in CONSTANTS:
                return
            if n.id in ("layers", "heads"):
                raise err(f"{n.id!r} is only allowed after 'in' of a for clause, e.g. sum(... for l in {n.id})", n)
            if n.id in FUNCTIONS:
                raise err(f"{n.id!r} is a function: write {n.id}(...)", n)
            raise err(f"unknown name {n.id!r}" + _suggest(n.id, set(scope) | constants | set(CONSTANTS)), n)
        if isinstance(n, Unary):
            numeric(n.operand, scope)
            return
        if isinstance(n, Binary):
            numeric(n.left, scope)
            numeric(n.right, scope)
            return
        assert isinstance(n, Call)
        spec = FUNCTIONS.get(n.func)
        if spec is None:
            raise err(f"unknown function or quantity {n.func!r}" + _suggest(n.func, FUNCTIONS), n)
        inner = scope
        if n.generators:
            if spec.kind != "aggregate":
                raise err(f"a for clause is only allowed in sum/prod/min/max, not in {n.func}()", n)
            for g in n.generators:
                it = g.iterable
                if isinstance(it, Name) and it.id in ("layers", "heads"):
                    if not has_default_model:
                        raise err(f"'{it.id}' needs the claim's model (give model = ... in the claim)", it)
                elif isinstance(it, Call) and it.func == "range":
                    if it.keywords or not 1 <= len(it.args) <= 2:
                        raise err("range takes 1 or 2 positional arguments: range(stop) or range(start, stop)", it)
                    for a in it.args:
                        numeric(a, inner)
                else:
                    raise err("iterate over layers, heads or range(a, b)", it)
                if g.var in FUNCTIONS or g.var in CONSTANTS:
                    raise err(f"{g.var!r} cannot be a loop variable (it names a function or constant)", g)
                inner = inner | {g.var}
        nargs = len(n.args)
        if nargs < spec.min_args or (spec.max_args is not None and nargs > spec.max_args):
            want = (f"{spec.min_args}" if spec.max_args == spec.min_args else
                    f"{spec.min_args} to {spec.max_args}" if spec.max_args is not None else f"at least {spec.min_args}")
            extra = " (quantities take keyword arguments only, e.g. layer=0)" if spec.kind in ("quantity", "model") and nargs else ""
            raise err(f"{n.func}() takes {want} positional argument(s), got {nargs}{extra}", n)
        given = {k.name for k in n.keywords}
        for k in n.keywords:
            if k.name not in spec.keywords:
                raise err(f"{n.func}() has no argument {k.name!r}" + _suggest(k.name, spec.keywords)
                          + (f" (arguments: {', '.join(sorted(spec.keywords))})" if spec.keywords else ""), k)
            if isinstance(k.value, Str) and k.name in spec.decimal_keywords:
                try:
                    parse_exact_number(k.value.value)
                except ValueError as exc:
                    raise err(f"argument {k.name!r}: {exc}", k.value) from None
            elif isinstance(k.value, Str):
                if k.name not in _STRING_KEYWORDS and k.name not in spec.string_keywords:
                    raise err(f"argument {k.name!r} takes a number, not a string", k.value)
                if k.name == "model" and k.value.value not in models:
                    raise err(f"unknown model {k.value.value!r}" + _suggest(k.value.value, models)
                              + " (declare it in the [models] table)", k.value)
            else:
                if k.name in ("type", "tensor", "model", "variant", "kind") or k.name in spec.string_keywords:
                    raise err(f"argument {k.name!r} takes a string, e.g. {k.name}=\"...\"", k.value)
                numeric(k.value, inner)
        missing = spec.required - given
        if missing:
            raise err(f"{n.func}() needs argument(s) {', '.join(sorted(missing))}", n)
        if spec.kind in ("quantity", "model") and "model" not in given and not has_default_model:
            raise err(f"{n.func}() needs a model: give model = \"...\" in the claim (or model=\"alias\" here)", n)
        if spec.kind == "quantity" and spec.keywords & {"layer", "tensor"} and not given & {"layer", "tensor"}:
            raise err(f"{n.func}() needs a matrix: layer=..., type=\"...\" (head=... for QK/VO) or tensor=\"name\"", n)
        for a in n.args:
            numeric(a, inner)

    walk(node, loop_vars)


# ----------------------------------------------------------------- evaluation


def _iterate(it: Node, ctx: EvalContext, scope: dict[str, Value]) -> Iterator[int]:
    if isinstance(it, Name):
        model = ctx.default_model
        return iter(range(model.num_layers if it.id == "layers" else model.num_heads))
    assert isinstance(it, Call) and it.func == "range"
    bounds = [_exact_integer(evaluate(a, ctx, scope), "range bound") for a in it.args]
    return iter(range(*bounds))


def _comprehension(n: Call, ctx: EvalContext, scope: dict[str, Value]) -> list[Value]:
    out: list[Value] = []

    def loop(i: int, sc: dict[str, Value]) -> None:
        if i == len(n.generators):
            out.append(evaluate(n.args[0], ctx, sc))
            return
        g = n.generators[i]
        for v in _iterate(g.iterable, ctx, sc):
            loop(i + 1, {**sc, g.var: Fraction(v)})

    loop(0, scope)
    return out


def evaluate(node: Node, ctx: EvalContext, scope: dict[str, Value] | None = None) -> Value:
    """Evaluate a checked tree at the ambient Arb precision.

    Returns an exact Fraction when every step was rational, else a ball that
    contains the exact value. Raises :class:`Indeterminate` (retry at a higher
    precision) or :class:`DomainError` (the expression is undefined).
    """
    scope = scope or {}
    if isinstance(node, Num):
        return node.value
    if isinstance(node, Str):
        return node.value
    if isinstance(node, Name):
        if node.id in scope:
            return scope[node.id]
        if node.id in ctx.constants:
            return ctx.constants[node.id]
        return CONSTANTS[node.id]()
    if isinstance(node, Unary):
        v = evaluate(node.operand, ctx, scope)
        return v if node.op == "+" else (-v if isinstance(v, (Fraction, arb)) else _mul(Fraction(-1), v))
    if isinstance(node, Binary):
        a, b = evaluate(node.left, ctx, scope), evaluate(node.right, ctx, scope)
        if node.op == "+":
            return _add(a, b)
        if node.op == "-":
            return _add(a, -b if isinstance(b, (Fraction, arb)) else _mul(Fraction(-1), b))
        if node.op == "*":
            return _mul(a, b)
        if node.op == "/":
            return _div(a, b)
        return _pow(a, b)
    assert isinstance(node, Call)
    spec = FUNCTIONS[node.func]
    if spec.kind == "aggregate":
        values = _comprehension(node, ctx, scope) if node.generators else [evaluate(a, ctx, scope) for a in node.args]
        if node.func == "sum":
            total: Value = Fraction(0)
            for v in values:
                total = _add(total, v)
            return total
        if node.func == "prod":
            total = Fraction(1)
            for v in values:
                total = _mul(total, v)
            return total
        return _min_max(values, node.func == "max")
    kw = {k.name: evaluate(k.value, ctx, scope) for k in node.keywords}
    if spec.kind in ("quantity", "model"):
        model = ctx.models[kw.pop("model")] if "model" in kw else ctx.default_model
        if model is None:  # pragma: no cover - rejected by check_expression
            raise DomainError(f"{node.func}() needs a model")
        return spec.impl(ctx, model, kw)
    args = [evaluate(a, ctx, scope) for a in node.args]
    return spec.impl(*args, **kw)


# The certified generalization bounds as quantities (bound, dudley, confidence_term, log_inv_prior):
# registered by importing the module (it needs register_quantity, defined above).
from certbound.audit import _bound_quantities  # noqa: E402,F401
