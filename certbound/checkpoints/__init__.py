"""Checkpoints on disk → the theory's matrices (QK, VO, M_in, M_out per layer/head).

Typical use::

    from certbound.checkpoints import open_checkpoint, theory_matrices, find_packaged_checkpoint
    ck, layout = open_checkpoint(find_packaged_checkpoint("all-MiniLM-L6-v2"))
    for m in theory_matrices(ck, layout=layout):
        ...  # m.layer, m.head, m.type, m.shape, m.dense or m.factors (W = A @ B.T)

Formats: safetensors (lazy, memory-mapped, exact bf16/f16/f32 → float64),
sharded safetensors, PyTorch ``.bin`` (optional ``torch``), ONNX (optional
``onnx``). Architectures: BERT/MiniLM, RoBERTa, DistilBERT, ELECTRA, MPNet,
GPT-2, ViT, LLaMA, Mistral, Mixtral, Qwen2/3, Gemma 1-3, Phi-2/3, GPT-NeoX,
BLOOM, Falcon, OPT, GPT-J, T5, BART, DeBERTa-v2, ALBERT, ModernBERT, or any
other via a mapping file (:data:`MAPPING_HELP`). Ignored: biases,
LayerNorm/RMSNorm, embeddings, poolers, position encodings, MoE routers.
:func:`theory_coverage` says which blocks the bound theorems cover.
"""

from ._architectures import (
    ARCHITECTURES,
    MAPPING_EXAMPLE,
    MAPPING_HELP,
    QKV_LAYOUTS,
    ArchitectureSpec,
    ModelLayout,
    Stack,
    StackSpec,
    check_mapping,
    load_mapping,
    resolve_layout,
    supported_architectures,
)
from ._coverage import TheoryCoverage, require_theory_coverage, theory_coverage
from ._memory import checkpoint_from_tensors
from ._matrices import (
    CROSS_TYPES,
    EXTRA_TYPES,
    GATED_TYPES,
    MATRIX_TYPES,
    RAW_TYPES,
    TheoryMatrix,
    open_checkpoint,
    theory_matrices,
)
from ._packaged import PACKAGED_CHECKPOINTS, PackagedCheckpoint, SplitPackagedCheckpoint, find_packaged_checkpoint, sha256_of_file
from ._safetensors import SafetensorsFile
from ._sources import Checkpoint, iter_tensors, load_checkpoint, read_config

__all__ = [
    "load_checkpoint",
    "checkpoint_from_tensors",
    "open_checkpoint",
    "theory_matrices",
    "TheoryMatrix",
    "Checkpoint",
    "ModelLayout",
    "Stack",
    "StackSpec",
    "resolve_layout",
    "load_mapping",
    "check_mapping",
    "QKV_LAYOUTS",
    "MAPPING_EXAMPLE",
    "TheoryCoverage",
    "theory_coverage",
    "require_theory_coverage",
    "GATED_TYPES",
    "CROSS_TYPES",
    "read_config",
    "iter_tensors",
    "SafetensorsFile",
    "ArchitectureSpec",
    "ARCHITECTURES",
    "supported_architectures",
    "MAPPING_HELP",
    "EXTRA_TYPES",
    "MATRIX_TYPES",
    "RAW_TYPES",
    "find_packaged_checkpoint",
    "PACKAGED_CHECKPOINTS",
    "PackagedCheckpoint",
    "SplitPackagedCheckpoint",
    "sha256_of_file",
]

