"""The safe expression language of claims files: tokenizer and recursive-descent parser.

An expression is parsed into a small tree of node objects (never Python
``eval``); which operations and names are allowed is decided when the tree
is checked and evaluated (:mod:`certbound.audit._evaluate`). Grammar::

    expr     := term (("+" | "-") term)*
    term     := unary (("*" | "/") unary)*
    unary    := ("-" | "+") unary | power
    power    := atom (("^" | "**") unary)?          # right associative: 2^3^2 = 2^9
    atom     := NUMBER | STRING | NAME | NAME "(" args ")" | "(" expr ")"
    args     := [arg ("," arg)*]  |  expr ("for" NAME "in" expr)+
    arg      := NAME "=" expr | expr

``-x^2`` is ``-(x^2)``. Unicode ``−`` ``×`` ``·`` ``÷`` are accepted for
``-`` ``*`` ``*`` ``/``. Numbers are decimal literals kept as exact
:class:`~fractions.Fraction` values. Errors are :class:`ExpressionError`
(a ``ValueError``) carrying the offending position.

>>> tree = parse_expression('2 * sigma(layer=3, type="M_in", i=1)^2')
>>> tree
Binary('*', Num(2), Binary('^', Call('sigma', layer=Num(3), type=Str('M_in'), i=Num(1)), Num(2)))
>>> parse_expression("sum(spectral_norm(layer=l, type='M_in') for l in layers)")
Call('sum', Call('spectral_norm', layer=Name('l'), type=Str('M_in')), for l in Name('layers'))
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable
from fractions import Fraction

from certbound.audit._exact import parse_decimal

__all__ = [
    "ExpressionError",
    "Node",
    "Num",
    "Str",
    "Name",
    "Unary",
    "Binary",
    "Keyword",
    "Generator",
    "Call",
    "tokenize",
    "parse_expression",
    "MAX_NESTING",
    "MAX_TREE_DEPTH",
    "MAX_EXPRESSION_LENGTH",
]


_WINDOW = 72


class ExpressionError(ValueError):
    """A problem in an expression, with the position (0-based offsets ``start``..``end``).

    ``str()`` shows the message, the expression and a caret line under the
    problem, so the user sees where it is.
    """

    def __init__(self, message: str, text: str, start: int, end: int | None = None):
        self.message = message
        self.text = text
        self.start = max(0, min(start, len(text)))
        self.end = max(self.start + 1, end if end is not None else self.start + 1)
        super().__init__(self.__str__())

    def __str__(self) -> str:
        # Show at most _WINDOW characters of a long expression around the problem.
        lo = max(0, self.start - _WINDOW // 2)
        hi = min(len(self.text), lo + _WINDOW)
        shown = ("…" if lo else "") + self.text[lo:hi] + ("…" if hi < len(self.text) else "")
        offset = self.start - lo + (1 if lo else 0)
        width = max(1, min(self.end, hi + 1) - self.start)
        return (
            f"{self.message} (at column {self.start + 1})\n"
            f"    {shown}\n"
            f"    {' ' * offset}{'^' * min(width, _WINDOW)}"
        )


@dataclass(frozen=True)
class Token:
    kind: str  # "num", "str", "name", "op", "end"
    text: str
    start: int
    end: int


_TOKEN_RE = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<num>(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+\-]?\d+)?)
  | (?P<str>"[^"\\\n]*"|'[^'\\\n]*')
  | (?P<name>[^\W\d]\w*)
  | (?P<op>\*\*|[-+*/^(),=\u2212\u00d7\u00b7\u22c5\u00f7])
    """,
    re.VERBOSE,
)

_OP_ALIASES = {"\u2212": "-", "\u00d7": "*", "\u00b7": "*", "\u22c5": "*", "\u00f7": "/", "**": "^"}


def tokenize(text: str) -> list[Token]:
    """Split an expression into tokens (an ``end`` token last).

    >>> [t.text for t in tokenize("2×x − 1e-3")]
    ['2', '*', 'x', '-', '1e-3', '']
    """
    tokens: list[Token] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN_RE.match(text, pos)
        if m is None:
            raise ExpressionError(f"unexpected character {text[pos]!r}", text, pos)
        kind = m.lastgroup
        assert kind is not None
        if kind != "ws":
            s = m.group()
            if kind == "op":
                s = _OP_ALIASES.get(s, s)
            elif kind == "str":
                s = s[1:-1]
            tokens.append(Token(kind, s, m.start(), m.end()))
        pos = m.end()
    tokens.append(Token("end", "", len(text), len(text)))
    return tokens


# ---------------------------------------------------------------- tree nodes


@dataclass(frozen=True, eq=False)
class Node:
    """Base class of expression-tree nodes; ``start``/``end`` locate it in the text."""

    start: int = field(default=0, kw_only=True)
    end: int = field(default=0, kw_only=True)


@dataclass(frozen=True, eq=False)
class Num(Node):
    """An exact decimal literal."""

    value: Fraction
    text: str

    def __repr__(self) -> str:
        return f"Num({self.text})"


@dataclass(frozen=True, eq=False)
class Str(Node):
    """A string literal (only meaningful as a keyword argument such as ``type="QK"``)."""

    value: str

    def __repr__(self) -> str:
        return f"Str({self.value!r})"


@dataclass(frozen=True, eq=False)
class Name(Node):
    """A name: a constant, a loop variable, or ``layers``/``heads`` in a ``for`` clause."""

    id: str

    def __repr__(self) -> str:
        return f"Name({self.id!r})"


@dataclass(frozen=True, eq=False)
class Unary(Node):
    op: str
    operand: Node

    def __repr__(self) -> str:
        return f"Unary({self.op!r}, {self.operand!r})"


@dataclass(frozen=True, eq=False)
class Binary(Node):
    op: str
    left: Node
    right: Node

    def __repr__(self) -> str:
        return f"Binary({self.op!r}, {self.left!r}, {self.right!r})"


@dataclass(frozen=True, eq=False)
class Keyword(Node):
    name: str
    value: Node


@dataclass(frozen=True, eq=False)
class Generator(Node):
    """One ``for VAR in ITERABLE`` clause of a ``sum``/``prod``/``min``/``max`` comprehension."""

    var: str
    iterable: Node


@dataclass(frozen=True, eq=False)
class Call(Node):
    func: str
    args: tuple[Node, ...]
    keywords: tuple[Keyword, ...]
    generators: tuple[Generator, ...] = ()

    def __repr__(self) -> str:
        parts = [repr(self.func)] + [repr(a) for a in self.args]
        parts += [f"{k.name}={k.value!r}" for k in self.keywords]
        parts += [f"for {g.var} in {g.iterable!r}" for g in self.generators]
        return f"Call({', '.join(parts)})"


# -------------------------------------------------------------------- parser

#: Deepest nesting of parentheses, calls and unary signs, and deepest tree.
#: The parser and the evaluator recurse along the tree; beyond this depth a
#: claims file gets a clear error instead of Python's RecursionError.
MAX_NESTING = 100
MAX_TREE_DEPTH = 400
#: Longest expression accepted (characters).
MAX_EXPRESSION_LENGTH = 100_000


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0
        self.depth = 0

    def nested(self, parse: Callable[[], Node]) -> Node:
        """Run a sub-parser one nesting level deeper, refusing beyond MAX_NESTING."""
        if self.depth >= MAX_NESTING:
            raise self.error(f"expression nested more than {MAX_NESTING} levels deep")
        self.depth += 1
        try:
            return parse()
        finally:
            self.depth -= 1

    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def error(self, message: str, tok: Token | None = None) -> ExpressionError:
        tok = tok or self.tok
        return ExpressionError(message, self.text, tok.start, tok.end)

    def accept(self, *ops: str) -> Token | None:
        t = self.tok
        if t.kind == "op" and t.text in ops:
            self.i += 1
            return t
        return None

    def expect(self, op: str, what: str) -> Token:
        t = self.accept(op)
        if t is None:
            found = "end of expression" if self.tok.kind == "end" else repr(self.tok.text)
            raise self.error(f"expected {what}, found {found}")
        return t

    def parse(self) -> Node:
        if self.tok.kind == "end":
            raise self.error("empty expression")
        node = self.expr()
        if self.tok.kind != "end":
            raise self.error(f"unexpected {self.tok.text!r} after a complete expression")
        return node

    def expr(self) -> Node:
        node = self.term()
        while (t := self.accept("+", "-")) is not None:
            right = self.term()
            node = Binary(t.text, node, right, start=node.start, end=right.end)
        return node

    def term(self) -> Node:
        node = self.unary()
        while (t := self.accept("*", "/")) is not None:
            right = self.unary()
            node = Binary(t.text, node, right, start=node.start, end=right.end)
        return node

    def unary(self) -> Node:
        t = self.accept("-", "+")
        if t is not None:
            operand = self.nested(self.unary)
            return Unary(t.text, operand, start=t.start, end=operand.end)
        return self.power()

    def power(self) -> Node:
        base = self.atom()
        if self.accept("^") is not None:
            exponent = self.unary()
            return Binary("^", base, exponent, start=base.start, end=exponent.end)
        return base

    def atom(self) -> Node:
        t = self.tok
        if t.kind == "num":
            self.i += 1
            try:
                value = parse_decimal(t.text).value
            except ValueError as exc:  # out-of-range exponent or digit count
                raise self.error(str(exc), t) from None
            return Num(value, t.text, start=t.start, end=t.end)
        if t.kind == "str":
            self.i += 1
            return Str(t.text, start=t.start, end=t.end)
        if t.kind == "name":
            self.i += 1
            if t.text in ("for", "in"):
                raise self.error(f"unexpected keyword {t.text!r}", t)
            if self.accept("(") is not None:
                return self.nested(lambda: self.call(t))
            return Name(t.text, start=t.start, end=t.end)
        if self.accept("(") is not None:
            node = self.nested(self.expr)
            close = self.expect(")", "')'")
            # Keep the node; widen its span to the parentheses for error messages.
            object.__setattr__(node, "start", t.start)
            object.__setattr__(node, "end", close.end)
            return node
        if t.kind == "end":
            raise self.error("expression ends too early")
        raise self.error(f"unexpected {t.text!r}")

    def call(self, name: Token) -> Call:
        args: list[Node] = []
        keywords: list[Keyword] = []
        generators: list[Generator] = []
        if (close := self.accept(")")) is not None:
            return Call(name.text, (), (), start=name.start, end=close.end)
        while True:
            t = self.tok
            if t.kind == "name" and self.tokens[self.i + 1].kind == "op" and self.tokens[self.i + 1].text == "=":
                self.i += 2
                value = self.expr()
                if any(k.name == t.text for k in keywords):
                    raise self.error(f"argument {t.text!r} given twice", t)
                keywords.append(Keyword(t.text, value, start=t.start, end=value.end))
            else:
                if keywords:
                    raise self.error("positional argument after a keyword argument", t)
                args.append(self.expr())
                if self.tok.kind == "name" and self.tok.text == "for":
                    if len(args) != 1:
                        raise self.error("a 'for' clause must follow a single expression")
                    while self.tok.kind == "name" and self.tok.text == "for":
                        ft = self.tok
                        self.i += 1
                        var = self.tok
                        if var.kind != "name" or var.text in ("for", "in"):
                            raise self.error("expected a loop variable name after 'for'")
                        self.i += 1
                        if not (self.tok.kind == "name" and self.tok.text == "in"):
                            raise self.error("expected 'in' after the loop variable")
                        self.i += 1
                        iterable = self.expr()
                        generators.append(Generator(var.text, iterable, start=ft.start, end=iterable.end))
                    close = self.expect(")", "')' closing the comprehension")
                    return Call(name.text, tuple(args), (), tuple(generators), start=name.start, end=close.end)
            if self.accept(",") is None:
                break
        close = self.expect(")", f"',' or ')' in the arguments of {name.text}()")
        return Call(name.text, tuple(args), tuple(keywords), start=name.start, end=close.end)


def parse_expression(text: str) -> Node:
    """Parse an expression into a tree; raise :class:`ExpressionError` with the position on error.

    >>> parse_expression("sqrt(2) * (1 + x)")
    Binary('*', Call('sqrt', Num(2)), Binary('+', Num(1), Name('x')))
    >>> parse_expression("1 +")
    Traceback (most recent call last):
    ...
    certbound.audit._expr.ExpressionError: expression ends too early (at column 4)
        1 +
           ^
    """
    if not isinstance(text, str):
        raise ValueError(f"an expression must be a string, got {type(text).__name__}")
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise ExpressionError(f"expression longer than {MAX_EXPRESSION_LENGTH} characters", text[:60] + " ...", 0)
    tree = _Parser(text).parse()
    _check_depth(tree, text)
    return tree


def _children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, Unary):
        return (node.operand,)
    if isinstance(node, Binary):
        return (node.left, node.right)
    if isinstance(node, Keyword):
        return (node.value,)
    if isinstance(node, Generator):
        return (node.iterable,)
    if isinstance(node, Call):
        return (*node.args, *node.keywords, *node.generators)
    return ()


def _check_depth(tree: Node, text: str) -> None:
    """Refuse trees deeper than MAX_TREE_DEPTH (e.g. ``1+1+…+1`` with thousands of terms), without recursion."""
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_TREE_DEPTH:
            raise ExpressionError(f"expression tree deeper than {MAX_TREE_DEPTH} operations "
                                  "(split it into named constants)", text, node.start, node.end)
        stack.extend((child, depth + 1) for child in _children(node))
