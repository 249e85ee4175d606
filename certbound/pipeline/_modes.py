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
>>> check_spectrum_mode("exact")
Traceback (most recent call last):
...
ValueError: mode: unknown certificate mode 'exact'; choose one of fast, tight, arb, gram, auto
"""

from __future__ import annotations

from certbound.enclose import MODES

__all__ = ["SPECTRUM_MODES", "DEFAULT_SPECTRUM_MODE", "check_spectrum_mode"]

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
        The option's name in the message (``"mode"``, ``"--spectrum-mode"``, ...).

    Returns
    -------
    str
        ``mode`` itself.
    """
    if not isinstance(mode, str) or mode not in SPECTRUM_MODES:
        raise ValueError(f"{what}: unknown certificate mode {mode!r}; choose one of {', '.join(SPECTRUM_MODES)}")
    return mode
