"""The demo model's measured generalization gap (float estimates, not certified).

:func:`measure_gap` evaluates the numpy forward pass of a certbound-pi model
(float64) on the task's training sample and on a fresh test sample; the gap
|test loss − train loss| estimates |R − R̂|. The certified side of ``certbound
demo`` (spectra → Theorem 2 → non-vacuity search) is
:func:`certbound.pipeline.run_demo`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from certbound.models.network import PiTransformer, loss_values
from certbound.models.task import SparseMajorityTask

__all__ = ["MeasuredGap", "measure_gap"]


@dataclass
class MeasuredGap:
    """Float measurements on the task's train and test sets (estimates, not certified)."""

    train_loss: float
    test_loss: float
    test_loss_stderr: float
    train_error: float
    test_error: float
    n_train: int
    n_test: int

    @property
    def gap(self) -> float:
        """|test loss − train loss|: the estimate of |R(f) − R̂_S(f)|."""
        return abs(self.test_loss - self.train_loss)


def measure_gap(net: PiTransformer, task: SparseMajorityTask, n_train: int, n_test: int,
                train_stream: int = 1, test_stream: int = 2) -> MeasuredGap:
    """Train loss on the training set (stream 1) and test loss on a fresh sample (stream 2)."""
    X_tr, y_tr = task.sample(n_train, stream=train_stream)
    X_te, y_te = task.sample(n_test, stream=test_stream)
    lt = loss_values(net.forward(X_tr), y_tr, net.config)
    le_out = np.concatenate([net.forward(X_te[i:i + 4096]) for i in range(0, n_test, 4096)])
    le = loss_values(le_out, y_te, net.config)
    return MeasuredGap(
        train_loss=float(lt.mean()), test_loss=float(le.mean()),
        test_loss_stderr=float(le.std(ddof=1) / math.sqrt(n_test)) if n_test > 1 else float("nan"),
        train_error=net.error_rate(X_tr, y_tr), test_error=float(np.mean(le_out * y_te <= 0)),
        n_train=n_train, n_test=n_test,
    )
