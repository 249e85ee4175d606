"""The two ways an audited expression can fail to produce a number.

* :class:`Indeterminate` — the balls are too wide *at this precision* to
  evaluate the operation (a ball straddles the domain boundary of ``sqrt``,
  ``log``, ``floor``; an index is not yet an exact integer). Raising the
  working precision may help, so the auditor retries; if it never resolves,
  the verdict is *undecided* with this reason.
* :class:`DomainError` — the expression is certainly undefined (``log`` of a
  number certainly ≤ 0, division by exact zero, an index out of range). This
  is an error in the claim, reported as such (exit code 2), never a verdict.
"""

from __future__ import annotations

__all__ = ["Indeterminate", "DomainError"]


class Indeterminate(ArithmeticError):
    """The operation cannot be evaluated on these balls at this precision (retry higher)."""


class DomainError(ValueError):
    """The expression is certainly undefined (an error in the claim)."""
