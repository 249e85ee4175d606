"""The expression language: precedence, exactness, and errors with positions."""

from fractions import Fraction

import pytest

from certbound.audit import EvalContext, ExpressionError, evaluate, parse_expression
from certbound.audit._evaluate import check_expression
from certbound.ball import working_precision


def ev(text, **constants):
    tree = parse_expression(text)
    check_expression(tree, text, constants=set(constants))
    with working_precision(128):
        return evaluate(tree, EvalContext(constants={k: Fraction(v) for k, v in constants.items()}))


@pytest.mark.parametrize(
    "text, value",
    [
        ("1 + 2 * 3", 7),
        ("-2^2", -4),
        ("2^3^2", 512),
        ("2^-1", Fraction(1, 2)),
        ("(1 + 2) * 3", 9),
        ("10 / 4 - 1/2", 2),
        ("2 \u00d7 3 \u2212 1", 5),
        ("1e6 * 1e-6", 1),
        ("sqrt(16/9)", Fraction(4, 3)),
        ("max(1, 2, 1/3)", 2),
        ("min(1, 2, 1/3)", Fraction(1, 3)),
        ("sum(i for i in range(5))", 10),
        ("prod(i + 1 for i in range(4))", 24),
        ("sum(i * j for i in range(3) for j in range(i))", 2),
        ("ceil(7/2) + floor(-7/2)", 0),
        ("comb(10, 3)", 120),
        ("abs(-3/4)", Fraction(3, 4)),
        ("n / 2", 500000),
    ],
)
def test_exact_evaluation(text, value):
    assert ev(text, n=10**6) == Fraction(value)


def test_transcendental_balls_contain_reference():
    import mpmath

    mpmath.mp.prec = 300
    v = ev("log(2) * exp(1/3) + pi^2 - sqrt(2) + log2(3) - log10(7)")
    ref = mpmath.log(2) * mpmath.exp(mpmath.mpf(1) / 3) + mpmath.pi**2 - mpmath.sqrt(2) + mpmath.log(3, 2) - mpmath.log10(7)
    from flint import arb

    assert v.contains(arb(mpmath.nstr(ref, 80))) or v.overlaps(arb(mpmath.nstr(ref, 80)))
    assert v.rad() < 1e-35


def test_non_integer_power_of_negative_is_error():
    from certbound.audit import DomainError

    with pytest.raises(DomainError):
        ev("(-2)^(1/2)")
    with pytest.raises(DomainError):
        ev("log(0)")
    with pytest.raises(DomainError):
        ev("1/0")
    assert ev("(-2)^3") == -8


@pytest.mark.parametrize(
    "text, message, column",
    [
        ("1 +", "ends too early", 4),
        ("sigmaa(layer=1)", "unknown function or quantity 'sigmaa'; did you mean 'sigma'", 1),
        ("2 * foo", "unknown name 'foo'", 5),
        ("sqrt(2, 3)", "takes 1 positional", 1),
        ("1 $ 2", "unexpected character '$'", 3),
        ("(1 + 2", "expected ')'", 7),
        ("sqrt(\"x\")", "a string is only allowed", 6),
        ("sum(i for i in heads)", "needs the claim's model", 16),
        ("sigma(layer=1, type=\"QK\", head=0, i=1)", "needs a model", 1),
        ("1 2", "unexpected '2'", 3),
        ("layers + 1", "only allowed after 'in'", 1),
    ],
)
def test_errors_name_the_position(text, message, column):
    with pytest.raises(ExpressionError) as info:
        check_expression(parse_expression(text), text)
    err = info.value
    assert message in str(err)
    assert err.start + 1 == column
    # The caret line points at the column.
    assert str(err).splitlines()[-1].index("^") - 4 == column - 1


def test_quantity_keywords_are_checked():
    text = 'sigma(layer=1, type="QK", hed=0, i=1)'
    with pytest.raises(ExpressionError, match="no argument 'hed'.*did you mean 'head'"):
        check_expression(parse_expression(text), text, has_default_model=True)
    text = 'sigma(layer=1, type=QK, i=1)'
    with pytest.raises(ExpressionError, match="takes a string"):
        check_expression(parse_expression(text), text, has_default_model=True)
    text = 'spectral_norm(layer=1, type="M_in", model="other")'
    with pytest.raises(ExpressionError, match="unknown model 'other'"):
        check_expression(parse_expression(text), text, has_default_model=True)
