"""Claims files (TOML): reading, validating, and the :class:`Claim` record.

Format (``examples/audit/*.toml``; semantics in ``proofs/audit.md`` §2)::

    [models]                       # optional: aliases → checkpoint paths (relative to this file),
    minilm = "models/minilm"       # or "packaged:all-MiniLM-L6-v2"

    [constants]                    # optional: exact numbers or expressions, in order
    n = "1e6"
    delta = "0.01"

    [[claim]]
    id = "sigma1-M_in-3"
    model = "minilm"               # an alias or a path; needed by model quantities
    quantity = 'sigma(layer=3, type="M_in", i=1)'
    relation = "="                 # <=, >=, <, >, = (rounds to), ≈ (within a tolerance)
    value = "12.3"                 # exactly as written (string or TOML number)
    digits = 3                     # "=": significant digits (default: as written)
    # decimals = 1                 # "=": decimal places instead of significant digits
    # tolerance = "0.05"           # "≈": absolute tolerance, or rel_tolerance = "0.01"
    source = "Table 2"             # optional free text, shown in reports

TOML floats are read with ``parse_float=Decimal``, so ``value = 12.30`` keeps
its digits exactly; strings are safer and recommended. All problems of a
file are collected and raised together as one :class:`ClaimsFileError`.
"""

from __future__ import annotations

import decimal
import difflib
import os
import tomllib
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from certbound.audit._evaluate import FUNCTIONS, CONSTANTS, check_expression, uses_models
from certbound.audit._exact import ExactDecimal, parse_decimal, rounding_cell, rounding_cell_decimals
from certbound.audit._expr import ExpressionError, Node, parse_expression
from certbound.audit._models import ModelHandle
from certbound.checkpoints import find_packaged_checkpoint

__all__ = ["Claim", "ClaimsFile", "ClaimsFileError", "RELATIONS", "load_claims", "parse_claims"]

#: Accepted spellings → canonical relation.
RELATIONS = {
    "<=": "<=", "≤": "<=", ">=": ">=", "≥": ">=", "<": "<", ">": ">",
    "=": "=", "==": "=", "≈": "≈", "~": "≈", "approx": "≈",
}
_CLAIM_KEYS = {"id", "model", "quantity", "relation", "value", "digits", "decimals", "tolerance",
               "rel_tolerance", "source", "note"}


class ClaimsFileError(ValueError):
    """One or more problems in a claims file (every problem is listed)."""


@dataclass
class Claim:
    """One claim: ``quantity  relation  value`` (plus precision options)."""

    id: str
    index: int
    quantity: str
    tree: Node
    relation: str
    value: ExactDecimal
    digits: int | None = None
    decimals: int | None = None
    tolerance: Fraction | None = None
    rel_tolerance: Fraction | None = None
    model: ModelHandle | None = None
    source: str = ""
    note: str = ""

    def describe(self) -> str:
        """The claim as a short line, e.g. ``σ… = 12.3 (3 digits)``."""
        extra = ""
        if self.relation == "=":
            extra = (f" ({self.decimals} decimals)" if self.decimals is not None
                     else f" ({self.digits} significant digits)")
        elif self.relation == "≈":
            extra = (f" ± {self.tolerance}" if self.tolerance is not None else f" ± {self.rel_tolerance}·|value|")
        return f"{self.quantity} {self.relation} {self.value.text}{extra}"


@dataclass
class ClaimsFile:
    """A parsed and checked claims file."""

    path: str
    claims: list[Claim]
    models: dict[str, ModelHandle] = field(default_factory=dict)
    constants: list[tuple[str, str, Node]] = field(default_factory=list)

    def close(self) -> None:
        for m in self.models.values():
            m.close()


def _exact_option(raw: Any, what: str) -> Fraction:
    if isinstance(raw, float):  # pragma: no cover - parse_float=Decimal prevents this
        raise ValueError(f"{what}: write the number as a string")
    q = parse_decimal(raw).value
    if q < 0:
        raise ValueError(f"{what} must be ≥ 0, got {raw}")
    return q


def _resolve_model_path(spec: str, base: str) -> str:
    if spec.startswith("packaged:"):
        name = spec.split(":", 1)[1]
        try:
            return os.fspath(find_packaged_checkpoint(name))
        except (LookupError, ValueError, OSError) as exc:
            raise ValueError(f"packaged model {name!r} is not available: {exc}") from None
    path = spec if os.path.isabs(spec) else os.path.join(base, spec)
    if not os.path.exists(path):
        raise ValueError(f"model file or directory not found: {path}")
    return path


def parse_claims(text: str, path: str = "<claims>", base_dir: str | None = None) -> ClaimsFile:
    """Parse and check claims from TOML text; raise :class:`ClaimsFileError` listing every problem.

    >>> cf = parse_claims('''
    ... [[claim]]
    ... id = "third"
    ... quantity = "1/3"
    ... relation = "="
    ... value = "0.333"
    ... ''')
    >>> c = cf.claims[0]
    >>> c.relation, c.value.value, c.digits
    ('=', Fraction(333, 1000), 3)
    """
    base = base_dir if base_dir is not None else os.path.dirname(os.path.abspath(path))
    try:
        data = tomllib.loads(text, parse_float=decimal.Decimal)
    except tomllib.TOMLDecodeError as exc:
        raise ClaimsFileError(f"{path}: not valid TOML: {exc}") from None
    problems: list[str] = []
    unknown_top = set(data) - {"claim", "claims", "models", "constants", "title"}
    if unknown_top:
        problems.append(f"unknown top-level key(s) {', '.join(sorted(unknown_top))} "
                        "(expected [[claim]], [models], [constants], title)")

    models: dict[str, ModelHandle] = {}
    unusable: set[str] = set()  # aliases whose [models] entry is reported: their claims do not report it again
    raw_models = data.get("models", {})
    if not isinstance(raw_models, dict):
        problems.append("[models] must be a table of alias = \"path\"")
        raw_models = {}
    for alias, spec in raw_models.items():
        if not isinstance(spec, str):
            problems.append(f"[models] {alias}: expected a path string")
            unusable.add(alias)
            continue
        try:
            models[alias] = ModelHandle(_resolve_model_path(spec, base), label=alias)
        except ValueError as exc:
            problems.append(f"[models] {alias}: {exc}")
            unusable.add(alias)

    constants: list[tuple[str, str, Node]] = []
    raw_constants = data.get("constants", {})
    if not isinstance(raw_constants, dict):
        problems.append("[constants] must be a table of name = value")
        raw_constants = {}
    known: set[str] = set()
    for name, raw in raw_constants.items():
        where = f"[constants] {name}"
        if not name.isidentifier() or name in FUNCTIONS or name in CONSTANTS or name in ("layers", "heads", "for", "in"):
            problems.append(f"{where}: {name!r} cannot be a constant name (reserved or not an identifier)")
            continue
        if isinstance(raw, bool) or not isinstance(raw, (str, int, decimal.Decimal)):
            problems.append(f"{where}: expected a number or an expression string")
            continue
        expr = str(raw)
        try:
            tree = parse_expression(expr)
            check_expression(tree, expr, constants=known)
            if uses_models(tree):
                raise ExpressionError("constants cannot use model quantities", expr, 0, len(expr))
        except ExpressionError as exc:
            problems.append(f"{where}: {exc}")
            continue
        constants.append((name, expr, tree))
        known.add(name)

    raw_claims = data.get("claim", []) + data.get("claims", []) if isinstance(data.get("claim", []), list) and isinstance(
        data.get("claims", []), list) else None
    if raw_claims is None:
        problems.append("claims must be given as [[claim]] tables")
        raw_claims = []
    if not raw_claims and not problems:
        problems.append("no claims: add [[claim]] tables")
    claims: list[Claim] = []
    seen_ids: set[str] = set()
    for k, raw in enumerate(raw_claims, 1):
        cid = str(raw.get("id", f"#{k}")) if isinstance(raw, dict) else f"#{k}"
        where = f"claim {k} ({cid!r})"
        if not isinstance(raw, dict):
            problems.append(f"{where}: expected a table")
            continue
        bad_keys = set(raw) - _CLAIM_KEYS
        if bad_keys:
            hints = [f"{b!r}" + (f" (did you mean {difflib.get_close_matches(b, _CLAIM_KEYS, n=1)[0]!r}?)"
                                 if difflib.get_close_matches(b, _CLAIM_KEYS, n=1) else "") for b in sorted(bad_keys)]
            problems.append(f"{where}: unknown key(s) {', '.join(hints)}")
            continue
        if cid in seen_ids:
            problems.append(f"{where}: duplicate id")
            continue
        seen_ids.add(cid)
        missing = [key for key in ("quantity", "relation", "value") if key not in raw]
        if missing:
            problems.append(f"{where}: missing {', '.join(missing)}")
            continue
        try:
            claims.append(_parse_claim(raw, cid, k, models, known, base, unusable))
        except ExpressionError as exc:
            problems.append(f"{where}: quantity: {exc}")
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
    if problems:
        raise ClaimsFileError(f"{path}: {len(problems)} problem(s):\n" + "\n".join(f"  - {p}" for p in problems))
    return ClaimsFile(os.path.abspath(path) if path != "<claims>" else path, claims, models, constants)


def _parse_claim(raw: dict[str, Any], cid: str, k: int, models: dict[str, ModelHandle], constants: set[str],
                 base: str, unusable: frozenset[str] | set[str] = frozenset()) -> Claim:
    relation = RELATIONS.get(str(raw["relation"]).strip())
    if relation is None:
        raise ValueError(f"unknown relation {raw['relation']!r}; use one of <=, >=, <, >, =, ≈")
    if isinstance(raw["value"], bool):
        raise ValueError("value must be a number")
    try:
        value = parse_decimal(raw["value"])
    except ValueError as exc:
        text = str(raw["value"])  # show the literal with a caret under it, as for expressions
        raise ValueError(f"value: {ExpressionError(str(exc), text, 0, len(text))}") from None
    quantity = raw["quantity"]
    if not isinstance(quantity, str):
        raise ValueError("quantity must be an expression string")
    model: ModelHandle | None = None
    if "model" in raw:
        spec = raw["model"]
        if not isinstance(spec, str):
            raise ValueError("model must be an alias from [models] or a path string")
        if spec in models:
            model = models[spec]
        elif spec in unusable:
            pass  # an alias whose [models] entry is already reported (not a path to resolve again)
        else:
            path = _resolve_model_path(spec, base)
            model = ModelHandle(path, label=spec)
            models.setdefault(spec, model)
    tree = parse_expression(quantity)
    check_expression(tree, quantity, constants=constants, models=set(models) | set(unusable),
                     has_default_model=model is not None or raw.get("model") in unusable)

    digits = decimals = None
    tolerance = rel_tolerance = None
    for opt, rel in (("digits", "="), ("decimals", "="), ("tolerance", "≈"), ("rel_tolerance", "≈")):
        if opt in raw and relation != rel:
            raise ValueError(f"{opt} only applies to relation {rel!r}")
    if relation == "=":
        if "digits" in raw and "decimals" in raw:
            raise ValueError("give digits or decimals, not both")
        if "decimals" in raw:
            decimals = raw["decimals"]
            if isinstance(decimals, bool) or not isinstance(decimals, int):
                raise ValueError("decimals must be an integer")

            rounding_cell_decimals(value.value, decimals)  # checks value has ≤ decimals places
        else:
            digits = raw.get("digits", value.significant_digits)
            if isinstance(digits, bool) or not isinstance(digits, int) or digits < 1:
                raise ValueError(f"digits must be an integer ≥ 1, got {digits!r}")
            if value.value == 0:
                raise ValueError("'= 0' has no significant digits: use decimals = k, relation ≈ with a tolerance, "
                                 "or <= / >=")

            rounding_cell(value.value, digits)  # checks the value has ≤ digits significant digits
    if relation == "≈":
        if ("tolerance" in raw) == ("rel_tolerance" in raw):
            raise ValueError("relation ≈ needs exactly one of tolerance (absolute) or rel_tolerance")
        if "tolerance" in raw:
            tolerance = _exact_option(raw["tolerance"], "tolerance")
        else:
            rel_tolerance = _exact_option(raw["rel_tolerance"], "rel_tolerance")
    return Claim(cid, k, quantity, tree, relation, value, digits, decimals, tolerance, rel_tolerance, model,
                 str(raw.get("source", "")), str(raw.get("note", "")))


def load_claims(path: str | os.PathLike[str]) -> ClaimsFile:
    """Read and check a claims file (paths inside are relative to its directory).

    Raises ``OSError`` if the file cannot be read, :class:`ClaimsFileError`
    (a ``ValueError``) listing every problem otherwise.
    """
    path = os.fspath(path)
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ClaimsFileError(f"{path}: not UTF-8 text: {exc}") from None
    return parse_claims(text, path)
