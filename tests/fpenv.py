"""Set the process's floating-point environment for tests (x86-64 glibc, via libm and ctypes).

No compiler needed: ``fesetround`` sets the x87 and SSE rounding modes, and
``fegetenv``/``fesetenv`` round-trip glibc's ``fenv_t``, whose last field on
x86-64 is the MXCSR (byte offset 28), where flush-to-zero (bit 15, 0x8000)
and denormals-are-zero (bit 6, 0x40) live. Every context manager restores the
saved environment in a ``finally``.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import platform
import struct
import sys
from typing import Iterator

__all__ = ["AVAILABLE", "REASON", "ROUNDING_MODES", "rounding_mode", "mxcsr_bits", "ENVIRONMENTS", "environment"]

#: x86 <fenv.h> values.
ROUNDING_MODES = {"downward": 0x400, "upward": 0x800, "toward_zero": 0xC00}
FTZ, DAZ = 0x8000, 0x0040
_MXCSR_OFFSET = 28
_FENV_SIZE = 32


def _load() -> tuple[ctypes.CDLL | None, str]:
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        return None, "floating-point environment tests need x86-64 Linux (glibc fenv_t layout, MXCSR)"
    name = ctypes.util.find_library("m")
    if name is None:
        return None, "libm not found"
    libm = ctypes.CDLL(name)
    buf = ctypes.create_string_buffer(64)
    if libm.fegetenv(buf) != 0:
        return None, "fegetenv failed"
    mx = struct.unpack_from("<I", buf.raw, _MXCSR_OFFSET)[0]
    if mx & 0x1F80 != 0x1F80:  # the default MXCSR masks every exception
        return None, f"unexpected fenv_t layout (word at offset {_MXCSR_OFFSET} is {mx:#x}, not an MXCSR)"
    return libm, ""


_LIBM, REASON = _load()
AVAILABLE = _LIBM is not None


@contextlib.contextmanager
def _saved() -> Iterator[ctypes.Array]:
    assert _LIBM is not None, REASON
    saved = ctypes.create_string_buffer(64)
    assert _LIBM.fegetenv(saved) == 0
    try:
        yield saved
    finally:
        assert _LIBM.fesetenv(saved) == 0


@contextlib.contextmanager
def rounding_mode(name: str) -> Iterator[None]:
    """Run the body with the rounding mode ``"downward"``, ``"upward"`` or ``"toward_zero"``."""
    with _saved():
        assert _LIBM.fesetround(ROUNDING_MODES[name]) == 0
        yield


@contextlib.contextmanager
def mxcsr_bits(bits: int) -> Iterator[None]:
    """Run the body with the MXCSR bits ``bits`` (``FTZ``, ``DAZ`` or both) set."""
    with _saved() as saved:
        env = bytearray(saved.raw[:_FENV_SIZE])
        mx = struct.unpack_from("<I", env, _MXCSR_OFFSET)[0]
        struct.pack_into("<I", env, _MXCSR_OFFSET, mx | bits)
        new = ctypes.create_string_buffer(bytes(env), 64)
        assert _LIBM.fesetenv(new) == 0
        got = ctypes.create_string_buffer(64)
        _LIBM.fegetenv(got)
        assert struct.unpack_from("<I", got.raw, _MXCSR_OFFSET)[0] & bits == bits, "fesetenv did not set MXCSR"
        yield


#: Every non-default environment the kernel must refuse.
ENVIRONMENTS = ("downward", "upward", "toward_zero", "ftz", "daz", "ftz+daz")


def environment(name: str) -> contextlib.AbstractContextManager[None]:
    """Context manager for one of :data:`ENVIRONMENTS`."""
    if name in ROUNDING_MODES:
        return rounding_mode(name)
    return mxcsr_bits({"ftz": FTZ, "daz": DAZ, "ftz+daz": FTZ | DAZ}[name])
