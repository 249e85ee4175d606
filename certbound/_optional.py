"""Optional dependencies: one error type and one import helper for all of them.

A missing optional package (matplotlib, pandas, torch, onnx, huggingface_hub,
distributed, …) is an :class:`MissingDependencyError` naming the extra that
installs it; the CLI turns it into a one-line message and exit code 2.

>>> import_optional("math", "none", "arithmetic").sqrt(4.0)
2.0
>>> import_optional("surely_not_installed_pkg", "plot", "figures")
Traceback (most recent call last):
...
certbound._optional.MissingDependencyError: figures need surely_not_installed_pkg: pip install 'certbound[plot]'
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["MissingDependencyError", "import_optional"]


class MissingDependencyError(ImportError):
    """An optional dependency is not installed; the message says which extra installs it."""


def import_optional(module: str, extra: str, purpose: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingDependencyError` naming ``certbound[extra]``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        raise MissingDependencyError(f"{purpose} need {top}: pip install 'certbound[{extra}]'") from exc
