"""What the engine keeps alive (issue 16): digests without copies, bounded head batches."""

from __future__ import annotations

import hashlib
import os
import tracemalloc

import numpy as np
import pytest

import certbound.enclose.product as product_mod
import certbound.pipeline._spectrum as spectrum_mod
import certbound.pipeline._streaming as streaming_mod
from certbound.checkpoints import TheoryMatrix, open_checkpoint
from certbound.pipeline._spectrum import MatrixCertifier
from certbound.pipeline._streaming import (
    MemoryRecordStore,
    ModelSource,
    matrix_sha256,
    plan_tasks,
    release_freed_memory,
    run_serial,
)
from tests.checkpoints.synth_checkpoints import make_checkpoint


def _reference_sha256(m):
    """The documented digest, computed the direct way (one C-ordered float64 copy per array)."""
    h = hashlib.sha256()
    h.update(f"{m.layer}|{m.head}|{m.type}|{tuple(m.shape)}|{m.logit_scale_d}|{m.logit_scale_folded}|".encode())
    for a in (m.factors if m.factors is not None else (m.dense,)):
        a = np.ascontiguousarray(a, dtype=np.float64)
        h.update(repr(a.shape).encode())
        h.update(a.tobytes(order="C"))
    return h.hexdigest()


@pytest.mark.parametrize("shape", [(3, 5), (1, 7), (7, 1), (300, 2000), (2000, 300)])
@pytest.mark.parametrize("order", ["C", "F", "strided"])
def test_blockwise_digest_is_the_documented_one(shape, order):
    rng = np.random.default_rng(sum(shape))
    a = rng.standard_normal(shape)
    if order == "F":
        a = np.asfortranarray(a)
    elif order == "strided":
        a = rng.standard_normal((shape[0], 2 * shape[1]))[:, ::2]
    m = TheoryMatrix(1, None, "M_in", a.shape, dense=a)
    assert matrix_sha256(m) == _reference_sha256(m)
    f = TheoryMatrix(0, 2, "QK", (shape[0], shape[0]), factors=(a, np.asfortranarray(a)))
    assert matrix_sha256(f) == _reference_sha256(f)


def test_digest_of_a_transposed_view_makes_no_full_copy():
    t = np.random.default_rng(3).standard_normal((3000, 700))
    m = TheoryMatrix(0, None, "M_down", (700, 3000), dense=t.T)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        matrix_sha256(m)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert peak < 0.25 * t.nbytes


def test_head_batches_are_bounded_and_give_the_same_records(tmp_path, monkeypatch):
    d = tmp_path / "bert"
    make_checkpoint(str(d), "bert", L=2, N=16, H=4, F=24)
    ck, layout = open_checkpoint(str(d))
    tasks = plan_tasks(layout, layout.matrix_types)
    cert = MatrixCertifier("auto", ("1", "2"), True)
    with ck:
        one = MemoryRecordStore()
        order = run_serial(ModelSource(str(d), layout), tasks, cert, one, opened=(ck, layout))
        sizes = []
        real = product_mod.enclose_singular_values_of_products
        monkeypatch.setattr(spectrum_mod, "enclose_singular_values_of_products",
                            lambda As, Bs, **k: sizes.append(len(As)) or real(As, Bs, **k))
        real_with_norms = product_mod.enclose_singular_values_and_norms_21_of_products  # (the records' route)
        monkeypatch.setattr(spectrum_mod, "enclose_singular_values_and_norms_21_of_products",
                            lambda As, Bs, **k: sizes.append(len(As)) or real_with_norms(As, Bs, **k))
        per_head = 2 * 16 * 4 * 8  # two 16×4 float64 factors
        monkeypatch.setattr(streaming_mod, "HEAD_BATCH_BYTES", 3 * per_head)  # batches of ≤ 3 heads
        small = MemoryRecordStore()
        order2 = run_serial(ModelSource(str(d), layout), tasks, cert, small, opened=(ck, layout))
    assert order == order2
    assert sizes and max(sizes) == 3 and sum(sizes) == 2 * 2 * 4  # 2 layers × (QK, VO) × 4 heads
    for o in order:
        assert one.get(o.key, o.sha256) == small.get(o.key, o.sha256)


def test_release_freed_memory_returns_freed_heap_pages():
    """Freed heap arrays below glibc's mmap threshold leave the resident set only after the trim."""
    from certbound.pipeline._streaming import _malloc_trim

    if _malloc_trim() is None or not os.path.exists("/proc/self/statm"):
        pytest.skip("no glibc malloc_trim or no /proc here: release_freed_memory does nothing by design")

    def rss() -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    arrays = [np.ones(8192) for _ in range(2000)]  # 2000 × 64 KiB on the heap
    keep = arrays[-1]  # the heap top stays in use, so free() alone cannot shrink the heap
    del arrays
    before = rss()
    release_freed_memory()
    assert before - rss() >= 50 * 2**20  # ≈ 125 MiB were freed
    assert keep.sum() == 8192  # live data untouched
    release_freed_memory()  # idempotent
