"""The singular-value certificate modes every command and pipeline function accepts: one definition.

The modes are the kernel's (:data:`certbound.enclose.MODES`, documented in
:mod:`certbound.enclose.svd`); every mode is a certificate, so every mode
gives valid enclosures. The pipeline and the CLI default to ``"auto"``: per
matrix the cheapest certificate whose σᵢ widths meet the kernel's target
(``proofs/enclosure.md`` §12), the one that succeeded recorded as the
enclosure's ``mode``. The kernel functions themselves (and the per-matrix
helpers of :mod:`certbound.bounds.proxies`) keep ``"fast"`` as their default.

>>> SPECTRUM_MODES
('fast', 'tight', 'arb', 'gram', 'auto')
>>> check_spectrum_mode("auto")
'auto'
>>> check_spectrum_mode("exact", "spectrum_mode")
Traceback (most recent call last):
...
certbound.OptionError: `spectrum_mode`: unknown certificate mode 'exact'; choose one of fast, tight, arb, gram, auto

The pipeline's keyword for the mode is ``spectrum_mode`` (as
``BoundSettings.spectrum_mode``, whose ``mode`` is the theorem's, and the
CLI's ``--spectrum-mode``); where it used to be ``mode=`` that still works,
with a ``DeprecationWarning`` (:func:`spectrum_mode_keyword`). The kernel-level
``certify_theory_matrix(ces)``/``enclose_theory_matrices`` keep the kernel's
positional ``mode`` (as :func:`certbound.enclose.enclose_singular_values`), and
the stored report keeps its ``options["mode"]`` key.
"""

from __future__ import annotations

import warnings

from certbound._errors import OptionError, option_name
from certbound.enclose import MODES

__all__ = ["SPECTRUM_MODES", "DEFAULT_SPECTRUM_MODE", "check_spectrum_mode", "spectrum_mode_keyword"]

#: The certificate modes of every command and pipeline function: the kernel's own tuple.
SPECTRUM_MODES: tuple[str, ...] = MODES

#: The default of every command and pipeline function that certifies a spectrum.
DEFAULT_SPECTRUM_MODE = "auto"


def check_spectrum_mode(mode: object, what: str = "mode") -> str:
    """``mode`` if it is one of :data:`SPECTRUM_MODES`, else a ``ValueError`` naming ``what`` and the modes.

    Parameters
    ----------
    mode : object
        The requested certificate mode.
    what : str
        The option's name in the message (an identifier is written ```what```, as
        :class:`~certbound.OptionError` does).

    Returns
    -------
    str
        ``mode`` itself.

    Raises
    ------
    certbound.OptionError
        For anything but one of :data:`SPECTRUM_MODES`.
    """
    if not isinstance(mode, str) or mode not in SPECTRUM_MODES:
        raise OptionError(f"{option_name(what)}: unknown certificate mode {mode!r}; "
                          f"choose one of {', '.join(SPECTRUM_MODES)}")
    return mode


def spectrum_mode_keyword(spectrum_mode: str, mode: str | None, *, stacklevel: int = 3) -> str:
    """The checked certificate mode of a pipeline function that also accepts the deprecated ``mode=``.

    Parameters
    ----------
    spectrum_mode : str
        The ``spectrum_mode`` argument (its default :data:`DEFAULT_SPECTRUM_MODE` when not given).
    mode : str or None
        The deprecated keyword's value (``None``: not given). Given, it warns
        (``DeprecationWarning``) and is used, unless ``spectrum_mode`` was given
        a different value too (an error).
    stacklevel : int
        Passed to :func:`warnings.warn` (3: the caller of the pipeline function).

    Returns
    -------
    str
        The mode, one of :data:`SPECTRUM_MODES`.

    Examples
    --------
    >>> spectrum_mode_keyword("tight", None)
    'tight'
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     spectrum_mode_keyword(DEFAULT_SPECTRUM_MODE, "fast"), w[0].category.__name__
    ('fast', 'DeprecationWarning')
    >>> spectrum_mode_keyword("tight", "fast")
    Traceback (most recent call last):
    ...
    certbound.OptionError: `mode` is the deprecated name of `spectrum_mode`: give one of them, not both
    """
    if mode is not None:
        if spectrum_mode != DEFAULT_SPECTRUM_MODE and spectrum_mode != mode:
            raise OptionError("`mode` is the deprecated name of `spectrum_mode`: give one of them, not both")
        warnings.warn("the keyword mode= is deprecated: use spectrum_mode= (same values)", DeprecationWarning,
                      stacklevel=stacklevel)
        spectrum_mode = mode
    return check_spectrum_mode(spectrum_mode, "spectrum_mode")
