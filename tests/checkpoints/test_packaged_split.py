"""Split packaged checkpoints: assembled once, atomically, with every hash checked."""

import hashlib
import io
import os
import zipfile

import pytest

from certbound.checkpoints import find_packaged_checkpoint
from certbound.checkpoints._packaged import assemble_split_checkpoint


def _split_zip(tmp_path, files: dict[str, bytes], pieces: int = 3):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    blob = buf.getvalue()
    step = len(blob) // pieces + 1
    paths = []
    for i in range(pieces):
        p = tmp_path / f"m.zip.{i:03d}"
        p.write_bytes(blob[i * step:(i + 1) * step])
        paths.append(p)
    return paths


def test_assembles_members_from_pieces(tmp_path):
    weights = os.urandom(200_000)
    parts = _split_zip(tmp_path, {"m/config.json": b'{"a": 1}', "m/model.safetensors": weights, "m/other": b"x"})
    target = assemble_split_checkpoint(parts, {"m/config.json": "config.json", "m/model.safetensors": "w.st"},
                                       tmp_path / "cache" / "m", weights_name="w.st",
                                       sha256=hashlib.sha256(weights).hexdigest())
    assert (target / "w.st").read_bytes() == weights
    assert (target / "config.json").read_bytes() == b'{"a": 1}'
    assert sorted(p.name for p in target.iterdir()) == ["config.json", "w.st"]


def test_wrong_hash_leaves_nothing(tmp_path):
    parts = _split_zip(tmp_path, {"m/model.safetensors": b"abc" * 1000})
    cache = tmp_path / "cache"
    with pytest.raises(LookupError, match="sha256"):
        assemble_split_checkpoint(parts, {"m/model.safetensors": "w.st"}, cache / "m", weights_name="w.st",
                                  sha256="0" * 64)
    assert list(cache.iterdir()) == []


def test_missing_piece_is_a_clear_error(tmp_path):
    parts = _split_zip(tmp_path, {"m/model.safetensors": os.urandom(50_000)})
    with pytest.raises(LookupError, match="damaged|no m/"):
        assemble_split_checkpoint(parts[:-1], {"m/model.safetensors": "w.st"}, tmp_path / "c" / "m",
                                  weights_name="w.st", sha256="0" * 64)
    assert list((tmp_path / "c").iterdir()) == []


def test_mpnet_from_its_five_packages(tmp_path, monkeypatch):
    monkeypatch.setenv("CERTBOUND_CACHE", str(tmp_path))
    try:
        path = find_packaged_checkpoint("all-mpnet-base-v2")
    except LookupError as exc:
        pytest.skip(str(exc))
    assert (path / "config.json").is_file()
    again = find_packaged_checkpoint("sentence-transformers/all-mpnet-base-v2")  # cached: no second assembly
    assert again == path
    from certbound.checkpoints import open_checkpoint

    ck, layout = open_checkpoint(path)
    assert (layout.num_layers, layout.num_heads, layout.head_dim) == (12, 12, 64)
