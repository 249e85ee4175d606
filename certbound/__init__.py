"""certbound: certified generalization-bound numbers for trained Transformers.

Pipeline: a model (:func:`open_model`: a checkpoint on disk, a packaged
name, a Hugging Face id in the local cache, or a torch module / state dict in
memory) → certified spectra (:meth:`Model.spectra`) → certified bounds
(:meth:`Model.bound`) and proxies (:meth:`Model.proxies`) → reports
(``to_json``, ``to_csv``, ``to_latex``, ``to_frame``); :func:`audit` checks a
claims file. Every reported bound is an Arb ball (python-flint) whose upper
end is a proven upper bound. The numeric kernel (singular-value enclosures
and norms) is re-exported here too.

>>> import numpy as np, certbound
>>> enc = certbound.enclose_singular_values(np.diag([2.0, 1.0]))
>>> bool(enc.lower[0] <= 2.0 <= enc.upper[0])
True
"""

from certbound._errors import OptionError
from certbound._version import __version__
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
from certbound.pipeline import (
    BoundResult,
    BoundSettings,
    MatrixSpectrum,
    Model,
    ProxiesReport,
    SpectrumReport,
    open_model,
)
from certbound import audit
from certbound.audit import AuditReport

__all__ = [
    "__version__",
    # pipeline
    "open_model",
    "Model",
    "BoundSettings",
    "SpectrumReport",
    "MatrixSpectrum",
    "BoundResult",
    "ProxiesReport",
    "audit",
    "AuditReport",
    "OptionError",
    # numeric kernel
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
