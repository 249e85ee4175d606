"""BLAS/LAPACK thread control: one thread unless a large product profits from more.

Why: multi-threaded OpenBLAS on the many small per-head products of a
Transformer made default runs 5–25× slower than single-threaded ones on a
shared 2-core machine (measured: ``certbound bound all-MiniLM-L6-v2`` 28.7 s
wall by default against 4.4 s with ``OPENBLAS_NUM_THREADS=1``; one thin SVD
with vectors of a 384×1536 matrix 25× slower with 2 threads than with 1 on a
loaded machine). OpenBLAS threads spin while waiting, so every thread that
does not have a core to itself costs more than it gives.

Policy (:func:`threads_for`): one BLAS thread for everything, several only
for a single product or SVD of at least :data:`PARALLEL_MIN_WORK` multiply–
adds (m·n·min(m, n)), and then at most as many as there are cores not
already busy (from the 1-minute load average) — never more than the user
allowed through ``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS`` or
``MKL_NUM_THREADS``, and one inside worker processes (which run with those
variables set to 1).

Thread counts never change a certified result: the floating-point model of
``proofs/enclosure.md`` §2 allows any summation order and blocking, which is
all a different thread count changes.

The limits are set with ``threadpoolctl`` (a small pure-Python dependency,
also used by scikit-learn), which talks to every BLAS loaded in the process
(numpy's and scipy's OpenBLAS are separate libraries).

>>> with blas_threads(1):
...     pass
>>> threads_for(10, 10)
1
"""

from __future__ import annotations

import contextlib
import os
from typing import Iterator

__all__ = ["PARALLEL_MIN_WORK", "GRAM_PARALLEL_MIN_WORK", "available_threads", "threads_for", "threads_for_gram",
           "blas_threads", "single_threaded"]

#: m·n·min(m, n) from which a dense SVD may use several threads. Idle 2-core
#: machines gain from 2 threads only well above the sizes of BERT-base-like
#: FFN matrices; under load 1 thread wins at every size we measured (256×1024
#: to 1536×1536), so the threshold is set high and the load guard decides.
PARALLEL_MIN_WORK = 768 * 3072 * 768

#: m·n·min(m, n) from which the Gram route (modes ``gram``/``auto`` on a dense
#: matrix: SYRK, ``syevd`` with vectors, an m×m SYRK and a half GEMM) may use
#: several threads. Measured on this shared 2-core machine (load 6–7, one
#: certificate, CPU / wall per call): 384×1536 28.8 / 53 ms with one thread,
#: 250 / 370 ms with two; 768×3072 180 / 286 ms against 1352 / 1806 ms; 768×768
#: 124 / 234 against 1678 / 3454 ms. One thread also makes the certificate's
#: floats independent of the machine's load (a different thread count changes
#: LAPACK's rounding, never the validity). Set at 2048×8192 and above.
GRAM_PARALLEL_MIN_WORK = 2048 * 8192 * 2048

_ENV_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
_controller = None
_current: int | None = None  # the limit set by the innermost blas_threads block, None outside


def _user_cap() -> int | None:
    caps = []
    for k in _ENV_VARS:
        v = os.environ.get(k, "").split(",")[0].strip()
        if v.isdigit() and int(v) > 0:
            caps.append(int(v))
    return min(caps) if caps else None


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


def available_threads() -> int:
    """Cores this process could use now: free cores by load average, capped by the user's variables.

    >>> available_threads() >= 1
    True
    """
    cores = _cores()
    try:
        # The load average counts this process itself (≈ 1 when it is busy).
        busy_others = max(0.0, os.getloadavg()[0] - 1.0)
    except (AttributeError, OSError):
        busy_others = 0.0
    n = max(1, min(cores, int(cores - busy_others + 0.5)))
    cap = _user_cap()
    return min(n, cap) if cap else n


def threads_for(m: int, n: int) -> int:
    """BLAS threads for one dense SVD/product of an m×n matrix (1 below :data:`PARALLEL_MIN_WORK`)."""
    if m * n * min(m, n) < PARALLEL_MIN_WORK:
        return 1
    return available_threads()


def threads_for_gram(m: int, n: int) -> int:
    """BLAS threads for the Gram route of an m×n matrix: 1 below :data:`GRAM_PARALLEL_MIN_WORK`, else as :func:`threads_for`.

    Parameters
    ----------
    m, n : int
        Shape of the dense matrix.

    Returns
    -------
    int
        Number of BLAS threads (≥ 1).

    >>> threads_for_gram(768, 3072)
    1
    """
    if m * n * min(m, n) < GRAM_PARALLEL_MIN_WORK:
        return 1
    return available_threads()


def _get_controller():
    global _controller
    if _controller is None:
        import numpy  # noqa: F401  (load both OpenBLAS copies before looking for them)
        import scipy.linalg  # noqa: F401
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
    return _controller


@contextlib.contextmanager
def blas_threads(n: int) -> Iterator[None]:
    """Limit every loaded BLAS to ``n`` threads inside the block (restored on exit).

    A block asking for the limit already set by the enclosing block, or for
    the thread count every BLAS already has, costs nothing (setting a limit
    and restoring it costs ≈ 80 µs, comparable to a small product).
    """
    global _current
    n = max(1, int(n))
    if _current == n:
        yield
        return
    outer = _current
    controller = _get_controller()
    if all(lib.num_threads == n for lib in controller.lib_controllers if lib.user_api == "blas"):
        # Every BLAS already runs n threads (e.g. OPENBLAS_NUM_THREADS=1): nothing to set or restore
        # (≈ 1 µs to ask against ≈ 80 µs for a limit and its restoration).
        _current = n
        try:
            yield
        finally:
            _current = outer
        return
    with controller.limit(limits=n, user_api="blas"):
        _current = n
        try:
            yield
        finally:
            _current = outer


def single_threaded() -> contextlib.AbstractContextManager[None]:
    """``blas_threads(1)``: for small products and in worker processes."""
    return blas_threads(1)
