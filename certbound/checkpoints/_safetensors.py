"""A small, strict, lazy safetensors reader (no torch, exact bf16).

The format (https://github.com/huggingface/safetensors): 8 bytes little-endian
header length ``n``, then ``n`` bytes of UTF-8 JSON mapping each tensor name to
``{"dtype", "shape", "data_offsets": [begin, end]}`` (offsets relative to the
end of the header; an optional ``"__metadata__"`` entry holds strings), then
the little-endian, C-ordered tensor bytes.

Why our own reader instead of ``safetensors.safe_open(framework="numpy")``:
numpy has no bfloat16, so the numpy framework cannot return bf16 tensors, and
we want every byte range checked against the file size so that a truncated
file gives an error naming the file and the tensor. The file is memory-mapped
and each tensor is converted on request, so only one tensor's float64 copy is
in memory at a time.

Exactness: float16, bfloat16 and float32 values are all exactly representable
in float64 (fewer significand and exponent bits), so ``astype(float64)`` is
exact; bf16 is the upper half of a float32 bit pattern, so shifting its 16 bits
left by 16 gives the identical float32 value (NaN/Inf patterns included).
"""

from __future__ import annotations

import json
import mmap
import os
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["SafetensorsFile", "TensorInfo", "FLOAT_DTYPES", "bf16_bits_to_float64"]

#: Storage dtypes we convert to float64 (exactly), with their numpy little-endian type.
FLOAT_DTYPES: dict[str, str] = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2"}
_ITEMSIZE = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1,
             "U64": 8, "U32": 4, "U16": 2, "U8": 1, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1}
_MAX_HEADER = 100_000_000  # the reference implementation's limit


@dataclass(frozen=True)
class TensorInfo:
    """Where one tensor lives in a safetensors file."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    begin: int  # absolute byte offset in the file
    end: int


def bf16_bits_to_float64(bits: np.ndarray) -> np.ndarray:
    """Exact float64 values of bfloat16 bit patterns (uint16).

    Parameters
    ----------
    bits : numpy.ndarray of uint16
        The stored bit patterns.

    Returns
    -------
    numpy.ndarray of float64
        The same values, exactly (bfloat16 is the top half of a binary32).

    Examples
    --------
    >>> bf16_bits_to_float64(np.array([0x3F80, 0xC040, 0x0001], dtype=np.uint16)).tolist()
    [1.0, -3.0, 9.183549615799121e-41]
    """
    flat = bits.reshape(-1)
    out = np.empty(flat.shape, dtype=np.float64)
    # In blocks: the uint32/float32 intermediates stay small (a 4096×11008 tensor
    # would otherwise hold 172 MiB of them next to its 344 MiB float64 result).
    step = 1 << 20
    with np.errstate(invalid="ignore"):  # NaN patterns stay NaN (refused later by the loader's finiteness check)
        for i in range(0, flat.size, step):
            out[i:i + step] = (flat[i:i + step].astype(np.uint32) << np.uint32(16)).view(np.float32)
    return out.reshape(bits.shape)


class SafetensorsFile:
    """A memory-mapped safetensors file; tensors are read one at a time.

    Parameters
    ----------
    path : str or PathLike
        The ``.safetensors`` file.

    Raises
    ------
    OSError
        The file is missing or unreadable.
    ValueError
        The header is malformed or a tensor's byte range does not fit the file
        (truncated file); the message names the file and the tensor.
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path = os.fspath(path)
        with open(self.path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(8)
            if len(head) < 8:
                raise ValueError(f"{self.path}: not a safetensors file (only {size} bytes, no header length)")
            (n,) = struct.unpack("<Q", head)
            if n > _MAX_HEADER or 8 + n > size:
                raise ValueError(f"{self.path}: corrupt or truncated safetensors header "
                                 f"(header length {n}, file size {size})")
            raw = f.read(n)
        try:
            header = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{self.path}: corrupt safetensors header (not JSON: {exc})") from None
        if not isinstance(header, dict):
            raise ValueError(f"{self.path}: corrupt safetensors header (not a JSON object)")
        self.metadata: dict[str, str] = header.pop("__metadata__", None) or {}
        self._size = size
        data_start = 8 + n
        self._infos: dict[str, TensorInfo] = {}
        for name, entry in header.items():
            self._infos[name] = self._parse_entry(name, entry, data_start, size)
        self._mm: mmap.mmap | None = None
        self._file = None

    def _parse_entry(self, name: str, entry: Any, data_start: int, size: int) -> TensorInfo:
        where = f"{self.path}: tensor {name!r}"
        try:
            dtype = str(entry["dtype"])
            shape = tuple(int(s) for s in entry["shape"])
            b, e = (int(x) for x in entry["data_offsets"])
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"{where}: malformed header entry {entry!r}") from None
        if any(s < 0 for s in shape) or not 0 <= b <= e:
            raise ValueError(f"{where}: invalid shape {shape} or offsets [{b}, {e}]")
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        item = _ITEMSIZE.get(dtype)
        if item is not None and (e - b) != count * item:
            raise ValueError(f"{where}: {e - b} data bytes do not match dtype {dtype} and shape {list(shape)}")
        if data_start + e > size:
            raise ValueError(f"{where}: data [{data_start + b}, {data_start + e}) lies beyond the end of the "
                             f"file ({size} bytes): the file is truncated")
        return TensorInfo(name, dtype, shape, data_start + b, data_start + e)

    # -- listing -------------------------------------------------------------------
    def keys(self) -> list[str]:
        """Tensor names in file order.

        Returns
        -------
        list of str
            The names.
        """
        return list(self._infos)

    def info(self, name: str) -> TensorInfo:
        """Dtype, shape and byte range of a tensor (``KeyError`` if absent).

        Parameters
        ----------
        name : str
            The tensor.

        Returns
        -------
        TensorInfo
            Its metadata.
        """
        return self._infos[name]

    def __contains__(self, name: object) -> bool:
        return name in self._infos

    # -- reading -------------------------------------------------------------------
    def _map(self) -> mmap.mmap:
        if self._mm is None:
            self._file = open(self.path, "rb")
            if self._size == 0:
                raise ValueError(f"{self.path}: empty file")
            self._mm = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
        return self._mm

    def get_float64(self, name: str, index: int | None = None) -> np.ndarray:
        """The tensor (or, with ``index``, its slice ``[index]`` along the first axis) as new float64, exactly.

        Only the slice's bytes are read. Raises ``ValueError`` (naming file and
        tensor) for a non-float dtype or an index out of range.

        Parameters
        ----------
        name : str
            The tensor.
        index : int, optional
            A first-axis slice to read instead of the whole tensor.

        Returns
        -------
        numpy.ndarray
            A new float64 array, equal to the stored values.
        """
        info = self._infos[name]
        if info.dtype not in FLOAT_DTYPES:
            raise ValueError(f"{self.path}: tensor {name!r} has unsupported dtype {info.dtype} "
                             f"(supported: {', '.join(FLOAT_DTYPES)})")
        mm = self._map()
        np_dtype = np.dtype(FLOAT_DTYPES[info.dtype])
        begin, end, shape = info.begin, info.end, tuple(info.shape)
        if index is not None:
            if not (len(shape) >= 1 and 0 <= index < shape[0]):
                raise ValueError(f"{self.path}: tensor {name!r} of shape {list(shape)} has no slice {index}")
            step = (end - begin) // shape[0]
            begin, end, shape = begin + index * step, begin + (index + 1) * step, shape[1:]
        raw = np.frombuffer(mm, dtype=np_dtype, count=(end - begin) // np_dtype.itemsize, offset=begin)
        if info.dtype == "BF16":
            out = bf16_bits_to_float64(raw)
        else:
            out = raw.astype(np.float64)  # a copy: no reference into the map survives
        del raw
        self._release(begin, end)
        return out.reshape(shape)

    def _release(self, begin: int, end: int) -> None:
        """Drop the mapped pages of ``[begin, end)`` from this process's resident set.

        Pages of a file mapping that were read stay resident (and count in the
        RSS) until the map is closed, so reading every tensor of a 13 GB
        checkpoint would otherwise grow the process by 13 GB. The pages stay
        in the OS page cache; a later read faults them back in.
        """
        advice = getattr(mmap, "MADV_DONTNEED", None)
        if advice is None or self._mm is None or end <= begin:
            return
        start = begin - begin % mmap.PAGESIZE
        try:
            self._mm.madvise(advice, start, min(end, self._size) - start)
        except (OSError, ValueError):  # pragma: no cover - advice is only an optimisation
            pass

    def close(self) -> None:
        """Release the memory map (reading again reopens it)."""
        if self._mm is not None:
            self._mm.close()
            self._mm = None
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> "SafetensorsFile":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:
            pass
