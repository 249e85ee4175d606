"""certbound: certified generalization-bound numbers for trained Transformers.

Pipeline: checkpoint → matrices (:mod:`certbound.checkpoints`) → certified
spectra (:mod:`certbound.enclose`) → certified quantities and bounds
(:mod:`certbound.bounds`) → reports. Every reported bound is an Arb ball
(python-flint) whose upper end is a proven upper bound.

>>> import numpy as np, certbound
>>> enc = certbound.enclose_singular_values(np.diag([2.0, 1.0]))
>>> bool(enc.lower[0] <= 2.0 <= enc.upper[0])
True
"""

from certbound.enclose import (
    CertificateWarning,
    RankBounds,
    SingularValueEnclosure,
    certified_rank,
    enclose_singular_values,
    enclose_singular_values_of_product,
    frobenius_norm,
    norm_11,
    norm_21,
    nuclear_norm,
    schatten_quantity,
    spectral_norm,
    stable_rank,
)

from certbound._version import __version__

__all__ = [
    "__version__",
    "CertificateWarning",
    "RankBounds",
    "SingularValueEnclosure",
    "certified_rank",
    "enclose_singular_values",
    "enclose_singular_values_of_product",
    "frobenius_norm",
    "norm_11",
    "norm_21",
    "nuclear_norm",
    "schatten_quantity",
    "spectral_norm",
    "stable_rank",
]
