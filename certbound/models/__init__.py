"""The theory-faithful Π-Transformer, its demo task and checkpoints.

The model class of ``proofs/theory-lipschitz.md`` §1 exactly
(``proofs/theory-lipschitz.md``): unit-ball input rows, L blocks of multi-head
attention → Π → feed-forward (variant P or B) → Π, optional residual, a
learned readout of row 0 with ‖w‖₂ ≤ C_w, a bounded Lipschitz loss. For this
model the certified bound of ``certbound demo`` is a true certificate.

Everything here imports without torch: evaluation is a numpy forward pass
(:class:`PiTransformer`); training (:mod:`certbound.models.training`) imports
torch lazily and needs the ``torch`` extra.

>>> from certbound.models import demo_checkpoint_path, load_pi_checkpoint
>>> net, meta = load_pi_checkpoint(demo_checkpoint_path())
>>> meta["model_type"]
'certbound-pi'
"""

from certbound.models.checkpoint import (
    CONFIG_NAME,
    WEIGHTS_NAME,
    demo_checkpoint_path,
    is_pi_checkpoint,
    load_pi_checkpoint,
    save_pi_checkpoint,
)
from certbound.models.config import MODEL_TYPE, LossSpec, PiTransformerConfig
from certbound.models.network import PiTransformer, TheoryFactor, loss_values, project_rows, softmax_rows
from certbound.models.task import SparseMajorityTask

__all__ = [
    "MODEL_TYPE",
    "CONFIG_NAME",
    "WEIGHTS_NAME",
    "LossSpec",
    "PiTransformerConfig",
    "PiTransformer",
    "TheoryFactor",
    "SparseMajorityTask",
    "loss_values",
    "project_rows",
    "softmax_rows",
    "save_pi_checkpoint",
    "load_pi_checkpoint",
    "is_pi_checkpoint",
    "demo_checkpoint_path",
]
