"""Checkpoints on disk → the theory's matrices (QK, VO, M_in, M_out per layer/head).

Typical use::

    from certbound.checkpoints import open_model, theory_matrices, find_packaged_checkpoint
    ck, layout = open_model(find_packaged_checkpoint("all-MiniLM-L6-v2"))
    for m in theory_matrices(ck, layout=layout):
        ...  # m.layer, m.head, m.type, m.shape, m.dense or m.factors (W = A @ B.T)

Formats: safetensors (lazy, memory-mapped, exact bf16/f16/f32 → float64),
sharded safetensors, PyTorch ``.bin`` (optional ``torch``), ONNX (optional
``onnx``). Architectures: BERT/MiniLM, RoBERTa, DistilBERT, ELECTRA, MPNet,
GPT-2, ViT, or any other via a mapping file (:data:`MAPPING_HELP`). Ignored:
biases, LayerNorm, embeddings, poolers, position biases.
"""

from ._architectures import (
    ARCHITECTURES,
    MAPPING_HELP,
    ArchitectureSpec,
    ModelLayout,
    load_mapping,
    resolve_layout,
    supported_architectures,
)
from ._matrices import EXTRA_TYPES, MATRIX_TYPES, RAW_TYPES, TheoryMatrix, open_model, theory_matrices
from ._packaged import PACKAGED_CHECKPOINTS, PackagedCheckpoint, SplitPackagedCheckpoint, find_packaged_checkpoint, sha256_of_file
from ._safetensors import SafetensorsFile
from ._sources import Checkpoint, iter_tensors, load_checkpoint, read_config

__all__ = [
    "load_checkpoint",
    "open_model",
    "theory_matrices",
    "TheoryMatrix",
    "Checkpoint",
    "ModelLayout",
    "resolve_layout",
    "load_mapping",
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
