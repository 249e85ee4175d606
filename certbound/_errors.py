"""Errors about option values, worded for the caller who gave the option.

The library names its options as Python parameters (``delta``,
``spectrum_mode``); the command line names the same options as flags
(``--delta``, ``--spectrum-mode``). An :class:`OptionError` is written once,
with every option name in backticks; ``str(exc)`` is the library's wording,
and :meth:`OptionError.spelled` rewrites the names for another front end
(``certbound.cli`` passes each command's flags).

>>> exc = OptionError("`margin` is required when `loss` is 'ramp'")
>>> str(exc)
"`margin` is required when `loss` is 'ramp'"
>>> exc.options
('margin', 'loss')
>>> exc.spelled({"margin": "--margin", "loss": "--loss"})
"--margin is required when --loss is 'ramp'"
>>> option_name("delta"), option_name("--delta")
('`delta`', '--delta')
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["OptionError", "option_name"]

#: An option name as an OptionError message writes it: a Python identifier in backticks.
_NAME = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")


class OptionError(ValueError):
    """A bad option value (a :class:`ValueError`) whose message names options as ```name```.

    Parameters
    ----------
    message : str
        The explanation; each option it names is written as its Python
        parameter name in backticks (```spectrum_mode```).

    Examples
    --------
    >>> try:
    ...     raise OptionError("`jobs` must be at least 1, not 0")
    ... except ValueError as exc:
    ...     print(exc.spelled({"jobs": "--jobs"}))
    --jobs must be at least 1, not 0
    """

    # Shown as its public name in tracebacks and doctests (it is exported as certbound.OptionError, which is
    # also where pickle finds it).
    __module__ = "certbound"

    def __init__(self, message: str) -> None:
        super().__init__(message)

    @property
    def message(self) -> str:
        """The library's wording (``str(self)``)."""
        return str(self.args[0])

    @property
    def options(self) -> tuple[str, ...]:
        """The option names the message mentions, in order of first mention.

        Returns
        -------
        tuple of str
            Python parameter names (without backticks).
        """
        return tuple(dict.fromkeys(_NAME.findall(self.message)))

    def spelled(self, names: Mapping[str, str]) -> str:
        """The message with each option written as ``names`` spells it.

        Parameters
        ----------
        names : mapping of str to str
            Parameter name → the front end's spelling (e.g. ``{"delta": "--delta"}``).
            A name missing from ``names`` keeps the library's wording.

        Returns
        -------
        str
            The rewritten message.

        Examples
        --------
        >>> OptionError("`rank` must lie in [1, 3]; `p` is fine").spelled({"rank": "--rank"})
        '--rank must lie in [1, 3]; `p` is fine'
        """
        return _NAME.sub(lambda m: names.get(m.group(1), m.group(0)), self.message)


def option_name(what: str) -> str:
    """How an error message names the option ``what``: an identifier in backticks, anything else as given.

    Helpers that take the option's name from their caller (``parse_number(text,
    what)``) pass it through this, so a library caller's ``"delta"`` becomes
    a re-spellable ```delta``` and a CLI caller's ``"--delta"`` stays as it is.

    Parameters
    ----------
    what : str
        The option's name as the caller spells it.

    Returns
    -------
    str
        The name as it appears in the message.

    Examples
    --------
    >>> option_name("seq_len"), option_name("entry 3: p")
    ('`seq_len`', 'entry 3: p')
    """
    return f"`{what}`" if what.isidentifier() else what
