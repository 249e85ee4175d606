"""The safetensors reader: exact dtype conversion, strict header checks."""

import json
import struct
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from certbound.checkpoints import SafetensorsFile, load_checkpoint
from certbound.checkpoints._safetensors import bf16_bits_to_float64
from tests.checkpoints.synth_checkpoints import write_safetensors


def _decode_binary(bits: int, exp_bits: int, man_bits: int) -> Fraction | None:
    """Exact value of an IEEE-style bit pattern (None for Inf/NaN) by the textbook formula."""
    sign = -1 if bits >> (exp_bits + man_bits) & 1 else 1
    e = bits >> man_bits & ((1 << exp_bits) - 1)
    m = bits & ((1 << man_bits) - 1)
    bias = (1 << (exp_bits - 1)) - 1
    if e == (1 << exp_bits) - 1:
        return None
    if e == 0:
        return sign * Fraction(m, 1 << man_bits) * Fraction(2) ** (1 - bias)
    return sign * (1 + Fraction(m, 1 << man_bits)) * Fraction(2) ** (e - bias)


@given(st.lists(st.integers(0, 0xFFFF), min_size=1, max_size=64))
def test_bf16_decodes_exactly(bits):
    out = bf16_bits_to_float64(np.array(bits, dtype=np.uint16))
    for b, v in zip(bits, out):
        ref = _decode_binary(b, 8, 7)
        if ref is None:
            assert not np.isfinite(v)
        else:
            assert Fraction(float(v)) == ref


@given(st.lists(st.integers(0, 0xFFFF), min_size=1, max_size=64))
def test_f16_file_round_trip_exact(tmp_path_factory, bits):
    raw = np.array(bits, dtype="<u2")
    p = tmp_path_factory.mktemp("f16") / "x.safetensors"
    h = json.dumps({"x": {"dtype": "F16", "shape": [len(bits)], "data_offsets": [0, 2 * len(bits)]}}).encode()
    p.write_bytes(struct.pack("<Q", len(h)) + h + raw.tobytes())
    with SafetensorsFile(p) as f:
        out = f.get_float64("x")
    for b, v in zip(bits, out):
        ref = _decode_binary(b, 5, 10)
        if ref is None:
            assert not np.isfinite(v)
        else:
            assert Fraction(float(v)) == ref


def test_bf16_tensor_in_file(tmp_path):
    x = np.array([[1.0, -2.5], [3.140625, 1e-3]], dtype=np.float32)
    p = tmp_path / "m.safetensors"
    write_safetensors(str(p), {"w": x}, "BF16")
    with SafetensorsFile(p) as f:
        assert f.info("w").dtype == "BF16"
        got = f.get_float64("w")
    assert got.dtype == np.float64 and got.shape == (2, 2)
    assert got[0, 0] == 1.0 and got[0, 1] == -2.5 and got[1, 0] == 3.140625
    assert abs(got[1, 1] - 1e-3) <= 2**-8 * 1e-3  # bf16 has an 8-bit significand


@pytest.mark.parametrize("dtype, npdt", [("F32", np.float32), ("F16", np.float16), ("F64", np.float64)])
def test_agrees_with_reference_safetensors_library(tmp_path, dtype, npdt):
    from safetensors.numpy import save_file

    rng = np.random.default_rng(1)
    tensors = {"a": rng.standard_normal((3, 5)).astype(npdt), "b.c": rng.standard_normal(7).astype(npdt)}
    p = tmp_path / "r.safetensors"
    save_file(tensors, str(p))
    with SafetensorsFile(p) as f:
        assert sorted(f.keys()) == ["a", "b.c"]
        for k, v in tensors.items():
            got = f.get_float64(k)
            assert np.array_equal(got, v.astype(np.float64))


def _write_header(p, header: dict, data: bytes = b"") -> None:
    h = json.dumps(header).encode()
    p.write_bytes(struct.pack("<Q", len(h)) + h + data)


@pytest.mark.parametrize("content, match", [
    (b"", "not a safetensors file"),
    (b"\x01\x02", "not a safetensors file"),
    (struct.pack("<Q", 10**6) + b"{}", "truncated safetensors header"),
    (struct.pack("<Q", 4) + b"{{{{", "not JSON"),
    (struct.pack("<Q", 2) + b"[]", "not a JSON object"),
])
def test_corrupt_headers(tmp_path, content, match):
    p = tmp_path / "bad.safetensors"
    p.write_bytes(content)
    with pytest.raises(ValueError, match=match) as ei:
        SafetensorsFile(p)
    assert str(p) in str(ei.value)


def test_truncated_data_names_file_and_tensor(tmp_path):
    p = tmp_path / "t.safetensors"
    write_safetensors(str(p), {"w1": np.ones((4, 4)), "encoder.w2": np.ones((8, 8))})
    data = p.read_bytes()
    p.write_bytes(data[:-10])
    with pytest.raises(ValueError, match=r"'encoder\.w2'.*truncated") as ei:
        load_checkpoint(p)
    assert str(p) in str(ei.value)


def test_byte_count_mismatch(tmp_path):
    p = tmp_path / "m.safetensors"
    _write_header(p, {"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 12]}}, b"\0" * 12)
    with pytest.raises(ValueError, match=r"'w'.*12 data bytes"):
        SafetensorsFile(p)


def test_malformed_entry(tmp_path):
    p = tmp_path / "m.safetensors"
    _write_header(p, {"w": {"dtype": "F32", "shape": [2]}}, b"\0" * 8)
    with pytest.raises(ValueError, match="'w'.*malformed"):
        SafetensorsFile(p)


def test_unsupported_dtype_is_named(tmp_path):
    p = tmp_path / "m.safetensors"
    write_safetensors(str(p), {"ids": np.arange(4), "w": np.ones(2)}, dtypes={"ids": "I64"})
    with SafetensorsFile(p) as f:
        assert f.get_float64("w").tolist() == [1.0, 1.0]
        with pytest.raises(ValueError, match=r"'ids'.*unsupported dtype I64"):
            f.get_float64("ids")


def test_metadata_and_scalar(tmp_path):
    p = tmp_path / "m.safetensors"
    write_safetensors(str(p), {"s": np.array(2.5)}, "F64", metadata={"format": "pt"})
    with SafetensorsFile(p) as f:
        assert f.metadata == {"format": "pt"}
        assert f.get_float64("s").shape == () and float(f.get_float64("s")) == 2.5


def _mapped_rss_kb(path):
    """Resident kB of this process's mappings of ``path`` (from /proc/self/smaps)."""
    total, inside = 0, False
    with open("/proc/self/smaps") as f:
        for line in f:
            if line[:1] in "0123456789abcdef" and "-" in line.split()[0]:
                inside = line.rstrip().endswith(str(path))
            elif inside and line.startswith("Rss:"):
                total += int(line.split()[1])
    return total


@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/smaps"), reason="needs Linux /proc smaps")
def test_read_tensors_leave_no_mapped_pages_resident(tmp_path):
    # Pages of the file mapping that were read would otherwise stay in the
    # process's resident set until close: a 13 GB checkpoint read tensor by
    # tensor would end with 13 GB resident.
    p = tmp_path / "big.safetensors"
    rng = np.random.default_rng(0)
    tensors = {f"w{i}": rng.standard_normal((512, 512)).astype(np.float32) for i in range(4)}  # 1 MB each
    write_safetensors(str(p), tensors)
    with SafetensorsFile(p) as st_file:
        for name, a in tensors.items():
            got = st_file.get_float64(name)
            assert np.array_equal(got, a.astype(np.float64))
        assert st_file._mm is not None  # still mapped
        assert _mapped_rss_kb(p) <= 64  # at most a few boundary/header pages, not the 4 MB read


def test_bf16_decodes_every_pattern_across_conversion_blocks():
    """All 65536 patterns, tiled past the converter's 2^20-entry blocks, in a 2-D shape."""
    bits = np.tile(np.arange(1 << 16, dtype=np.uint16), (17, 1))  # 1.1M entries: several blocks
    out = bf16_bits_to_float64(bits)
    assert out.shape == bits.shape and out.dtype == np.float64
    assert all(np.array_equal(out[0], out[i], equal_nan=True) for i in range(1, 17))
    for b, v in zip(range(1 << 16), out[5]):
        ref = _decode_binary(b, 8, 7)
        if ref is None:
            assert not np.isfinite(v)
        else:
            assert Fraction(float(v)) == ref
