"""The demo model's measured risks, and the certified margins behind its 0-1 error bound.

:func:`measure_gap` evaluates a certbound-pi model on the task's training set
(regenerated chunk by chunk from the recorded seed and stream, never held in
memory at once) and on fresh test samples. Losses, errors and the gap
|test loss − train loss| are float estimates. For one-block models (L = 1)
the outputs come from :func:`certbound.models.certified_forward.enclose_outputs`,
so the training margins are also returned as *proved* lower bounds (the
input of the certified empirical ramp risk, ``proofs/demo-task.md`` §2); the
certified side of ``certbound demo`` (spectra → Theorem 2 → error bound →
non-vacuity search) is :func:`certbound.pipeline.run_demo`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from certbound.models.network import PiTransformer, loss_values
from certbound.models.task import SparseMajorityTask

__all__ = ["MeasuredGap", "measure_gap", "DEFAULT_CHUNK"]

#: Examples per chunk: large enough for BLAS, small enough for the cache (measured fastest of 4k/16k/64k).
DEFAULT_CHUNK = 16384


@dataclass
class MeasuredGap:
    """Measurements on the task's train and test sets (float estimates, except ``train_margin_lower``).

    ``train_margin_lower`` (one-block models only, else None): for every
    training example i, a float proved ≤ y_i f(X_i) (``proofs/demo-task.md`` §2).
    """

    train_loss: float
    test_loss: float
    test_loss_stderr: float
    train_error: float
    test_error: float
    n_train: int
    n_test: int
    train_margin_lower: Optional[np.ndarray] = None

    @property
    def gap(self) -> float:
        """|test loss − train loss|: the estimate of |R(f) − R̂_S(f)|."""
        return abs(self.test_loss - self.train_loss)

    @property
    def outputs_certified(self) -> bool:
        return self.train_margin_lower is not None


def _outputs(net: PiTransformer, task: SparseMajorityTask, symbols: np.ndarray, tables) -> tuple:
    """(float outputs, certified enclosure or None) for a chunk of inputs."""
    if tables is not None:
        from certbound.models.certified_forward import enclose_outputs

        enc = enclose_outputs(net, task, symbols, tables)
        return 0.5 * (enc.lower + enc.upper), enc
    return net.forward(task.embed(symbols)), None


def measure_gap(net: PiTransformer, task: SparseMajorityTask, n_train: int, n_test: int,
                train_stream: int = 1, test_stream: int = 2, chunk: int = DEFAULT_CHUNK) -> MeasuredGap:
    """Train loss and error on examples 0 … n_train − 1 of ``train_stream``; test ones on ``test_stream``.

    Both sets are regenerated from the task's seed in chunks of ``chunk``
    examples. For L = 1 the outputs are the midpoints of certified
    enclosures (width ~10⁻¹², far below any printed digit) and the training
    margins' proved lower ends are kept.
    """
    if n_train < 1 or n_test < 1:
        raise ValueError(f"n_train and n_test must be positive, got {n_train}, {n_test}")
    tables = None
    if net.config.n_layers == 1:
        from certbound.models.certified_forward import attention_tables

        tables = [attention_tables(net, task, h) for h in range(net.config.n_heads)]
    train_loss, train_wrong = 0.0, 0
    margins = np.empty(n_train) if tables is not None else None
    for start in range(0, n_train, chunk):
        symbols, y = task.symbols_and_labels(min(chunk, n_train - start), train_stream, start)
        f, enc = _outputs(net, task, symbols, tables)
        train_loss += math.fsum(loss_values(f, y, net.config))
        train_wrong += int(np.sum(f * y <= 0))
        if margins is not None:
            margins[start:start + len(y)] = enc.margin_lower(y)
    test_sum, test_sq, test_wrong = 0.0, 0.0, 0
    for start in range(0, n_test, chunk):
        symbols, y = task.symbols_and_labels(min(chunk, n_test - start), test_stream, start)
        f, _ = _outputs(net, task, symbols, tables)
        lv = loss_values(f, y, net.config)
        test_sum += math.fsum(lv)
        test_sq += math.fsum(lv * lv)
        test_wrong += int(np.sum(f * y <= 0))
    test_loss = test_sum / n_test
    var = max(0.0, (test_sq - n_test * test_loss**2) / (n_test - 1)) if n_test > 1 else float("nan")
    return MeasuredGap(
        train_loss=train_loss / n_train, test_loss=test_loss,
        test_loss_stderr=math.sqrt(var / n_test) if n_test > 1 else float("nan"),
        train_error=train_wrong / n_train, test_error=test_wrong / n_test,
        n_train=n_train, n_test=n_test, train_margin_lower=margins,
    )
